"""Untrusted text made safe for an HTML page, and release notes as light HTML. Pure.

:func:`text` is the one way a value the tool does not control (a manifest's strings, a tag's
message, a reproduce record) reaches a page: its control and bidi characters shown as
escapes first (:mod:`release.core.terminal_text`: a bidi override cannot reorder a digest
on screen), bytes that were not UTF-8 (surrogates) as ``\\udcXX``, then HTML-escaped with
quotes, so the result is inert in element text and in a double-quoted attribute.

:func:`notes_html` reads the few shapes of markdown the notes use: ``#`` headings, ``-``
list items, paragraphs, inline code and ``[label](url)`` links. A link is made only for an
``http``/``https`` URL of plain URL characters (no quote, no space, no angle bracket), so
no ``javascript:`` or ``data:`` link can come out; anything else is text.
"""

from __future__ import annotations

import html
import re

from release.core.terminal_text import escaped

__all__ = ["notes_html", "text"]


def text(value: object) -> str:
    """``value`` as page text, safe in element text and in a double-quoted attribute."""
    shown = escaped(str(value)).encode("utf-8", "backslashreplace").decode("utf-8")
    return html.escape(shown, quote=True)


_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_ITEM = re.compile(r"^\s*[-*+]\s+(.*)$")
_INLINE = re.compile(
    r"\[(?P<label>[^\[\]\n]{1,300})\]\((?P<url>https?://[A-Za-z0-9._~:/?#@!$&*+,;=%-]{1,500})\)"
    r"|`(?P<code>[^`\n]{1,300})`"
)


def _inline(line: str) -> str:
    out, at = [], 0
    for found in _INLINE.finditer(line):
        out.append(text(line[at : found.start()]))
        if found.group("code") is not None:
            out.append(f"<code>{text(found.group('code'))}</code>")
        else:
            out.append(
                f'<a href="{text(found.group("url"))}" rel="nofollow noopener noreferrer">'
                f"{text(found.group('label'))}</a>"
            )
        at = found.end()
    out.append(text(line[at:]))
    return "".join(out)


def notes_html(message: str) -> str:
    """The notes as HTML: ``#`` headings (as ``h3``), ``-`` items (as lists), other lines
    as paragraphs, with inline code and links to ``http(s)`` URLs; everything else text."""
    out: list[str] = []
    para: list[str] = []
    items: list[str] = []

    def flush() -> None:
        if para:
            out.append(f"<p>{' '.join(para)}</p>")
            para.clear()
        if items:
            out.append("<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>")
            items.clear()

    for line in (raw.removesuffix("\r") for raw in message.split("\n")):
        heading, item = _HEADING.match(line), _ITEM.match(line)
        if heading or not line.strip():
            flush()
            if heading:
                level = len(heading.group(1))
                out.append(f'<h3 class="md-h{level}">{_inline(heading.group(2))}</h3>')
        elif item:
            if para:
                flush()
            items.append(_inline(item.group(1)))
        elif items:
            items[-1] += " " + _inline(line.strip())
        else:
            para.append(_inline(line.strip()))
    flush()
    return "\n".join(out)

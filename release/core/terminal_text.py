"""Untrusted text made safe to show on a terminal: its control characters escaped. Pure.

What the tool prints mixes its own words with text it does not control: check names,
requests and reasons from a tag's config, every string of a manifest, a container's
output, git's commit subjects, names, tag messages, ref names and stderr, file names of
a work tree. A control character in any of them reaches the terminal as a command: ESC
starts a sequence that moves the cursor, erases a line or changes colours, ``\\r``
returns to the start of the line, ``\\n`` starts a new one, and the Unicode bidi
controls reorder what is shown ("trojan source"). One such character in a check name
could print a forged ``reproduce ...: match`` above the real verdict.

:func:`escaped` shows each of them as a visible escape instead (``\\x1b``, ``\\r``,
``\\n``, ``\\u202e``), so the text is still readable and cannot act. Escaped: every C0
control (U+0000-U+001F), DEL, every C1 control (U+0080-U+009F), the bidi embeddings,
overrides and isolates and the marks (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F,
U+061C), and the line and paragraph separators (U+2028, U+2029), which readers of text
count as line breaks.

Invariants:

- the result holds none of those characters (``keep_newlines``: none but ``\\n``);
- text that holds none of them is returned as it is: accents, CJK, emoji and their
  joiners (U+200D) are not controls;
- escaping twice gives what escaping once gives (a backslash is not escaped: the text is
  for reading, never parsed back).

A single-line field (a name, a subject, a reason, a line of a container's log) is
escaped whole, its newlines too, so one value cannot become two lines; ``keep_newlines``
is for the last pass before a terminal, over lines the tool composed.
"""

from __future__ import annotations

import re

__all__ = ["escaped"]

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# DEL, C1, the Arabic letter mark, LRM/RLM, the separators, embeddings, overrides, isolates
_NOT_C0 = "\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
_ANY = re.compile(f"[\x00-\x1f{_NOT_C0}]")
_BUT_NEWLINE = re.compile(f"[\x00-\x09\x0b-\x1f{_NOT_C0}]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escaped(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control character shown as a visible escape; with
    ``keep_newlines``, ``\\n`` stays (the lines of a text the tool composed)."""
    return (_BUT_NEWLINE if keep_newlines else _ANY).sub(_escape, text)

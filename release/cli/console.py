"""Terminal output: plain lines when piped, rich colour on a terminal.

Every line said here is :func:`printable`: its secrets taken out
(:mod:`release.adapters.known_secrets`: what git, docker or skopeo quoted of a token or a
password never reaches a terminal or a CI log), then its control characters escaped but
the newlines between lines (:mod:`release.core.terminal_text`): whatever untrusted text a
line holds, and whether it goes to a terminal or a CI log (which shows colours and cursor
moves too), it cannot move the cursor, erase a line or change colours. rich gets the line
as ``Text``, never as markup.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from release.adapters.known_secrets import shown
from release.core.terminal_text import escaped

__all__ = ["error", "printable", "say"]

_STYLES = {"picked": "green", "skipped": "yellow", "error": "bold red", "+": "dim"}


def _rich(stream: Any) -> Any:
    if not stream.isatty():
        return None
    from rich.console import Console  # lazy: only a terminal needs it

    return Console(file=stream, highlight=False, soft_wrap=True)


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` as a terminal or a log may get it: secrets out, control characters escaped
    (``keep_newlines``: but the newlines between the lines the tool composed)."""
    return escaped(shown(text), keep_newlines=keep_newlines)


def say(line: str, *, stream: TextIO | None = None) -> None:
    stream = stream or sys.stdout
    line = printable(line, keep_newlines=True)
    console = _rich(stream)
    if console is None:
        print(line, file=stream, flush=True)  # piped (a CI log): each line as it is said
        return
    from rich.text import Text

    style = next((s for prefix, s in _STYLES.items() if line.startswith(prefix)), "")
    console.print(Text(line, style=style))


def error(message: str) -> None:
    """``error: <message>`` on stderr, one line whatever the message quotes."""
    say(f"error: {printable(message)}", stream=sys.stderr)

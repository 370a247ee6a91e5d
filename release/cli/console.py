"""Terminal output: plain lines when piped, rich colour on a terminal."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["error", "say", "show_plan"]

_STYLES = {"picked": "green", "skipped": "yellow", "error": "bold red", "+": "dim"}


def _rich(stream: Any) -> Any:
    if not stream.isatty():
        return None
    from rich.console import Console  # lazy: only a terminal needs it

    return Console(file=stream, highlight=False, soft_wrap=True)


def say(line: str, *, stream: Any = None) -> None:
    stream = stream or sys.stdout
    console = _rich(stream)
    if console is None:
        print(line, file=stream, flush=True)  # piped (a CI log): each line as it is said
        return
    from rich.text import Text

    style = next((s for prefix, s in _STYLES.items() if line.startswith(prefix)), "")
    console.print(Text(line, style=style))


def error(message: str) -> None:
    say(f"error: {message}", stream=sys.stderr)


def show_plan(lines: list[str], *, dry_run: bool) -> None:
    head, *rest = lines
    say(("dry run, nothing changed: would " if dry_run else "") + head)
    for line in rest:
        say(line)

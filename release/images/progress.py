"""Build progress: plain lines when piped (each flushed as it is said, for CI logs); a
live line per variant on a terminal (rich)."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Sequence

__all__ = ["Progress", "flushing"]


class Progress:
    """Plain lines when piped; a live line per variant on a terminal."""

    def __init__(self, variants: Sequence[str], say: Callable[[str], None]) -> None:
        self.say = say
        self._lock = threading.Lock()
        self._live = None
        self._tasks: dict[str, object] = {}
        if sys.stdout.isatty() and say is print:
            from rich.progress import Progress as RichProgress
            from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

            self._live = RichProgress(
                SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn()
            )
            for v in variants:
                self._tasks[v] = self._live.add_task(f"build({v}): waiting", total=None)

    def __enter__(self) -> Progress:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()

    def update(self, variant: str, text: str, *, final: bool = False) -> None:
        with self._lock:
            if self._live is not None:
                self._live.update(self._tasks[variant], description=f"build({variant}): {text}")  # type: ignore[arg-type]
                if final:
                    self._live.stop_task(self._tasks[variant])  # type: ignore[arg-type]
            else:
                self.say(f"build({variant}): {text}")
                _flush()


def _flush() -> None:
    """Progress lines reach a pipe (a CI log) as they are said, not when the run ends."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def flushing(say: Callable[[str], None]) -> Callable[[str], None]:
    def said(line: str) -> None:
        say(line)
        _flush()

    return said

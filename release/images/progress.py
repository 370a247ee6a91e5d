"""Build progress: plain lines when piped (each flushed as it is said, for CI logs), with a
heartbeat line per running build every ``heartbeat`` seconds (:mod:`release.images.heartbeat`);
a live line per variant on a terminal (rich): its step, elapsed time and its log's last line.
rich shows each as plain text (no markup is read), the log's line with its control
characters escaped (:func:`release.images.heartbeat.last_log_line`)."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from release.core.terminal_text import escaped
from release.images.heartbeat import Heartbeat, elapsed, last_log_line

__all__ = ["Progress", "flushing", "live_step"]


def _log_column(log_of: Callable[[Any], Path | None]) -> Any:
    """A rich column with the last line of a task's build log (its tail read at each refresh)."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class LogColumn(ProgressColumn):
        def render(self, task: Any) -> Text:
            said = last_log_line(log_of(task.id))
            return Text(said, style="dim", no_wrap=True, overflow="ellipsis")

    return LogColumn()


class Progress:
    """Plain lines when piped; a live line per variant on a terminal.

    ``heartbeat`` (seconds; None for none) is used only when piped. ``clock`` measures
    the elapsed time a heartbeat reports. ``live``: draw the live lines on the terminal
    when stdout is one (the caller says whether its output may be drawn over: the CLI's
    text output may, a JSON document or a nox log may not). ``console``: a rich console to
    draw them on instead (tests)."""

    def __init__(
        self,
        variants: Sequence[str],
        say: Callable[[str], None],
        *,
        heartbeat: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        console: Any = None,
        live: bool = False,
    ) -> None:
        self.say = say
        self._lock = threading.Lock()
        self._live = None
        self._tasks: dict[str, object] = {}
        self._clock = clock
        self._started: dict[str, float] = {}  # variants that started, in order
        self._step: dict[str, str] = {}
        self._logs: dict[str, Path] = {}
        self._done: set[str] = set()
        self._heartbeat: Heartbeat | None = None
        if console is not None or (live and sys.stdout.isatty()):
            from rich.progress import Progress as RichProgress
            from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

            by_task: dict[Any, str] = {}
            self._live = RichProgress(
                SpinnerColumn(),
                TextColumn("{task.description}", markup=False),
                TimeElapsedColumn(),
                _log_column(lambda task: self._logs.get(by_task.get(task, ""))),
                console=console,
            )
            for v in variants:
                self._tasks[v] = self._live.add_task(f"build({v}): waiting", total=None)
                by_task[self._tasks[v]] = v
        elif heartbeat is not None:
            self._heartbeat = Heartbeat(heartbeat, self.beat)

    def __enter__(self) -> Progress:
        if self._live is not None:
            self._live.start()
        if self._heartbeat is not None:
            self._heartbeat.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.quiet()
        if self._live is not None:
            self._live.stop()

    def quiet(self) -> None:
        """No heartbeat from now on (at the end of the run, or as it is being stopped)."""
        if self._heartbeat is not None:
            self._heartbeat.stop()

    def update(
        self, variant: str, text: str, *, final: bool = False, log: Path | None = None
    ) -> None:
        """``variant`` is at ``text`` now; ``log``: the build log it is writing from now on."""
        with self._lock:
            self._started.setdefault(variant, self._clock())
            self._step[variant] = text
            if log is not None:
                self._logs[variant] = log
            if final:
                self._done.add(variant)
            if self._live is not None:
                self._live.update(self._tasks[variant], description=f"build({variant}): {text}")  # type: ignore[arg-type]
                if final:
                    self._live.stop_task(self._tasks[variant])  # type: ignore[arg-type]
            else:
                self.say(f"build({variant}): {text}")
                _flush()

    def beat(self) -> None:
        """One heartbeat line per build still running: elapsed time, step, last log line."""
        with self._lock:
            now = self._clock()
            for variant, started in self._started.items():
                if variant in self._done:
                    continue
                line = f"build({variant}): still running ({elapsed(now - started)}): "
                line += self._step[variant]
                said = last_log_line(self._logs.get(variant))
                self.say(line + (f"; log: {said}" if said else ""))
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


@contextlib.contextmanager
def live_step(text: str, *, live: bool) -> Iterator[None]:
    """While a step runs (a smoke check, a snapshot round trip): on a terminal, when the
    caller's output may be drawn over (``live``), a line with a spinner, ``text`` and the
    elapsed time, erased when the step ends (its result is said as a line of its own).
    Piped or not ``live``: nothing, the lines said before and after are the record."""
    if not (live and sys.stdout.isatty()):
        yield
        return
    from rich.progress import Progress as RichProgress
    from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

    shown = RichProgress(
        SpinnerColumn(),
        TextColumn("{task.description}", markup=False),
        TimeElapsedColumn(),
        transient=True,
    )
    shown.add_task(escaped(text), total=None)
    with shown:
        yield

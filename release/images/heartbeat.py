"""A heartbeat for builds whose output is not a terminal: every ``interval`` seconds, one
line per build still running (elapsed time, current step, the last line of its log), so a
CI job that kills a step after minutes of silence does not kill a long build.

The interval is ``heartbeat`` in ``[tool.release.images]``; ``RELEASE_HEARTBEAT``
overrides it. Also here: the last lines of a build log, read without reading it all; the
line a heartbeat shows has its control characters escaped (what a build prints is not
ours: :mod:`release.core.terminal_text`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from release.adapters.known_secrets import shown
from release.core.terminal_text import escaped
from release.errors import ConfigError

__all__ = ["HEARTBEAT_ENV", "Heartbeat", "elapsed", "heartbeat_interval", "log_tail"]

HEARTBEAT_ENV = "RELEASE_HEARTBEAT"
_TAIL_BYTES = 64 * 1024  # enough for the last lines of any build log
_WIDTH = 200  # a log line longer than this is cut in a heartbeat


def heartbeat_interval(configured: float, env: Mapping[str, str] | None = None) -> float:
    """``RELEASE_HEARTBEAT`` when set (a positive number of seconds), else ``configured``."""
    text = (os.environ if env is None else env).get(HEARTBEAT_ENV, "").strip()
    if not text:
        return configured
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise ConfigError(f"{HEARTBEAT_ENV}: expected a positive number of seconds, got {text!r}")
    return value


def elapsed(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def log_tail(log: Path | None, lines: int = 10) -> list[str]:
    """The last ``lines`` non-blank lines of ``log`` ([] when there is none to read), their
    secrets taken out: a log still being written has not been through the process
    adapter's redaction yet."""
    if log is None or lines <= 0:
        return []
    try:
        with log.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - _TAIL_BYTES))
            data = handle.read()
    except OSError:
        return []
    text = data.decode("utf-8", errors="replace").replace("\r", "\n")
    pieces = text.split("\n")[1 if size > _TAIL_BYTES else 0 :]  # the first may be cut
    return [shown(line.rstrip()) for line in pieces if line.strip()][-lines:]


def last_log_line(log: Path | None) -> str:
    tail = log_tail(log, 1)
    if not tail:
        return ""
    line = escaped(tail[0].strip())
    return line if len(line) <= _WIDTH else line[: _WIDTH - 3] + "..."


class Heartbeat:
    """Calls ``beat`` every ``interval`` seconds on a daemon thread until stopped."""

    def __init__(self, interval: float, beat: Callable[[], None]) -> None:
        self.interval = interval
        self._beat = beat
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop and wait for a beat under way: no heartbeat is said after this returns."""
        self._stopped.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        while not self._stopped.wait(self.interval):
            try:
                self._beat()
            except (OSError, ValueError):  # the output is gone (a closed pipe): stop beating
                return

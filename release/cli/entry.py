"""How every command ends: the project's errors as one line and an exit code.

A :class:`ReleaseError` prints ``error: <message>`` and exits with its ``exit_code`` (under
``--json`` a JSON error document goes to stdout too); Ctrl-C exits 130 and SIGTERM 143,
saying a re-run continues; both stop the run through the same cleanup. A traceback is
shown only with ``--debug`` or ``RELEASE_DEBUG=1``.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

from release.errors import Terminated

__all__ = ["INTERRUPTED", "TERMINATED", "sigterm_stops"]

TERMINATED = "terminated; re-run the same command to continue where it stopped"
INTERRUPTED = "interrupted; re-run the same command to continue where it stopped"


def _terminate(signum: int, frame: Any) -> None:
    # once: a second SIGTERM during the cleanup must not cut the cleanup short
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated()


@contextlib.contextmanager
def sigterm_stops() -> Iterator[None]:
    """While inside: SIGTERM raises :class:`Terminated` in the main thread, so every
    ``finally`` and ``except BaseException`` cleanup runs as it does for Ctrl-C (containers
    removed, builds stopped, a pick's journal left consistent)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)

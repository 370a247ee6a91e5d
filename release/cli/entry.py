"""How every command ends: the project's errors as one line and an exit code.

A :class:`ReleaseError` prints ``error: <message>`` and exits with its ``exit_code`` (under
``--json`` a JSON error document goes to stdout too); Ctrl-C exits 130 and SIGTERM 143,
saying a re-run continues; both stop the run through the same cleanup. A traceback is
shown only with ``--debug`` or ``RELEASE_DEBUG=1``.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from release.errors import Terminated

__all__ = ["INTERRUPTED", "TERMINATED", "sigterm_stops"]

TERMINATED = "terminated; re-run the same command to continue where it stopped"
INTERRUPTED = "interrupted; re-run the same command to continue where it stopped"


def _terminate(signum: int, frame: Any) -> None:
    # once: a second SIGTERM during the cleanup must not cut the cleanup short
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated()


def _stop_again(hook: Callable[[Any], object]) -> Callable[[Any], object]:
    """An unraisable-exception hook that does not let a stop be lost. A signal's exception
    raised where Python ignores exceptions (an at-fork hook of ``logging`` that runs as a
    subprocess starts, a ``__del__``) is printed and dropped, and the run would go on to
    its end: the signal is sent to the main thread again, from another thread, so that it
    lands once that code is done. Anything else goes to ``hook``."""

    def handle(unraisable: Any) -> object:
        kind = unraisable.exc_type
        if kind not in (Terminated, KeyboardInterrupt):
            return hook(unraisable)
        number = signal.SIGTERM if kind is Terminated else signal.SIGINT
        if kind is Terminated:
            signal.signal(signal.SIGTERM, _terminate)  # its handler had stood down
        again = threading.Timer(0.01, signal.pthread_kill, (threading.main_thread().ident, number))
        again.daemon = True
        again.start()
        return None

    return handle


@contextlib.contextmanager
def sigterm_stops() -> Iterator[None]:
    """While inside: SIGTERM raises :class:`Terminated` in the main thread, so every
    ``finally`` and ``except BaseException`` cleanup runs as it does for Ctrl-C (containers
    removed, builds stopped, a pick's journal left consistent); a stop that lands where
    Python ignores exceptions is delivered again (:func:`_stop_again`)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    hook = sys.unraisablehook
    sys.unraisablehook = _stop_again(hook)
    try:
        yield
    finally:
        sys.unraisablehook = hook
        signal.signal(signal.SIGTERM, previous)

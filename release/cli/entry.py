"""How every task ends: the project's errors as one line and an exit code.

A :class:`ReleaseError` prints ``error: <message>`` and exits with its ``exit_code``;
Ctrl-C exits 130 and SIGTERM 143, saying a re-run continues; both stop the run through
the same cleanup. A traceback is shown only with ``--debug``
(invoke's core flag) or ``RELEASE_DEBUG=1``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from invoke.context import Context
from invoke.exceptions import Exit

from release.cli.console import error
from release.errors import ReleaseError, Terminated

__all__ = ["entry", "sigterm_stops"]

F = TypeVar("F", bound=Callable[..., Any])


def _debug() -> bool:
    """``--debug`` (invoke's core flag) or ``RELEASE_DEBUG=1``: show tracebacks."""
    import logging

    return bool(os.environ.get("RELEASE_DEBUG")) or logging.getLogger("invoke").isEnabledFor(
        logging.DEBUG
    )


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


def entry(func: F) -> F:
    """Turn the project's errors into one line and an exit code (a traceback with --debug)."""

    @functools.wraps(func)
    def wrapper(c: Context, *args: Any, **kwargs: Any) -> Any:
        try:
            with sigterm_stops():
                return func(c, *args, **kwargs)
        except ReleaseError as err:
            if _debug():
                raise
            error(err.one_line())
            raise Exit(code=err.exit_code) from None
        except Terminated:
            error("terminated; re-run the same command to continue where it stopped")
            raise Exit(code=Terminated.exit_code) from None
        except KeyboardInterrupt:
            error("interrupted; re-run the same command to continue where it stopped")
            raise Exit(code=130) from None

    return wrapper  # type: ignore[return-value]

"""How every task ends: the project's errors as one line and an exit code.

A :class:`ReleaseError` prints ``error: <message>`` and exits with its ``exit_code``;
Ctrl-C exits 130 saying a re-run continues. A traceback is shown only with ``--debug``
(invoke's core flag) or ``RELEASE_DEBUG=1``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

from invoke.context import Context
from invoke.exceptions import Exit

from release.cli.console import error
from release.errors import ReleaseError

__all__ = ["entry"]

F = TypeVar("F", bound=Callable[..., Any])


def _debug() -> bool:
    """``--debug`` (invoke's core flag) or ``RELEASE_DEBUG=1``: show tracebacks."""
    import logging

    return bool(os.environ.get("RELEASE_DEBUG")) or logging.getLogger("invoke").isEnabledFor(
        logging.DEBUG
    )


def entry(func: F) -> F:
    """Turn the project's errors into one line and an exit code (a traceback with --debug)."""

    @functools.wraps(func)
    def wrapper(c: Context, *args: Any, **kwargs: Any) -> Any:
        try:
            return func(c, *args, **kwargs)
        except ReleaseError as err:
            if _debug():
                raise
            error(err.one_line())
            raise Exit(code=err.exit_code) from None
        except KeyboardInterrupt:
            error("interrupted; re-run the same command to continue where it stopped")
            raise Exit(code=130) from None

    return wrapper  # type: ignore[return-value]

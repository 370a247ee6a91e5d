"""The ``release`` console script: the same tasks as ``inv release.*``, in any checkout."""

from __future__ import annotations

import os
import sys

from invoke.collection import Collection
from invoke.exceptions import Exit, ParseError
from invoke.program import Program

from release import __version__

__all__ = ["main", "program"]


def _namespace() -> Collection:
    from release.cli.tasks import ns

    return ns


class _Program(Program):
    """invoke's Program, with argument errors spelt like every other error (exit 2)."""

    def __init__(self) -> None:
        super().__init__(
            name="release", binary="release", version=__version__, namespace=_namespace()
        )

    def parse_core(self, argv: list[str] | None) -> None:
        try:
            super().parse_core(argv)
        except ParseError as err:
            raise Exit(f"error: {err} (see release --help)", code=2) from None

    def parse_tasks(self) -> None:
        try:
            super().parse_tasks()
        except ParseError as err:
            raise Exit(f"error: {err} (see release --help TASK)", code=2) from None


program = _Program()


def main() -> None:
    try:
        program.run()
    except BrokenPipeError:  # `release notes | head`: the reader left; that is not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(0)

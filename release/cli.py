"""The ``release`` console script: the same tasks as ``inv release.*``, in any checkout."""

from __future__ import annotations

from invoke.collection import Collection
from invoke.program import Program

from release import __version__

__all__ = ["main", "program"]


def _namespace() -> Collection:
    from release.tasks import ns

    return ns


class _Program(Program):
    def __init__(self) -> None:
        super().__init__(
            name="release", binary="release", version=__version__, namespace=_namespace()
        )


program = _Program()


def main() -> None:
    program.run()

"""The ``release`` console script: the same tasks as ``inv release.*``, in any checkout."""

from __future__ import annotations

import os
import sys

from invoke.collection import Collection
from invoke.exceptions import Exit, ParseError
from invoke.parser.argument import Argument
from invoke.program import Program

from release import __version__
from release.flows.context import MAIN_ENV

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

    def core_args(self) -> list[Argument]:
        main = Argument(
            names=("main-branch",),
            help=f"the branch fixes are picked from, for this run (also ${MAIN_ENV}; "
            "default: main-branch in [tool.release])",
        )
        return [*super().core_args(), main]

    def parse_core(self, argv: list[str] | None) -> None:
        try:
            super().parse_core(argv)
        except ParseError as err:
            raise Exit(f"error: {err} (see release --help)", code=2) from None
        main = self.args["main-branch"].value
        if main is not None:  # the tasks read it where the config is read
            os.environ[MAIN_ENV] = main

    def parse_tasks(self) -> None:
        try:
            super().parse_tasks()
        except ParseError as err:
            raise Exit(f"error: {err} (see release --help TASK)", code=2) from None


program = _Program()


_HELP = ("-h", "--help")


def _value_flags(arguments: list[Argument]) -> set[str]:
    """The spellings of the options that take a value (``--file F``, ``-f F``)."""
    return {
        ("--" if len(name) > 1 else "-") + name
        for a in arguments
        if a.takes_value and not a.optional
        for name in a.names
    }


def _as_invoke_reads(argv: list[str]) -> list[str]:
    """``release TASK --help`` as ``release --help TASK`` (a task's positional argument would
    take ``--help`` as its value), and ``release pick A B '#123'`` with the commits as the
    one argument invoke gives them (as if quoted). Which options take a value is read from
    the core options and the pick task themselves."""
    words = argv[1:]
    core = _value_flags(program.core_args())
    task = next(
        (
            i
            for i, w in enumerate(words)
            if not w.startswith("-") and (i == 0 or words[i - 1] not in core)
        ),
        None,
    )
    if task is None:
        return argv
    if any(w in _HELP for w in words[task + 1 :]):
        return [argv[0], *words[:task], "--help", words[task]]
    if words[task] != "pick":
        return argv
    values = _value_flags(_namespace().tasks["pick"].get_arguments())
    commits: list[str] = []
    rest: list[str] = []
    after = iter(words[task + 1 :])
    for word in after:
        if word in values:
            rest += [word, next(after, "")]
        elif word.startswith("-") and not word.startswith("-#"):
            rest.append(word)
        else:
            commits.append(word)
    joined = [" ".join(commits)] if commits else []
    return [argv[0], *words[: task + 1], *joined, *rest]


def main() -> None:
    try:
        program.run(_as_invoke_reads(sys.argv))
    except BrokenPipeError:  # `release notes | head`: the reader left; that is not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(0)

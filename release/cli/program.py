"""The ``release`` console script: every command of :mod:`release.commands.registry`, parsed
with argparse from its declaration.

``release [GLOBAL OPTIONS] TASK [OPTIONS]``. What is offered works: an unknown task or
option, or an abbreviation of one (``--dry`` for ``--dry-run``), is refused with exit 2
and the nearest spellings ("did you mean"). ``release --help TASK`` and ``release TASK
--help`` print the same help. Nothing of git, docker or the floors below is imported
before a command runs.
"""

from __future__ import annotations

import os
import sys

from release import __version__
from release.commands.declare import Command
from release.commands.registry import COMMANDS
from release.errors import ExitCode

TYPE_CHECKING = False  # typing is not imported for --help and --list (mypy reads this as usual)
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["GLOBAL_FLAGS", "Refused", "main", "run"]

# global options: (spellings, takes a value, help)
GLOBAL_FLAGS: tuple[tuple[tuple[str, ...], bool, str], ...] = (
    (("-h", "--help"), False, "this help; with a task, that task's"),
    (("-V", "--version"), False, "print release's version"),
    (("-l", "--list"), False, "list the tasks with what each does"),
    (
        ("--main-branch",),
        True,
        "the branch fixes are picked from, for this run (also $RELEASE_MAIN_BRANCH; "
        "default: main-branch in [tool.release])",
    ),
    (
        ("--config",),
        True,
        "a TOML file to read the configuration from instead of pyproject.toml: its "
        "[tool.release], or its keys (also $RELEASE_CONFIG)",
    ),
    (("--debug",), False, "show a traceback on error (also RELEASE_DEBUG=1)"),
    (("--completion",), True, "print a shell completion script: bash or zsh"),
)
COMPLETION_SHELLS = ("bash", "zsh")


class Refused(Exception):
    """A command line that cannot run: said on stderr with the usage, exit 2."""

    def __init__(self, message: str, usage: str = "release --help") -> None:
        super().__init__(message)
        self.usage = usage


def _listing() -> str:
    width = max(len(c.name) for c in COMMANDS)
    return "\n".join(f"  {c.name:{width}}  {c.summary}" for c in COMMANDS)


def _usage() -> str:
    lines = [
        "usage: release [--main-branch NAME] [--config FILE] [--debug] TASK [OPTIONS]",
        "       release --help [TASK] | --list | --version | --completion bash|zsh",
        "",
        "The release-candidate toolkit: cut, pick, tag, images, manifest, reproduce, promote.",
        "",
        "global options:",
    ]
    for names, value, text in GLOBAL_FLAGS:
        spelt = ", ".join(names) + (" VALUE" if value else "")
        lines.append(f"  {spelt:22}{text}")
    lines += ["", "tasks (release TASK --help for a task's options):", _listing()]
    return "\n".join(lines) + "\n"


def _task(name: str) -> Command:
    found = next((c for c in COMMANDS if c.name == name), None)
    if found is not None:
        return found
    names = [c.name for c in COMMANDS]
    from release.cli.arguments import nearest

    near = nearest(name, names) or [n for n in names if n.endswith("." + name)]
    hint = f"; did you mean {' or '.join(near)}?" if near else ""
    raise Refused(f"no task {name!r}{hint}")


def _global_value(words: list[str], i: int, flag: str) -> tuple[str, int]:
    word = words[i]
    if "=" in word:
        return word.split("=", 1)[1], i + 1
    if i + 1 >= len(words):
        raise Refused(f"{flag} takes a value")
    return words[i + 1], i + 2


def run(argv: Sequence[str]) -> int:
    """Parse ``argv`` (without the program name), run it; the exit code."""
    words = list(argv)
    main_branch: str | None = None
    config: str | None = None
    debug = False
    wants_help = False
    i = 0
    while i < len(words) and words[i].startswith("-"):
        word = words[i]
        flag = word.split("=", 1)[0]
        if flag in ("-h", "--help"):
            wants_help, i = True, i + 1
        elif flag in ("-V", "--version"):
            sys.stdout.write(f"release {__version__}\n")
            return ExitCode.OK
        elif flag in ("-l", "--list"):
            sys.stdout.write("tasks:\n" + _listing() + "\n")
            return ExitCode.OK
        elif flag == "--debug":
            debug, i = True, i + 1
        elif flag == "--main-branch":
            main_branch, i = _global_value(words, i, flag)
        elif flag == "--config":
            given, i = _global_value(words, i, flag)
            if not given:
                raise Refused("--config takes a file")
            import os

            config = os.path.abspath(given)
            # the run takes it; the environment carries it to what this run starts (nox
            # sessions, their release)
            os.environ["RELEASE_CONFIG"] = config
        elif flag == "--completion":
            shell, i = _global_value(words, i, flag)
            from release.cli.completion import script

            if shell not in COMPLETION_SHELLS:
                raise Refused(f"--completion {shell!r}: use bash or zsh")
            sys.stdout.write(script(shell))
            return ExitCode.OK
        else:
            known = [n for names, _, _ in GLOBAL_FLAGS for n in names if n.startswith("--")]
            from release.cli.arguments import flags_of, nearest

            near = nearest(flag, known)
            tasks_flags = sorted({f for c in COMMANDS for f in flags_of(c)} - {"--help"})
            task_near = nearest(flag, tasks_flags)
            hint = ""
            if near:
                hint = f" (did you mean {' or '.join(near)}?)"
            elif task_near:
                hint = f" (a task's option? did you mean TASK {task_near[0]}?)"
            raise Refused(f"unknown option {flag}{hint}")
    rest = words[i:]
    if not rest:
        sys.stdout.write(_usage())
        return ExitCode.OK if wants_help else ExitCode.USAGE
    if rest[0] == "__complete":
        from release.cli.completion import complete

        sys.stdout.write("".join(f"{c}\n" for c in complete(rest[1:])))
        return ExitCode.OK
    command = _task(rest[0])
    from release.cli.arguments import ArgumentsRefused, parser_of

    parser = parser_of(command)
    if wants_help:
        sys.stdout.write(parser.format_help())
        return ExitCode.OK
    try:
        parsed = parser.parse_intermixed_args(rest[1:])
    except SystemExit as done:  # --help: argparse printed it
        return int(done.code or ExitCode.OK)
    except ArgumentsRefused as refused:
        raise Refused(str(refused), refused.usage) from None
    from release.cli.dispatch import dispatch

    return dispatch(command, vars(parsed), main_branch=main_branch, config=config, debug=debug)


def main() -> None:
    try:
        code = run(sys.argv[1:])
    except Refused as err:
        from release.cli.console import error

        error(f"{err} (see {err.usage})" if err.usage else str(err))
        code = ExitCode.USAGE
    except BrokenPipeError:  # `release notes | head`: the reader left; that is not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = ExitCode.OK
    sys.exit(int(code))

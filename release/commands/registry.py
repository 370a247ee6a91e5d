"""Every command of ``release``, declared once (see :mod:`release.commands.declare`).

The console script and ``inv release.*`` are made from :data:`COMMANDS`; a command's
function is imported only when it runs.
"""

from __future__ import annotations

from release.commands.declare import Command, Kind, Option

__all__ = ["COMMANDS", "by_name"]

# the options many commands share, spelt and explained once
DRY_RUN = Option("dry-run", "print the plan, change nothing")
JSON = Option("json", "print a JSON document (with a schema key) instead of text")
OFFLINE = Option("offline", "do not ask the remote")

COMMANDS: tuple[Command, ...] = (
    # (filled in as each command moves to the command floor)
    Command(
        name="init",
        summary="Write a commented [tool.release] into pyproject.toml, guessed from this repository.",
        options=(DRY_RUN, JSON),
        target="release.commands.init:init",
        description=(
            "Each value is guessed from what the repository has (release branches, tag "
            "spellings, the main branch, a changelog, a Dockerfile's ARGs) and says so in a "
            "comment; the rest of pyproject.toml is kept byte for byte. A pyproject.toml "
            "that has [tool.release] already is refused (exit 3) and left as it was."
        ),
    ),
    Command(
        name="check",
        summary="Check the configuration, git, docker, the engine and the registry login, one line each.",
        options=(JSON,),
        target="release.commands.check:check",
        description=(
            "Each line says ok, problem or not checked (with why), and what to do; exit 1 "
            "when any is a problem."
        ),
    ),
    Command(
        name="schema",
        summary="Print the JSON Schema of [tool.release], for editors to complete and check it.",
        options=(JSON,),
        target="release.commands.schema:schema",
    ),
)


def by_name() -> dict[str, Command]:
    return {c.name: c for c in COMMANDS}

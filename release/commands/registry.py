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
)


def by_name() -> dict[str, Command]:
    return {c.name: c for c in COMMANDS}

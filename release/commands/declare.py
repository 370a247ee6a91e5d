"""How a command and its options are declared: once, for the console script and invoke.

Declarations import nothing of the floors below, so ``release --help`` and ``release
--list`` read them without loading git, docker or invoke.
"""

from __future__ import annotations

import enum
import keyword
from dataclasses import dataclass

__all__ = ["SHORT", "Command", "Kind", "Option"]


class Kind(enum.Enum):
    FLAG = "flag"  # --dry-run: present or not
    TEXT = "text"  # --since REF: one value
    NUMBER = "number"  # --jobs 2: an int
    MANY = "many"  # --repick SHA, repeatable: a tuple of values


# One short-flag map across every command: a letter means the same long option wherever
# it is offered (a test holds this), and no other option gets a short spelling.
SHORT: dict[str, str] = {
    "dry-run": "n",
    "json": "j",
    "out": "o",
    "variant": "v",
    "file": "f",
    "reason": "r",
    "jobs": "J",
}


@dataclass(frozen=True)
class Option:
    """One option (or positional argument) of a command."""

    name: str  # the long spelling without dashes: "dry-run"
    help: str
    kind: Kind = Kind.FLAG
    choices: tuple[str, ...] = ()  # the values a shell completion offers; others are refused
    positional: bool = False
    required: bool = False
    default: str | int | None = None
    metavar: str | None = None

    @property
    def dest(self) -> str:
        """The request field: ``dry-run`` -> ``dry_run``, ``continue`` -> ``continue_``."""
        name = self.name.replace("-", "_")
        return name + "_" if keyword.iskeyword(name) else name

    @property
    def short(self) -> str | None:
        return None if self.positional else SHORT.get(self.name)


@dataclass(frozen=True)
class Command:
    """A command: its name (``status``, ``images.build``), the sentence ``--help`` and
    ``--list`` show, its options, and the function that runs it (``module:function``,
    imported only when the command runs)."""

    name: str
    summary: str
    options: tuple[Option, ...]
    target: str
    description: str = ""  # more paragraphs for ``release TASK --help``

    def option(self, name: str) -> Option:
        return next(o for o in self.options if o.name == name)

"""How a command and its options are declared: once, for the console script and invoke.

Declarations import nothing of the floors below, so ``release --help`` and ``release
--list`` read them without loading git, docker or invoke.
"""

from __future__ import annotations

import keyword

__all__ = ["SHORT", "Command", "Kind", "Option"]


class Kind:
    """What an option takes. Plain constants, not an enum: ``release --help`` reads the
    declarations before anything else is imported (enum and dataclasses cost a third of
    ``python -c pass`` to import)."""

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


class Option:
    """One option (or positional argument) of a command; immutable once made."""

    __slots__ = (
        "choices", "default", "help", "kind", "metavar", "name", "positional", "required",
        "stand_ins",
    )  # fmt: skip

    def __init__(
        self,
        name: str,  # the long spelling without dashes: "dry-run"
        help: str,
        kind: str = Kind.FLAG,
        *,
        choices: tuple[str, ...] = (),  # the values completion offers; others are refused
        positional: bool = False,
        required: bool = False,
        default: str | int | None = None,
        metavar: str | None = None,
        stand_ins: tuple[str, ...] = (),  # options that make a positional unneeded (below)
    ) -> None:
        if stand_ins and (not positional or required):
            raise ValueError(f"{name}: only a positional that may be left out has stand-ins")
        for key, value in (
            ("name", name),
            ("help", help),
            ("kind", kind),
            ("choices", choices),
            ("positional", positional),
            ("required", required),
            ("default", default),
            ("metavar", metavar),
            ("stand_ins", stand_ins),
        ):
            object.__setattr__(self, key, value)

    name: str
    help: str
    kind: str
    choices: tuple[str, ...]
    positional: bool
    required: bool
    default: str | int | None
    metavar: str | None
    stand_ins: tuple[str, ...]
    """For a positional that may be left out: the options any one of which, given, makes
    it unneeded (pick's commits: ``--continue``, ``--file`` ...). invoke has no optional
    positionals (pyinvoke/invoke#159): there such a positional is one only while none of
    its stand-ins is given, and one without stand-ins is an option (``--tag``)."""

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"an Option is immutable: {key}")

    def __repr__(self) -> str:
        return f"Option({self.name!r}, kind={self.kind!r})"

    @property
    def dest(self) -> str:
        """The request field: ``dry-run`` -> ``dry_run``, ``continue`` -> ``continue_``."""
        name = self.name.replace("-", "_")
        return name + "_" if keyword.iskeyword(name) else name

    @property
    def short(self) -> str | None:
        return None if self.positional else SHORT.get(self.name)


class Command:
    """A command: its name (``status``, ``images.build``), the sentence ``--help`` and
    ``--list`` show, its options, and the function that runs it (``module:function``,
    imported only when the command runs); immutable once made."""

    __slots__ = ("description", "name", "options", "summary", "target")

    def __init__(
        self,
        name: str,
        summary: str,
        options: tuple[Option, ...],
        target: str,
        description: str = "",  # more paragraphs for ``release TASK --help``
    ) -> None:
        names = {o.name for o in options}
        for o in options:
            if not names.issuperset(o.stand_ins):
                unknown = ", ".join(sorted(set(o.stand_ins) - names))
                raise ValueError(f"{name} {o.name}: stand-ins that are not its options: {unknown}")
        for key, value in (
            ("name", name),
            ("summary", summary),
            ("options", options),
            ("target", target),
            ("description", description),
        ):
            object.__setattr__(self, key, value)

    name: str
    summary: str
    options: tuple[Option, ...]
    target: str
    description: str

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"a Command is immutable: {key}")

    def __repr__(self) -> str:
        return f"Command({self.name!r})"

    def option(self, name: str) -> Option:
        return next(o for o in self.options if o.name == name)

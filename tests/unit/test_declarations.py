"""Each command's request type agrees with its declaration, field by field.

The console script, invoke's tasks and the manual are made from the declarations
(:data:`release.commands.registry.COMMANDS`); the command's function takes a request
dataclass, made from the parsed values by field name. So the two must say the same: every
option a field and every field an option, each field's type the option's kind (a flag a
``bool``, a number an ``int``, a repeatable one a ``tuple[str, ...]``, a text a ``str``, or
an enum whose values are the option's choices), a field with no default an option that must
be given, and an option's declared default the field's. A declaration that drifts from its
request would be dropped or refused only at run time: here it is reported, every mismatch at
once, and the check is shown to catch each kind of drift.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import types
import typing
from collections.abc import Callable

import pytest

from release.commands.declare import Command, Kind, Option
from release.commands.registry import COMMANDS


def request_type(command: Command) -> type:
    module, _, name = command.target.partition(":")
    func: Callable[..., object] = getattr(importlib.import_module(module), name)
    kind = typing.get_type_hints(func)["request"]
    assert dataclasses.is_dataclass(kind) and isinstance(kind, type), command.name
    return kind


def _kind_fits(option: Option, wanted: object) -> str | None:
    """What is wrong with a field of type ``wanted`` for ``option``; None when it fits."""
    args = typing.get_args(wanted)
    optional = typing.get_origin(wanted) in (typing.Union, types.UnionType) and type(None) in args
    plain = next((a for a in args if a is not type(None)), wanted) if optional else wanted
    if option.kind == Kind.FLAG:
        return None if wanted is bool else f"a flag wants bool, the field is {wanted}"
    if option.kind == Kind.MANY:
        ok = typing.get_origin(wanted) is tuple and typing.get_args(wanted) == (str, ...)
        return None if ok else f"a repeatable option wants tuple[str, ...], the field is {wanted}"
    if option.kind == Kind.NUMBER:
        return None if plain is int else f"a number wants int, the field is {wanted}"
    if isinstance(plain, type) and issubclass(plain, enum.Enum):
        values = {str(member.value) for member in plain}
        if values != set(option.choices):
            return (
                f"the choices {sorted(option.choices)} are not {plain.__name__}'s {sorted(values)}"
            )
        return None
    return None if plain is str else f"a text wants str (or an enum), the field is {wanted}"


def mismatches(command: Command, kind: type) -> list[str]:
    """Every way ``command``'s declaration and its request type ``kind`` disagree."""
    hints = typing.get_type_hints(kind)
    fields = {f.name: f for f in dataclasses.fields(kind)}
    options = {o.dest: o for o in command.options}
    found = [f"{command.name}: field {n} is no option" for n in sorted(set(fields) - set(options))]
    found += [
        f"{command.name}: option {options[n].name} is no field"
        for n in sorted(set(options) - set(fields))
    ]
    for dest in sorted(set(fields) & set(options)):
        option, field = options[dest], fields[dest]
        wrong = _kind_fits(option, hints[dest])
        if wrong:
            found.append(f"{command.name} {option.name}: {wrong}")
        has_default = not (
            field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
        )
        if not has_default and not (option.required or option.positional):
            found.append(
                f"{command.name} {option.name}: the field has no default, the option may be left out"
            )
        if option.default is not None and has_default:
            default = field.default if field.default is not dataclasses.MISSING else None
            default = default.value if isinstance(default, enum.Enum) else default
            if default != option.default:
                found.append(
                    f"{command.name} {option.name}: declared default {option.default!r}, "
                    f"the field's {default!r}"
                )
    return found


def test_every_request_says_what_its_declaration_says() -> None:
    found = [line for c in COMMANDS for line in mismatches(c, request_type(c))]
    assert not found, "\n".join(found)
    assert len(COMMANDS) >= 27  # the check ran over every command


@dataclasses.dataclass(frozen=True)
class _Request:
    name: str
    count: int = 3
    flag: bool = False
    many: tuple[str, ...] = ()


class _Shade(enum.Enum):
    DARK = "dark"
    LIGHT = "light"


@dataclasses.dataclass(frozen=True)
class _Shaded:
    shade: _Shade = _Shade.DARK


def _declared(*options: Option) -> Command:
    return Command("probe", "a probe", options, "tests.unit.test_declarations:_probe")


GOOD = (
    Option("name", "n", Kind.TEXT, positional=True),
    Option("count", "c", Kind.NUMBER, default=3),
    Option("flag", "f"),
    Option("many", "m", Kind.MANY),
)


def test_an_agreeing_declaration_has_no_mismatch() -> None:
    assert mismatches(_declared(*GOOD), _Request) == []
    shade = Option("shade", "s", Kind.TEXT, choices=("dark", "light"), default="dark")
    assert mismatches(_declared(shade), _Shaded) == []


@pytest.mark.parametrize(
    ("options", "kind", "said"),
    [
        ((*GOOD, Option("extra", "x")), _Request, "option extra is no field"),
        (GOOD[1:], _Request, "field name is no option"),
        ((Option("name", "n", Kind.TEXT), *GOOD[1:]), _Request, "name: the field has no default"),
        ((GOOD[0], Option("count", "c", Kind.TEXT), *GOOD[2:]), _Request, "a text wants str"),
        ((*GOOD[:2], Option("flag", "f", Kind.TEXT), GOOD[3]), _Request, "a text wants str"),
        ((*GOOD[:3], Option("many", "m")), _Request, "a flag wants bool"),
        ((*GOOD[:2], Option("flag", "f", Kind.MANY), GOOD[3]), _Request, "wants tuple[str, ...]"),
        (
            (GOOD[0], Option("count", "c", Kind.NUMBER, default=4), *GOOD[2:]),
            _Request,
            "declared default 4",
        ),
        ((Option("shade", "s", Kind.TEXT, choices=("dark",)),), _Shaded, "are not _Shade's"),
        (
            (Option("shade", "s", Kind.TEXT, choices=("dark", "light"), default="light"),),
            _Shaded,
            "declared default 'light'",
        ),
    ],
)
def test_each_kind_of_drift_is_reported(options: tuple[Option, ...], kind: type, said: str) -> None:
    found = mismatches(_declared(*options), kind)
    assert len(found) == 1 and said in found[0], found


def test_stand_ins_are_declared_only_where_they_can_stand_in() -> None:
    """A positional that may be left out names the options that make it unneeded; each is
    an option of the same command (the invoke route reads them by name)."""
    commits = Option("commits", "shas", Kind.MANY, positional=True, stand_ins=("continue",))
    Command("pick", "pick", (commits, Option("continue", "go on")), "m:f")
    with pytest.raises(
        ValueError, match="pick commits: stand-ins that are not its options: continue"
    ):
        Command("pick", "pick", (commits, Option("abort", "stop")), "m:f")
    for wrong in ({"positional": False}, {"positional": True, "required": True}):
        with pytest.raises(ValueError, match="only a positional that may be left out"):
            Option("tag", "a tag", Kind.TEXT, stand_ins=("json",), **wrong)  # type: ignore[arg-type]

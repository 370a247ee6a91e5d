"""The invoke collection ``release`` (``inv release.cut 0.31.0``), made from the same
declarations as the ``release`` console script, running through the same dispatcher, so
both print the same. invoke gives each option its long spelling (``--dry-run``); the
short letters are the console script's. invoke's flags and settings for commands run
through it (``--dry``, ``--echo``, ``run.*`` ...) would do nothing here: a task given any
is refused before it runs (:mod:`release.cli.invoke_settings`); ``-d`` shows a traceback
on error as ``release --debug`` does."""

from __future__ import annotations

import inspect
import logging
from typing import Any

from invoke.collection import Collection
from invoke.context import Context
from invoke.exceptions import Exit
from invoke.parser.argument import Argument
from invoke.tasks import Task

from release.cli.console import error
from release.cli.dispatch import dispatch
from release.cli.invoke_settings import inert, refusal
from release.commands.declare import Command, Kind, Option
from release.commands.registry import COMMANDS
from release.errors import ExitCode

__all__ = ["invoke_positional", "ns"]


def _default(o: Option) -> Any:
    if o.kind == Kind.FLAG:
        return False
    if o.kind == Kind.MANY:
        return None
    return o.default


def invoke_positional(o: Option) -> bool:
    """Whether invoke reads the option as a positional argument: a required one, or one
    that may be left out when one of its stand-ins is given. invoke has no optional
    positionals (pyinvoke/invoke#159): it asks for every positional without a value, both
    while reading tokens and once all are read, and cannot tell the two apart; so a
    positional that may be left out with nothing to stand in for it is an option there
    (``inv release.github-release --tag v0.31.0rc1``)."""
    return o.positional and (o.required or bool(o.stand_ins))


class _StoodIn(Argument):
    """A positional that reads as empty once one of its stand-ins has a value (pick's
    commits after ``--continue`` or ``--file``): invoke then asks no more for it. Before,
    it takes the next word that is not an option, wherever the other options are."""

    def __init__(self, stand_ins: list[Argument], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.stand_ins = stand_ins

    @property
    def value(self) -> Any:
        if self._value is None and any(a.got_value for a in self.stand_ins):
            return ""
        return self._value if self._value is not None else self.default

    @value.setter
    def value(self, arg: str) -> None:
        self.set_value(arg, cast=True)


class _Task(Task):  # type: ignore[type-arg]
    """A task whose positionals with stand-ins may be left out when one is given."""

    stand_ins: dict[str, frozenset[str]] = {}  # noqa: RUF012 (replaced per task, never changed)

    def get_arguments(self, ignore_unknown_help: bool | None = None) -> list[Argument]:
        made = super().get_arguments(ignore_unknown_help)
        by_name = {a.name: a for a in made}
        return [
            _StoodIn(
                [by_name[n] for n in self.stand_ins[a.name]],
                names=a.names,
                kind=a.kind,
                default=a.default,
                help=a.help,
                positional=True,
            )
            if a.name in self.stand_ins
            else a
            for a in made
        ]


def _refuse_inert(command: Command, c: Context) -> None:
    """Exit 2, before anything runs, when invoke was asked for what this task ignores."""
    found = inert(c.config, getattr(c, "remainder", ""))  # invoke 3 hands the task what follows --
    if found:
        dry_run = any(o.name == "dry-run" for o in command.options)
        error(refusal(f"release.{command.name}", found, dry_run=dry_run))
        raise Exit(code=ExitCode.USAGE)


def _task(command: Command) -> Task:  # type: ignore[type-arg]
    def body(c: Context, **values: Any) -> None:
        _refuse_inert(command, c)
        for o in command.options:
            if o.kind == Kind.MANY:
                given = values.get(o.dest)
                values[o.dest] = [given] if isinstance(given, str) and given else list(given or [])
        # invoke's -d (or INVOKE_DEBUG) turned its log on: a traceback too, as release --debug
        debug = logging.getLogger("invoke").isEnabledFor(logging.DEBUG)
        code = dispatch(command, values, debug=debug)
        if code != ExitCode.OK:
            raise Exit(code=code)

    params = [inspect.Parameter("c", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for o in command.options:
        default = inspect.Parameter.empty if o.required else _default(o)
        params.append(
            inspect.Parameter(o.dest, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default)
        )
    body.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    body.__name__ = command.name.rpartition(".")[2]
    body.__doc__ = command.summary
    task = _Task(
        body,
        name=body.__name__,
        help={o.name: o.help for o in command.options},
        positional=[o.dest for o in command.options if invoke_positional(o)],
        iterable=[o.dest for o in command.options if o.kind == Kind.MANY and not o.positional],
        auto_shortflags=False,
    )
    dest = {o.name: o.dest for o in command.options}
    task.stand_ins = {
        o.dest: frozenset(dest[n] for n in o.stand_ins)
        for o in command.options
        if invoke_positional(o) and o.stand_ins
    }
    return task


def _namespace() -> Collection:
    ns = Collection("release")
    groups: dict[str, Collection] = {}
    for command in COMMANDS:
        group, _, _ = command.name.rpartition(".")
        if not group:
            ns.add_task(_task(command))
            continue
        if group not in groups:
            groups[group] = Collection(group)
            ns.add_collection(groups[group])
        groups[group].add_task(_task(command))
    return ns


ns = _namespace()

"""A command's argparse parser, made from its declaration; its errors raised with the
nearest spelling (an option, or a value of a choice) rather than printed and exited.
Imported only when a task's command line is parsed."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from release.commands.declare import Command, Kind, Option
from release.commands.registry import COMMANDS

__all__ = ["ArgumentsRefused", "flags_of", "nearest", "parser_of"]


class ArgumentsRefused(Exception):
    """A task's command line that cannot run; ``usage`` is where to look (or empty)."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors raised (to be said with a suggestion) rather than exiting."""

    def error(self, message: str) -> NoReturn:
        said = _suggest(self, message)
        # a value outside its choices says them all: no usage to point at
        raise ArgumentsRefused(said, "" if said.startswith("--") else f"{self.prog} --help")


def flags_of(command: Command) -> list[str]:
    out = ["--help"]
    for o in command.options:
        if not o.positional:
            out.append(f"--{o.name}")
    return out


def nearest(word: str, candidates: Sequence[str]) -> list[str]:
    import difflib  # only a misspelt word asks: every command parses its arguments here

    return difflib.get_close_matches(word, candidates, n=2, cutoff=0.6)


def _suggest(parser: argparse.ArgumentParser, message: str) -> str:
    """argparse's message, with the nearest option (or choice) appended."""
    command = next((c for c in COMMANDS if parser.prog == f"release {c.name}"), None)
    if command is None:
        return message
    if message.startswith("unrecognized arguments: "):
        words = message.removeprefix("unrecognized arguments: ").split()
        flag = next((w for w in words if w.startswith("-")), None)
        if flag is not None:
            name = flag.split("=", 1)[0]
            near = nearest(name, flags_of(command))
            hint = f" (did you mean {' or '.join(near)}?)" if near else ""
            return f"unknown option {name} for {command.name}{hint}"
        return f"unexpected argument {words[0]!r} for {command.name}"
    if "invalid choice: " in message:
        bad = message.split("invalid choice: ", 1)[1].split("'")[1]
        for o in command.options:
            if o.choices and message.startswith(f"argument --{o.name}"):
                near = nearest(bad, o.choices)
                hint = f" (did you mean {near[0]}?)" if near else ""
                use = ", ".join(o.choices[:-1]) + f" or {o.choices[-1]}"
                return f"--{o.name} {bad!r}: use {use}{hint}"
    return message


def _formatter(prog: str) -> argparse.HelpFormatter:
    """argparse's formatter, told the terminal's width: found as ``shutil`` finds it
    (``$COLUMNS``, else stdout's terminal, else 80), without importing ``shutil``, which
    argparse would import on every run (it makes a formatter for each option added)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, OSError, ValueError):
            columns = 0
    return argparse.RawDescriptionHelpFormatter(prog, width=(columns or 80) - 2)


def parser_of(command: Command) -> argparse.ArgumentParser:
    description = command.summary + (f"\n\n{command.description}" if command.description else "")
    parser = _Parser(
        prog=f"release {command.name}",
        description=description,
        allow_abbrev=False,
        formatter_class=_formatter,
    )
    for o in command.options:
        _add(parser, o)
    return parser


def _add(parser: argparse.ArgumentParser, o: Option) -> None:
    text = o.help + (f" ({', '.join(o.choices)})" if o.choices and "," not in o.help else "")
    if o.positional:
        nargs = "*" if o.kind == Kind.MANY else (None if o.required else "?")
        parser.add_argument(o.dest, nargs=nargs, help=text, metavar=o.name.upper())
        return
    names = [f"--{o.name}"] + ([f"-{o.short}"] if o.short else [])
    if o.kind == Kind.FLAG:
        parser.add_argument(*names, dest=o.dest, action="store_true", help=text)
    elif o.kind == Kind.MANY:
        parser.add_argument(
            *names, dest=o.dest, action="append", default=[], help=text, metavar=o.metavar
        )
    else:
        parser.add_argument(
            *names,
            dest=o.dest,
            type=int if o.kind == Kind.NUMBER else str,
            choices=o.choices or None,
            default=o.default,
            required=o.required,
            help=text,
            metavar=o.metavar or (None if o.choices else o.name.upper()),
        )

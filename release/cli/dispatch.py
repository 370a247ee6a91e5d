"""One command run, whoever parsed its command line (the console script or invoke): the
request made from the option values, the command's function called, its outcome rendered
as text or as a JSON document, errors as one line (and a JSON error document under
``--json``), and the exit code."""

from __future__ import annotations

import dataclasses
import enum
import importlib
import os
import sys
import typing
from collections.abc import Callable, Mapping
from pathlib import Path

from release.adapters.config_file import CONFIG_ENV
from release.adapters.known_secrets import shown, shown_document
from release.cli.console import error, printable, say
from release.cli.entry import INTERRUPTED, TERMINATED, sigterm_stops
from release.commands.declare import Command
from release.commands.outcome import Outcome, Run, schema_of
from release.errors import ExitCode, ReleaseError, Terminated, UsageError

__all__ = ["MAIN_ENV", "dispatch", "execute", "repo_path"]

MAIN_ENV = "RELEASE_MAIN_BRANCH"  # overrides main-branch for a run, like --main-branch
ERROR_SCHEMA = schema_of("error")


def repo_path() -> Path:
    """The repository a command acts on: ``$RELEASE_REPO``, else the current directory."""
    return Path(os.environ.get("RELEASE_REPO", "."))


def _debug(flag: bool) -> bool:
    return flag or bool(os.environ.get("RELEASE_DEBUG"))


def _to_stderr(line: str) -> None:
    say(line, stream=sys.stderr)


def _request(func: Callable[..., Outcome], values: Mapping[str, object]) -> object:
    """The command's request: its dataclass made from the values, a choice turned into
    the field's enum."""
    hints = typing.get_type_hints(func)
    kind = hints["request"]
    fields = typing.get_type_hints(kind)
    given = {}
    for f in dataclasses.fields(kind):
        if f.name not in values:
            continue
        value = values[f.name]
        wanted = fields[f.name]
        if isinstance(wanted, type) and issubclass(wanted, enum.Enum) and value is not None:
            value = wanted(value)
        elif isinstance(value, list):
            value = tuple(value)
        given[f.name] = value
    return kind(**given)


def _render(command: Command, outcome: Outcome, as_json: bool) -> None:
    if as_json:
        import json  # (here: a command's text output never imports it)

        body = {"schema": schema_of(command.name), **outcome.document()}
        sys.stdout.write(json.dumps(shown_document(body), indent=2, default=str) + "\n")
    else:
        whole = outcome.whole
        if whole is not None:  # a document printed as it is (the notes), but its secrets
            tty = sys.stdout.isatty()
            sys.stdout.write(printable(whole, keep_newlines=True) if tty else shown(whole))
        for line in outcome.text():
            say(line)
    sys.stdout.flush()
    if outcome.error is not None:
        error(outcome.error)


def _failed(command: Command, message: str, code: int, as_json: bool) -> int:
    if as_json:
        import json

        body = {
            "schema": ERROR_SCHEMA,
            "command": command.name,
            "error": shown(message),
            "exit_code": int(code),
        }
        sys.stdout.write(json.dumps(body, indent=2) + "\n")
        sys.stdout.flush()
    error(message)
    return code


def execute(command: Command, values: Mapping[str, object], run: Run) -> Outcome:
    """Run ``command`` with its option values (by dest) in ``run``: how the console script,
    invoke's tasks and the nox image sessions all call a command."""
    module, _, name = command.target.partition(":")
    func = getattr(importlib.import_module(module), name)
    return func(_request(func, values), run)  # type: ignore[no-any-return]


def dispatch(
    command: Command,
    values: Mapping[str, object],
    *,
    main_branch: str | None = None,
    config: str | None = None,
    debug: bool = False,
) -> int:
    """Run ``command`` with its option values (by dest); the exit code. ``main_branch``,
    ``config``: the global options (else ``$RELEASE_MAIN_BRANCH``, ``$RELEASE_CONFIG``)."""
    as_json = bool(values.get("json"))
    if main_branch is None:
        main_branch = os.environ.get(MAIN_ENV)
    config = config or os.environ.get(CONFIG_ENV) or None
    run = Run(
        repo_path(),
        _to_stderr if as_json else say,
        main_branch,
        as_json,
        live=not as_json,
        config=Path(config) if config else None,
    )
    try:
        with sigterm_stops():
            outcome = execute(command, values, run)
            _render(command, outcome, as_json)
            return int(outcome.exit_code)
    except ReleaseError as err:
        if _debug(debug):
            raise
        return _failed(command, err.one_line(), err.exit_code, as_json)
    except ValueError as err:  # a choice the enum does not have (invoke does not check)
        if _debug(debug) or "is not a valid" not in str(err):
            raise
        return _failed(command, UsageError(str(err)).one_line(), UsageError.exit_code, as_json)
    except Terminated:
        return _failed(command, TERMINATED, Terminated.exit_code, as_json)
    except KeyboardInterrupt:
        return _failed(command, INTERRUPTED, ExitCode.INTERRUPTED, as_json)

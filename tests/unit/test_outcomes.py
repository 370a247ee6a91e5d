"""Every command returns a typed outcome: a frozen dataclass of its own, holding records
(not a document of JSON), serialised only by its ``document()`` and ``text()``."""

from __future__ import annotations

import dataclasses
import importlib
import typing
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import pytest

from release.commands.declare import Command
from release.commands.outcome import JSONValue, Outcome, Run
from release.commands.registry import COMMANDS
from release.errors import ExitCode

# fields that hold a JSON document, and why it has no shape of its own here
DOCUMENT_FIELDS = {
    # the release manifest is a JSON document checked against its schema; its records are
    # release.core.manifest's own
    "ManifestOutcome.manifest",
}


def _function(command: Command) -> Callable[..., object]:
    module, _, name = command.target.partition(":")
    func: Callable[..., object] = getattr(importlib.import_module(module), name)
    return func


def outcome_problem(func: Callable[..., object]) -> str | None:
    """Why ``func``'s return annotation is not a typed outcome (None: it is one)."""
    kind = typing.get_type_hints(func).get("return")
    if not isinstance(kind, type) or kind is Outcome or getattr(kind, "_is_protocol", False):
        return f"returns {kind!r}, not an outcome class of its own"
    if not dataclasses.is_dataclass(kind) or not kind.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        return f"{kind.__name__} is not a frozen dataclass"
    missing = [m for m in ("exit_code", "text", "document") if not hasattr(kind, m)]
    if missing:
        return f"{kind.__name__} has no {', '.join(missing)}"
    documents = [
        f"{kind.__name__}.{f.name}"
        for f in dataclasses.fields(kind)
        if "JSONValue" in str(f.type) or "Any" in str(f.type)
    ]
    if set(documents) - DOCUMENT_FIELDS:
        return f"holds JSON documents, not records: {sorted(set(documents) - DOCUMENT_FIELDS)}"
    return None


def test_every_command_returns_a_typed_outcome() -> None:
    problems = {c.name: outcome_problem(_function(c)) for c in COMMANDS}
    typed = [name for name, problem in problems.items() if problem is None]
    assert {n: p for n, p in problems.items() if p} == {}
    assert len(typed) == len(COMMANDS) == 27, f"typed outcomes {len(typed)}/{len(COMMANDS)}"


def test_each_command_has_an_outcome_class_of_its_own() -> None:
    kinds = {c.name: typing.get_type_hints(_function(c))["return"] for c in COMMANDS}
    shared = {k for k in kinds.values() if list(kinds.values()).count(k) > 1}
    assert not shared, {n: k.__name__ for n, k in kinds.items() if k in shared}


@dataclasses.dataclass
class _Loose:
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> Iterable[str]:
        return ()

    def document(self) -> Mapping[str, JSONValue]:
        return {}


@dataclasses.dataclass(frozen=True)
class _Bag:
    data: Mapping[str, JSONValue]
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> Iterable[str]:
        return ()

    def document(self) -> Mapping[str, JSONValue]:
        return self.data


def _protocol(request: object, run: Run) -> Outcome:
    raise NotImplementedError


def _loose(request: object, run: Run) -> _Loose:
    raise NotImplementedError


def _bag(request: object, run: Run) -> _Bag:
    raise NotImplementedError


def _path(request: object, run: Run) -> Path:
    raise NotImplementedError


@pytest.mark.parametrize(
    ("func", "said"),
    [
        (_protocol, "not an outcome class"),
        (_loose, "not a frozen dataclass"),
        (_bag, "holds JSON documents"),
        (_path, "not a frozen dataclass"),
    ],
)
def test_an_untyped_outcome_is_caught(func: Callable[..., object], said: str) -> None:
    problem = outcome_problem(func)
    assert problem is not None and said in problem

"""Every command returns a typed outcome: a frozen dataclass of its own, holding records
(not a document of JSON), serialised only by its ``document()`` and ``text()``, with every
member of :class:`~release.commands.outcome.Outcome` (``error`` and ``whole``
included), so the renderers read them typed: no ``getattr`` on an outcome
is left in the package."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import typing
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import pytest

from release.commands.declare import Command
from release.commands.outcome import JSONValue, Outcome, OutcomeDefaults, Run
from release.commands.registry import COMMANDS
from release.errors import ExitCode

PACKAGE = Path(__file__).resolve().parents[2] / "release"
# what every outcome has: the protocol's own members (properties and methods)
MEMBERS = tuple(sorted(n for n in vars(Outcome) if not n.startswith("_")))

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
    missing = [m for m in MEMBERS if not hasattr(kind, m)]
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


def test_the_protocol_declares_what_the_renderers_read() -> None:
    assert MEMBERS == ("document", "error", "exit_code", "text", "whole")


@dataclasses.dataclass
class _Loose(OutcomeDefaults):
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> Iterable[str]:
        return ()

    def document(self) -> Mapping[str, JSONValue]:
        return {}


@dataclasses.dataclass(frozen=True)
class _Bag(OutcomeDefaults):
    data: Mapping[str, JSONValue]
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> Iterable[str]:
        return ()

    def document(self) -> Mapping[str, JSONValue]:
        return self.data


@dataclasses.dataclass(frozen=True)
class _Bare:  # no OutcomeDefaults: no error or whole
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> Iterable[str]:
        return ()

    def document(self) -> Mapping[str, JSONValue]:
        return {}


def _protocol(request: object, run: Run) -> Outcome:
    raise NotImplementedError


def _loose(request: object, run: Run) -> _Loose:
    raise NotImplementedError


def _bag(request: object, run: Run) -> _Bag:
    raise NotImplementedError


def _bare(request: object, run: Run) -> _Bare:
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
        (_bare, "has no error, whole"),
    ],
)
def test_an_untyped_outcome_is_caught(func: Callable[..., object], said: str) -> None:
    problem = outcome_problem(func)
    assert problem is not None and said in problem


def outcome_getattrs(source: str, where: str = "<source>") -> list[str]:
    """``getattr``/``hasattr`` calls in ``source`` that read an outcome untyped: a member of
    :class:`Outcome` by name, or anything of a value whose name says it is an outcome."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and len(node.args) >= 2
        ):
            continue
        subject, name = node.args[0], node.args[1]
        named = isinstance(name, ast.Constant) and name.value in MEMBERS
        outcome = "outcome" in ast.unparse(subject).lower()
        if named or outcome:
            found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_outcome_is_read_with_getattr() -> None:
    found = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        for hit in outcome_getattrs(path.read_text(), str(path.relative_to(PACKAGE.parent)))
    ]
    assert found == []


@pytest.mark.parametrize(
    "line",
    [
        'problem = getattr(outcome, "error", None)',
        'whole = getattr(result, "whole", None)',
        "flag = bool(getattr(self.outcome, 'whole', None))",
        'if hasattr(outcome, "anything"): pass',
    ],
)
def test_a_getattr_on_an_outcome_is_caught(line: str) -> None:
    assert outcome_getattrs(f"def render(outcome, result):\n    {line}\n") != []


def test_other_getattrs_are_not_taken_for_outcomes() -> None:
    source = 'reason = getattr(err, "reason", err)\nflags = getattr(os, "O_CLOEXEC", 0)\n'
    assert outcome_getattrs(source) == []


@dataclasses.dataclass(frozen=True)
class _Said(OutcomeDefaults):
    error: str | None = None
    whole: str | None = None
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> Iterable[str]:
        return ("a line",)

    def document(self) -> Mapping[str, JSONValue]:
        return {"said": True}


def _rendered(outcome: Outcome, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    from release.cli.dispatch import _render

    _render(COMMANDS[0], outcome, as_json=False)
    out, err = capsys.readouterr()
    return out, err


def test_the_defaults_render_text_alone(capsys: pytest.CaptureFixture[str]) -> None:
    assert _rendered(_Said(), capsys) == ("a line\n", "")


def test_each_member_is_rendered_as_the_protocol_says(capsys: pytest.CaptureFixture[str]) -> None:
    out, err = _rendered(_Said(error="it broke", whole="# whole\n"), capsys)
    assert (out, err) == ("# whole\na line\n", "error: it broke\n")

"""What a command runs in, and what it gives back for the CLI and nox to render."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from release.core.json_text import JSONValue
from release.errors import ExitCode

__all__ = ["SCHEMA_PREFIX", "JSONValue", "Outcome", "Report", "Run", "schema_of"]

SCHEMA_PREFIX = "release/"


def schema_of(command: str) -> str:
    """The ``schema`` key of a command's JSON document: ``release/status/v1``."""
    return f"{SCHEMA_PREFIX}{command}/v1"


@dataclass(frozen=True)
class Run:
    """Where and how a command runs: the repository (``$RELEASE_REPO`` or the current
    directory), the main branch for this run (``--main-branch`` / ``$RELEASE_MAIN_BRANCH``;
    ``None``: the config's), whether the output is a JSON document, and where progress
    goes while it works (stdout for text; stderr under ``--json``, so stdout holds only the
    document). ``live``: progress may draw live lines (a build's line per variant) when
    stdout is a terminal; the CLI sets it for text output, nox and ``--json`` leave it off."""

    repo: Path
    say: Callable[[str], None]
    main_branch: str | None = None
    json: bool = False
    live: bool = False


class Outcome(Protocol):
    """A command's result: lines for a person, a document for a program, an exit code."""

    @property
    def exit_code(self) -> ExitCode: ...

    def text(self) -> Iterable[str]: ...

    def document(self) -> Mapping[str, JSONValue]: ...


@dataclass(frozen=True)
class Report:
    """The outcome most commands give: the lines that end its text (after the progress it
    said while working), the JSON document, and the exit code."""

    lines: tuple[str, ...] = ()
    data: Mapping[str, JSONValue] = field(default_factory=dict)
    exit_code: ExitCode = ExitCode.OK
    error: str | None = None  # said as ``error: ...`` on stderr, after the document

    def text(self) -> Iterable[str]:
        return self.lines

    def document(self) -> Mapping[str, JSONValue]:
        return self.data

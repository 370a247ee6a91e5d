"""What a command runs in, and what it gives back for the CLI and nox to render."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from release.core.json_text import JSONValue
from release.errors import ExitCode

__all__ = ["SCHEMA_PREFIX", "JSONValue", "Outcome", "OutcomeDefaults", "Run", "schema_of"]

SCHEMA_PREFIX = "release/"


def schema_of(command: str) -> str:
    """The ``schema`` key of a command's JSON document: ``release/status/v1``."""
    return f"{SCHEMA_PREFIX}{command}/v1"


@dataclass(frozen=True)
class Run:
    """Where and how a command runs: the repository (``$RELEASE_REPO`` or the current
    directory), the main branch for this run (``--main-branch`` / ``$RELEASE_MAIN_BRANCH``;
    ``None``: the config's), the configuration file from outside the tree (``--config`` /
    ``$RELEASE_CONFIG``; ``None``: the tree's ``[tool.release]``), whether the output is a JSON document, and where progress
    goes while it works (stdout for text; stderr under ``--json``, so stdout holds only the
    document). ``live``: progress may draw live lines (a build's line per variant) when
    stdout is a terminal; the CLI sets it for text output, nox and ``--json`` leave it off."""

    repo: Path
    say: Callable[[str], None]
    main_branch: str | None = None
    json: bool = False
    live: bool = False
    config: Path | None = None


class Outcome(Protocol):
    """A command's result: lines for a person, a document for a program, an exit code.

    Each command returns a frozen dataclass of its own (``StatusOutcome``, ``CutOutcome``,
    ...) holding the records the floors below gave, serialised only by these methods.
    Every outcome also says (:class:`OutcomeDefaults` gives the defaults):

    - ``error``: a line said as ``error: ...`` on stderr, after the document (None: none);
    - ``whole``: a document printed to stdout as it is, before ``text()`` (the notes; None:
      none)."""

    @property
    def exit_code(self) -> ExitCode: ...

    @property
    def error(self) -> str | None: ...

    @property
    def whole(self) -> str | None: ...

    def text(self) -> Iterable[str]: ...

    def document(self) -> Mapping[str, JSONValue]: ...


class OutcomeDefaults:
    """What an outcome says unless its record says otherwise: no error line, no document
    printed whole. Every command's outcome derives from it; a
    dataclass field (``error: str | None = None``) or a property of the same name in the
    record overrides a default."""

    @property
    def error(self) -> str | None:
        return None

    @property
    def whole(self) -> str | None:
        return None

"""``release schema``: the JSON Schema of ``[tool.release]``, printed for an editor (taplo,
Even Better TOML) or a checker to read."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from release.commands.outcome import JSONValue, OutcomeDefaults, Run
from release.core.config_schema import schema_text
from release.errors import ExitCode

__all__ = ["SchemaOutcome", "SchemaRequest", "schema"]


@dataclass(frozen=True)
class SchemaRequest:
    json: bool = False


@dataclass(frozen=True)
class SchemaOutcome(OutcomeDefaults):
    text_form: str  # the schema as shipped

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.OK

    def text(self) -> Iterable[str]:
        return self.text_form.splitlines()

    def document(self) -> Mapping[str, JSONValue]:
        schema: dict[str, JSONValue] = json.loads(self.text_form)
        return {"json_schema": schema}


def schema(request: SchemaRequest, run: Run) -> SchemaOutcome:
    """The schema, as text (the file itself) or inside a JSON document."""
    return SchemaOutcome(schema_text())

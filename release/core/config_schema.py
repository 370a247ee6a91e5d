"""The JSON Schema of ``[tool.release]`` (draft 2020-12), shipped beside this module, for
editors to complete and check the table. :mod:`release.core.config` stays the judge of a
configuration; a test holds the two in step (every key the parser accepts is in the
schema, and no other). Pure.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

__all__ = ["SCHEMA_FILE", "schema_problems", "schema_text"]

SCHEMA_FILE = "config.schema.json"


def schema_text() -> str:
    """The schema as shipped (JSON text, one trailing newline)."""
    text = (resources.files("release.core") / SCHEMA_FILE).read_text(encoding="utf-8")
    return text if text.endswith("\n") else text + "\n"


@functools.cache
def _validator() -> Any:
    import jsonschema  # loaded when a table is checked against the schema, not at start-up

    # the shipped schema is checked against the metaschema by the tests, not on every run
    return jsonschema.Draft202012Validator(json.loads(schema_text()))


def schema_problems(table: Mapping[str, object]) -> list[str]:
    """What the schema finds wrong with a ``[tool.release]`` table, one line each, naming
    where (``[tool.release] images.variants.0.cuda``); empty when it validates."""
    out = []
    for error in sorted(_validator().iter_errors(table), key=lambda e: list(map(str, e.path))):
        where = ".".join(str(p) for p in error.absolute_path)
        out.append(f"[tool.release]{' ' + where if where else ''}: {error.message}")
    return out

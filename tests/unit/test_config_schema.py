"""The JSON Schema of [tool.release] and the config parser are in step: the keys the
parser accepts are the schema's, the tables this repository and the sample engine ship
validate, and a wrong type fails both."""

from __future__ import annotations

import json
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from release.core import ci_config as ci_module
from release.core import config as config_module
from release.core import github_config as github_module
from release.core import matrix as matrix_module
from release.core import serving as serving_module
from release.core import smoke_config as smoke_module
from release.core import variant as variant_module
from release.core.config import config_from_mapping
from release.core.config_schema import schema_problems, schema_text
from release.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SCHEMA: dict[str, Any] = json.loads(schema_text())
SAMPLE = Path(str(resources.files("release") / "sample" / "engine")) / "pyproject.toml"


def keys(definition: dict[str, Any]) -> set[str]:
    if "$ref" in definition:
        definition = SCHEMA["$defs"][definition["$ref"].rsplit("/", 1)[1]]
    assert definition.get("additionalProperties") is False, definition
    return set(definition["properties"])


def table_of(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))["tool"]["release"]


def test_the_schema_is_a_draft_2020_12_schema() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize(
    ("where", "accepted"),
    [
        ((), config_module._KEYS),
        (("ci",), ci_module._KEYS),
        (("github",), github_module.GITHUB_KEYS),
        (("images",), matrix_module._IMAGE_KEYS),
        (("images", "variants[]"), variant_module.VARIANT_KEYS),
        (("images", "snapshot"), matrix_module._SNAPSHOT_KEYS),
        (("images", "smoke"), smoke_module._SMOKE_KEYS),
        (("images", "smoke", "checks[]"), smoke_module._CHECK_KEYS),
        (("images", "snapshot", "warm[]"), serving_module._REQUEST_KEYS),
        (("images", "smoke", "checks[]", "requests[]"), serving_module._REQUEST_KEYS),
    ],
)
def test_every_key_the_parser_accepts_is_in_the_schema_and_no_other(
    where: tuple[str, ...], accepted: Any
) -> None:
    definition: dict[str, Any] = SCHEMA
    for step in where:
        if "$ref" in definition:
            definition = SCHEMA["$defs"][definition["$ref"].rsplit("/", 1)[1]]
        definition = definition["properties"][step.removesuffix("[]")]
        if step.endswith("[]"):
            definition = definition["items"]
    assert keys(definition) == set(accepted)


@pytest.mark.parametrize(
    "path",
    [ROOT / "pyproject.toml", SAMPLE],
    ids=["this repository", "the sample engine"],
)
def test_the_tables_shipped_validate(path: Path) -> None:
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    table = document.get("tool", {}).get("release", {})
    assert schema_problems(table) == []
    config_from_mapping(table)


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda t: t.update({"merge-by-name": "yes"}), "merge-by-name"),
        (lambda t: t.update({"first-rc": 2}), "first-rc"),
        (lambda t: t.update({"version-scheme": "calver"}), "version-scheme"),
        (lambda t: t.update({"tag": "release-{major}"}), "tag"),
        (lambda t: t.update({"bots": "dependabot"}), "bots"),
        (lambda t: t.update({"mainbranch": "main"}), ""),
        (lambda t: t.update({"ci": {"install": "release==1", "requirements": "r.txt"}}), "ci"),
        (lambda t: t.update({"ci": {"environment": "${{ github.actor }}"}}), "ci.environment"),
        (lambda t: t.update({"ci": {"transfer-environment": " ci"}}), "ci.transfer-environment"),
        (lambda t: t.update({"ci": {"environment": "x" * 256}}), "ci.environment"),
        (lambda t: t.update({"github": {"repo": "vllm-project"}}), "github.repo"),
        (lambda t: t.update({"github": {"protected": "yes"}}), "github.protected"),
        (lambda t: t.update({"github": {"pick-label": "a,b"}}), "github.pick-label"),
        (lambda t: t.update({"github": {"releases": True}}), "github"),
        (lambda t: t["images"]["variants"][0].update({"cuda": 12.9}), "images.variants.0.cuda"),
        (lambda t: t["images"]["variants"][0].pop("base-image"), "images.variants.0"),
        (lambda t: t["images"]["variants"][0].update({"rocm": "6.4.1"}), "images.variants.0"),
        (lambda t: t["images"]["variants"][0].pop("cuda"), "images.variants.0"),
        (lambda t: t["images"]["variants"][0].update({"cpu": False}), "images.variants.0"),
        (
            lambda t: t["images"]["variants"][0].update({"target": "a b"}),
            "images.variants.0.target",
        ),
        (lambda t: t["images"]["snapshot"].pop("cuda"), "images.snapshot"),
        (
            lambda t: t["images"]["snapshot"].update({"accelerator": "gpu"}),
            "images.snapshot.accelerator",
        ),
        (lambda t: t["images"]["snapshot"].update({"port": "8000"}), "images.snapshot.port"),
        (lambda t: t["images"]["smoke"].update({"env": {"A": 1}}), "images.smoke.env.A"),
        (
            lambda t: t["images"]["smoke"]["checks"][0]["requests"][0].update({"methd": "GET"}),
            "images.smoke.checks.0.requests.0",
        ),
    ],
)
def test_a_wrong_value_fails_the_schema_and_the_parser(change: Any, where: str) -> None:
    table = table_of(SAMPLE)
    change(table)
    problems = schema_problems(table)
    assert problems and problems[0].startswith(f"[tool.release]{' ' + where if where else ''}:")
    with pytest.raises(ConfigError):
        config_from_mapping(table)


def test_release_schema_prints_the_schema_as_shipped(tmp_path: Path) -> None:
    from release.commands.outcome import Run
    from release.commands.schema import SchemaRequest, schema

    said: list[str] = []
    outcome = schema(SchemaRequest(), Run(tmp_path, said.append))
    assert outcome.exit_code == 0 and said == []
    assert json.loads("\n".join(outcome.text())) == SCHEMA
    assert outcome.document() == {"json_schema": SCHEMA}

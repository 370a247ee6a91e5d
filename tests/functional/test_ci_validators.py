"""Every pipeline ``release ci`` writes passes the validators CI providers and auditors
use: actionlint (GitHub Actions, 0 findings), zizmor (GitHub Actions security audit,
offline, the auditor persona: 0 findings: least privilege with each permission explained,
no credentials left in the checkout, actions pinned by commit, no template injection,
secrets only in jobs with an environment) and check-jsonschema's vendored GitHub workflow and
Buildkite schemas; for artifacts and a registry, with runners and timeouts per job kind.
And each validator fails on a file with the flaw it looks for, so a pass means something."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.ci_validation_support import (
    HOSTILE,
    LABELS,
    ROUTES,
    hostile_engine,
    tool,
    validate,
    written,
    written_all,
    zizmor,
)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_the_github_workflow_passes_actionlint_zizmor_and_the_schema(
    tmp_path: Path, route: str
) -> None:
    workflows = [str(path) for path in written_all(tmp_path, "github", route)]  # each checked
    lint = validate([tool("actionlint"), "-no-color", *LABELS(tmp_path), *workflows])
    assert lint.returncode == 0 and lint.stdout == "", lint.stdout + lint.stderr
    audit = validate([*zizmor(), *workflows])
    assert audit.returncode == 0 and "No findings" in audit.stdout, audit.stdout + audit.stderr
    schema = validate(
        [tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *workflows]
    )
    assert schema.returncode == 0, schema.stdout + schema.stderr


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_the_buildkite_pipeline_passes_the_schema(tmp_path: Path, route: str) -> None:
    pipeline = written(tmp_path, "buildkite", route)
    schema = validate(
        [tool("check-jsonschema"), "--builtin-schema", "vendor.buildkite", str(pipeline)]
    )
    assert schema.returncode == 0, schema.stdout + schema.stderr


def test_each_validator_finds_the_flaw_it_looks_for(tmp_path: Path) -> None:
    """Each flawed file is given after a good one, as the checks above give several."""
    passing = written(tmp_path, "github", "artifacts")
    good = passing.read_text(encoding="utf-8")
    broad = tmp_path / "broad.yml"  # credentials left in the checkout, no permissions
    broad.write_text(
        good.replace("          persist-credentials: false\n", "")
        .replace("permissions: {}\n", "")
        .replace('    permissions:\n      contents: "read"  # to check out the repository\n', ""),
        encoding="utf-8",
    )
    audit = validate([*zizmor(), str(passing), str(broad)])
    assert audit.returncode != 0, audit.stdout
    assert "artipacked" in audit.stdout and "excessive-permissions" in audit.stdout
    typo = tmp_path / "typo.yml"  # a job that needs one that does not exist
    typo.write_text(good.replace('- "build-cu128"', '- "build-cu127"', 1), encoding="utf-8")
    lint = validate([tool("actionlint"), "-no-color", *LABELS(tmp_path), str(passing), str(typo)])
    assert lint.returncode != 0 and "build-cu127" in lint.stdout, lint.stdout
    shape = tmp_path / "shape.yml"  # runs-on with no steps: not a workflow job
    shape.write_text(good.replace("steps:", "stepz:", 1), encoding="utf-8")
    schema = validate(
        [tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows",
         str(passing), str(shape)]
    )  # fmt: skip
    assert schema.returncode != 0, schema.stdout


# -- no value becomes code (HOSTILE, hostile_engine: tests/ci_validation_support.py) ----
def strings(value: object) -> list[str]:
    """Every string value of a TOML table (its keys are the schema's own words)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def lines(fmt: str, documents: list[dict[str, Any]]) -> list[str]:
    """Every line the CI would run: GitHub's ``run:``, Buildkite's ``command:``."""
    if fmt == "buildkite":
        return [c for d in documents for s in d["steps"] for c in s.get("command", [])]
    return [
        s["run"] for d in documents for j in d["jobs"].values() for s in j["steps"] if "run" in s
    ]


def written_by_release_ci(root: Path, fmt: str) -> list[Path]:
    from tests.conftest import run_cli

    made = run_cli(root, "ci", "--format", fmt)
    assert made.code == 0, made.output
    folder = root / (".buildkite" if fmt == "buildkite" else ".github/workflows")
    return sorted(folder.glob("*.yml"))


@pytest.mark.parametrize("install", [True, False], ids=["install", "requirements"])
def test_hostile_values_stay_data_and_the_validators_find_nothing(
    tmp_path: Path, install: bool
) -> None:
    import tomllib

    import invoke.vendor.yaml as yaml

    root = hostile_engine(tmp_path / "hostile", install)
    plain = hostile_engine(tmp_path / "plain", install, hostile=False)
    table = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["release"]
    values = [v for v in strings(table) if len(v) > 2]
    labels = tmp_path / "actionlint.yaml"
    labels.write_text(
        "self-hosted-runner:\n  labels: "
        + json.dumps(list(HOSTILE["runners"].values()))  # type: ignore[union-attr]
        + "\n"
    )
    for fmt in ("github", "buildkite"):
        files = written_by_release_ci(root, fmt)
        documents = [yaml.safe_load(f.read_text()) for f in files]
        runs = lines(fmt, documents)
        found = [(v, r) for v in values for r in runs if v in r.replace("$$", "$")]
        assert not found, found  # no value of the table in a line the CI runs
        twin = [yaml.safe_load(f.read_text()) for f in written_by_release_ci(plain, fmt)]
        assert sorted(set(runs)) == sorted(set(lines(fmt, twin)))  # the lines are fixed text
        paths = [str(path) for path in files]  # each validator checks every file
        schema = "vendor.buildkite" if fmt == "buildkite" else "vendor.github-workflows"
        checked = validate([tool("check-jsonschema"), "--builtin-schema", schema, *paths])
        assert checked.returncode == 0, checked.stdout + checked.stderr
        if fmt == "buildkite":
            text = files[0].read_text()
            assert not re.search(r"(?<!\$)\$(?!\$)", text.replace("$$", "")), text  # all doubled
            continue
        audit = validate([*zizmor(), *paths])
        assert audit.returncode == 0 and "No findings" in audit.stdout, audit.stdout
        lint = validate([tool("actionlint"), "-no-color", "-config-file", str(labels), *paths])
        assert lint.returncode == 0 and lint.stdout == "", lint.stdout + lint.stderr


def test_zizmor_finds_a_value_written_into_a_run_line(tmp_path: Path) -> None:
    """What the generator no longer writes, zizmor does flag: the check above can fail."""
    good = written(tmp_path, "github", "artifacts").read_text(encoding="utf-8")
    injected = tmp_path / "injected.yml"
    injected.write_text(
        good.replace(
            'nox -s \\"$RELEASE_CI_SESSION\\"',
            'nox -s \\"${{ github.event.head_commit.message }}\\"',
            1,
        ),
        encoding="utf-8",
    )
    assert injected.read_text() != good
    audit = validate([*zizmor(), str(injected)])
    assert audit.returncode != 0 and "template-injection" in audit.stdout, audit.stdout

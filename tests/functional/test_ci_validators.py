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
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from release.core.ci_config import parse_ci
from tests.ci_support import as_written, pipeline_texts
from tests.functional.test_ci import root_matrix

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


def zizmor() -> list[str]:
    """zizmor offline as an auditor runs it: every audit, the pedantic ones too (secrets
    outside an environment, permissions without a comment that says why)."""
    return [tool("zizmor"), "--offline", "--no-progress", "--persona", "auditor"]


def validate(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def written_all(tmp_path: Path, fmt: str, route: str) -> list[Path]:
    """Every file ``release ci`` writes for ``fmt`` and ``route``, as it writes them: under
    the header that says what wrote them (a command with quotes and a ``--``)."""
    matrix = root_matrix()
    if route == "release":
        matrix = replace(matrix, registry=RELEASE_REGISTRY)
    texts = pipeline_texts(matrix, fmt, settings=SETTINGS, registry=ROUTES[route])
    assert len(texts) == (2 if fmt == "github" and route == "release" else 1)
    paths = []
    for name, text in texts.items():
        path = tmp_path / f"{fmt}-{route}-{name}"
        given = ROUTES[route]
        made = [
            "release",
            "ci",
            "--format",
            fmt,
            *(["--registry", given] if given is not None else []),
        ]
        path.write_text(as_written(text, made), encoding="utf-8")
        paths.append(path)
    return paths


def written(tmp_path: Path, fmt: str, route: str) -> Path:
    return written_all(tmp_path, fmt, route)[0]


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


# -- no value becomes code ---------------------------------------------------------------
# Values a config lets through that a shell would run, were they written into a line:
# command substitution, backticks, quotes, a semicolon (``${{ }}`` is refused on load:
# tests/functional/test_ci_pins.py). The runner labels, the tag template, the install's URL and the
# requirements file's path reach the files; none may reach a line the CI runs.
HOSTILE = {
    "tag": "v{version}-$(touch+pwned)`id`'q\";x",
    "runners": {"build": "$(touch pwned)", "gpu": "`id`", "default": 'it\'s "quoted"; id'},
    "install": "release @ git+https://git.example.com/$(touch+pwned)/'q'/release@" + "a1" * 20,
    "requirements": "ci/$(touch pwned)/`id` 'q'.txt",
}
PINNED_FILE = (
    "release==0.1.0 \\\n    --hash=sha256:" + "1" * 64 + "\nnox==2024.10.9 \\\n"
    "    --hash=sha256:" + "2" * 64 + "\n"
)


def hostile_engine(where: Path, install: bool, hostile: bool = True) -> Path:
    """An engine whose [tool.release] carries the values above (``install`` or the
    requirements file), or plain ones (``hostile`` false): the same jobs either way."""
    values = HOSTILE if hostile else {
        "tag": "v{version}", "runners": {"build": "b", "gpu": "g", "default": "d"},
        "install": "release @ git+https://git.example.com/org/release@" + "b2" * 20,
        "requirements": "ci/requirements.txt",
    }  # fmt: skip
    variant = "cu129" if hostile else "cu130"
    where.mkdir()
    pin = f"install = {json.dumps(values['install'])}"
    if not install:
        pin = f"requirements = {json.dumps(values['requirements'])}"
        (where / values["requirements"]).parent.mkdir(parents=True)
        (where / values["requirements"]).write_text(PINNED_FILE)
    runners = ", ".join(f"{k} = {json.dumps(v)}" for k, v in values["runners"].items())
    (where / "pyproject.toml").write_text(
        f"[tool.release]\ntag = {json.dumps(values['tag'])}\n"
        f'[tool.release.images]\nname = "example/engine"\ndockerfile = "Dockerfile"\n'
        f'registry = "registry.example.com/org/release"\n'
        f'[[tool.release.images.variants]]\nid = "{variant}"\ncuda = "12.9.1"\n'
        'base-image = "nvidia/cuda:12.9.1-base-ubuntu22.04"\n'
        f"[tool.release.ci]\n{pin}\nrunners = {{ {runners} }}\n"
    )
    (where / "Dockerfile").write_text("FROM scratch\n")
    (where / "noxfile.py").write_text(
        "from release.cli.nox_sessions import image_sessions\n\nimage_sessions()\n"
    )
    subprocess.run(["git", "init", "--quiet", str(where)], check=True)
    return where


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

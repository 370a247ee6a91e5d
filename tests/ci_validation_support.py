"""The validators CI providers and auditors use (actionlint, zizmor as an auditor runs it,
check-jsonschema), the files ``release ci`` writes as it writes them, and an engine whose
``[tool.release]`` carries values a shell would run were they written into a line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from release.core.ci_config import parse_ci
from tests.ci_support import as_written, pipeline_texts, root_matrix

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

"""Images signed in the generated CI (``[tool.release.ci] image-signing-key``): the publish
and promote jobs, and no other, import the key's secret half from
``RELEASE_IMAGE_SIGNING_SECRET`` (a secret of the approval environment; the agent's on
Buildkite) into a GnuPG home of their own and sign by the configured fingerprint, keeping
the signatures as an artifact. The files stay actionlint, zizmor (auditor) and schema
clean. The signing step's own shell line runs here with a real GnuPG: the key is imported
and the command runs with it; without the secret it stops before the command runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from release.core.ci_config import parse_ci
from release.core.pipeline_github import github_workflows
from release.core.pipeline_signing import SIGNATURES_DIR, SIGNING_SECRET
from release.core.yaml_text import dump_yaml
from release.errors import ConfigError
from tests.ci_support import buildkite_pipeline, plan_for, root_matrix
from tests.ci_validation_support import LABELS, RELEASE_REGISTRY, tool, validate, zizmor

FPR = "0123456789ABCDEF0123456789ABCDEF01234567"
ROUTES = {"artifacts": "", "registry": "registry.example.com/org/ci", "release": None}
SIGNERS = ("publish", "promote")


def _matrix() -> Any:
    return replace(root_matrix(), registry=RELEASE_REGISTRY)


def workflows(route: str, **settings: Any) -> list[dict[str, Any]]:
    plan = plan_for(_matrix(), registry=ROUTES[route], settings=parse_ci(settings))
    return github_workflows(plan)


def steps_of(route: str, **settings: Any) -> list[dict[str, Any]]:
    pipeline = buildkite_pipeline(_matrix(), registry=ROUTES[route], settings=parse_ci(settings))
    return list(pipeline["steps"])


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_only_publish_and_promote_sign_and_only_their_step_reads_the_secret(route: str) -> None:
    signing = 0
    for workflow in workflows(route, **{"image-signing-key": FPR}):
        for key, job in workflow["jobs"].items():
            text = str(job)
            signs = key.startswith(SIGNERS)
            assert (SIGNING_SECRET in text) is signs, key
            if not signs:
                continue
            signing += 1
            assert job["environment"] == "release"  # the approval environment's secret
            steps = [s for s in job["steps"] if SIGNING_SECRET in str(s)]
            assert len(steps) == 1, key  # one step reads it
            (step,) = steps
            assert step["env"]["RELEASE_IMAGE_SIGNING_KEY"] == FPR
            assert step["env"]["RELEASE_IMAGE_SIGNATURES"] == SIGNATURES_DIR
            assert "gpg --batch --quiet --import" in step["run"]
            kept = job["steps"][job["steps"].index(step) + 1]
            assert kept["with"]["path"] == SIGNATURES_DIR
            assert kept["with"]["name"] == f"signatures-{key}"
    assert signing == 4  # three variants' publish jobs and the final's promote


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_without_a_key_nothing_signs(route: str) -> None:
    texts = [str(w) for w in workflows(route)] + [str(steps_of(route))]
    assert not any("SIGNING" in t or SIGNATURES_DIR in t for t in texts)


def test_buildkite_signs_in_the_publish_and_promote_steps_after_their_block() -> None:
    steps = steps_of("release", **{"image-signing-key": FPR})
    blocks = {s["key"] for s in steps if "block" in s}
    signing = [s for s in steps if "gpg --batch" in str(s.get("command", ""))]
    assert sorted(s["key"].split("-")[0] for s in signing) == ["promote", *["publish"] * 3]
    for step in signing:
        assert step["env"]["RELEASE_IMAGE_SIGNING_KEY"] == FPR
        assert f"{SIGNATURES_DIR}/**/*" in step["artifact_paths"]
        assert blocks & set(step["depends_on"])  # after the approval
        # the secret is the agent's: never written in the pipeline
        assert SIGNING_SECRET not in step["env"]
        assert step["command"][-1].startswith("if ! { GNUPGHOME=")


def test_the_files_that_sign_pass_actionlint_zizmor_and_the_schemas(tmp_path: Path) -> None:
    paths = []
    for route in sorted(ROUTES):
        for n, workflow in enumerate(workflows(route, **{"image-signing-key": FPR})):
            path = tmp_path / f"{route}-{n}.yml"
            path.write_text(dump_yaml(workflow), encoding="utf-8")
            paths.append(str(path))
    lint = validate([tool("actionlint"), "-no-color", *LABELS(tmp_path), *paths])
    assert lint.returncode == 0 and lint.stdout == "", lint.stdout + lint.stderr
    audit = validate([*zizmor(), *paths])
    assert audit.returncode == 0 and "No findings" in audit.stdout, audit.stdout
    schema = validate(
        [tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *paths]
    )
    assert schema.returncode == 0, schema.stdout + schema.stderr
    pipeline = tmp_path / "pipeline.yml"
    pipeline.write_text(
        dump_yaml({"steps": steps_of("release", **{"image-signing-key": FPR})}), encoding="utf-8"
    )
    schema = validate(
        [tool("check-jsonschema"), "--builtin-schema", "vendor.buildkite", str(pipeline)]
    )
    assert schema.returncode == 0, schema.stdout + schema.stderr


@pytest.mark.parametrize(
    "key",
    [FPR.lower(), FPR[:16], "Maintainer <m@example.org>", FPR + "0", 40, "${{ secrets.X }}"],
)
def test_a_key_that_is_not_a_fingerprint_is_refused(key: object) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_ci({"image-signing-key": key})
    message = str(refused.value)
    assert (
        message.startswith("[tool.release.ci] image-signing-key: expected") and "\n" not in message
    )
    assert parse_ci({"image-signing-key": FPR}).image_signing_key == FPR
    assert parse_ci({}).image_signing_key is None


# -- the signing step's line, run ------------------------------------------------------------


@pytest.fixture(scope="module")
def maintainer_key() -> Iterator[tuple[str, str]]:
    """A throwaway ed25519 key: its fingerprint and its armoured secret half (as the CI
    secret holds it). Its home is short: gpg-agent's socket path has a limit."""
    if shutil.which("gpg") is None:
        pytest.skip("gpg is not installed")
    home = tempfile.mkdtemp(prefix="rel-ci-gpg-", dir="/tmp")
    gpg = ["gpg", "--homedir", home, "--batch"]
    try:
        subprocess.run(
            [*gpg, "--passphrase", "", "--quick-gen-key", "CI <ci@example.invalid>",
             "ed25519", "default", "never"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        listed = subprocess.run(
            [*gpg, "--with-colons", "--list-secret-keys"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        fpr = next(line.split(":")[9] for line in listed.splitlines() if line.startswith("fpr:"))
        secret = subprocess.run(
            [*gpg, "--armor", "--export-secret-keys", fpr],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        yield fpr, secret
    finally:
        subprocess.run(
            ["gpgconf", "--homedir", home, "--kill", "all"], check=False, capture_output=True
        )
        shutil.rmtree(home, ignore_errors=True)


def _publish_step(fpr: str) -> dict[str, Any]:
    images = workflows("release", **{"image-signing-key": fpr})[0]
    job = images["jobs"]["publish-cu130"]
    return next(s for s in job["steps"] if SIGNING_SECRET in str(s))


def _run_step(
    step: dict[str, Any], tmp_path: Path, secret: str | None
) -> subprocess.CompletedProcess[str]:
    """The step's line in bash, in a checkout-like directory, with a ``release`` on PATH
    that says which secret keys its GnuPG holds and what it was given."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stand_in = bin_dir / "release"
    stand_in.write_text(
        "#!/bin/sh\n"
        'echo "release $*"\n'
        'echo "key=$RELEASE_IMAGE_SIGNING_KEY store=$RELEASE_IMAGE_SIGNATURES"\n'
        '[ -d "$RELEASE_IMAGE_SIGNATURES" ] && echo "store made"\n'
        "gpg --batch --with-colons --list-secret-keys | grep '^fpr:'\n",
        encoding="utf-8",
    )
    stand_in.chmod(0o755)
    env = {k: v for k, v in step["env"].items() if not v.startswith("${{")}
    env |= {SIGNING_SECRET: secret} if secret is not None else {}
    env |= {"PATH": f"{bin_dir}:{os.environ['PATH']}", "HOME": str(tmp_path),
            "RELEASE_CI_VARIANT": "cu130", "RELEASE_CI_REGISTRY": "registry.example.com/ci"}  # fmt: skip
    work = tmp_path / "checkout"
    work.mkdir()
    short = Path(tempfile.mkdtemp(prefix="rel-ci-", dir="/tmp"))  # the step's mktemp -d
    try:
        return subprocess.run(
            ["bash", "-e", "-c", step["run"]], cwd=work, env={**env, "TMPDIR": str(short)},
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    finally:
        for home in short.iterdir():  # the step's GnuPG home: its agent stopped
            subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "all"],
                           check=False, capture_output=True)  # fmt: skip
        shutil.rmtree(short, ignore_errors=True)


def test_the_step_imports_the_secret_key_and_signs_with_it(
    maintainer_key: tuple[str, str], tmp_path: Path
) -> None:
    fpr, secret = maintainer_key
    step = _publish_step(fpr)
    done = _run_step(step, tmp_path, secret)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "release images.publish --variant cu130 --from registry.example.com/ci" in done.stdout
    assert f"key={fpr} store={SIGNATURES_DIR}" in done.stdout and "store made" in done.stdout
    assert f"fpr:::::::::{fpr}:" in done.stdout  # its GnuPG holds the secret half
    assert "PRIVATE KEY" not in done.stdout + done.stderr  # nothing prints it


def test_without_the_secret_the_step_stops_before_publishing(
    maintainer_key: tuple[str, str], tmp_path: Path
) -> None:
    fpr, _ = maintainer_key
    done = _run_step(_publish_step(fpr), tmp_path, None)
    assert done.returncode != 0
    assert "release images.publish" not in done.stdout  # nothing published unsigned

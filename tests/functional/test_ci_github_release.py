"""The GitHub release in the generated CI: the job that runs on the tag makes it (the rc's
``manifest`` job, the final's ``promote`` job, or a final's own ``github-release`` job where
no registry makes a promote job), with GitHub's job token in that step's ``env`` and never
in a line; only that job may write. The workflows stay actionlint, zizmor and schema clean,
and the checks below fail on a workflow that breaks what they check."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from release.core.ci_config import CiSettings
from release.core.pipeline_github import github_workflows
from tests.ci_support import as_written, buildkite_pipeline, pipeline_texts, plan_for, root_matrix
from tests.ci_validation_support import LABELS, RELEASE_REGISTRY, tool, validate, zizmor

RUN = 'release github-release "$GITHUB_REF_NAME"'
TOKEN = "${{ secrets.GITHUB_TOKEN }}"
ROUTES = {"artifacts": ("", None), "registry": ("registry.example.com/org/ci", None),
          "release": (None, RELEASE_REGISTRY)}  # fmt: skip


def workflows(
    route: str, *, push: bool = True, github_release: bool = True
) -> list[dict[str, Any]]:
    transfer, registry = ROUTES[route]
    matrix = root_matrix() if registry is None else replace(root_matrix(), registry=registry)
    settings = CiSettings(push_manifest=push)
    plan = plan_for(matrix, registry=transfer, settings=settings, github_release=github_release)
    return github_workflows(plan)


def release_steps(workflow: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each job's steps that make the GitHub release."""
    found = {
        key: [s for s in job["steps"] if RUN in s.get("run", "")]
        for key, job in workflow["jobs"].items()
    }
    return {k: v for k, v in found.items() if v}


def writers(workflow: dict[str, Any]) -> set[str]:
    return {k for k, j in workflow["jobs"].items() if j["permissions"] != {"contents": "read"}}


def problems(workflow: dict[str, Any]) -> list[str]:
    """What is wrong with how ``workflow`` makes the GitHub release: a job that writes and
    does not make it, a token in a line, a release step not on a tag or without the
    token in its ``env``."""
    made = release_steps(workflow)
    said = [f"{k} may write" for k in sorted(writers(workflow) - set(made))]
    for key, job in workflow["jobs"].items():
        said += [
            f"{key}: an expression in a line" for s in job["steps"] if "${{" in s.get("run", "")
        ]
        for step in made.get(key, []):
            if step.get("if") != "github.ref_type == 'tag'":
                said.append(f"{key}: the release step runs on a branch too")
            if step.get("env", {}).get("GH_TOKEN") != TOKEN:
                said.append(f"{key}: gh is given no token")
            if job["permissions"] != {"contents": "write"}:
                said.append(f"{key}: makes the release but may not write")
    return said


@pytest.mark.parametrize("push", [True, False], ids=["push-manifest", "no-push"])
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_the_tag_job_makes_the_release_and_only_it_may_write(route: str, push: bool) -> None:
    images, *final = workflows(route, push=push)
    assert list(release_steps(images)) == ["manifest"]
    # after the manifest is recorded (the rc page and the manifest asset are read from it)
    steps = [s.get("run", "") for s in images["jobs"]["manifest"]["steps"]]
    assert RUN in steps[-1] and any("release manifest" in s for s in steps[:-1])
    assert writers(images) == {"manifest"}
    assert problems(images) == []
    assert len(final) == 1  # a final's workflow even without a registry: its release
    expected = "promote" if route == "release" else "github-release"
    assert list(release_steps(final[0])) == [expected] and writers(final[0]) == {expected}
    assert problems(final[0]) == []
    job = final[0]["jobs"][expected]
    assert any("--job promote" in s.get("run", "") for s in job["steps"])  # checked as a final
    assert "env" not in job  # no session of its own: no manifest parts, no state directory


def test_without_the_github_release_nothing_changes_but_that() -> None:
    """``[tool.release.github] release = false``: the workflows as they were, no final's
    workflow without a registry, and no job that writes where no manifest is pushed."""
    for route in ROUTES:
        plain = workflows(route, github_release=False)
        assert all(release_steps(w) == {} for w in plain)
        assert len(plain) == (2 if route == "release" else 1)
    assert writers(workflows("artifacts", push=False, github_release=False)[0]) == set()


def test_the_checks_fail_on_a_workflow_that_breaks_them() -> None:
    images = workflows("artifacts", push=False)[0]
    broad = copy.deepcopy(images)  # a build job that may write
    broad["jobs"]["build-cu128"]["permissions"] = {"contents": "write"}
    assert problems(broad) == ["build-cu128 may write"]
    inline = copy.deepcopy(images)  # the token written into the line
    step = release_steps(inline)["manifest"][0]
    step["run"] = f"GH_TOKEN={TOKEN} {step['run']}"
    del step["env"]["GH_TOKEN"]
    assert problems(inline) == [
        "manifest: an expression in a line",
        "manifest: gh is given no token",
    ]
    branch = copy.deepcopy(images)  # on a branch too, and a job that may not write
    step = release_steps(branch)["manifest"][0]
    del step["if"]
    branch["jobs"]["manifest"]["permissions"] = {"contents": "read"}
    assert problems(branch) == [
        "manifest: the release step runs on a branch too",
        "manifest: makes the release but may not write",
    ]


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_the_workflows_that_make_it_pass_actionlint_zizmor_and_the_schema(
    tmp_path: Path, route: str
) -> None:
    transfer, registry = ROUTES[route]
    matrix = root_matrix() if registry is None else replace(root_matrix(), registry=registry)
    texts = pipeline_texts(matrix, "github", registry=transfer, github_release=True)
    paths = []
    for name, text in texts.items():
        path = tmp_path / f"{route}-{name}"
        path.write_text(as_written(text, ["release", "ci", "--format", "github"]), "utf-8")
        paths.append(str(path))
    assert len(paths) == 2
    lint = validate([tool("actionlint"), "-no-color", *LABELS(tmp_path), *paths])
    assert lint.returncode == 0 and lint.stdout == "", lint.stdout + lint.stderr
    audit = validate([*zizmor(), *paths])
    assert audit.returncode == 0 and "No findings" in audit.stdout, audit.stdout + audit.stderr
    schema = validate(
        [tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *paths]
    )
    assert schema.returncode == 0, schema.stdout + schema.stderr


@pytest.mark.parametrize("registry", [None, RELEASE_REGISTRY], ids=["no-registry", "registry"])
def test_the_buildkite_tag_steps_make_it_with_the_agents_token(registry: str | None) -> None:
    matrix = root_matrix() if registry is None else replace(root_matrix(), registry=registry)
    pipeline = buildkite_pipeline(matrix, github_release=True)
    line = 'if [ -n "$${BUILDKITE_TAG:-}" ]; then release github-release "$$BUILDKITE_TAG"; fi'
    making = {s["key"]: s for s in pipeline["steps"] if line in s.get("command", [])}
    final = "promote" if registry else "github-release"
    assert sorted(making) == sorted(["manifest", final])
    assert all(s["command"][-1] == line for s in making.values())
    assert making[final]["if"].startswith("build.tag != null")
    assert not any("GH_TOKEN" in str(s) for s in pipeline["steps"])  # the agent's, not ours
    plain = buildkite_pipeline(matrix)
    assert not any(line in s.get("command", []) for s in plain["steps"])
    assert [s["key"] for s in plain["steps"]][-1] == ("promote" if registry else "manifest")


@pytest.mark.parametrize("made", [True, False], ids=["release", "no-release"])
def test_release_ci_follows_the_github_table(tmp_path: Path, made: bool) -> None:
    """``release ci`` as a user runs it: ``[tool.release.github] release`` (true unless
    set) decides whether the tag's jobs make the GitHub release."""
    from tests.ci_validation_support import hostile_engine
    from tests.conftest import run_cli

    root = hostile_engine(tmp_path / "engine", install=True, hostile=False)
    pyproject = root / "pyproject.toml"
    if not made:
        text = pyproject.read_text(encoding="utf-8") + "[tool.release.github]\nrelease = false\n"
        pyproject.write_text(text, encoding="utf-8")
    for fmt in ("github", "buildkite"):
        result = run_cli(root, "ci", "--format", fmt)
        assert result.code == 0, result.output
        folder = root / (".github/workflows" if fmt == "github" else ".buildkite")
        texts = "".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.yml")))
        assert ("release github-release" in texts) is made, texts
        assert ("makes its GitHub release" in result.stdout) is made, result.stdout

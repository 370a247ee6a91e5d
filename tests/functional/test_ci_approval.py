"""CI that releases only after approval. The jobs that release (each publish, the promote,
the job that records the manifest or makes the GitHub release) run on GitHub in the
approval environment (``[tool.release.ci] environment``, its reviewers approve the run),
on Buildkite after a ``block`` step; they, and every job after them, run on a tag only.
The registry's secrets are read in jobs that have an environment only: the approval one,
or the CI registry's (``transfer-environment``, no reviewers) for the build, smoke and
snapshot jobs that push or pull. zizmor's auditor persona finds nothing in any generated
workflow, and does flag a secret in a job without an environment. The CI runner of the
tests holds what waits for approval and gives an environment's secrets to its jobs only.
"""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import invoke.vendor.yaml as yaml
import pytest

from release.core.ci_config import ENVIRONMENT, TRANSFER_ENVIRONMENT, parse_ci
from release.core.pipeline_github import github_workflows
from release.core.pipelines import RELEASE_JOB
from release.errors import ConfigError
from tests.ci_runner import Runner, buildkite_condition
from tests.ci_support import buildkite_pipeline, plan_for, root_matrix
from tests.ci_validation_support import (
    LABELS,
    RELEASE_REGISTRY,
    SETTINGS,
    hostile_engine,
    tool,
    validate,
    written,
    zizmor,
)
from tests.conftest import repo_state, run_cli
from tests.index_support import PackageIndex

ON_TAG = "github.ref_type == 'tag'"
ROUTES = {"artifacts": ("", None), "registry": ("registry.example.com/org/ci", None),
          "release": (None, RELEASE_REGISTRY)}  # fmt: skip
RELEASING = ("publish", "promote", "manifest", RELEASE_JOB)


def workflows(route: str, **settings: Any) -> list[dict[str, Any]]:
    transfer, registry = ROUTES[route]
    matrix = root_matrix() if registry is None else replace(root_matrix(), registry=registry)
    release = settings.pop("github_release", True)
    plan = plan_for(matrix, registry=transfer, settings=parse_ci(settings), github_release=release)
    return github_workflows(plan)


def expected_environment(route: str, key: str, releases: bool) -> str | None:
    """Where a job of this kind runs: the approval environment where it releases, the CI
    registry's where it logs in to push or pull, else none."""
    kind = key.split("-")[0] if key != RELEASE_JOB else key
    if kind in ("publish", "promote", RELEASE_JOB) or (kind == "manifest" and releases):
        return "approval"
    if kind in ("build", "smoke", "snapshot") and route != "artifacts":
        return "transfer"
    return None


def misplaced(workflow: dict[str, Any]) -> list[str]:
    """A job that reads a secret with no environment, or one that releases off a tag."""
    said = []
    for key, job in workflow["jobs"].items():
        if "secrets." in str(job) and "environment" not in job:
            said.append(f"{key}: a secret outside an environment")
        # the final's workflow runs on final tags only; the rc's is run by hand too
        by_hand = workflow["name"] == "images"
        releases = key.startswith(RELEASING) and (key != "manifest" or "environment" in job)
        if by_hand and releases and job.get("if") != ON_TAG:
            said.append(f"{key}: releases on a branch too")
    return said


@pytest.mark.parametrize("push", [True, False], ids=["push-manifest", "no-push"])
@pytest.mark.parametrize("release", [True, False], ids=["github-release", "no-release"])
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_each_job_runs_in_the_environment_its_kind_gives(
    route: str, release: bool, push: bool
) -> None:
    names = {"approval": "Release Approval", "transfer": "ci registry"}
    made = workflows(
        route,
        github_release=release,
        **{"push-manifest": push, "environment": names["approval"]},
        **{"transfer-environment": names["transfer"]},
    )
    for workflow in made:
        assert misplaced(workflow) == []
        for key, job in workflow["jobs"].items():
            where = expected_environment(route, key, push or release)
            assert job.get("environment") == (names[where] if where else None), key
            if where is None:
                assert "secrets." not in str(job), key
            if workflow["name"] == "images":  # a branch run: sessions only, nothing asked
                after = key == "manifest" and route == "release"  # after the publishes
                assert (job.get("if") == ON_TAG) is (where == "approval" or after), key
            comment = job["permissions"]["contents"].comment
            assert comment.startswith("to "), key  # why it is granted, on its line
    # the defaults
    jobs = workflows("release")[0]["jobs"]
    assert jobs["publish-cu130"]["environment"] == ENVIRONMENT == "release"
    assert jobs["build-cu130"]["environment"] == TRANSFER_ENVIRONMENT == "release-ci"


def test_the_placement_check_fails_on_a_workflow_that_breaks_it() -> None:
    images = workflows("release")[0]
    del images["jobs"]["build-cu130"]["environment"]
    del images["jobs"]["publish-cu130"]["if"]
    assert misplaced(images) == [
        "build-cu130: a secret outside an environment",
        "publish-cu130: releases on a branch too",
    ]


def test_zizmor_flags_a_secret_outside_an_environment_and_an_unexplained_permission(
    tmp_path: Path,
) -> None:
    """The auditor persona's audits the workflows pass do fail a workflow with the flaw."""
    good = written(tmp_path, "github", "release").read_text(encoding="utf-8")
    outside = tmp_path / "outside.yml"  # a build job's login with no environment
    outside.write_text(good.replace('    environment: "release-ci"\n', "", 1), encoding="utf-8")
    bare = tmp_path / "bare.yml"  # contents: write with no word of why
    bare.write_text(good.replace("  # to push the manifest as the tag's note", ""), "utf-8")
    assert outside.read_text() != good and bare.read_text() != good
    audit = validate([*zizmor(), str(outside)])
    assert audit.returncode != 0 and "secrets-outside-env" in audit.stdout, audit.stdout
    assert "undocumented-permissions" not in audit.stdout
    audit = validate([*zizmor(), str(bare)])
    assert audit.returncode != 0 and "undocumented-permissions" in audit.stdout, audit.stdout
    assert "secrets-outside-env" not in audit.stdout


def test_named_environments_pass_actionlint_and_zizmor(tmp_path: Path) -> None:
    paths = []
    for n, workflow in enumerate(
        workflows("release", environment="prod (images)", **{"transfer-environment": "ci"})
    ):
        from release.core.yaml_text import dump_yaml

        path = tmp_path / f"{n}.yml"
        path.write_text(dump_yaml(workflow), encoding="utf-8")
        paths.append(str(path))
    assert 'environment: "prod (images)"' in Path(paths[1]).read_text()
    lint = validate([tool("actionlint"), "-no-color", *LABELS(tmp_path), *paths])
    assert lint.returncode == 0 and lint.stdout == "", lint.stdout + lint.stderr
    audit = validate([*zizmor(), *paths])
    assert audit.returncode == 0 and "No findings" in audit.stdout, audit.stdout


# -- configuration --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ({"environment": ""}, "environment: expected a GitHub environment's name"),
        ({"environment": " release"}, "environment: expected"),
        ({"environment": "re\nlease"}, "environment: expected"),
        ({"environment": "${{ github.actor }}"}, "environment: expected"),
        ({"environment": "x" * 256}, "environment: expected"),
        ({"environment": 1}, "environment: expected"),
        ({"transfer-environment": ["ci"]}, "transfer-environment: expected"),
        ({"transfer-environment": "Release"}, "both are 'release'"),
    ],
)
def test_a_bad_environment_is_refused_with_what_to_write(table: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_ci(table)
    message = str(refused.value)
    assert message.startswith("[tool.release.ci] ") and said in message, message
    assert "e.g. " in message  # what to write
    assert "\n" not in message


def test_environments_are_read_as_given() -> None:
    given = parse_ci({"environment": "x" * 255, "transfer-environment": "CI registry"})
    assert (given.environment, given.transfer_environment) == ("x" * 255, "CI registry")
    assert (parse_ci({}).environment, parse_ci({}).transfer_environment) == (
        "release",
        "release-ci",
    )


def test_release_ci_refuses_a_bad_environment_and_writes_nothing(tmp_path: Path) -> None:
    root = hostile_engine(tmp_path / "engine", install=True, hostile=False)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'environment = "release\\u2028now"\n')
    subprocess.run(["git", "add", "--all"], cwd=root, check=True)
    before = repo_state(root)
    refused = run_cli(root, "ci", "--format", "github")
    assert refused.code == 2, refused.output
    assert refused.stderr.strip() == (
        "error: [tool.release.ci] environment: expected a GitHub environment's name (one "
        "line of printable text, no ${{, at most 255 characters), "
        'e.g. environment = "release"'
    )
    assert repo_state(root) == before and not (root / ".github").exists()


# -- Buildkite: the block step --------------------------------------------------------------


def steps_of(route: str, **settings: Any) -> list[dict[str, Any]]:
    transfer, registry = ROUTES[route]
    matrix = root_matrix() if registry is None else replace(root_matrix(), registry=registry)
    release = settings.pop("github_release", False)
    pipeline = buildkite_pipeline(
        matrix, registry=transfer, settings=parse_ci(settings), github_release=release
    )
    return list(pipeline["steps"])


def uploaded(steps: list[dict[str, Any]], tag: str | None) -> list[str]:
    """The keys of the steps a build of ``tag`` (None: a branch) uploads."""
    return [s["key"] for s in steps if buildkite_condition(s["if"], tag)]


def test_buildkite_blocks_before_publishing_and_promoting() -> None:
    steps = steps_of("release")
    keys = [s["key"] for s in steps]
    by_key = {s["key"]: s for s in steps}
    sessions = [k for k in keys if k.startswith(("build-", "smoke-", "snapshot-"))]
    publishes = [k for k in keys if k.startswith("publish-")]
    # the block comes after every session and before the first publish; each publish
    # depends on it, the manifest on the publishes
    assert keys == [
        *sessions,
        "approve-publish",
        *publishes,
        "manifest",
        "approve-promote",
        "promote",
    ]
    block = by_key["approve-publish"]
    assert block["block"] == "Publish this tag?" and block["depends_on"] == sessions
    assert "command" not in block and "env" not in block  # a person's step: nothing runs
    for key in publishes:
        assert by_key[key]["depends_on"][-1] == "approve-publish"
    assert "approve-publish" not in by_key["manifest"]["depends_on"]
    assert by_key["approve-promote"]["block"] == "Promote this tag?"
    assert by_key["promote"]["depends_on"] == ["approve-promote"]
    # the conditionals, as Buildkite evaluates them: a branch uploads the sessions only, an
    # rc everything up to the manifest, a final the block and the promote
    assert uploaded(steps, None) == sessions
    assert uploaded(steps, "v0.31.0rc1") == keys[: keys.index("approve-promote")]
    assert uploaded(steps, "v0.31.0") == ["approve-promote", "promote"]


def test_the_block_text_is_fixed_and_every_dollar_doubled() -> None:
    plain = [s for s in steps_of("artifacts") if "block" in s]
    named = steps_of("artifacts", environment="$(id)", runners={"default": "$HOME"})
    assert [s for s in named if "block" in s] == plain
    (block,) = plain  # no registry: the manifest, which records, waits for it
    assert block["key"] == "approve-manifest" and block["block"] == "Release this tag?"
    assert "$" not in block["if"].replace("$$", "")
    # nothing that releases: no block, and the manifest runs on a branch as before
    quiet = steps_of("artifacts", **{"push-manifest": False})
    assert not [s for s in quiet if "block" in s]
    assert buildkite_condition(quiet[-1]["if"], None) and quiet[-1]["key"] == "manifest"
    final = [s["key"] for s in steps_of("artifacts", github_release=True)][-2:]
    assert final == ["approve-github-release", RELEASE_JOB]


# -- the runner: approvals held, secrets scoped -----------------------------------------------

CHECKOUT = {"uses": "actions/checkout@v", "with": {"fetch-depth": 0, "persist-credentials": False}}
SEES = 'if [ -n "${PASSWORD:-}" ]; then echo "sees the password"; else echo "sees none"; fi'
SECRET = "pw-5e6d7c8b9a"


def _job(environment: str | None, needs: list[str], then: str = "") -> dict[str, Any]:
    run = SEES + (f"\n{then}" if then else "")
    step = {"run": run, "env": {"PASSWORD": "${{ secrets.RELEASE_REGISTRY_PASSWORD }}"}}
    job: dict[str, Any] = {"needs": needs} if needs else {}
    return job | ({"environment": environment} if environment else {}) | {"steps": [CHECKOUT, step]}


def _runner(tmp_path: Path) -> tuple[Runner, Path]:
    remote = tmp_path / "remote"
    subprocess.run(["git", "init", "--quiet", "--initial-branch=main", str(remote)], check=True)
    (remote / "README").write_text("one\n")
    for argv in (["add", "README"], ["commit", "--quiet", "-m", "One"], ["tag", "v1.0.0rc1"]):
        subprocess.run(["git", *argv], cwd=remote, check=True)
    index = PackageIndex(
        "http://127.0.0.1:9/simple/", tmp_path, tmp_path, "0" * 64, "nox", tmp_path
    )
    secrets = {"release": {"RELEASE_REGISTRY_PASSWORD": SECRET}, "release-ci": {}}
    runner = Runner(remote, tmp_path / "ci", {}, lambda: None, index, tmp_path / "cached", secrets)
    return runner, tmp_path / "published"


def test_the_runner_holds_an_environments_jobs_and_gives_its_secrets_to_them_only(
    tmp_path: Path,
) -> None:
    runner, published = _runner(tmp_path)
    publish = f'echo published > "{published}"'
    jobs = {
        "build": _job(None, []),
        "smoke": _job("release-ci", ["build"]),
        "publish": _job("release", ["smoke"], publish),
        "manifest": _job(None, ["publish"]),
    }
    workflow = {"name": "images", "on": {"push": {"tags": ["v*"]}}, "jobs": jobs}
    asked: list[tuple[str, str]] = []

    def nobody(key: str, where: str) -> bool:
        asked.append((key, where))
        return where == "release-ci"

    run = runner.github({"images.yml": workflow}, "v1.0.0rc1", nobody)
    assert run.jobs == ["build", "smoke"] and run.waiting == ["publish", "manifest"]
    assert asked == [("smoke", "release-ci"), ("publish", "release")]
    assert not published.exists()  # nothing ran that was not approved
    assert "sees none" in run.output["build"]  # no environment: no secret
    assert "sees none" in run.output["smoke"]  # another environment: not its secret
    runner.resume(run, lambda key, where: True)
    assert run.jobs == ["build", "smoke", "publish", "manifest"] and run.waiting == []
    assert published.read_text() == "published\n"
    assert "sees the password" in run.output["publish"]
    assert "sees none" in run.output["manifest"]
    assert SECRET not in "".join(run.output.values())


def test_the_runner_waits_at_a_block_step_and_what_follows_it(tmp_path: Path) -> None:
    runner, published = _runner(tmp_path)
    tag = "build.tag != null && build.tag =~ /^v/"

    def step(key: str, needs: list[str], line: str = "true") -> dict[str, Any]:
        made = {"key": key, "if": tag, "command": [line]}
        return made | ({"depends_on": needs} if needs else {})

    pipeline = {
        "steps": [
            step("build", []),
            {"block": "Publish this tag?", "key": "approve", "if": tag, "depends_on": ["build"]},
            step("publish", ["approve"], f'echo published > "{published}"'),
            step("later", []),  # no depends_on: a block is a wait for it too
        ]
    }
    run = runner.buildkite(pipeline, "v1.0.0rc1", "main", lambda key, text: False)
    assert run.jobs == ["build"] and run.waiting == ["approve", "publish", "later"]
    assert not published.exists()
    runner.resume(run, lambda key, text: text == "Publish this tag?")
    assert run.jobs == ["build", "publish", "later"] and run.approved == ["approve"]
    assert published.exists()


def test_the_written_files_read_back_with_their_comments(tmp_path: Path) -> None:
    """The comments on the permissions are YAML comments: the file reads back as the
    document it was made from."""
    text = written(tmp_path, "github", "release").read_text(encoding="utf-8")
    assert 'contents: "read"  # to check out the repository\n' in text
    matrix = replace(root_matrix(), registry=RELEASE_REGISTRY)
    assert yaml.safe_load(text) == github_workflows(plan_for(matrix, settings=SETTINGS))[0]

"""The pipelines as one Buildkite pipeline: each step carries a conditional on the build's
tag, so an rc or post tag (or a branch) uploads the build, smoke, snapshot, publish and
manifest steps, and a final tag uploads only the promote step. An agent checks out by
commit, with no tags: each step fetches them first, then checks the tag
(``release check --tag``). Each step's commands run in one shell. Pure.
"""

from __future__ import annotations

from typing import Any

from release.core.ci_triggers import BUILT, PROMOTED
from release.core.pipelines import (
    MANIFEST_FILE,
    NOT_RECORDED,
    PARTS_DIR,
    STATE_ENV,
    Job,
    Plan,
    archive,
    check_command,
    load_command,
    login_command,
    merge_command,
    pipeline_jobs,
    promote_command,
    promote_job,
    publish_command,
    pull_command,
    push_command,
    save_command,
    session_command,
    uses_registry,
)
from release.core.yaml_text import dump_yaml

__all__ = ["buildkite_pipeline", "buildkite_text"]

_VENV = 'venv="$(mktemp -d)/venv" && python3 -m venv "$venv" && . "$venv/bin/activate"'
_TAGS = "git fetch --quiet --tags --force origin"  # the agent checks out by commit
_STATE = f'export {STATE_ENV}="$(mktemp -d)"'
_NOT_A_TAG = (
    'if [ -z "${BUILDKITE_TAG:-}" ]; then echo "not a tag: nothing is published"; exit 0; fi'
)


def _check(job: Job) -> str:
    check = check_command("$BUILDKITE_TAG", job)
    return f'if [ -n "${{BUILDKITE_TAG:-}}" ]; then {check}; fi'


def _download(name: str, step: str | None = None) -> str:
    return f'buildkite-agent artifact download "{name}" .' + (f" --step {step}" if step else "")


def _commands(plan: Plan, job: Job) -> tuple[list[str], list[str]]:
    """The step's commands after the set-up, and the artifacts it keeps."""
    transfer, row = plan.transfer, job.variant or ""
    parts = [f"{PARTS_DIR}/**/*"]
    if job.kind == "build":
        if transfer:
            return [session_command(job), push_command(row, transfer)], parts
        return [session_command(job), save_command(job)], [job.archive, *parts]
    if job.kind in ("smoke", "snapshot"):
        if transfer:
            return [pull_command(row, transfer), session_command(job)], parts
        fetch = [_download(job.archive, job.needs[0]), load_command(row)]
        return [*fetch, session_command(job)], parts
    if job.kind == "publish":
        lines = [_NOT_A_TAG]
        for each in job.rows:
            if transfer:
                lines.append(pull_command(each, transfer))
            else:
                lines += [_download(archive(each), f"build-{each}"), load_command(each)]
        return [*lines, publish_command(job)], parts
    if job.kind == "promote":
        return [promote_command("$BUILDKITE_TAG", plan.settings.push_manifest)], []
    push = plan.settings.push_manifest
    lines = [_download(f"{PARTS_DIR}/**/*"), merge_command(push)]
    if not push:
        lines.append(f'if [ -n "${{BUILDKITE_TAG:-}}" ]; then {NOT_RECORDED}; fi')
    return lines, [MANIFEST_FILE]


def _step(plan: Plan, job: Job, condition: str) -> dict[str, Any]:
    commands = [_TAGS, _VENV, plan.setup, _check(job)]
    login = login_command(plan)
    if login and uses_registry(plan, job):
        commands.append(login)
    if job.kind not in ("manifest", "promote"):
        commands.append(_STATE)
    work, artifacts = _commands(plan, job)
    step: dict[str, Any] = {
        "label": job.label,
        "key": job.key,
        "if": condition.replace("$", "$$"),
        # "$$" is a "$" at run time: Buildkite interpolates the pipeline when it is uploaded
        "command": [c.replace("$", "$$") for c in commands + work],
    }
    if job.needs:
        step["depends_on"] = list(job.needs)
    if job.kind not in ("manifest", "promote"):
        step["env"] = {"RELEASE_MANIFEST_DIR": PARTS_DIR}
    if artifacts:
        step["artifact_paths"] = artifacts
    step["timeout_in_minutes"] = plan.settings.timeout(job.kind)
    queue = plan.settings.queue(job.runs_on, job.arch, plan.runner)
    if queue:
        step["agents"] = {"queue": queue}
    return step


def buildkite_pipeline(plan: Plan) -> dict[str, Any]:
    """The pipeline (``steps:``): the rc steps for a branch or a built tag, the promote
    step for a final tag."""
    built = f"build.tag == null || build.tag =~ /{plan.tags.regex(BUILT)}/"
    steps = [_step(plan, j, built) for j in pipeline_jobs(plan.matrix)]
    promote = promote_job(plan.matrix)
    if promote is not None:
        final = f"build.tag != null && build.tag =~ /{plan.tags.regex(PROMOTED)}/"
        steps.append(_step(plan, promote, final))
    return {"steps": steps}


def buildkite_text(plan: Plan, made: str) -> str:
    header = [
        f"Made by `{made}` from [tool.release.images] and [tool.release.ci].",
        "Make it again after the matrix changes; do not edit it by hand.",
        "rc and post tags (and branches): build, smoke and snapshot each image, publish,",
        "then record the manifest as the tag's note; final tags: promote only.",
    ]
    return dump_yaml(buildkite_pipeline(plan), header)

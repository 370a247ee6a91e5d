"""The pipelines as one Buildkite pipeline: each step carries a conditional on the build's
tag, so an rc or post tag (or a branch) uploads the build, smoke, snapshot, publish and
manifest steps, and a final tag uploads only the promote step. An agent checks out by
commit, with no tags: each step fetches them first, then checks the tag
(``release check --tag``). Each step's commands run in one shell, and read every value
from the step's ``env``. Buildkite interpolates the whole pipeline when it is uploaded, so
every ``$`` in it is doubled: a ``$`` at run time, and no value can name a variable. The
tag's step (manifest, promote, or a final's ``github-release``) makes the tag's GitHub
release where ``[tool.release.github] release`` is on, ``gh`` reading ``GH_TOKEN`` from
the agent's environment (nothing of it is in the pipeline). The steps that release
(:meth:`Plan.approval`) wait for a ``block`` step, its text fixed; they, the block and every
step after them run on a tag only. Pure.
"""

from __future__ import annotations

from release.core.ci_triggers import BUILT, PROMOTED
from release.core.json_text import JSONOut
from release.core.pipeline_signing import SIGNATURES_DIR, signed, signing_env, signs
from release.core.pipelines import (
    ARCHIVE_ENV,
    MANIFEST_FILE,
    NOT_RECORDED,
    PARTS_DIR,
    STATE_ENV,
    Job,
    PipelinePlan,
    check_command,
    final_job,
    github_release_command,
    install_command,
    install_env,
    job_env,
    job_key,
    load_command,
    login_command,
    login_env,
    merge_command,
    pipeline_jobs,
    promote_command,
    publish_command,
    pull_command,
    push_command,
    row_vars,
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
_RELEASE = f'if [ -n "${{BUILDKITE_TAG:-}}" ]; then {github_release_command("BUILDKITE_TAG")}; fi'
# the block before the steps that release, by the first one's kind: fixed text, no value
_BLOCKS = {"publish": "Publish this tag?", "promote": "Promote this tag?"}
_BLOCK = "Release this tag?"
_PROMPT = "The steps after this one release the tag: they publish, promote or record it."
STEP_ENV = "RELEASE_CI_BUILD_STEP"  # the build step an archive comes from: _1, _2 in a publish


def _check(job: Job) -> str:
    check = check_command("BUILDKITE_TAG", job)
    return f'if [ -n "${{BUILDKITE_TAG:-}}" ]; then {check}; fi'


def _download(archive_var: str, step_var: str) -> str:
    """The agent's download of the image archive the variable ``archive_var`` names, from
    the build step the variable ``step_var`` names."""
    return f'buildkite-agent artifact download "${archive_var}" . --step "${step_var}"'


def _step_env(plan: PipelinePlan, job: Job) -> dict[str, str]:
    """The values this step's commands read (:func:`job_env`), with the build step each
    image archive comes from."""
    own = job.kind not in ("manifest", "promote") and not job.on_final
    env = {"RELEASE_MANIFEST_DIR": PARTS_DIR} if own else {}
    env |= install_env(plan.install) | job_env(plan, job)
    if uses_registry(plan, job):
        env |= login_env(plan)
    if signs(plan, job):
        env |= signing_env(plan)
    if plan.transfer or job.kind not in ("smoke", "snapshot", "publish"):
        return env
    if job.kind == "publish":
        builds = {f"{STEP_ENV}_{n}": job_key("build", row) for n, row in enumerate(job.rows, 1)}
        return env | builds
    return env | {STEP_ENV: job.needs[0]}


def _commands(plan: PipelinePlan, job: Job) -> tuple[list[str], list[str]]:
    """The step's commands after the set-up (the tag's GitHub release last, where the step
    makes it), and the artifacts it keeps."""
    lines, artifacts = _work(plan, job)
    if signs(plan, job):  # the publish or promote, last of its lines, after the key's import
        lines = [*lines[:-1], signed(lines[-1])]
        artifacts = [*artifacts, f"{SIGNATURES_DIR}/**/*"]
    return [*lines, *([_RELEASE] if plan.makes_release(job) else [])], artifacts


def _work(plan: PipelinePlan, job: Job) -> tuple[list[str], list[str]]:
    transfer = plan.transfer
    parts = [f"{PARTS_DIR}/**/*"]
    if job.kind == "build":
        if transfer:
            return [session_command(), push_command()], parts
        return [session_command(), save_command()], [job.archive, *parts]
    if job.kind in ("smoke", "snapshot"):
        if transfer:
            return [pull_command(), session_command()], parts
        fetch = [_download(ARCHIVE_ENV, STEP_ENV), load_command()]
        return [*fetch, session_command()], parts
    if job.kind == "publish":
        lines = [_NOT_A_TAG]
        for n, _ in enumerate(job.rows, 1):
            _, archive_var = row_vars(n)
            if not transfer:  # through a registry, nothing comes onto the agent
                lines += [_download(archive_var, f"{STEP_ENV}_{n}"), load_command(archive_var)]
        return [*lines, publish_command(bool(transfer))], parts
    if job.kind == "promote":
        return [promote_command("BUILDKITE_TAG", plan.settings.push_manifest)], []
    if job.on_final:  # the final's GitHub release alone
        return [], []
    push = plan.settings.push_manifest
    lines = [f'buildkite-agent artifact download "{PARTS_DIR}/**/*" .', merge_command(push)]
    if not push:
        lines.append(f'if [ -n "${{BUILDKITE_TAG:-}}" ]; then {NOT_RECORDED}; fi')
    return lines, [MANIFEST_FILE]


def _uploaded(value: JSONOut) -> JSONOut:
    """``value`` with every ``$`` doubled, as the upload's interpolation gives it back."""
    if isinstance(value, str):
        return value.replace("$", "$$")
    if isinstance(value, dict):
        return _uploaded_table(value)
    if isinstance(value, list):
        return [_uploaded(v) for v in value]
    return value


def _uploaded_table(table: dict[str, JSONOut]) -> dict[str, JSONOut]:
    return {k.replace("$", "$$"): _uploaded(v) for k, v in table.items()}


def _step(
    plan: PipelinePlan, job: Job, condition: str, block: str | None = None
) -> dict[str, JSONOut]:
    commands = [_TAGS, _VENV, install_command(plan.install), _check(job)]
    login = login_command(plan)
    if login and uses_registry(plan, job):
        commands.append(login)
    if job.kind not in ("manifest", "promote") and not job.on_final:
        commands.append(_STATE)
    work, artifacts = _commands(plan, job)
    step: dict[str, JSONOut] = {
        "label": job.label,
        "key": job.key,
        "if": condition,
        "command": commands + work,
    }
    needs = [*job.needs, *([block] if block else [])]
    if needs:
        step["depends_on"] = needs
    step["env"] = _step_env(plan, job)
    if artifacts:
        step["artifact_paths"] = artifacts
    step["timeout_in_minutes"] = plan.settings.timeout(job.timeout_kind)
    queue = plan.settings.queue(job.runs_on, job.arch, plan.runner)
    if queue:
        step["agents"] = {"queue": queue}
    # "$$" is a "$" at run time: Buildkite interpolates the pipeline when it is uploaded
    return _uploaded_table(step)


def _block(first: Job, key: str, tagged: str, waits: list[str]) -> dict[str, JSONOut]:
    """The block step before ``first``, the first step that releases: on a tag only, after
    the steps ``waits`` names."""
    block = {"block": _BLOCKS.get(first.kind, _BLOCK), "prompt": _PROMPT, "key": key}
    return _uploaded_table(block | {"if": tagged} | ({"depends_on": waits} if waits else {}))


def _gated(
    plan: PipelinePlan, jobs: list[Job], condition: str, tagged: str
) -> list[dict[str, JSONOut]]:
    """The steps of ``jobs`` (``condition``), with a block step before the first that
    releases: it waits for the steps they need; the steps that release depend on it, and
    they and every step after them run on a tag only (``tagged``)."""
    tag_only = plan.on_tag_only(jobs)
    first = [j for j in jobs if j.key in tag_only and not tag_only.intersection(j.needs)]
    key = f"approve-{first[0].kind}" if first else ""
    needed = {n for j in first for n in j.needs}
    steps: list[dict[str, JSONOut]] = []
    for job in jobs:
        if first and job is first[0]:
            steps.append(_block(job, key, tagged, [j.key for j in jobs if j.key in needed]))
        gate = key if job in first else None
        steps.append(_step(plan, job, tagged if job.key in tag_only else condition, gate))
    return steps


def buildkite_pipeline(plan: PipelinePlan) -> dict[str, JSONOut]:
    """The pipeline (``steps:``): the rc steps for a branch or a built tag (those that
    release on a tag only, after their block), the promote step for a final tag."""
    built = plan.tags.regex(BUILT)
    steps = _gated(
        plan,
        pipeline_jobs(plan.matrix),
        f"build.tag == null || build.tag =~ /{built}/",
        f"build.tag != null && build.tag =~ /{built}/",
    )
    last = final_job(plan)
    if last is not None:
        final = f"build.tag != null && build.tag =~ /{plan.tags.regex(PROMOTED)}/"
        steps += _gated(plan, [last], final, final)
    return {"steps": steps}


def buildkite_text(plan: PipelinePlan) -> str:
    header = [
        "Made from [tool.release.images] and [tool.release.ci].",
        "Make it again after the matrix changes; do not edit it by hand.",
        "rc and post tags (and branches): build, smoke and snapshot each image, publish,",
        "then record the manifest as the tag's note; final tags: promote only.",
        "The steps that release wait for their block step; branches release nothing.",
    ]
    if plan.github_release:
        header.append("On a tag, its GitHub release is made (gh reads GH_TOKEN from the agent).")
    return dump_yaml(buildkite_pipeline(plan), header)

"""The pipelines as GitHub Actions workflows: ``images.yml`` for rc and post tags (and a run
by hand), ``promote.yml`` for final tags. Least privilege (``permissions: {}`` for each
workflow, ``contents: read`` per job, ``contents: write`` only where a manifest is pushed
or the tag's GitHub release is made, with the job's token in that step's ``env``),
one ``concurrency`` group per ref, a timeout per job kind, actions pinned by commit, no
credentials left in a checkout. Each ``permissions`` entry says why in a comment. The jobs
that release run in the approval environment (``environment:``, its reviewers approve the
run; on a tag only); the registry's secrets are read only in jobs that have an
environment. Pure.
"""

from __future__ import annotations

from typing import TypedDict

from release.core.ci_triggers import BUILT, PROMOTED
from release.core.json_text import JSONOut
from release.core.pipeline_signing import (
    SIGNATURES_DIR,
    SIGNING_SECRET,
    signatures_artifact,
    signed,
    signing_env,
    signs,
)
from release.core.pipelines import (
    MANIFEST_FILE,
    NOT_RECORDED,
    PARTS_DIR,
    REGISTRY_PASSWORD,
    REGISTRY_USER,
    STATE_ENV,
    Job,
    PipelinePlan,
    check_command,
    final_job,
    github_release_command,
    install_command,
    install_env,
    job_env,
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
from release.core.yaml_text import Commented, dump_yaml

__all__ = ["ACTIONS", "github_texts", "github_workflows"]

# a step, a job and a workflow as they are made, before they are written (the keys in
# the order they are written; ``if`` and ``runs-on`` are not names, hence the call form)
_Step = TypedDict(
    "_Step",
    {"uses": str, "if": str, "run": str, "env": dict[str, str], "with": dict[str, JSONOut]},
    total=False,
)
_Job = TypedDict(
    "_Job",
    {
        "name": str,
        "if": str,
        "needs": list[str],
        "runs-on": str,
        "environment": str,
        "timeout-minutes": int,
        "permissions": dict[str, Commented],
        "env": dict[str, str],
        "steps": list[_Step],
    },
    total=False,
)


class _Workflow(TypedDict):
    name: str
    on: dict[str, JSONOut]
    permissions: dict[str, str]
    concurrency: dict[str, JSONOut]
    jobs: dict[str, _Job]


# actions pinned by commit (what their tags named when this was written)
ACTIONS = {
    "checkout": ("actions/checkout", "3d3c42e5aac5ba805825da76410c181273ba90b1", "v7.0.1"),
    "setup-python": ("actions/setup-python", "5fda3b95a4ea91299a34e894583c3862153e4b97", "v7.0.0"),
    "upload-artifact": (
        "actions/upload-artifact", "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f", "v7.0.0",
    ),
    "download-artifact": (
        "actions/download-artifact", "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c", "v8.0.1",
    ),
}  # fmt: skip
STATE = "${{ github.workspace }}/../release-state"  # the job's env cannot name runner.temp
ON_TAG = "github.ref_type == 'tag'"
# the job's token as git's credentials for one step, as actions/checkout gives them, and
# gone with the step: nothing is written to the checkout's config
TOKEN_AUTH = (
    'auth="$(printf \'x-access-token:%s\' "$PUSH_TOKEN" | base64 -w0)"\n'
    'export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0="http.$GITHUB_SERVER_URL/.extraheader" '
    'GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $auth"\n'
)


def _action(name: str) -> str:
    repository, commit, _ = ACTIONS[name]
    return f"{repository}@{commit}"


def _upload(name: str, path: str, condition: str | None = None) -> _Step:
    step: _Step = {"uses": _action("upload-artifact")}
    if condition:
        step["if"] = condition
    step["with"] = {"name": name, "path": path, "if-no-files-found": "error"}
    return step


def _download_image(row: str, condition: str | None = None) -> _Step:
    step: _Step = {"uses": _action("download-artifact")}
    if condition:
        step["if"] = condition
    step["with"] = {"name": f"image-{row}"}
    return step


def _setup(plan: PipelinePlan, job: Job) -> list[_Step]:
    steps: list[_Step] = [
        # the whole history and its tags (a build reads its version from them); no
        # credentials left in the checkout for a later step or an artifact to carry
        {"uses": _action("checkout"), "with": {"fetch-depth": 0, "persist-credentials": False}},
        {"uses": _action("setup-python"), "with": {"python-version": plan.settings.python}},
        {"run": install_command(plan.install), "env": install_env(plan.install)},
        {"if": ON_TAG, "run": check_command("GITHUB_REF_NAME", job)},
    ]
    login = login_command(plan)
    # the secrets are read where the job has an environment only: theirs, not the repository's
    if login and uses_registry(plan, job) and plan.environment(job):
        secrets = {
            REGISTRY_USER: f"${{{{ secrets.{REGISTRY_USER} }}}}",
            REGISTRY_PASSWORD: f"${{{{ secrets.{REGISTRY_PASSWORD} }}}}",
        }
        steps.append({"run": login, "env": {**login_env(plan), **secrets}})
    return steps


def _pushing(run: str) -> _Step:
    return {"run": TOKEN_AUTH + run, "env": {"PUSH_TOKEN": "${{ github.token }}"}}


def _github_release() -> _Step:
    """The tag's GitHub release, on a tag only: ``gh`` takes the job's token from
    ``GH_TOKEN``, and git the same token for this step (the tag is checked on the remote)."""
    step = _pushing(github_release_command("GITHUB_REF_NAME"))
    step["env"]["GH_TOKEN"] = "${{ secrets.GITHUB_TOKEN }}"
    return {"if": ON_TAG, **step}


def _signing(plan: PipelinePlan, job: Job, step: _Step) -> list[_Step]:
    """``step`` (the publish or the promote) signing the images by the configured key,
    whose secret half only this step reads, then its signatures kept as an artifact."""
    if not signs(plan, job):
        return [step]
    secret = {SIGNING_SECRET: f"${{{{ secrets.{SIGNING_SECRET} }}}}"}
    command = step["run"].removeprefix(TOKEN_AUTH)  # the push's credentials stay first
    run = step["run"][: len(step["run"]) - len(command)] + signed(command)
    env = {**step.get("env", {}), **signing_env(plan), **secret}
    kept = _upload(signatures_artifact(job), SIGNATURES_DIR, ON_TAG)
    return [{**step, "run": run, "env": env}, kept]


def _work(plan: PipelinePlan, job: Job) -> list[_Step]:
    """The job's own steps, after the set-up."""
    transfer = plan.transfer
    if job.kind == "build":
        if transfer:
            return [{"run": session_command()}, {"run": push_command()}]
        return [
            {"run": session_command()},
            {"run": save_command()},
            _upload(f"image-{job.variant}", job.archive),
        ]
    if job.kind in ("smoke", "snapshot"):
        if transfer:
            return [{"run": pull_command()}, {"run": session_command()}]
        return [
            _download_image(job.variant or ""),
            {"run": load_command()},
            {"run": session_command()},
        ]
    if job.kind == "publish":  # on a tag only: a branch's images are not released
        steps: list[_Step] = []
        for n, row in enumerate(job.rows, 1):
            _, archive_var = row_vars(n)
            if not transfer:  # through a registry, nothing comes onto the runner
                load: _Step = {"if": ON_TAG, "run": load_command(archive_var)}
                steps += [_download_image(row, ON_TAG), load]
        publish: _Step = {"if": ON_TAG, "run": publish_command(bool(transfer))}
        return [*steps, *_signing(plan, job, publish)]
    push = plan.settings.push_manifest
    made = [_github_release()] if plan.makes_release(job) else []
    if job.kind != "manifest":  # the final's: its promote, then its release
        run = promote_command("GITHUB_REF_NAME", push)
        promote = _pushing(run) if push else {"run": run}
        promoted = _signing(plan, job, promote) if job.kind == "promote" else []
        return [*promoted, *made]
    merged = merge_command(push)
    unrecorded: list[_Step] = [] if push else [{"if": ON_TAG, "run": NOT_RECORDED}]
    return [
        {
            "uses": _action("download-artifact"),
            "with": {"pattern": f"{PARTS_DIR}-*", "path": PARTS_DIR, "merge-multiple": True},
        },
        _pushing(merged) if push else {"run": merged},
        *unrecorded,
        _upload("manifest", MANIFEST_FILE),
        *made,
    ]


def _contents(plan: PipelinePlan, job: Job) -> Commented:
    """The job's ``contents`` permission, and why."""
    pushes = job.kind in ("manifest", "promote") and plan.settings.push_manifest
    why = [
        *(["to push the manifest as the tag's note"] if pushes else []),
        *(["to make the tag's GitHub release"] if plan.makes_release(job) else []),
    ]
    if why:
        return Commented("write", " and ".join(why))
    return Commented("read", "to check out the repository")


def _job(plan: PipelinePlan, job: Job, tag_only: bool) -> _Job:
    steps = _setup(plan, job) + _work(plan, job)
    if job.kind in ("build", "smoke", "snapshot"):
        steps.append(_upload(f"{PARTS_DIR}-{job.key}", PARTS_DIR))
    elif job.kind == "publish":
        steps.append(_upload(f"{PARTS_DIR}-{job.key}", PARTS_DIR, ON_TAG))
    out: _Job = {"name": job.label}
    if tag_only:  # a run by hand on a branch releases nothing and asks no one to approve
        out["if"] = ON_TAG
    if job.needs:
        out["needs"] = list(job.needs)
    out["runs-on"] = plan.settings.runner(job.runs_on, job.arch, plan.runner)
    environment = plan.environment(job)
    if environment:
        out["environment"] = environment
    out["timeout-minutes"] = plan.settings.timeout(job.timeout_kind)
    out["permissions"] = {"contents": _contents(plan, job)}
    if job.kind not in ("manifest", "promote") and not job.on_final:
        out["env"] = {"RELEASE_MANIFEST_DIR": PARTS_DIR, STATE_ENV: STATE, **job_env(plan, job)}
    out["steps"] = steps
    return out


def _workflow(name: str, tags: list[str], jobs: dict[str, _Job], by_hand: bool) -> _Workflow:
    on: dict[str, JSONOut] = {"push": {"tags": tags}}
    if by_hand:
        on["workflow_dispatch"] = {}
    return {
        "name": name,
        "on": on,
        "permissions": {},
        # one run per ref at a time: a tag pushed again waits, it does not race the first
        "concurrency": {"group": f"{name}-${{{{ github.ref }}}}", "cancel-in-progress": False},
        "jobs": jobs,
    }


def github_workflows(plan: PipelinePlan) -> list[_Workflow]:
    """The rc workflow (``images``), then the final's (``promote``) where there is one."""
    jobs = pipeline_jobs(plan.matrix)
    tag_only = plan.on_tag_only(jobs)
    images = _workflow(
        "images",
        plan.tags.globs(BUILT),
        {j.key: _job(plan, j, j.key in tag_only) for j in jobs},
        by_hand=True,
    )
    last = final_job(plan)
    if last is None:
        return [images]
    final_jobs = {last.key: _job(plan, last, False)}  # its workflow runs on a final tag only
    final = _workflow("promote", plan.tags.globs(PROMOTED), final_jobs, False)
    return [images, final]


def github_texts(plan: PipelinePlan) -> list[str]:
    pinned = [f"{repo} {version}" for repo, _, version in ACTIONS.values()]
    header = [
        "Made from [tool.release.images] and [tool.release.ci].",
        "Make it again after the matrix changes; do not edit it by hand.",
        "Actions pinned by commit: " + ", ".join(pinned[:2]) + ",",
        ", ".join(pinned[2:]) + ".",
    ]
    texts = []
    for workflow in github_workflows(plan):
        if workflow["name"] == "images":
            what = [
                "rc and post tags: build, smoke and snapshot each image, publish, then record",
                "the manifest as the tag's note; run by hand on a branch, nothing is published.",
            ]
        elif "promote" in workflow["jobs"]:
            what = [
                "Final tags: the last rc's images get the final's tags, by digest in the",
                "registry; nothing is built.",
            ]
        else:
            what = ["Final tags: the GitHub release, with the final's notes; nothing is built."]
        if plan.github_release:
            what.append("On a tag, its GitHub release is made (the one job that may write).")
        what.append("The jobs that release wait for the approval environment's reviewers.")
        texts.append(dump_yaml(workflow, [*header, *what]))
    return texts

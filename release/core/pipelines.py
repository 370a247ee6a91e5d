"""CI pipelines for the image matrix: a Buildkite pipeline or a GitHub Actions workflow,
made from the same session list as the nox sessions (:meth:`ImageMatrix.session_ids`), so
the two cannot disagree. Pure: values in, a document (and its YAML text) out.

Each session is one job. ``build(<id>)`` runs the nox session, then saves the image it
made (found by its variant and revision labels) as ``image-<id>.tar.gz``; ``smoke(<id>)``
and ``snapshot(<id>)`` need that build, load its artifact and run their session. With a
registry (``ci-registry``, ``--registry``) the image travels through it instead:
``release images.push`` after the build, ``release images.pull`` before the session. Every one
of them writes its manifest part to ``$RELEASE_MANIFEST_DIR`` (a directory in the job's
work tree) and keeps it as an artifact; its logs and records go to ``$RELEASE_STATE_DIR``,
outside the checkout, so no job writes under ``.git``. The last job needs them all,
gathers the parts and merges them with ``release manifest --parts --no-record``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from release.core.matrix import ImageMatrix
from release.core.yaml_text import dump_yaml
from release.errors import ConfigError, UsageError

__all__ = [
    "FORMATS",
    "PARTS_DIR",
    "REVISION_LABEL",
    "VARIANT_LABEL",
    "Job",
    "buildkite_pipeline",
    "github_workflow",
    "pipeline_jobs",
    "pipeline_text",
    "runner_label",
]

FORMATS = {"buildkite": "pipeline.yml", "github": "images.yml"}  # format -> file name
PARTS_DIR = "manifest-parts"  # RELEASE_MANIFEST_DIR in every session's job
STATE_ENV = "RELEASE_STATE_DIR"  # logs and records: outside the checkout, not under .git
GITHUB_STATE = "${{ github.workspace }}/../release-state"  # the job's env cannot name runner.temp
BUILDKITE_STATE = f'export {STATE_ENV}="$(mktemp -d)"'  # the step's commands share one shell
MANIFEST_FILE = "manifest.json"
# the labels a built image carries (release.images.labels): which variant, which commit
VARIANT_LABEL = "org.release.variant"
REVISION_LABEL = "org.opencontainers.image.revision"
DEFAULT_SETUP = "python3 -m pip install -q -e ."
DEFAULT_RUNNER = "ubuntu-latest"
_KEY = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class Job:
    """One CI job, whatever the format: a session of a variant, or the final merge."""

    key: str  # build-cu130; "manifest" for the merge
    label: str  # the nox session, build(cu130); "manifest" for the merge
    kind: str  # build, smoke, snapshot or manifest
    variant: str | None
    needs: tuple[str, ...] = ()

    @property
    def archive(self) -> str:
        """The image artifact this job writes (build) or reads (smoke, snapshot)."""
        return f"image-{self.variant}.tar.gz"


def runner_label(text: str, where: str) -> str:
    """A GitHub ``runs-on`` label or a Buildkite queue: one line of printable text."""
    if not text.strip() or any(not ch.isprintable() for ch in text):
        raise UsageError(
            f"{where} {text!r} is not a runner label or queue name (one line of printable "
            "text, e.g. ubuntu-latest)"
        )
    return text


def _key(kind: str, variant: str) -> str:
    return f"{kind}-{_KEY.sub('_', variant)}"


def pipeline_jobs(matrix: ImageMatrix) -> list[Job]:
    """Every session of ``matrix`` as a job, in nox's order, then the manifest job."""
    jobs: list[Job] = []
    seen: dict[str, str] = {}
    for kind, ids in matrix.session_ids().items():
        for vid in ids:
            key = _key(kind, vid)
            if seen.setdefault(key, vid) != vid:
                raise ConfigError(
                    f"variants {seen[key]!r} and {vid!r} would share the CI job key {key!r}"
                )
            needs = () if kind == "build" else (_key("build", vid),)
            jobs.append(Job(key, f"{kind}({vid})", kind, vid, needs))
    jobs.append(Job("manifest", "manifest", "manifest", None, tuple(j.key for j in jobs)))
    return jobs


def _save(job: Job) -> str:
    labels = f"--filter label={VARIANT_LABEL}={job.variant} --filter label={REVISION_LABEL}=$(git rev-parse HEAD)"
    images = f"$(docker image ls {labels} --format '{{{{.Repository}}}}:{{{{.Tag}}}}')"
    return f"docker save {images} | gzip > {job.archive}"


def _load(job: Job) -> str:
    # once loaded, the archive leaves the work tree: the session sees the checkout as it came
    return f"gunzip -c {job.archive} | docker load && rm -f {job.archive}"


def _session(job: Job) -> str:
    return f'nox -s "{job.label}"'


def _merge() -> str:
    return f"release manifest --parts {PARTS_DIR} --out {MANIFEST_FILE} --no-record"


# -- Buildkite ------------------------------------------------------------------------------


def _push(job: Job, registry: str) -> str:
    return f"release images.push --variant {job.variant} --registry {registry}"


def _pull(job: Job, registry: str) -> str:
    return f"release images.pull --variant {job.variant} --registry {registry}"


def _buildkite_step(job: Job, setup: str, queue: str | None, registry: str) -> dict[str, Any]:
    commands = [setup] if job.kind == "manifest" else [setup, BUILDKITE_STATE]
    artifacts = [f"{PARTS_DIR}/**/*"]
    if job.kind == "build":
        commands += [_session(job), _push(job, registry) if registry else _save(job)]
        if not registry:
            artifacts.insert(0, job.archive)
    elif job.kind == "manifest":
        commands += [f'buildkite-agent artifact download "{PARTS_DIR}/**/*" .', _merge()]
        artifacts = [MANIFEST_FILE]
    elif registry:
        commands += [_pull(job, registry), _session(job)]
    else:
        commands += [
            f'buildkite-agent artifact download "{job.archive}" . --step {job.needs[0]}',
            _load(job),
            _session(job),
        ]
    step: dict[str, Any] = {
        "label": job.label,
        "key": job.key,
        # "$$" is a "$" at run time: Buildkite interpolates the pipeline when it is uploaded
        "command": [c.replace("$", "$$") for c in commands],
    }
    if job.needs:
        step["depends_on"] = list(job.needs)
    if job.kind != "manifest":
        step["env"] = {"RELEASE_MANIFEST_DIR": PARTS_DIR}
    step["artifact_paths"] = artifacts
    if queue:
        step["agents"] = {"queue": queue}
    return step


def buildkite_pipeline(
    matrix: ImageMatrix,
    *,
    setup: str = DEFAULT_SETUP,
    runner: str | None = None,
    registry: str | None = None,
) -> dict[str, Any]:
    """The Buildkite pipeline (``steps:``); ``runner`` is the agents' queue, if any."""
    chosen = matrix.ci_registry if registry is None else registry
    return {"steps": [_buildkite_step(j, setup, runner, chosen) for j in pipeline_jobs(matrix)]}


# -- GitHub Actions -------------------------------------------------------------------------


def _upload(name: str, path: str) -> dict[str, Any]:
    return {
        "uses": "actions/upload-artifact@v4",
        "with": {"name": name, "path": path, "if-no-files-found": "error"},
    }


def _github_job(job: Job, setup: str, runner: str, registry: str) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [
        # the whole history and its tags: a build reads its version from them
        {"uses": "actions/checkout@v4", "with": {"fetch-depth": 0}},
        {"run": setup},
    ]
    if job.kind == "build" and registry:
        steps += [{"run": _session(job)}, {"run": _push(job, registry)}]
    elif job.kind == "build":
        steps += [{"run": _session(job)}, {"run": _save(job)}]
        steps.append(_upload(f"image-{job.key.removeprefix('build-')}", job.archive))
    elif job.kind != "manifest" and registry:
        steps += [{"run": _pull(job, registry)}, {"run": _session(job)}]
    elif job.kind == "manifest":
        steps += [
            {
                "uses": "actions/download-artifact@v4",
                "with": {"pattern": f"{PARTS_DIR}-*", "path": PARTS_DIR, "merge-multiple": True},
            },
            {"run": _merge()},
            _upload("manifest", MANIFEST_FILE),
        ]
    else:
        steps += [
            {
                "uses": "actions/download-artifact@v4",
                "with": {"name": f"image-{job.needs[0].removeprefix('build-')}"},
            },
            {"run": _load(job)},
            {"run": _session(job)},
        ]
    if job.kind != "manifest":
        steps.append(_upload(f"{PARTS_DIR}-{job.key}", PARTS_DIR))
    out: dict[str, Any] = {"name": job.label}
    if job.needs:
        out["needs"] = list(job.needs)
    out["runs-on"] = runner
    if job.kind != "manifest":
        out["env"] = {"RELEASE_MANIFEST_DIR": PARTS_DIR, STATE_ENV: GITHUB_STATE}
    out["steps"] = steps
    return out


def github_workflow(
    matrix: ImageMatrix,
    *,
    setup: str = DEFAULT_SETUP,
    runner: str | None = None,
    registry: str | None = None,
) -> dict[str, Any]:
    """The GitHub Actions workflow (``jobs:``), run on a release tag's push or by hand."""
    chosen = matrix.ci_registry if registry is None else registry
    return {
        "name": "images",
        "on": {"push": {"tags": ["v*"]}, "workflow_dispatch": {}},
        "jobs": {
            j.key: _github_job(j, setup, runner or DEFAULT_RUNNER, chosen)
            for j in pipeline_jobs(matrix)
        },
    }


def pipeline_text(
    matrix: ImageMatrix,
    fmt: str,
    *,
    setup: str = DEFAULT_SETUP,
    runner: str | None = None,
    command: Sequence[str] = (),
    registry: str | None = None,
) -> str:
    """The file ``release ci --format fmt`` writes (``command`` is how it was made);
    ``registry``: where images travel between jobs (default ``ci-registry``; "" for
    artifacts)."""
    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r}: use {' or '.join(FORMATS)}")
    make = buildkite_pipeline if fmt == "buildkite" else github_workflow
    made = " ".join(command) or f"release ci --format {fmt}"
    header = [
        f"Made by `{made}` from [tool.release.images]: the jobs are the sessions of",
        "`nox -l -t images`. Make it again after the matrix changes; do not edit it by hand.",
    ]
    return dump_yaml(make(matrix, setup=setup, runner=runner, registry=registry), header)

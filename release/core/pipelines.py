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

Every job runs as written in the engine's repository: it sets up a Python of its own
(``[tool.release.ci] python``; GitHub's ``actions/setup-python``, Buildkite's a virtual
environment outside the checkout), installs this tool and nox there (``install``: by
default this tool at the version that wrote the file), never the engine, and on a tag
checks that the checkout is the tag's and that ``release`` reads the tag's version
(``release check --tag``: a Buildkite agent checks out by commit, with no tags, so its
steps fetch them first). GitHub jobs have least privilege (``permissions: {}`` for the
workflow, ``contents: read`` per job), one ``concurrency`` group per ref, a timeout per
job kind, and actions pinned by commit with no credentials left in the checkout. Runner
labels (agents' queues) and timeouts come per job kind, and per platform for a row's
builds, from ``[tool.release.ci]``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from release.core.ci_config import CiSettings
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
    "setup_command",
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
DEFAULT_RUNNER = "ubuntu-latest"
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
_KEY = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class Job:
    """One CI job, whatever the format: a session of a variant, or the final merge."""

    key: str  # build-cu130; "manifest" for the merge
    label: str  # the nox session, build(cu130); "manifest" for the merge
    kind: str  # build, smoke, snapshot or manifest
    variant: str | None
    needs: tuple[str, ...] = ()
    arch: str | None = None  # the row's platform's architecture, where it names one

    @property
    def runs_on(self) -> str:
        """The job kind its runner is chosen by: a smoke runs where a GPU may be."""
        return "gpu" if self.kind == "smoke" else self.kind

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
            platform = matrix.variant(vid).platform
            arch = platform.split("/")[1] if platform else None
            jobs.append(Job(key, f"{kind}({vid})", kind, vid, needs, arch))
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


def setup_command(install: str) -> str:
    """How a job installs this tool (``install``: a pip requirement, path or URL) and nox
    into the Python it set up; never the engine."""
    quoted = "'" + install.replace("'", "'\\''") + "'"
    return f"python -m pip install --quiet {quoted} nox"


# -- Buildkite ------------------------------------------------------------------------------


def _push(job: Job, registry: str) -> str:
    return f"release images.push --variant {job.variant} --registry {registry}"


def _pull(job: Job, registry: str) -> str:
    return f"release images.pull --variant {job.variant} --registry {registry}"


_VENV = 'venv="$(mktemp -d)/venv" && python3 -m venv "$venv" && . "$venv/bin/activate"'
_BUILDKITE_TAGS = "git fetch --quiet --tags --force origin"  # the agent checks out by commit
_BUILDKITE_CHECK = 'if [ -n "${BUILDKITE_TAG:-}" ]; then release check --tag "$BUILDKITE_TAG"; fi'


def _buildkite_step(
    job: Job, setup: str, settings: CiSettings, runner: str | None, registry: str
) -> dict[str, Any]:
    # one shell per step: the environment made here holds for the step's commands
    commands = [_BUILDKITE_TAGS, _VENV, setup, _BUILDKITE_CHECK]
    if job.kind != "manifest":
        commands.append(BUILDKITE_STATE)
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
    step["timeout_in_minutes"] = settings.timeout(job.kind)
    queue = settings.queue(job.runs_on, job.arch, runner)
    if queue:
        step["agents"] = {"queue": queue}
    return step


def buildkite_pipeline(
    matrix: ImageMatrix,
    *,
    setup: str,
    settings: CiSettings | None = None,
    runner: str | None = None,
    registry: str | None = None,
) -> dict[str, Any]:
    """The Buildkite pipeline (``steps:``); ``runner``: the agents' queue of every step
    that ``[tool.release.ci] runners`` gives none."""
    chosen = matrix.ci_registry if registry is None else registry
    given = settings or CiSettings()
    return {
        "steps": [_buildkite_step(j, setup, given, runner, chosen) for j in pipeline_jobs(matrix)]
    }


# -- GitHub Actions -------------------------------------------------------------------------


def _action(name: str) -> str:
    repository, commit, _ = ACTIONS[name]
    return f"{repository}@{commit}"


def _upload(name: str, path: str) -> dict[str, Any]:
    return {
        "uses": _action("upload-artifact"),
        "with": {"name": name, "path": path, "if-no-files-found": "error"},
    }


def _github_setup(setup: str, settings: CiSettings) -> list[dict[str, Any]]:
    return [
        # the whole history and its tags (a build reads its version from them); no
        # credentials left in the checkout for a later step or an artifact to carry
        {
            "uses": _action("checkout"),
            "with": {"fetch-depth": 0, "persist-credentials": False},
        },
        {"uses": _action("setup-python"), "with": {"python-version": settings.python}},
        {"run": setup},
        {"if": "github.ref_type == 'tag'", "run": 'release check --tag "$GITHUB_REF_NAME"'},
    ]


def _github_job(
    job: Job, setup: str, settings: CiSettings, runner: str | None, registry: str
) -> dict[str, Any]:
    steps = _github_setup(setup, settings)
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
                "uses": _action("download-artifact"),
                "with": {"pattern": f"{PARTS_DIR}-*", "path": PARTS_DIR, "merge-multiple": True},
            },
            {"run": _merge()},
            _upload("manifest", MANIFEST_FILE),
        ]
    else:
        steps += [
            {
                "uses": _action("download-artifact"),
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
    out["runs-on"] = settings.runner(job.runs_on, job.arch, runner)
    out["timeout-minutes"] = settings.timeout(job.kind)
    out["permissions"] = {"contents": "read"}
    if job.kind != "manifest":
        out["env"] = {"RELEASE_MANIFEST_DIR": PARTS_DIR, STATE_ENV: GITHUB_STATE}
    out["steps"] = steps
    return out


def github_workflow(
    matrix: ImageMatrix,
    *,
    setup: str,
    settings: CiSettings | None = None,
    runner: str | None = None,
    registry: str | None = None,
) -> dict[str, Any]:
    """The GitHub Actions workflow (``jobs:``), run on a release tag's push or by hand;
    ``runner``: the label of every job that ``[tool.release.ci] runners`` gives none."""
    chosen = matrix.ci_registry if registry is None else registry
    given = settings or CiSettings()
    return {
        "name": "images",
        "on": {"push": {"tags": ["v*"]}, "workflow_dispatch": {}},
        "permissions": {},
        # one run per ref at a time: a tag pushed again waits, it does not race the first
        "concurrency": {"group": "images-${{ github.ref }}", "cancel-in-progress": False},
        "jobs": {
            j.key: _github_job(j, setup, given, runner, chosen) for j in pipeline_jobs(matrix)
        },
    }


def pipeline_text(
    matrix: ImageMatrix,
    fmt: str,
    *,
    setup: str,
    settings: CiSettings | None = None,
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
    if fmt == "github":
        header += [
            "Actions pinned by commit: "
            + ", ".join(f"{repo} {version}" for repo, _, version in list(ACTIONS.values())[:2]),
            "and " + ", ".join(f"{r} {v}" for r, _, v in list(ACTIONS.values())[2:]) + ".",
        ]
    document = make(matrix, setup=setup, settings=settings, runner=runner, registry=registry)
    return dump_yaml(document, header)

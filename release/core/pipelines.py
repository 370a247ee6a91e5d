"""CI pipelines for the image matrix: a Buildkite pipeline or GitHub Actions workflows, made
from the same session list as the nox sessions (:meth:`ImageMatrix.session_ids`), so the
two cannot disagree. Pure: values in, documents (and their YAML text) out. The jobs, and
the shell lines they run, are here; :mod:`release.core.pipeline_github` and
:mod:`release.core.pipeline_buildkite` spell them in each format, and
:mod:`release.core.pipeline_files` makes the files.

**What runs for which tag** (:mod:`release.core.ci_triggers`, from the tag template and the
version scheme). An rc or a post release is built: one job per session, ``build(<id>)``,
then ``smoke(<id>)`` and ``snapshot(<id>)`` of that build; then, where a release registry
is configured, ``publish-<variant>`` (``release images.publish``: the platform images, the
index, every tag read back); then ``manifest``, which merges every job's manifest part,
records the manifest as the tag's note and pushes it (``push-manifest``, default true).
A final is only promoted: one ``promote`` job, the last rc's digests given the final's tags
inside the registry (``release images.promote``), no build at all. A branch (a run by hand)
builds, smokes and snapshots, and publishes and records nothing.

**Between jobs** the images travel through a registry where one is configured
(``ci-registry``, else ``<registry>/ci``; ``--registry``): ``release images.push`` after
the build, ``release images.pull`` before a session; otherwise as artifacts (``docker save
| gzip``, then ``docker load``). Every job writes its manifest part to
``$RELEASE_MANIFEST_DIR`` (kept as an artifact) and its logs to ``$RELEASE_STATE_DIR``,
outside the checkout: no job writes under ``.git`` but the recording one.

**Every job runs as written in the engine's repository**: it sets up a Python of its own
(``[tool.release.ci] python``), installs this tool and nox there (``install``: by default
this tool at the version that wrote the file), never the engine, and on a tag checks that
the checkout is the tag's, that ``release`` reads the tag's version and that the tag is of
the pipeline's kind (``release check --tag --job``). Credentials come from the CI, never
the file: the registry's from ``RELEASE_REGISTRY_USER`` and ``RELEASE_REGISTRY_PASSWORD``
(GitHub: secrets of those names; Buildkite: the agent's environment), the push of a note
from GitHub's job token (``contents: write`` on that job only) or the Buildkite agent's own
git credentials.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from release.core.ci_config import CiSettings
from release.core.ci_triggers import TagKinds
from release.core.matrix import ImageMatrix
from release.errors import ConfigError, UsageError

__all__ = [
    "FORMATS",
    "PARTS_DIR",
    "REVISION_LABEL",
    "VARIANT_LABEL",
    "Job",
    "Plan",
    "pipeline_jobs",
    "promote_job",
    "runner_label",
    "setup_command",
    "transfer_registry",
    "uses_registry",
]

# format -> the files it writes: the rc pipeline's first, then the final's where it has one
FORMATS = {"buildkite": ("pipeline.yml",), "github": ("images.yml", "promote.yml")}
PARTS_DIR = "manifest-parts"  # RELEASE_MANIFEST_DIR in every session's job
STATE_ENV = "RELEASE_STATE_DIR"  # logs and records: outside the checkout, not under .git
MANIFEST_FILE = "manifest.json"
# the labels a built image carries (release.images.labels): which variant, which commit
VARIANT_LABEL = "org.release.variant"
REVISION_LABEL = "org.opencontainers.image.revision"
REGISTRY_USER = "RELEASE_REGISTRY_USER"
REGISTRY_PASSWORD = "RELEASE_REGISTRY_PASSWORD"
_KEY = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class Job:
    """One CI job, whatever the format: a session of a row, a variant's publish, the
    manifest's merge, or the final's promote."""

    key: str  # build-cu130; publish-cu129; "manifest"; "promote"
    label: str  # the nox session, build(cu130); publish(cu129); "manifest"; "promote"
    kind: str  # build, smoke, snapshot, publish, manifest or promote
    variant: str | None  # the row (a session) or the variant (publish)
    needs: tuple[str, ...] = ()
    arch: str | None = None  # the row's platform's architecture, where it names one
    rows: tuple[str, ...] = ()  # publish: the variant's rows, whose images it publishes

    @property
    def runs_on(self) -> str:
        """The job kind its runner is chosen by: a smoke runs where a GPU may be."""
        return "gpu" if self.kind == "smoke" else self.kind

    @property
    def archive(self) -> str:
        """The image artifact this job writes (build) or reads (smoke, snapshot)."""
        return archive(self.variant or "")


@dataclass(frozen=True)
class Plan:
    """What a pipeline is made of: the matrix, the settings, where images travel between
    jobs, how the jobs install this tool, and which tags are built or promoted."""

    matrix: ImageMatrix
    settings: CiSettings
    setup: str
    transfer: str  # REGISTRY/PATH images travel through; "" for artifacts
    tags: TagKinds
    runner: str | None = None  # --runner: every job's label [tool.release.ci] gives none


def archive(row: str) -> str:
    return f"image-{row}.tar.gz"


def runner_label(text: str, where: str) -> str:
    """A GitHub ``runs-on`` label or a Buildkite queue: one line of printable text."""
    if not text.strip() or any(not ch.isprintable() for ch in text):
        raise UsageError(
            f"{where} {text!r} is not a runner label or queue name (one line of printable "
            "text, e.g. ubuntu-latest)"
        )
    return text


def transfer_registry(matrix: ImageMatrix, given: str | None) -> str:
    """Where images travel between jobs: ``given`` (``--registry``; "" for artifacts),
    else ``ci-registry``, else a ``ci`` path under the release registry (apart from the
    published tags), else "" (artifacts)."""
    if given is not None:
        return given
    if matrix.ci_registry:
        return matrix.ci_registry
    return f"{matrix.registry}/ci" if matrix.registry else ""


def _key(kind: str, variant: str) -> str:
    return f"{kind}-{_KEY.sub('_', variant)}"


def pipeline_jobs(matrix: ImageMatrix) -> list[Job]:
    """The rc pipeline: every session of ``matrix`` as a job, in nox's order, then a
    publish job per variant (where a release registry is configured), then the manifest."""
    jobs: list[Job] = []
    seen: dict[str, str] = {}
    for kind, ids in matrix.session_ids().items():
        for vid in ids:
            key = _key(kind, vid)
            if seen.setdefault(key, vid) != vid:
                raise ConfigError(
                    f"variants {seen[key]!r} and {vid!r} would share the CI job key {key!r}"
                )
            needs: tuple[str, ...] = () if kind == "build" else (_key("build", vid),)
            platform = matrix.variant(vid).platform
            arch = platform.split("/")[1] if platform else None
            jobs.append(Job(key, f"{kind}({vid})", kind, vid, needs, arch))
    sessions = list(jobs)
    if matrix.registry:
        for group in matrix.groups:
            rows = tuple(row.id for row in matrix.rows_of(group))
            group_needs = tuple(j.key for j in sessions if j.variant in rows)
            key = _key("publish", group)
            jobs.append(Job(key, f"publish({group})", "publish", group, group_needs, rows=rows))
    jobs.append(Job("manifest", "manifest", "manifest", None, tuple(j.key for j in jobs)))
    return jobs


def promote_job(matrix: ImageMatrix) -> Job | None:
    """The final's pipeline: its one job, where a release registry is configured (the rc's
    images are promoted there, by digest); None otherwise (``release promote`` gives them
    the final's tags where they are)."""
    return Job("promote", "promote", "promote", None) if matrix.registry else None


# -- the lines the jobs run -----------------------------------------------------------------


def setup_command(install: str) -> str:
    """How a job installs this tool (``install``: a pip requirement, path or URL) and nox
    into the Python it set up; never the engine."""
    return f"python -m pip install --quiet {shlex.quote(install)} nox"


def check_command(tag: str, job: Job) -> str:
    """The check before anything is done for a pushed tag (``tag``: the shell's spelling
    of the CI's variable)."""
    which = "promote" if job.kind == "promote" else "build"
    return f'release check --tag "{tag}" --job {which}'


def login_command(plan: Plan) -> str | None:
    """``docker login`` to each registry the pipeline uses, where the CI gives the
    credentials (none given: the runner's own login is used)."""
    hosts = dict.fromkeys(r.split("/")[0] for r in (plan.transfer, plan.matrix.registry) if r)
    if not hosts:
        return None
    logins = "; ".join(
        f'printf %s "${REGISTRY_PASSWORD}" | docker login {shlex.quote(host)} '
        f'--username "${REGISTRY_USER}" --password-stdin'
        for host in hosts
    )
    return f'if [ -n "${{{REGISTRY_USER}:-}}" ]; then {logins}; fi'


def uses_registry(plan: Plan, job: Job) -> bool:
    """Whether ``job`` pushes to or pulls from a registry (and so logs in first)."""
    if job.kind in ("publish", "promote"):
        return True
    return bool(plan.transfer) and job.kind in ("build", "smoke", "snapshot")


def save_command(job: Job) -> str:
    labels = f"--filter label={VARIANT_LABEL}={job.variant} --filter label={REVISION_LABEL}=$(git rev-parse HEAD)"
    images = f"$(docker image ls {labels} --format '{{{{.Repository}}}}:{{{{.Tag}}}}')"
    return f"docker save {images} | gzip > {job.archive}"


def load_command(row: str) -> str:
    # once loaded, the archive leaves the work tree: the session sees the checkout as it came
    return f"gunzip -c {archive(row)} | docker load && rm -f {archive(row)}"


def session_command(job: Job) -> str:
    return f'nox -s "{job.label}"'


def push_command(row: str, registry: str) -> str:
    return f"release images.push --variant {row} --registry {registry}"


def pull_command(row: str, registry: str) -> str:
    return f"release images.pull --variant {row} --registry {registry}"


def publish_command(job: Job) -> str:
    return f"release images.publish --variant {job.variant}"


def merge_command(push: bool) -> str:
    """The manifest's merge: recorded as the tag's note and pushed, or (``push`` false)
    left as a file, not recorded."""
    then = "--push" if push else "--no-record"
    return f"release manifest --parts {PARTS_DIR} --out {MANIFEST_FILE} {then}"


def promote_command(tag: str, push: bool) -> str:
    return f'release images.promote --tag "{tag}"' + (" --push" if push else "")


NOT_RECORDED = (
    "echo 'push-manifest = false: the manifest is not recorded; download the "
    f"{PARTS_DIR}-* artifacts, then release manifest --parts DIR and release push'"
)

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

**The GitHub release** (``[tool.release.github] release``, default true): the job that
runs on the tag makes it, after its own work (``release github-release "$TAG"``): the rc's
``manifest`` job (a pre-release with the notes, the rc page and the manifest), the final's
``promote`` job, or, with no release registry (so no promote job), a ``github-release`` job
of its own for final tags. Only that job may write (``contents: write``); its token is
GitHub's job token in the step's ``env``, the Buildkite agent's ``GH_TOKEN``.

**Approval.** The jobs that release (each publish, the promote, the job that records the
manifest or makes the GitHub release: :meth:`Plan.approval`) wait for a person: on GitHub
they run in the approval environment (``[tool.release.ci] environment``), whose required
reviewers approve the run, on Buildkite after a ``block`` step. They and every job after
them run on a tag only. Secrets are read only in jobs that have an environment: those, and
the build, smoke and snapshot jobs that log in to the CI registry (``transfer-environment``,
no reviewers), so an environment's secrets reach its own jobs and no other.

**Between jobs** the images travel through a registry where one is configured
(``ci-registry``, else ``<registry>/ci``; ``--registry``): ``release images.push`` after
the build (which also moves the row's ``cache-<row>`` tag there: the next build job gets
``RELEASE_CI_CACHE`` and reuses its layers, BuildKit's inline cache), ``release
images.pull`` before a session, and the publish takes them from there
(``images.publish --from``: copied inside the registries, never pulled onto its runner);
otherwise as artifacts (``docker save | gzip``, then ``docker load``). Every job writes
its manifest part to ``$RELEASE_MANIFEST_DIR`` (kept as an artifact) and its logs to ``$RELEASE_STATE_DIR``,
outside the checkout: no job writes under ``.git`` but the recording one.

**Every job runs as written in the engine's repository**: it sets up a Python of its own
(``[tool.release.ci] python``), installs this tool and nox there, pinned (by commit or by
hash, nox at one version: :mod:`release.core.tool_pins`), never the engine, and on a tag
checks that the checkout is the tag's, that ``release`` reads the tag's version and that
the tag is of the pipeline's kind (``release check --tag --job``).

**No value becomes code.** The lines the jobs run are fixed text; every value they need
(the install, a session, a variant, a registry, an archive, the tag) comes from an
environment variable set from a literal string (:func:`job_env`), as ``"$VAR"``. GitHub
expands ``${{ }}`` anywhere before the shell runs (``[tool.release]`` holds none:
:func:`release.core.config.refuse_expressions`); Buildkite interpolates ``$`` on upload,
so its pipeline doubles every ``$``. Credentials come from the CI, never
the file: the registry's from ``RELEASE_REGISTRY_USER`` and ``RELEASE_REGISTRY_PASSWORD``
(GitHub: secrets of those names in the job's environment; Buildkite: the agent's
environment, scoped by its queue), the push of a note
from GitHub's job token (``contents: write`` on that job only) or the Buildkite agent's own
git credentials.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from release.core.ci_config import CiSettings
from release.core.ci_triggers import TagKinds
from release.core.matrix import ImageMatrix
from release.core.tool_pins import PinKind, ToolInstall
from release.errors import ConfigError, UsageError

__all__ = [
    "FORMATS",
    "PARTS_DIR",
    "REVISION_LABEL",
    "VARIANT_LABEL",
    "Job",
    "PipelinePlan",
    "final_job",
    "github_release_command",
    "install_command",
    "install_env",
    "job_env",
    "job_key",
    "pipeline_jobs",
    "promote_job",
    "runner_label",
    "transfer_registry",
    "uses_registry",
]

# format -> the files it writes: the rc pipeline's first, then the final's where it has one
FORMATS = {"buildkite": ("pipeline.yml",), "github": ("images.yml", "promote.yml")}
PARTS_DIR = "manifest-parts"  # RELEASE_MANIFEST_DIR in every session's job
STATE_ENV = "RELEASE_STATE_DIR"  # logs and records: outside the checkout, not under .git
MANIFEST_FILE = "manifest.json"
RELEASE_JOB = "github-release"  # a final's job where there is no promote job to make it
# the labels a built image carries (release.images.labels): which variant, which commit
VARIANT_LABEL = "org.release.variant"
REVISION_LABEL = "org.opencontainers.image.revision"
REGISTRY_USER = "RELEASE_REGISTRY_USER"
REGISTRY_PASSWORD = "RELEASE_REGISTRY_PASSWORD"
# the values the jobs' lines read, set in each job's (step's) environment
INSTALL_ENV = "RELEASE_CI_INSTALL"  # the pinned requirement of this tool
HASHES_ENV = "RELEASE_CI_HASHES"  # its --hash options, for a hash-pinned version
NOX_ENV = "RELEASE_CI_NOX"  # nox==V
REQUIREMENTS_ENV = "RELEASE_CI_REQUIREMENTS"  # or a hash-pinned requirements file
SESSION_ENV = "RELEASE_CI_SESSION"  # build(cu130)
VARIANT_ENV = "RELEASE_CI_VARIANT"  # a session's row, a publish job's variant
REGISTRY_ENV = "RELEASE_CI_REGISTRY"  # where images travel between jobs
CACHE_ENV = "RELEASE_CI_CACHE"  # a build's layer cache: the same registry (images.build reads it)
ARCHIVE_ENV = "RELEASE_CI_ARCHIVE"  # or the image archive they travel as
ROW_ENV = "RELEASE_CI_ROW"  # a publish job's rows: _1, _2 ...
LOGIN_ENV = "RELEASE_CI_LOGIN"  # the registries' hosts logged in to: _1, _2 ...
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
        """The job kind its runner is chosen by: a smoke runs where a GPU may be; a final's
        GitHub release where a promote would."""
        return {"smoke": "gpu", RELEASE_JOB: "promote"}.get(self.kind, self.kind)

    @property
    def timeout_kind(self) -> str:
        """The job kind its timeout is read by (``[tool.release.ci] timeouts``)."""
        return "promote" if self.kind == RELEASE_JOB else self.kind

    @property
    def on_final(self) -> bool:
        """Whether the job runs for a final tag (``release check --job promote``)."""
        return self.kind in ("promote", RELEASE_JOB)

    @property
    def archive(self) -> str:
        """The image artifact this job writes (build) or reads (smoke, snapshot)."""
        return archive(self.variant or "")


@dataclass(frozen=True)
class PipelinePlan:
    """What a pipeline is made of: the matrix, the settings, how the jobs install this
    tool (pinned), where images travel between jobs, and which tags are built or
    promoted."""

    matrix: ImageMatrix
    settings: CiSettings
    install: ToolInstall
    transfer: str  # REGISTRY/PATH images travel through; "" for artifacts
    tags: TagKinds
    runner: str | None = None  # --runner: every job's label [tool.release.ci] gives none
    github_release: bool = False  # [tool.release.github] release: the tag's job makes it

    def makes_release(self, job: Job) -> bool:
        """Whether ``job`` makes the tag's GitHub release (and so may write)."""
        return self.github_release and job.kind in ("manifest", "promote", RELEASE_JOB)

    def approval(self, job: Job) -> bool:
        """Whether ``job`` waits for approval: it publishes or promotes images, records the
        manifest (``push-manifest``) or makes the GitHub release."""
        if job.kind in ("publish", "promote", RELEASE_JOB):
            return True
        return job.kind == "manifest" and (self.settings.push_manifest or self.makes_release(job))

    def environment(self, job: Job) -> str | None:
        """The GitHub environment ``job`` runs in: the approval one where it waits for
        approval, the CI registry's where it logs in to push or pull, else none (and then
        it reads no secret)."""
        if self.approval(job):
            return self.settings.environment
        if uses_registry(self, job) and login_hosts(self):
            return self.settings.transfer_environment
        return None

    def on_tag_only(self, jobs: list[Job]) -> set[str]:
        """The keys of ``jobs`` that run on a tag only: those that wait for approval and
        every job after one (a run by hand on a branch releases nothing, asks no one)."""
        after: set[str] = set()
        for job in jobs:  # in order: a job's needs come before it
            if self.approval(job) or after.intersection(job.needs):
                after.add(job.key)
        return after


def archive(row: str) -> str:
    return f"image-{row}.tar.gz"


def runner_label(text: str, where: str) -> str:
    """A GitHub ``runs-on`` label or a Buildkite queue: one line of printable text, and no
    ``${{`` (GitHub would evaluate it)."""
    if not text.strip() or any(not ch.isprintable() for ch in text) or "${{" in text:
        raise UsageError(
            f"{where} {text!r} is not a runner label or queue name (one line of printable "
            "text with no ${{, e.g. ubuntu-latest)"
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


def job_key(kind: str, variant: str) -> str:
    """The key of ``variant``'s job of ``kind`` (build-cu130): what ``needs`` names."""
    return f"{kind}-{_KEY.sub('_', variant)}"


def pipeline_jobs(matrix: ImageMatrix) -> list[Job]:
    """The rc pipeline: every session of ``matrix`` as a job, in nox's order, then a
    publish job per variant (where a release registry is configured), then the manifest."""
    jobs: list[Job] = []
    seen: dict[str, str] = {}
    for kind, ids in matrix.session_ids().items():
        for vid in ids:
            key = job_key(kind, vid)
            if seen.setdefault(key, vid) != vid:
                raise ConfigError(
                    f"variants {seen[key]!r} and {vid!r} would share the CI job key {key!r}"
                )
            needs: tuple[str, ...] = () if kind == "build" else (job_key("build", vid),)
            platform = matrix.variant(vid).platform
            arch = platform.split("/")[1] if platform else None
            jobs.append(Job(key, f"{kind}({vid})", kind, vid, needs, arch))
    sessions = list(jobs)
    if matrix.registry:
        for group in matrix.groups:
            rows = tuple(row.id for row in matrix.rows_of(group))
            group_needs = tuple(j.key for j in sessions if j.variant in rows)
            key = job_key("publish", group)
            jobs.append(Job(key, f"publish({group})", "publish", group, group_needs, rows=rows))
    jobs.append(Job("manifest", "manifest", "manifest", None, tuple(j.key for j in jobs)))
    return jobs


def promote_job(matrix: ImageMatrix) -> Job | None:
    """The final's pipeline: its one job, where a release registry is configured (the rc's
    images are promoted there, by digest); None otherwise (``release promote`` gives them
    the final's tags where they are)."""
    return Job("promote", "promote", "promote", None) if matrix.registry else None


def final_job(plan: PipelinePlan) -> Job | None:
    """The job a final tag runs: the promote job, else (no registry) one that only makes
    the GitHub release, where one is made; None when there is neither."""
    promote = promote_job(plan.matrix)
    if promote is not None or not plan.github_release:
        return promote
    return Job(RELEASE_JOB, RELEASE_JOB, RELEASE_JOB, None)


# -- the lines the jobs run -----------------------------------------------------------------
# Every value a line needs (the pinned install, the session, the variant, the registry, an
# artifact) reaches it as an environment variable set from a literal string: the lines are
# fixed text that quote "$VAR", so no value is written where GitHub expands ``${{ }}`` or
# Buildkite interpolates ``$``, nor where the shell reads code.

_PIP = "python -m pip install --quiet"


def _var(name: str) -> str:
    return f'"${name}"'


def row_vars(n: int) -> tuple[str, str]:
    """The variables of a publish job's ``n``-th row (from 1): its id and its archive."""
    return f"{ROW_ENV}_{n}", f"{ARCHIVE_ENV}_{n}"


def install_env(install: ToolInstall) -> dict[str, str]:
    """What the install line reads: the pinned requirement (and its hashes) and nox's pin,
    or the requirements file."""
    if install.kind is PinKind.REQUIREMENTS:
        return {REQUIREMENTS_ENV: install.requirement}
    env = {INSTALL_ENV: install.requirement, NOX_ENV: install.nox}
    if install.hashes:
        env[HASHES_ENV] = " ".join(f"--hash={h}" for h in install.hashes)
    return env


def install_command(install: ToolInstall) -> str:
    """How a job installs this tool and nox, pinned, into the Python it set up; never the
    engine. pip's hash mode is all or nothing, so a hash-pinned version goes in alone
    (``--no-deps``, from a requirements file of one line), then its dependencies (the tool,
    there already, satisfies its own pin and is not fetched again)."""
    if install.kind is PinKind.REQUIREMENTS:
        return f"{_PIP} --require-hashes -r {_var(REQUIREMENTS_ENV)}"
    both = f"{_PIP} {_var(INSTALL_ENV)} {_var(NOX_ENV)}"
    if install.kind is not PinKind.HASHED:
        return both
    written = f"printf '%s %s\\n' {_var(INSTALL_ENV)} {_var(HASHES_ENV)} > \"$pinned\""
    alone = f'{_PIP} --no-deps --require-hashes -r "$pinned"'
    return f'pinned="$(mktemp)" && {written} && {alone} && {both}'


def check_command(tag: str, job: Job) -> str:
    """The check before anything is done for a pushed tag (``tag``: the CI's variable
    that holds it)."""
    which = "promote" if job.on_final else "build"
    return f"release check --tag {_var(tag)} --job {which}"


def login_hosts(plan: PipelinePlan) -> list[str]:
    """The registries' hosts the pipeline logs in to: where images travel, where they are
    published."""
    return list(dict.fromkeys(r.split("/")[0] for r in (plan.transfer, plan.matrix.registry) if r))


def login_env(plan: PipelinePlan) -> dict[str, str]:
    return {f"{LOGIN_ENV}_{n}": host for n, host in enumerate(login_hosts(plan), 1)}


def login_command(plan: PipelinePlan) -> str | None:
    """``docker login`` to each registry the pipeline uses, where the CI gives the
    credentials (none given: the runner's own login is used)."""
    logins = "; ".join(
        f'printf %s "${REGISTRY_PASSWORD}" | docker login {_var(host)} '
        f'--username "${REGISTRY_USER}" --password-stdin'
        for host in login_env(plan)
    )
    return f'if [ -n "${{{REGISTRY_USER}:-}}" ]; then {logins}; fi' if logins else None


def uses_registry(plan: PipelinePlan, job: Job) -> bool:
    """Whether ``job`` pushes to or pulls from a registry (and so logs in first)."""
    if job.kind in ("publish", "promote"):
        return True
    return bool(plan.transfer) and job.kind in ("build", "smoke", "snapshot")


def job_env(plan: PipelinePlan, job: Job) -> dict[str, str]:
    """The values the job's lines read: its session, its variant (a publish job's rows,
    numbered), the registry images travel through or the archives they travel as."""
    env: dict[str, str] = {}
    if job.kind in ("build", "smoke", "snapshot"):
        env = {SESSION_ENV: job.label, VARIANT_ENV: job.variant or ""}
        env |= {REGISTRY_ENV: plan.transfer} if plan.transfer else {ARCHIVE_ENV: job.archive}
        if plan.transfer and job.kind == "build":  # the earlier build's layers, kept there
            env[CACHE_ENV] = plan.transfer
    elif job.kind == "publish":
        env = {VARIANT_ENV: job.variant or ""}
        env |= {REGISTRY_ENV: plan.transfer} if plan.transfer else {}
        for n, row in enumerate(job.rows, 1):
            row_var, archive_var = row_vars(n)
            env[row_var] = row
            env |= {} if plan.transfer else {archive_var: archive(row)}
    return env


def save_command() -> str:
    labels = (
        f'--filter "label={VARIANT_LABEL}=${VARIANT_ENV}" '
        f'--filter "label={REVISION_LABEL}=$(git rev-parse HEAD)"'
    )
    images = f"$(docker image ls {labels} --format '{{{{.Repository}}}}:{{{{.Tag}}}}')"
    return f"docker save {images} | gzip > {_var(ARCHIVE_ENV)}"


def load_command(archive_var: str = ARCHIVE_ENV) -> str:
    # once loaded, the archive leaves the work tree: the session sees the checkout as it came
    return f"gunzip -c {_var(archive_var)} | docker load && rm -f {_var(archive_var)}"


def session_command() -> str:
    return f"nox -s {_var(SESSION_ENV)}"


def push_command() -> str:
    return f"release images.push --variant {_var(VARIANT_ENV)} --registry {_var(REGISTRY_ENV)}"


def pull_command(variant_var: str = VARIANT_ENV) -> str:
    return f"release images.pull --variant {_var(variant_var)} --registry {_var(REGISTRY_ENV)}"


def publish_command(transfer: bool = False) -> str:
    """The publish; ``transfer``: of the images in the registry they travelled through,
    copied inside the registries (none is pulled onto the runner)."""
    source = f" --from {_var(REGISTRY_ENV)}" if transfer else ""
    return f"release images.publish --variant {_var(VARIANT_ENV)}{source}"


def merge_command(push: bool) -> str:
    """The manifest's merge: recorded as the tag's note and pushed, or (``push`` false)
    left as a file, not recorded."""
    then = "--push" if push else "--no-record"
    return f"release manifest --parts {PARTS_DIR} --out {MANIFEST_FILE} {then}"


def github_release_command(tag: str) -> str:
    """The tag's GitHub release, made or brought up to date (``tag``: the CI's variable
    that holds it); ``gh`` reads its token from ``GH_TOKEN``."""
    return f"release github-release {_var(tag)}"


def promote_command(tag: str, push: bool) -> str:
    return f"release images.promote --tag {_var(tag)}" + (" --push" if push else "")


NOT_RECORDED = (
    "echo 'push-manifest = false: the manifest is not recorded; download the "
    f"{PARTS_DIR}-* artifacts, then release manifest --parts DIR and release push'"
)

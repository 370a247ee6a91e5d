"""``[tool.release.ci]``: how the generated CI pipelines run in the engine's repository.
Pure.

- ``python``: the Python the jobs set up for this tool and nox (never the engine's own);
- ``install``: what the jobs install this tool from, pinned (:mod:`release.core.tool_pins`):
  a VCS URL at a full commit, an archive URL with its sha256, or ``release==X.Y.Z
  --hash=sha256:...`` (default: this tool as it is installed here, where pip recorded a
  commit or a hash); checked by ``release ci``, which refuses what is not pinned;
- ``requirements``: instead, a hash-pinned requirements file in the work tree that pins
  this tool and nox (``pip install --require-hashes -r FILE``);
- ``runners``: the runner label (GitHub) or agents' queue (Buildkite) per job kind
  (``build``, ``smoke``, ``gpu``: a smoke with a GPU check, ``snapshot``, ``publish``,
  ``manifest``, ``promote``), per kind and platform (``build-arm64``: arm64 images built
  natively), and ``default`` for the rest;
- ``timeouts``: minutes per job kind (GitHub's own default is six hours);
- ``push-manifest``: whether the last job of an rc records the manifest as the tag's note
  and pushes it, and the promote job the final's (default true: GitHub's job token with
  ``contents: write`` on those jobs only, Buildkite's agent's own git credentials); false
  leaves the merged manifest as an artifact, for a maintainer to record and push;
- ``environment``: the GitHub environment the jobs that release run in (default
  ``release``): publish, promote, and the job that records the manifest or makes the
  GitHub release. Its required reviewers approve each run before those jobs start, and
  its secrets (the release registry's credentials) reach those jobs only;
- ``transfer-environment``: the GitHub environment of the build, smoke and snapshot jobs
  that push or pull through a registry (default ``release-ci``): it holds the CI
  registry's credentials and needs no reviewers. Both are names, never code: one line of
  printable text, no ``${{``, at most 255 characters, and not the same name (GitHub's
  names are not case sensitive), or every build would wait for a review;
- ``image-signing-key``: the full fingerprint of the OpenPGP key the publish and promote
  jobs sign the images by (:mod:`release.core.pipeline_signing`); its private half is the
  ``RELEASE_IMAGE_SIGNING_SECRET`` secret of the approval environment. Unset: unsigned.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from release.core.serving import refuse_unknown
from release.core.tree_paths import tree_relative
from release.errors import ConfigError

__all__ = ["ENVIRONMENT", "JOB_KINDS", "TRANSFER_ENVIRONMENT", "CiSettings", "parse_ci"]

PREFIX = "[tool.release.ci]"
JOB_KINDS = ("build", "smoke", "gpu", "snapshot", "publish", "manifest", "promote")
TIMEOUTS = {
    "build": 180,
    "smoke": 30,
    "gpu": 30,
    "snapshot": 60,
    "publish": 30,
    "manifest": 15,
    "promote": 15,
}
DEFAULT_RUNNER = "ubuntu-latest"
_KEYS = (
    "python",
    "install",
    "requirements",
    "runners",
    "timeouts",
    "push-manifest",
    "environment",
    "transfer-environment",
    "image-signing-key",
)
ENVIRONMENT = "release"  # the approval environment: reviewers, the release's secrets
TRANSFER_ENVIRONMENT = "release-ci"  # the CI registry's secrets, no reviewers
_ENVIRONMENT_LENGTH = 255  # GitHub's limit on an environment's name
_RUNNER_KEY = re.compile(rf"^(?:default|(?:{'|'.join(JOB_KINDS)})(?:-[a-z0-9]+)?)$")
_PYTHON = re.compile(r"^3\.\d{1,2}(?:\.\d{1,2})?$")
_FINGERPRINT = re.compile(r"^[0-9A-F]{40}$")


@dataclass(frozen=True)
class CiSettings:
    python: str = "3.11"
    install: str | None = None  # None: this tool as installed here, where that can be pinned
    runners: Mapping[str, str] = field(default_factory=dict)
    timeouts: Mapping[str, int] = field(default_factory=lambda: dict(TIMEOUTS))
    push_manifest: bool = True
    requirements: str | None = None  # a hash-pinned requirements file, relative to the root
    environment: str = ENVIRONMENT
    transfer_environment: str = TRANSFER_ENVIRONMENT
    image_signing_key: str | None = None  # the fingerprint publish and promote sign by

    def runner(self, kind: str, arch: str | None = None, fallback: str | None = None) -> str:
        """The label for a job of ``kind`` (on ``arch``): the most specific one given."""
        return self.queue(kind, arch, fallback) or DEFAULT_RUNNER

    def queue(self, kind: str, arch: str | None = None, fallback: str | None = None) -> str | None:
        """The label given for a job of ``kind`` (on ``arch``), most specific first, then
        ``fallback`` (``--runner``), then ``default``; None where none is given."""
        keys = [f"{kind}-{arch}"] if arch else []
        keys += [kind, "smoke"] if kind == "gpu" else [kind]
        for key in keys:
            if key in self.runners:
                return self.runners[key]
        return fallback or self.runners.get("default")

    def timeout(self, kind: str) -> int:
        return self.timeouts.get(kind, TIMEOUTS.get(kind, 60))


def _label(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip() or not value.isprintable():
        raise ConfigError(f"{where}: expected a runner label (one line of printable text)")
    return value


def _environment(table: Mapping[str, object], key: str, default: str) -> str:
    """A GitHub environment's name: data in the workflow, never an expression."""
    value = table.get(key, default)
    if (
        not isinstance(value, str)
        or not value.strip()
        or value != value.strip()
        or not value.isprintable()
        or "${{" in value
        or len(value) > _ENVIRONMENT_LENGTH
    ):
        raise ConfigError(
            f"{PREFIX} {key}: expected a GitHub environment's name (one line of printable "
            f'text, no ${{{{, at most {_ENVIRONMENT_LENGTH} characters), e.g. {key} = "{default}"'
        )
    return value


def _environments(table: Mapping[str, object]) -> tuple[str, str]:
    """The approval environment and the CI registry's: two environments, or the builds
    would wait for a review (GitHub compares the names without case)."""
    approval = _environment(table, "environment", ENVIRONMENT)
    transfer = _environment(table, "transfer-environment", TRANSFER_ENVIRONMENT)
    if approval.casefold() == transfer.casefold():
        raise ConfigError(
            f"{PREFIX} environment and transfer-environment: both are {approval!r}; give "
            "the builds an environment without reviewers, e.g. "
            f'transfer-environment = "{TRANSFER_ENVIRONMENT}"'
        )
    return approval, transfer


def _install(table: Mapping[str, object]) -> tuple[str | None, str | None]:
    """``install`` (one line; whether it is pinned, ``release ci`` says) and
    ``requirements`` (a path in the work tree): one of them at most, as the file pins this
    tool too."""
    install, requirements = table.get("install"), table.get("requirements")
    if install is not None and (
        not isinstance(install, str) or not install.strip() or not install.isprintable()
    ):
        raise ConfigError(f"{PREFIX} install: expected a pinned pip requirement (one line)")
    if requirements is not None:
        if not isinstance(requirements, str) or not requirements.strip():
            raise ConfigError(f"{PREFIX} requirements: expected a file in the work tree")
        tree_relative(f"{PREFIX} requirements", requirements)
    if install is not None and requirements is not None:
        raise ConfigError(
            f"{PREFIX} install and requirements: give one (the requirements file pins release too)"
        )
    return install, requirements


def parse_ci(table: object) -> CiSettings:
    """Validate ``[tool.release.ci]`` (absent: the defaults)."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"{PREFIX}: expected a table")
    refuse_unknown(table, _KEYS, PREFIX)
    python = table.get("python", "3.11")
    if not isinstance(python, str) or not _PYTHON.match(python):
        raise ConfigError(
            f'{PREFIX} python: expected a Python version such as "3.11", got {python!r}'
        )
    install, requirements = _install(table)
    runners = table.get("runners", {})
    if not isinstance(runners, Mapping):
        raise ConfigError(f'{PREFIX} runners: expected a table of KIND = "label"')
    for key, value in runners.items():
        if not _RUNNER_KEY.match(key):
            raise ConfigError(
                f"{PREFIX} runners.{key}: not a job kind ({', '.join(JOB_KINDS)}, KIND-ARCH "
                "such as build-arm64, or default)"
            )
        _label(value, f"{PREFIX} runners.{key}")
    timeouts = dict(TIMEOUTS)
    given = table.get("timeouts", {})
    if not isinstance(given, Mapping):
        raise ConfigError(f"{PREFIX} timeouts: expected a table of KIND = minutes")
    for key, value in given.items():
        if key not in JOB_KINDS:
            raise ConfigError(f"{PREFIX} timeouts.{key}: not a job kind ({', '.join(JOB_KINDS)})")
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 4320:
            raise ConfigError(
                f"{PREFIX} timeouts.{key}: expected minutes, 1 to 4320, got {value!r}"
            )
        timeouts[key] = value
    push = table.get("push-manifest", True)
    if not isinstance(push, bool):
        raise ConfigError(f"{PREFIX} push-manifest: expected true or false, got {push!r}")
    approval, transfer = _environments(table)
    key = table.get("image-signing-key")
    if key is not None and (not isinstance(key, str) or not _FINGERPRINT.match(key)):
        raise ConfigError(
            f"{PREFIX} image-signing-key: expected the signing key's full fingerprint, 40 "
            'hexadecimal digits in capitals (gpg --list-keys --with-colons: its "fpr" '
            "line), got " + repr(key)
        )
    return CiSettings(
        python, install, dict(runners), timeouts, push, requirements, approval, transfer, key
    )

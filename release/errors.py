"""The project's errors: each carries its exit code and a one-line, actionable message.

Entry points catch :class:`ReleaseError`, print ``error: <message>`` and exit with
``exit_code``; a traceback is shown only with ``--debug`` (or ``RELEASE_DEBUG=1``).
"""

from __future__ import annotations

import enum

__all__ = [
    "ConfigError",
    "ConflictError",
    "EngineError",
    "ExitCode",
    "GitError",
    "GitHubError",
    "LockedError",
    "RefusedError",
    "ReleaseError",
    "SignatureError",
    "Terminated",
    "UsageError",
    "VersionError",
]


class ExitCode(enum.IntEnum):
    """Every exit code ``release`` gives, in one place (README's table of them)."""

    OK = 0
    FAILED = 1  # a failure the user can act on; a check with a problem; a reproduce's drift
    USAGE = 2  # bad arguments or config
    REFUSED = 3  # the repository is in a state where the command must not run
    CONFLICT = 4  # a cherry-pick stopped on a conflict
    GIT = 5  # git failed unexpectedly
    ENGINE = 6  # the container engine (or skopeo, a registry) is missing or failed
    EVIDENCE = 7  # a signature, manifest, SBOM or provenance is refused
    INTERRUPTED = 130  # Ctrl-C
    TERMINATED = 143  # SIGTERM


class ReleaseError(Exception):
    """Base class: a failure the user can act on."""

    exit_code: ExitCode = ExitCode.FAILED

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = " ".join(message.split()) if "\n" not in message else message
        self.hint = hint
        super().__init__(self.message)

    def one_line(self) -> str:
        text = f"{self.message} ({self.hint})" if self.hint else self.message
        return text.replace("\n", " ")


class UsageError(ReleaseError):
    """Bad arguments: a value the command cannot use."""

    exit_code = ExitCode.USAGE


class ConfigError(UsageError):
    """``[tool.release]`` is invalid; the message names the key."""


class VersionError(UsageError):
    """A version string that is malformed or not allowed here."""


class RefusedError(ReleaseError):
    """The repository is in a state where the command must not run (nothing changed)."""

    exit_code = ExitCode.REFUSED


class LockedError(RefusedError):
    """Another mutating task holds the repository lock."""


class ConflictError(ReleaseError):
    """A cherry-pick stopped on a conflict; the branch is as it was before that commit."""

    exit_code = ExitCode.CONFLICT


class GitError(ReleaseError):
    """A git command failed in a way the workflow did not expect."""

    exit_code = ExitCode.GIT


class GitHubError(ReleaseError):
    """GitHub (through its CLI, ``gh``) is missing, not logged in, out of reach or answered
    with something unusable; the message says what to do. Nothing was changed by it."""


class EngineError(ReleaseError):
    """The container engine is missing, unreachable or failed; the message says how to fix it."""

    exit_code = ExitCode.ENGINE


class SignatureError(ReleaseError):
    """A tag's or its manifest's signature does not verify against the trust roots the
    tester holds, or (``--require-signed``) there is none that does: nothing was pulled or
    built. Exit 7, as a damaged manifest (:class:`release.core.manifest.ManifestError`):
    the rc's evidence is refused."""

    exit_code = ExitCode.EVIDENCE


class Terminated(KeyboardInterrupt):
    """SIGTERM (what CI sends on cancel, and ``timeout``): the run stops as on Ctrl-C, its
    cleanup included, and exits 143."""

    exit_code = ExitCode.TERMINATED

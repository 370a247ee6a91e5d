"""How the CI jobs install this tool: only from a source that cannot change under them.
Pure.

A job that installs a bare name from a package index runs whoever registers that name
(dependency confusion), in jobs that hold registry secrets and a write token. So the
jobs install this tool in one of four pinned forms, and nox at one version:

- ``release @ git+URL@COMMIT``: a VCS URL at a full commit id;
- ``release @ URL#sha256=HASH``: an archive (a wheel or an sdist) pip checks against its
  hash;
- ``release==X.Y.Z --hash=sha256:HASH``: a version from the index, hash-checked; pip's
  hash mode is all or nothing, so the tool goes in alone (``--no-deps``), then its
  dependencies;
- ``requirements = "FILE"``: a hash-pinned requirements file that pins this tool and nox
  (:mod:`release.core.pinned_requirements`).

By default the tool is pinned as it is installed here (pip's record of it, PEP 610's
``direct_url.json``, read by :mod:`release.adapters.tool_source`): the commit of a VCS
install, the URL and hash of an archive, or, for an editable install from a clean git
checkout whose HEAD a remote-tracking branch holds, that remote at HEAD, as ``pip freeze``
pins it. What cannot be pinned is refused, with the forms that would do and the commit or
hash that is known.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from release.errors import RefusedError

__all__ = [
    "TOOL",
    "Checkout",
    "InstalledTool",
    "PinKind",
    "ToolInstall",
    "how_to_pin",
    "pin_installed",
    "pin_requirement",
    "pip_url",
]

TOOL = "release"  # the distribution this tool is installed as
_COMMIT_ID = r"(?:[0-9a-f]{40}|[0-9a-f]{64})"  # SHA-1 or SHA-256 object names, in full
_SHA256 = r"[0-9a-f]{64}"
# what RFC 3986 lets a URL hold, but '#' (the fragment is read apart): no quote, no brace
_URL = r"[A-Za-z0-9\-._~:/?\[\]@!$&'()*+,;=%]+"
_NAME = rf"(?i:{TOOL})"
_BY_COMMIT = re.compile(
    rf"^{_NAME}\s*@\s*(git\+(?:https|http|ssh|git|file)://{_URL})@({_COMMIT_ID})"
    r"(#subdirectory=[\w./-]+)?$"
)
_BY_ARCHIVE = re.compile(
    rf"^{_NAME}\s*@\s*((?:https|http|file)://{_URL}\.(?:whl|tar\.gz|zip))#sha256=({_SHA256})$"
)
_BY_HASH = re.compile(rf"^{_NAME}\s*==\s*([0-9][0-9A-Za-z.!+]*)((?:\s+--hash=sha256:{_SHA256})+)$")
_SCP = re.compile(r"^(?:[\w.-]+@)?[\w.-]+:(?!//)(.+)$")  # git's user@host:path
_PLACEHOLDERS = ("<40-hex commit>", "<64-hex sha256>")


class PinKind(enum.Enum):
    """How the jobs install this tool; the value says it in the output."""

    COMMIT = "a VCS URL at a commit"
    ARCHIVE = "an archive URL, hash-checked"
    HASHED = "a version from the index, hash-checked"
    REQUIREMENTS = "a hash-pinned requirements file"


@dataclass(frozen=True)
class ToolInstall:
    """What every job installs, pinned. ``requirement``: the pip requirement (COMMIT,
    ARCHIVE), ``release==X.Y.Z`` (HASHED, its hashes in ``hashes``), or the requirements
    file, relative to the repository (REQUIREMENTS); ``nox``: ``nox==V``, "" where the file
    pins it; ``origin``: what pinned it, said in the output."""

    kind: PinKind
    requirement: str
    hashes: tuple[str, ...] = ()
    nox: str = ""
    origin: str = ""

    @property
    def line(self) -> str:
        """The requirement as pip reads it in a requirements file, hashes included."""
        return " ".join([self.requirement, *(f"--hash={h}" for h in self.hashes)])


@dataclass(frozen=True)
class Checkout:
    """The git checkout an editable install runs from, as far as a pin needs it: its HEAD,
    whether it holds changes, the remote (and its URL) whose tracking branches hold HEAD
    (``origin`` first; None: none), and the project's folder in it ("" at the root)."""

    path: str
    head: str | None
    clean: bool
    remote: str | None = None
    remote_url: str | None = None
    subdirectory: str = ""


@dataclass(frozen=True)
class InstalledTool:
    """This tool as pip recorded its install (PEP 610): ``url`` None where it came from an
    index (pip records no direct URL then); a VCS ``commit``, an archive's ``sha256``, or a
    local ``directory`` (``editable``, with its ``checkout`` where it is one)."""

    version: str
    url: str | None = None
    vcs: str | None = None
    commit: str | None = None
    sha256: str | None = None
    directory: bool = False
    editable: bool = False
    subdirectory: str = ""
    checkout: Checkout | None = None


def _forms(version: str, commit: str | None = None, sha256: str | None = None) -> list[str]:
    commit_text, hash_text = commit or _PLACEHOLDERS[0], sha256 or _PLACEHOLDERS[1]
    return [
        f'install = "{TOOL} @ git+https://HOST/ORG/REPO@{commit_text}"',
        f'install = "{TOOL} @ https://HOST/PATH/{TOOL}-{version}-py3-none-any.whl'
        f'#sha256={hash_text}"',
        f'install = "{TOOL}=={version} --hash=sha256:{hash_text}"',
    ]


def how_to_pin(reason: str, version: str, suggestions: list[str] | None = None) -> str:
    """The refusal: why, then the ``[tool.release.ci]`` lines that would pin this tool
    (``suggestions`` where a commit or hash is known, else the forms)."""
    lines = suggestions or _forms(version)
    return (
        f"{reason}; the jobs install only what is pinned. Pin it in [tool.release.ci] (or "
        f"with --install REQUIREMENT): {'; or '.join(lines)}; or "
        'requirements = "ci/requirements.txt", a hash-pinned file (pip-compile '
        f"--generate-hashes) that pins {TOOL} and nox with == and --hash (nothing was written)"
    )


def pin_requirement(text: str, where: str, nox: str, version: str) -> ToolInstall:
    """``text`` (``where``: ``[tool.release.ci] install``, ``--install``) as a pinned
    requirement of this tool; refused, saying how to pin it, where it is none of the forms
    (``version``: this tool's, for the forms shown)."""
    line = text.strip()
    found = _BY_COMMIT.match(line)
    if found:
        requirement = f"{TOOL} @ {found[1]}@{found[2]}{found[3] or ''}"
        return ToolInstall(PinKind.COMMIT, requirement, nox=nox, origin=where)
    found = _BY_ARCHIVE.match(line)
    if found:
        requirement = f"{TOOL} @ {found[1]}#sha256={found[2]}"
        return ToolInstall(PinKind.ARCHIVE, requirement, nox=nox, origin=where)
    found = _BY_HASH.match(line)
    if found:
        hashes = tuple(h.removeprefix("--hash=") for h in found[2].split())
        return ToolInstall(PinKind.HASHED, f"{TOOL}=={found[1]}", hashes, nox, where)
    versioned = re.match(rf"^{_NAME}\s*==\s*([0-9][0-9A-Za-z.!+]*)", line)
    why = "a version alone installs whatever an index serves under that name"
    if versioned is None:
        why = "neither a full commit id nor a sha256 names what is installed"
    reason = f"{where} {text!r} is not pinned: {why}"
    raise RefusedError(how_to_pin(reason, versioned[1] if versioned else version))


def pip_url(remote: str) -> str | None:
    """A git remote's URL as pip takes it after ``git+`` (git's ``user@host:path`` as
    ``ssh://user@host/path``, as ``pip freeze`` writes it); None for a local path or file
    URL, which no CI job can reach."""
    if remote.startswith("file:") or remote.startswith(("/", ".", "~")):
        return None
    if "://" in remote:
        return remote
    scp = _SCP.match(remote)
    if scp is None:
        return None
    host = remote[: len(remote) - len(scp[1]) - 1]
    return f"ssh://{host}/{scp[1].lstrip('/')}"


def _subdirectory(path: str) -> str:
    return f"#subdirectory={path}" if path else ""


def _from_vcs(tool: InstalledTool, nox: str) -> ToolInstall:
    url, commit = tool.url or "", tool.commit or ""
    if tool.vcs != "git" or not re.fullmatch(_COMMIT_ID, commit):
        reason = f"{TOOL} {tool.version} here was installed from {tool.vcs} with no full commit id"
        raise RefusedError(how_to_pin(reason, tool.version))
    if pip_url(url) is None:
        reason = f"{TOOL} {tool.version} here was installed from {url}, a local repository"
        raise RefusedError(how_to_pin(reason, tool.version, _forms(tool.version, commit)[:1]))
    requirement = f"{TOOL} @ git+{url}@{commit}{_subdirectory(tool.subdirectory)}"
    return ToolInstall(PinKind.COMMIT, requirement, nox=nox, origin="pip's record of this install")


def _from_archive(tool: InstalledTool, nox: str) -> ToolInstall:
    url, sha256 = tool.url or "", tool.sha256
    if sha256 is None:
        reason = f"{TOOL} {tool.version} here was installed from {url} with no recorded hash"
        raise RefusedError(how_to_pin(reason, tool.version))
    if url.startswith("file:"):
        reason = f"{TOOL} {tool.version} here was installed from the local file {url}"
        forms = _forms(tool.version, sha256=sha256)[1:]
        raise RefusedError(how_to_pin(reason, tool.version, forms))
    requirement = f"{TOOL} @ {url.split('#', 1)[0]}#sha256={sha256}"
    return ToolInstall(PinKind.ARCHIVE, requirement, nox=nox, origin="pip's record of this install")


def _from_checkout(tool: InstalledTool, nox: str) -> ToolInstall:
    where, checkout = tool.url or "", tool.checkout
    said = f"{TOOL} {tool.version} here is an editable install of {where}"
    if not tool.editable:
        said = f"{TOOL} {tool.version} here was installed from the local directory {where}"
        raise RefusedError(how_to_pin(said, tool.version))
    if checkout is None or checkout.head is None:
        raise RefusedError(how_to_pin(f"{said}, which is not a git checkout", tool.version))
    url = pip_url(checkout.remote_url) if checkout.remote_url else None
    fragment = _subdirectory(checkout.subdirectory)

    def suggest(commit: str) -> list[str]:
        return [f'install = "{TOOL} @ git+{url or "https://HOST/ORG/REPO"}@{commit}{fragment}"']

    if not checkout.clean:
        reason = f"{said}, which has uncommitted changes: commit and push them"
        raise RefusedError(how_to_pin(reason, tool.version, suggest(_PLACEHOLDERS[0])))
    if checkout.remote is None:
        reason = f"{said}, whose HEAD {checkout.head} is on no remote-tracking branch: push it"
        raise RefusedError(how_to_pin(reason, tool.version, suggest(checkout.head)))
    if url is None:
        reason = f"{said}, whose remote {checkout.remote} is a local path"
        raise RefusedError(how_to_pin(reason, tool.version, suggest(checkout.head)))
    return ToolInstall(
        PinKind.COMMIT,
        f"{TOOL} @ git+{url}@{checkout.head}{fragment}",
        nox=nox,
        origin=f"this editable checkout, as pip freeze pins it: clean, HEAD on {checkout.remote}",
    )


def pin_installed(tool: InstalledTool, nox: str) -> ToolInstall:
    """This tool pinned as it is installed here; refused, saying how to pin it, where it
    cannot be: installed from an index (no commit, no hash recorded), from a local file or
    path, or an editable checkout with changes, with an unpushed HEAD or a local remote."""
    if tool.url is None:
        reason = (
            f"{TOOL} {tool.version} here was installed from a package index, which records "
            "neither a commit nor a hash"
        )
        raise RefusedError(how_to_pin(reason, tool.version))
    if tool.commit is not None or tool.vcs is not None:
        return _from_vcs(tool, nox)
    if tool.directory:
        return _from_checkout(tool, nox)
    return _from_archive(tool, nox)

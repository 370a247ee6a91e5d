"""How this tool and nox are installed here, for ``release ci`` to pin the jobs' install
by (:func:`release.core.tool_pins.pin_installed`).

pip records where a distribution came from in its ``direct_url.json`` (PEP 610): a VCS
URL and commit, an archive URL and its hash, or a local directory (editable or not); an
install from an index leaves none. An editable install's directory is read as git sees
it (clean or not, its HEAD, the remotes whose tracking branches hold HEAD), for the pin
``pip freeze`` would write.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

from release.adapters.git import GitRepo
from release.core.tool_pins import TOOL, Checkout, InstalledTool
from release.errors import ReleaseError

__all__ = ["installed_tool", "nox_pin", "read_install"]

DIRECT_URL = "direct_url.json"


def _distribution(name: str) -> metadata.Distribution | None:
    """The installed ``name`` pip recorded: the first on the path with a
    ``direct_url.json``, else the first. A stale ``*.egg-info`` in a source tree (on the
    path when run as ``python -m release`` there) records nothing of an install."""
    found = list(metadata.distributions(name=name))
    recorded = [d for d in found if d.read_text(DIRECT_URL) is not None]
    return next(iter(recorded or found), None)


def _local_path(url: str) -> Path:
    return Path(unquote(urlsplit(url).path))


def _checkout(directory: Path) -> Checkout | None:
    """The git checkout at (or above) ``directory``; None where it is none."""
    try:
        repo = GitRepo(directory)
        head = repo.rev("HEAD")
        clean = not repo.worktree.uncommitted()
        holding = repo.remotes.holding(head) if head else []
    except ReleaseError:
        return None
    remote = "origin" if "origin" in holding else next(iter(holding), None)
    sub = directory.resolve().relative_to(repo.root.resolve()).as_posix()
    return Checkout(
        str(directory),
        head,
        clean,
        remote,
        repo.remotes.url(remote) if remote else None,
        "" if sub == "." else sub,
    )


def read_install(dist: metadata.Distribution) -> InstalledTool:
    """``dist`` as pip recorded its install."""
    version = dist.version
    text = dist.read_text(DIRECT_URL)
    if text is None:
        return InstalledTool(version)
    record = json.loads(text)
    url, sub = str(record.get("url", "")), str(record.get("subdirectory", ""))
    vcs, archive, folder = (record.get(k) for k in ("vcs_info", "archive_info", "dir_info"))
    if isinstance(vcs, dict):
        commit = vcs.get("commit_id")
        return InstalledTool(version, url, str(vcs.get("vcs")), commit, subdirectory=sub)
    if isinstance(folder, dict):
        editable = folder.get("editable") is True
        found = _checkout(_local_path(url)) if editable and url.startswith("file:") else None
        return InstalledTool(version, url, directory=True, editable=editable, checkout=found)
    hashes = archive.get("hashes", {}) if isinstance(archive, dict) else {}
    legacy = str(archive.get("hash", "")) if isinstance(archive, dict) else ""
    sha256 = hashes.get("sha256") or (legacy[7:] if legacy.startswith("sha256=") else None)
    return InstalledTool(version, url, sha256=sha256, subdirectory=sub)


def installed_tool() -> InstalledTool:
    """This tool as installed here (an unrecorded install reads as one from an index)."""
    from release import __version__

    dist = _distribution(TOOL)
    return read_install(dist) if dist is not None else InstalledTool(__version__)


def nox_pin() -> str:
    """nox as the jobs install it: the version installed here, exactly."""
    return f"nox=={metadata.version('nox')}"

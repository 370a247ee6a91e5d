"""Where an image's parts come from, spelt the same on every machine: a repository's URL
derived from a git remote, and an image reference as the registry names it.

Pure. A remote that is a local path or a ``file://`` URL names no repository anyone else
can reach, so it gives no URL at all; credentials in a remote URL are never kept.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = ["qualified_reference", "repository", "repository_url"]

_SCP = re.compile(r"^(?:[^@/]+@)?(?P<host>[^/:]+):(?P<path>[^/:].*)$")  # git@host:org/repo.git
_TO_HTTPS = {"ssh", "git", "git+ssh", "ssh+git"}
_DEFAULT_REGISTRY = "docker.io"


def _web_path(path: str) -> str:
    return path.strip("/").removesuffix(".git").rstrip("/")


def repository_url(remote: str) -> str | None:
    """The repository's web URL for a git remote URL, or None when it has none.

    ``git@github.com:org/repo.git``, ``ssh://git@github.com/org/repo.git`` and
    ``git://github.com/org/repo`` give ``https://github.com/org/repo``; an ``http(s)`` URL
    keeps its scheme and port and loses its credentials and ``.git``. A local path (git's
    rule: a colon after a slash, or none, or a one-letter drive before it), a ``file://``
    URL, a ``transport::address`` or any other scheme gives None.
    """
    text = remote.strip()
    if "://" not in text:
        scp = _SCP.match(text)
        if scp is None or len(scp["host"]) == 1:
            return None
        path = _web_path(scp["path"])
        return f"https://{scp['host'].lower()}/{path}" if path else None
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    path = _web_path(parts.path)
    if not parts.hostname or not path:
        return None
    if scheme in ("http", "https"):
        port = f":{parts.port}" if parts.port else ""
        return f"{scheme}://{parts.hostname}{port}/{path}"
    if scheme in _TO_HTTPS:  # the ssh port is not the web server's
        return f"https://{parts.hostname}/{path}"
    return None


def _split(ref: str) -> tuple[str, str]:
    """``name`` and what follows it (``:tag``, ``@digest``, both, or nothing)."""
    at = ref.find("@")
    name, digest = (ref[:at], ref[at:]) if at >= 0 else (ref, "")
    colon = name.rfind(":")
    if colon > name.rfind("/"):
        return name[:colon], name[colon:] + digest
    return name, digest


def repository(ref: str) -> str:
    """The fully qualified repository an image reference names, without tag or digest:
    ``nvidia/cuda:12.9.1-base`` -> ``docker.io/nvidia/cuda``, ``ubuntu`` ->
    ``docker.io/library/ubuntu`` (docker's own rules for a reference with no registry)."""
    name = _split(ref)[0]
    first, slash, rest = name.partition("/")
    named = any(c in first for c in ".:") or first == "localhost" or first != first.lower()
    registry, path = (first, rest) if slash and named else (_DEFAULT_REGISTRY, name)
    if registry == "index.docker.io":
        registry = _DEFAULT_REGISTRY
    if registry == _DEFAULT_REGISTRY and "/" not in path:
        path = "library/" + path
    return f"{registry}/{path}"


def qualified_reference(ref: str) -> str:
    """``ref`` with its registry spelt out and ``:latest`` where it names no tag or digest,
    as OCI's ``org.opencontainers.image.base.name`` asks (``docker.io/nvidia/cuda:12.9.1``)."""
    suffix = _split(ref)[1]
    return repository(ref) + (suffix or ":latest")

"""Where an image's parts come from, spelt the same on every machine: a repository's URL
derived from a git remote, and an image reference as the registry names it.

Pure. A remote that is a local path or a ``file://`` URL names no repository anyone else
can reach, so it gives no URL at all; credentials in a remote URL are never kept.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from release.core.terminal_text import escaped
from release.errors import ConfigError

__all__ = [
    "IMAGE_NAME",
    "IMAGE_REFERENCE",
    "IMAGE_TAG",
    "qualified_reference",
    "registry_prefix",
    "registry_ref",
    "repository",
    "repository_url",
]

# Docker's reference grammar (distribution/reference): lowercase path components,
# optional registry host[:port]; tags are [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}.
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_HOST = r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9-]+)*(?::\d+)?/)?"
IMAGE_NAME = re.compile(rf"^{_HOST}{_COMPONENT}(?:/{_COMPONENT})*$")
IMAGE_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
IMAGE_REFERENCE = re.compile(
    rf"^{_HOST}{_COMPONENT}(?:/{_COMPONENT})*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}})?(?:@sha256:[0-9a-f]{{64}})?$"
)

_SCP = re.compile(r"^(?:[^@/]+@)?(?P<host>[^/:]+):(?P<path>[^/:].*)$")  # git@host:org/repo.git
_TO_HTTPS = {"ssh", "git", "git+ssh", "ssh+git"}
_DEFAULT_REGISTRY = "docker.io"
_DIGEST_SUFFIX = re.compile(r"@sha(?:256|384|512):[0-9A-Fa-f]*$")  # NAME@sha256:..., not userinfo
_EXAMPLE = "registry.example.com/org/ci"


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


def registry_prefix(value: object, where: str) -> str:
    """A registry and repository path images are pushed under (``127.0.0.1:5000/ci``,
    ``registry.example.com/org/ci``); "" for none.

    The one check of every registry value, the config's and the command line's alike: it
    reaches skopeo and docker as one argument, so anything but HOST[:PORT]/PATH (a digest,
    ``..``, a scheme, a leading ``-``, a space, a newline, shell text) is refused before
    anything runs. Credentials are docker login's, never a value's: a value with userinfo is
    refused without being shown, since the refusal lands in a terminal or a CI log."""
    if value == "":
        return ""
    if not isinstance(value, str):
        raise ConfigError(f"{where}: {value!r} is not a registry path (e.g. {_EXAMPLE})")
    credentials = _credentials_problem(value)
    if credentials:
        raise ConfigError(f"{where}: {credentials}")
    if not IMAGE_NAME.fullmatch(value.rstrip("/")):
        raise ConfigError(f"{where}: '{escaped(value)}' is not a registry path (e.g. {_EXAMPLE})")
    return value.rstrip("/")


def _credentials_problem(value: str) -> str:
    """Why ``value`` holds userinfo (``user:password@host/org``), shown without it; "" when
    it has none. An ``@`` is userinfo unless it starts a digest (``@sha256:...``), whatever
    comes before it (a password may hold ``/`` or ``@``)."""
    name = _DIGEST_SUFFIX.sub("", value)
    if "@" not in name:
        return ""
    rest = name.rsplit("@", 1)[1]
    host = escaped(rest.split("/", 1)[0]) or "HOST"
    return (
        f"credentials in a registry value are not accepted ('***@{escaped(rest)}'); "
        f"log in with docker login {host}"
    )


def registry_ref(registry: str, image: str) -> str:
    """``REGISTRY/NAME:TAG`` for ``NAME:TAG``. Pure."""
    return f"{registry.rstrip('/')}/{image}"

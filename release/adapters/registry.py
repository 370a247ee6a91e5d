"""The release registry, read and written with skopeo (Debian's ``skopeo``): what a tag
resolves to as the registry serves it, and copies by digest inside the registry.

A tag is read with ``skopeo inspect --raw``: the manifest's bytes as served, so its
digest is the sha256 of those bytes (what ``docker pull NAME@sha256:...`` asks for), and
for an image manifest the digest of its config, which is the image id the engine gives
the image that was pushed. A copy (``skopeo copy --all --preserve-digests``) names its
source by digest: the registry is asked for what was read, never for whatever a tag
points at by then.

Plain HTTP only for a registry on loopback (127.0.0.0/8, ``localhost``, ``[::1]``), as
the Docker Engine treats those; every other registry is spoken to over verified TLS.
Credentials are the user's own (skopeo reads docker's login file); none are passed on a
command line.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass

from release.adapters import process
from release.core.references import repository
from release.errors import EngineError

__all__ = ["Registry", "RegistryError", "Served", "is_loopback"]

TIMEOUT = 120.0  # seconds for one registry request
_INDEX_TYPES = (
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.index.v1+json",
)
_ABSENT = ("manifest unknown", "name unknown", "not found", "404")


class RegistryError(EngineError):
    """The registry cannot be reached, refuses the credentials, or answers nonsense."""


@dataclass(frozen=True)
class Served:
    """A tag (or digest) as the registry serves it."""

    digest: str  # sha256 of the manifest's bytes
    media_type: str
    config: str | None  # an image manifest's config digest (the image id); None for an index
    platforms: tuple[tuple[str, str], ...] = ()  # an index: (platform, manifest digest)

    @property
    def is_index(self) -> bool:
        return self.media_type in _INDEX_TYPES


def is_loopback(ref: str) -> bool:
    """Whether ``ref``'s registry host is this machine (spoken to over plain HTTP)."""
    import ipaddress

    host = repository(ref).split("/", 1)[0]
    name = host[1:].split("]", 1)[0] if host.startswith("[") else host.rsplit(":", 1)[0]
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:  # a name: whatever it resolves to, it is spoken to over TLS
        return False


def served_of(raw: bytes, what: str) -> Served:
    """A manifest's bytes as :class:`Served`. Pure."""
    try:
        document = json.loads(raw)
    except ValueError as err:
        raise RegistryError(f"{what}: the registry answered with no manifest ({err})") from None
    if not isinstance(document, dict):
        raise RegistryError(f"{what}: the registry answered with no manifest")
    digest = "sha256:" + hashlib.sha256(raw).hexdigest()
    media = str(document.get("mediaType") or "")
    if media in _INDEX_TYPES or "manifests" in document:
        platforms = []
        for entry in document.get("manifests") or ():
            p = entry.get("platform") or {}
            name = "/".join(x for x in (p.get("os"), p.get("architecture"), p.get("variant")) if x)
            platforms.append((name, str(entry.get("digest"))))
        return Served(digest, media or _INDEX_TYPES[1], None, tuple(platforms))
    config = (document.get("config") or {}).get("digest")
    return Served(digest, media, str(config) if config else None)


class Registry:
    """skopeo against the registries a release publishes to."""

    def __init__(self, tool: str | None = None) -> None:
        self.tool = tool or os.environ.get("RELEASE_SKOPEO", "skopeo")

    @staticmethod
    def _tls(flag: str, ref: str) -> list[str]:
        return [f"--{flag}=false"] if is_loopback(ref) else []

    def served(self, ref: str) -> Served | None:
        """What ``ref`` (``HOST/NAME:TAG`` or ``HOST/NAME@sha256:...``) resolves to; None
        when the registry has no such tag."""
        result = process.run(
            [self.tool, "inspect", "--raw", *self._tls("tls-verify", ref), f"docker://{ref}"],
            error=RegistryError,
            timeout=TIMEOUT,
            errors="surrogateescape",
        )
        if result.timed_out:
            raise RegistryError(f"{ref}: the registry did not answer in {TIMEOUT:.0f}s")
        if not result.ok:
            said = process.last_line(result.stderr, "no output")
            if any(word in result.stderr.lower() for word in _ABSENT):
                return None
            raise RegistryError(f"cannot read {ref}: {said}")
        return served_of(result.stdout.encode("utf-8", "surrogateescape"), ref)

    def copy(self, source: str, dest: str) -> None:
        """``source`` (by digest) to ``dest`` inside the registry, index and all, with its
        digest kept; what is there already is not uploaded again."""
        if "@sha256:" not in source:
            raise ValueError(f"a copy names its source by digest, not {source!r}")
        result = process.run(
            [
                self.tool,
                "copy",
                "--all",
                "--preserve-digests",
                "--quiet",
                *self._tls("src-tls-verify", source),
                *self._tls("dest-tls-verify", dest),
                f"docker://{source}",
                f"docker://{dest}",
            ],
            error=RegistryError,
            timeout=TIMEOUT * 5,
        )
        if not result.ok:
            said = process.last_line(result.stderr or result.stdout, "no output")
            raise RegistryError(f"cannot copy {source} to {dest}: {said}")

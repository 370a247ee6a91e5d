"""The release registry, read and copied within with skopeo (Debian's ``skopeo``).

A tag is read with ``skopeo inspect --raw``: the manifest's bytes as served, so its
digest is the sha256 of those bytes (what ``docker pull NAME@sha256:...`` asks for); an
image manifest's config digest is the image id the engine gave the image that was
pushed, and an index lists its platforms' manifests. A copy (``skopeo copy --all
--preserve-digests``) names its source by digest: the registry is asked for what was
read, never for whatever a tag points at by then; within one registry it uploads no blob
(each is there: skopeo asks, ``HEAD``, and writes only the manifests).

Plain HTTP only for a registry on loopback (127.0.0.0/8, ``localhost``, ``[::1]``), as the
Docker Engine treats those; every other registry is spoken to over verified TLS.
Credentials are the user's own (skopeo reads docker's login file); none are passed on a
command line. What skopeo says when it fails is a registry's or a network's words: shown
as one line, its secrets taken out (the process adapter's redaction, which its error output
and every failure line go through) and its control characters escaped.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass

from release.adapters import leftovers, process
from release.core.references import repository
from release.core.terminal_text import escaped
from release.errors import EngineError

__all__ = [
    "INDEX_TYPES",
    "Registry",
    "RegistryError",
    "Served",
    "failure",
    "is_loopback",
    "served_of",
]

TIMEOUT = 120.0  # seconds for one registry request
INDEX_TYPES = (
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.index.v1+json",
)
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128}")
_ABSENT = ("manifest unknown", "name unknown", "not found")
_REFUSED = re.compile(r"\b(unauthorized|authentication required|denied|401|403)\b")
_UNREACHABLE = ("connection refused", "no such host", "i/o timeout", "dial tcp", "connection reset")
_NAMES = re.compile(r"[\w.:-]+(?:/[\w.:@-]+)+")  # a reference or URL path: names, not words


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
        return self.media_type in INDEX_TYPES


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
    media = escaped(str(document.get("mediaType") or ""))
    if media in INDEX_TYPES or "manifests" in document:
        platforms = []
        for entry in document.get("manifests") or ():
            entry = entry if isinstance(entry, dict) else {}
            found = entry.get("platform")
            p: dict[str, object] = found if isinstance(found, dict) else {}
            name = "/".join(
                escaped(str(x)) for x in (p.get("os"), p.get("architecture"), p.get("variant")) if x
            )
            platforms.append((name, _digest(entry.get("digest"), what)))
        return Served(digest, media or INDEX_TYPES[1], None, tuple(platforms))
    config = document.get("config") if isinstance(document.get("config"), dict) else {}
    return Served(digest, media, _digest(config.get("digest"), what) if config else None)


def _digest(value: object, what: str) -> str:
    """A digest the registry's document names: what it says is shown only when it is one."""
    if not isinstance(value, str) or not _DIGEST.fullmatch(value):
        raise RegistryError(f"{what}: the registry's manifest names no digest where one belongs")
    return value


def failure(ref: str, doing: str, said: str) -> RegistryError:
    """What a failed registry request says, one line: unreachable, refused, or as said."""
    host = repository(ref).split("/", 1)[0]
    text = escaped(process.last_line(said, "no output"))
    # the words are skopeo's and the registry's; the names in them (a repository called
    # ``t4015...`` or ``denied``) say nothing, and a host that never answered refused nothing
    lower = _NAMES.sub(" ", said.lower())
    if any(word in lower for word in _UNREACHABLE):
        return RegistryError(f"the registry {host} does not answer ({text}); is it running?")
    if _REFUSED.search(lower):
        return RegistryError(
            f"{host} refused the credentials to {doing} ({text}); log in with docker login {host}"
        )
    return RegistryError(f"cannot {doing}: {text}")


class Registry:
    """skopeo against the registries a release publishes to."""

    def __init__(self, tool: str | None = None) -> None:
        self.tool = tool or os.environ.get("RELEASE_SKOPEO", "skopeo")

    @staticmethod
    def _tls(flag: str, ref: str) -> list[str]:
        return [f"--{flag}=false"] if is_loopback(ref) else []

    def _run(self, argv: list[str], timeout: float) -> process.Result:
        return process.run(
            [self.tool, *argv],
            error=RegistryError,
            timeout=timeout,
            errors="surrogateescape",
            own_group=True,
            missing="publishing reads and copies in the registry with skopeo "
            "(apt-get install skopeo)",
        )

    def raw(self, ref: str) -> bytes | None:
        """The manifest ``ref`` serves, as its bytes; None when there is none."""
        tls = self._tls("tls-verify", ref)
        result = self._run(["inspect", "--raw", *tls, f"docker://{ref}"], TIMEOUT)
        if result.timed_out:
            raise RegistryError(f"{ref}: the registry did not answer in {TIMEOUT:.0f}s")
        if not result.ok:
            if any(word in result.stderr.lower() for word in _ABSENT):
                return None
            raise failure(ref, f"read {ref}", result.stderr)
        return result.stdout.encode("utf-8", "surrogateescape")

    def config(self, ref: str, digest: str) -> bytes:
        """The config blob ``digest`` of the image ``ref`` (``HOST/NAME@sha256:...``), read
        from the registry and checked against its digest."""
        tls = self._tls("tls-verify", ref)
        result = self._run(["inspect", "--config", "--raw", *tls, f"docker://{ref}"], TIMEOUT)
        if result.timed_out:
            raise RegistryError(f"{ref}: the registry did not answer in {TIMEOUT:.0f}s")
        if not result.ok:
            raise failure(ref, f"read the config of {ref}", result.stderr)
        data = result.stdout.encode("utf-8", "surrogateescape")
        if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
            raise RegistryError(f"{ref}: its config does not read back as {digest[:19]}")
        return data

    def put_index(self, ref: str, data: bytes) -> None:
        """The index ``data`` (an OCI image index) put as ``ref``, its bytes as given: only
        the index is written (skopeo's ``--multi-arch=index-only``), so every image it
        lists must be in ``ref``'s repository already (the registry checks)."""
        digest = hashlib.sha256(data).hexdigest()
        with leftovers.scratch("index") as top:
            (top / "blobs" / "sha256").mkdir(parents=True)
            (top / "blobs" / "sha256" / digest).write_bytes(data)
            (top / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
            entry = {
                "mediaType": INDEX_TYPES[1],
                "digest": f"sha256:{digest}",
                "size": len(data),
                "annotations": {"org.opencontainers.image.ref.name": "index"},
            }
            (top / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [entry]}))
            argv = [
                "copy", "--multi-arch=index-only", "--preserve-digests", "--quiet",
                *self._tls("dest-tls-verify", ref), f"oci:{top}:index", f"docker://{ref}",
            ]  # fmt: skip
            result = self._run(argv, TIMEOUT)
        if not result.ok:
            raise failure(ref, f"put the index {ref}", result.stderr or result.stdout)

    def served(self, ref: str) -> Served | None:
        """What ``ref`` (``HOST/NAME:TAG`` or ``HOST/NAME@sha256:...``) resolves to; None
        when the registry has no such tag."""
        raw = self.raw(ref)
        return None if raw is None else served_of(raw, ref)

    def served_all(self, refs: list[str]) -> dict[str, Served | None]:
        """What each of ``refs`` serves (:meth:`served`), a few asked at a time. A stop
        (Ctrl-C, SIGTERM) while they run ends every skopeo still running: the threads
        waiting on them would otherwise hold the run up to a request's timeout."""
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="registry")
        try:
            return dict(zip(refs, pool.map(self.served, refs), strict=True))
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            process.stop_all()
            raise
        finally:
            pool.shutdown(wait=True)

    def copy(self, source: str, dest: str) -> None:
        """``source`` (by digest) to ``dest`` inside the registry, index and all, with its
        digest kept; what is there already is not uploaded again."""
        if "@sha256:" not in source:
            raise ValueError(f"a copy names its source by digest, not {source!r}")
        argv = [
            "copy",
            "--all",
            "--preserve-digests",
            "--quiet",
            *self._tls("src-tls-verify", source),
            *self._tls("dest-tls-verify", dest),
            f"docker://{source}",
            f"docker://{dest}",
        ]
        result = self._run(argv, TIMEOUT * 5)
        if not result.ok:
            raise failure(dest, f"copy {source} to {dest}", result.stderr or result.stdout)

"""Artifacts in the release registry beside the images: pushed from an OCI image layout
and read back by digest, with skopeo (as :mod:`release.adapters.registry` reads and
copies images), digests kept (``--preserve-digests``), so what is pushed is the bytes the
caller made and what is read is checked against the digest it was asked by.

Reads are bounded: a manifest is read raw and the caller checks its size and what it names
before any blob is fetched; a blob is fetched only by a manifest whose layer's size is
known, and is read back only when its bytes hash to the digest named.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from release.adapters import leftovers
from release.adapters.registry import TIMEOUT, Registry, RegistryError, failure
from release.core.oci_artifact import Artifact, Blob
from release.core.references import repository

__all__ = ["ArtifactRegistry"]

_ABSENT = ("manifest unknown", "name unknown", "not found")


def _layout(root: Path, blobs: list[Blob], manifest: Blob) -> None:
    (root / "blobs" / "sha256").mkdir(parents=True)
    (root / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    for blob in [*blobs, manifest]:
        (root / "blobs" / "sha256" / blob.digest[7:]).write_bytes(blob.data)
    entry = {
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": manifest.digest,
        "size": len(manifest.data),
        "annotations": {"org.opencontainers.image.ref.name": "artifact"},
    }
    (root / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [entry]}))


class ArtifactRegistry(Registry):
    """skopeo, for artifacts attached to the release's images."""

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

    def push_artifact(self, ref: str, artifact: Artifact) -> None:
        """``artifact`` as ``ref`` (``HOST/NAME:TAG``), its manifest's bytes as made."""
        with leftovers.scratch("artifact") as top:
            _layout(top / "layout", [artifact.config, artifact.layer], artifact.manifest)
            argv = [
                "copy", "--preserve-digests", "--quiet", *self._tls("dest-tls-verify", ref),
                f"oci:{top / 'layout'}:artifact", f"docker://{ref}",
            ]  # fmt: skip
            result = self._run(argv, TIMEOUT * 5)
        if not result.ok:
            raise failure(ref, f"push {ref}", result.stderr or result.stdout)

    def blob(self, ref: str, manifest: str, digest: str) -> bytes:
        """The blob ``digest`` of the artifact ``manifest`` (its digest) in ``ref``'s
        repository, checked against its digest."""
        source = f"{repository(ref)}@{manifest}"
        with leftovers.scratch("artifact") as top:
            argv = [
                "copy", "--preserve-digests", "--quiet", *self._tls("src-tls-verify", source),
                f"docker://{source}", f"oci:{top / 'layout'}:artifact",
            ]  # fmt: skip
            result = self._run(argv, TIMEOUT * 5)
            if not result.ok:
                raise failure(source, f"read {source}", result.stderr or result.stdout)
            path = top / "layout" / "blobs" / "sha256" / digest.split(":", 1)[1]
            data = path.read_bytes() if path.is_file() else b""
            shutil.rmtree(top / "layout", ignore_errors=True)
        if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
            raise RegistryError(f"{source}: its blob {digest[:19]} does not read back as named")
        return data

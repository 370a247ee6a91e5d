"""``images.publish --from REGISTRY/PATH``: a publish whose images come from the registry
the CI's jobs passed them through (``images.push``), copied inside the registries, never
pulled: no image enters an engine, and no engine is asked anything.

- **This checkout's images only.** A row's image is read where ``images.push`` put it
  (``REGISTRY/PATH/NAME:TAG``): its manifest, then its config blob, read from the registry
  and checked against the manifest's digest. Its labels must say it was built from this
  checkout's commit for this row's variant (as ``images.pull`` checks); another commit's
  image is refused (exit 3) before anything is written.
- **Digest exact.** Each platform image is copied by digest with its manifest's bytes
  kept (skopeo, ``--preserve-digests``), so its digest in the release registry is its
  digest in the transfer registry. Within one registry host its layers are mounted from
  the transfer repository (``POST .../blobs/uploads/?mount=&from=``), not sent again;
  between two hosts they stream through this runner.
- **The index is made in the registry.** Its bytes are made here from the platform
  images' digests, sizes and media types (:mod:`release.core.image_index`: the same
  images give the same index), then only the index is put; it is read back like every tag.

Everything else (every tag read first, published tags never moved, read back, recorded,
signed, a re-run converging) is :mod:`release.images.publish`'s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from release.adapters.registry import Registry, RegistryError, served_of
from release.adapters.registry_mount import mount_blob
from release.core.image_index import IndexMember, index_bytes
from release.core.matrix import Variant
from release.core.references import repository
from release.core.terminal_text import escaped
from release.errors import RefusedError
from release.images.publish import Located, PlatformImage, PublishedIndex
from release.images.transfer import mismatch, registry_ref
from release.images.workspace import Workspace

__all__ = ["RegistryOrigin"]

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


def _labels_and_platform(config: bytes, what: str) -> tuple[dict[str, str], str]:
    """An image config's labels and ``os/arch[/variant]``."""
    try:
        document = json.loads(config)
    except ValueError:
        raise RegistryError(f"{what}: its config is not JSON") from None
    if not isinstance(document, dict):
        raise RegistryError(f"{what}: its config is not an image config")
    inner = document.get("config")
    found = inner.get("Labels") if isinstance(inner, dict) else None
    labels = {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}
    parts = (document.get("os"), document.get("architecture"), document.get("variant"))
    platform = "/".join(escaped(str(p)) for p in parts if p)
    return labels, platform


def _blobs_of(raw: bytes) -> tuple[str, ...]:
    """The config's and the layers' digests an image manifest names."""
    document = json.loads(raw)
    entries = [document.get("config"), *(document.get("layers") or ())]
    found = (e.get("digest") for e in entries if isinstance(e, dict))
    return tuple(d for d in found if isinstance(d, str) and _DIGEST.fullmatch(d))


class RegistryOrigin:
    """The images ``images.push`` put under ``source`` (``REGISTRY/PATH``)."""

    sent = "copied"

    def __init__(self, ws: Workspace, source: str, reg: Registry) -> None:
        self.ws, self.source, self.reg = ws, source, reg
        self._members: dict[str, IndexMember] = {}  # by digest: what the index lists
        self._blobs: dict[str, tuple[str, ...]] = {}  # by source: its config and layers

    def name(self, row: Variant) -> str:
        return registry_ref(self.source, self.ws.image(row))

    def locate(self, row: Variant) -> Located:
        ref = self.name(row)
        raw = self.reg.raw(ref)
        if raw is None:
            raise RefusedError(
                f"{ref} is not there: the build job of {row.id} pushes it "
                "(release images.push --registry REGISTRY/PATH)"
            )
        found = served_of(raw, ref)
        if found.is_index or found.config is None:
            raise RefusedError(f"{ref} is an index, not {row.id}'s image as images.push sends it")
        pinned = f"{repository(ref)}@{found.digest}"  # read from here on by digest
        labels, platform = _labels_and_platform(self.reg.config(pinned, found.config), ref)
        wrong = mismatch(self.ws, row.id, labels)
        if wrong:
            raise RefusedError(f"{ref} is not this checkout's build: {wrong}; nothing is published")
        media = found.media_type or OCI_MANIFEST  # an OCI manifest may leave its type unsaid
        self._members[found.digest] = IndexMember(found.digest, media, len(raw), platform)
        self._blobs[pinned] = _blobs_of(raw)
        return Located(found.config, platform, pinned)

    def settle(self, refs: Sequence[str]) -> None:
        """Nothing is left behind here by a killed copy: the registry tags a manifest only
        once it is whole."""

    def send(self, image: PlatformImage) -> None:
        if image.source is None:
            raise ValueError(f"{image.ref}: a copy from a registry names its source")
        source, dest = repository(image.source), repository(image.ref)
        host = source.split("/", 1)[0]
        if host == dest.split("/", 1)[0]:  # one registry: its blobs mounted, not sent
            for digest in self._blobs.get(image.source, ()):
                mount_blob(host, dest.split("/", 1)[1], source.split("/", 1)[1], digest)
        self.reg.copy(image.source, image.ref)

    def make_index(self, index: PublishedIndex, ref: str) -> None:
        members = []
        for image in index.images:
            member = self._members.get(image.digest or "")
            if member is None:  # kept from before, served under another digest than read
                raise RegistryError(
                    f"{image.ref} serves {image.digest}, not the image read from "
                    f"{image.source}: the index is not made"
                )
            members.append(member)
        self.reg.put_index(ref, index_bytes(members))

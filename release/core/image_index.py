"""A multi-arch index made of platform images already in a registry: the OCI image index
that lists each by digest, its bytes made here so that the same images always give the
same index (the same digest), whoever makes it and however often. Pure.

An OCI index may list Docker's own image manifests (what a Docker Engine pushes) as well
as OCI ones: each entry carries its manifest's media type, size and platform.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["INDEX_MEDIA_TYPE", "IndexMember", "index_bytes", "platform_fields"]

INDEX_MEDIA_TYPE = "application/vnd.oci.image.index.v1+json"


@dataclass(frozen=True)
class IndexMember:
    """One platform image as the index lists it."""

    digest: str
    media_type: str
    size: int
    platform: str  # os/arch[/variant]


def platform_fields(platform: str) -> dict[str, str]:
    """``linux/arm64/v8`` as the index's ``platform`` object."""
    parts = platform.split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise ValueError(f"not a platform (os/arch[/variant]): {platform!r}")
    fields = {"architecture": parts[1], "os": parts[0]}
    return fields | ({"variant": parts[2]} if len(parts) == 3 else {})


def index_bytes(members: Sequence[IndexMember]) -> bytes:
    """The index of ``members``, in their order, as the bytes that are put in the registry."""
    if not members:
        raise ValueError("an index lists at least one image")
    document = {
        "schemaVersion": 2,
        "mediaType": INDEX_MEDIA_TYPE,
        "manifests": [
            {
                "mediaType": m.media_type,
                "digest": m.digest,
                "size": m.size,
                "platform": platform_fields(m.platform),
            }
            for m in members
        ],
    }
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()

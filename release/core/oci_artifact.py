"""Evidence attached to an image in its registry as OCI artifacts, where cosign and ORAS
users look for it. Pure.

An attachment is an OCI image manifest (OCI 1.1's artifact form) whose ``subject`` is the
platform image's manifest, whose ``artifactType`` says what it is, whose config is OCI's
empty descriptor and whose one layer is the document (a DSSE envelope, an SPDX SBOM).
A registry with the referrers API lists it under its subject by that ``subject`` field;
Debian's docker-registry (Distribution 2.8) has no such API (``/v2/<name>/referrers/``
answers 404), so each attachment is also tagged as cosign names them
(``sha256-<hex>.att`` for the provenance, ``sha256-<hex>.sbom`` for the SBOM): a tag both
cosign (``cosign download attestation|sbom``) and a reader of the tag find.

An attachment read back is untrusted: :func:`layer_of` takes from it only a digest and a
size, and only when its subject, type and layer are the ones expected.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from release.core.json_text import parse_json
from release.core.provenance import ENVELOPE_MEDIA_TYPE, PREDICATE_TYPE
from release.core.sbom import SBOM_MEDIA_TYPE
from release.errors import ExitCode, ReleaseError

__all__ = [
    "EMPTY_CONFIG",
    "MANIFEST_MEDIA_TYPE",
    "Artifact",
    "AttachmentError",
    "AttachmentKind",
    "Blob",
    "artifact_manifest",
    "attachment_tag",
    "layer_of",
]

MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json"
EMPTY_CONFIG = b"{}"
MAX_MANIFEST = 64 * 1024  # an attachment's manifest is a few hundred bytes


class AttachmentError(ReleaseError):
    """An attachment that is not the one expected (another subject, type or layer)."""

    exit_code = ExitCode.EVIDENCE


class AttachmentKind(enum.Enum):
    """What an attachment holds; its value is cosign's tag suffix."""

    PROVENANCE = "att"
    SBOM = "sbom"

    @property
    def media_type(self) -> str:
        return ENVELOPE_MEDIA_TYPE if self is AttachmentKind.PROVENANCE else SBOM_MEDIA_TYPE

    @property
    def limit(self) -> int:
        """The most bytes its document may have when read back."""
        return 64 * 1024 * 1024 if self is AttachmentKind.SBOM else 1024 * 1024


@dataclass(frozen=True)
class Blob:
    data: bytes

    @property
    def digest(self) -> str:
        return "sha256:" + hashlib.sha256(self.data).hexdigest()

    def descriptor(self, media_type: str) -> dict[str, str | int]:
        return {"mediaType": media_type, "digest": self.digest, "size": len(self.data)}


@dataclass(frozen=True)
class Artifact:
    """An attachment as pushed: its manifest's bytes and the blobs it names."""

    kind: AttachmentKind
    manifest: Blob
    layer: Blob
    config: Blob = Blob(EMPTY_CONFIG)


def attachment_tag(subject: str, kind: AttachmentKind) -> str:
    """cosign's tag for ``kind`` of the image ``subject`` (``sha256:<hex>``)."""
    algorithm, hexdigest = subject.split(":", 1)
    return f"{algorithm}-{hexdigest}.{kind.value}"


def artifact_manifest(
    kind: AttachmentKind, document: bytes, subject: str, subject_size: int, subject_type: str
) -> Artifact:
    """The attachment of ``document`` to the image manifest ``subject``."""
    layer, config = Blob(document), Blob(EMPTY_CONFIG)
    annotations = {"predicateType": PREDICATE_TYPE} if kind is AttachmentKind.PROVENANCE else {}
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "artifactType": kind.media_type,
        "config": config.descriptor(EMPTY_MEDIA_TYPE),
        "layers": [
            {
                **layer.descriptor(kind.media_type),
                **({"annotations": annotations} if annotations else {}),
            }
        ],
        "subject": {"mediaType": subject_type, "digest": subject, "size": subject_size},
    }
    raw = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    return Artifact(kind, Blob(raw), layer, config)


def _digest_of(entry: Any) -> str | None:
    digest = entry.get("digest") if isinstance(entry, Mapping) else None
    if isinstance(digest, str) and digest.startswith("sha256:") and len(digest) == 71:
        hexdigest = digest[7:]
        if not hexdigest.strip("0123456789abcdef"):
            return digest
    return None


def layer_of(raw: bytes, kind: AttachmentKind, subject: str) -> tuple[str, int]:
    """The digest and size of the document an attachment's manifest (``raw``, as read)
    names; refused when it is not ``kind`` attached to ``subject``, or is too large."""
    if len(raw) > MAX_MANIFEST:
        raise AttachmentError(f"the {kind.name.lower()} attachment's manifest is too large")
    try:
        found = parse_json(raw, max_depth=8)
    except ValueError:
        raise AttachmentError(f"the {kind.name.lower()} attachment is not a manifest") from None
    if not isinstance(found, Mapping):
        raise AttachmentError(f"the {kind.name.lower()} attachment is not a manifest")
    if _digest_of(found.get("subject")) != subject:
        raise AttachmentError(f"the {kind.name.lower()} attachment is not of image {subject}")
    layers = found.get("layers")
    if (
        found.get("artifactType") != kind.media_type
        or not isinstance(layers, list)
        or len(layers) != 1
    ):
        raise AttachmentError(f"the attachment holds no {kind.media_type} document")
    layer = layers[0]
    digest, size = _digest_of(layer), layer.get("size") if isinstance(layer, Mapping) else None
    if digest is None or layer.get("mediaType") != kind.media_type or not isinstance(size, int):
        raise AttachmentError(f"the attachment's layer is no {kind.media_type} document")
    if size < 0 or size > kind.limit:
        raise AttachmentError(
            f"the {kind.name.lower()} document is {size} bytes: more than the {kind.limit} read"
        )
    return digest, size

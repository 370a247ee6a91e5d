"""``reproduce`` against a row's attachments: the SBOM and the provenance its manifest
records (the ``attest`` part), read from the registry by the digests recorded, compared
with the rebuild.

- Each attachment is read by digest, never by tag: its manifest must hash to the digest
  recorded and name the published image as its subject; its document is fetched only when
  the manifest says it is of the expected type and no larger than a bound (64 MiB for an
  SBOM, 1 MiB for an envelope), and must hash to the digest the manifest names.
- **provenance**: its statement's materials against the rebuild, one row each: subject
  (the published digest), commit, base (content), build args, input digest, content
  digest (:func:`release.core.provenance.material_verdicts`); and its signature: an
  unsigned envelope is *not compared*, with the reason, never a match.
- **SBOM packages**: syft's packages of the rebuild against the attached SBOM's; a
  package whose version differs, or that only one of them has, is drift, named.

An attachment that cannot be read (the registry does not answer, syft is missing) is *not
compared*, with the reason; one that is not what the manifest records is drift.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from release.adapters.registry_artifacts import ArtifactRegistry
from release.core.oci_artifact import AttachmentError, Kind, layer_of
from release.core.provenance import ProvenanceError, material_verdicts, materials_of
from release.core.references import repository
from release.core.sbom import SbomError, package_changes, packages
from release.core.terminal_text import escaped
from release.core.verdict import FieldVerdict, State
from release.errors import ReleaseError

__all__ = ["PROVENANCE_FIELD", "SBOM_FIELD", "attestation_verdicts"]

SBOM_FIELD = "SBOM packages"
PROVENANCE_FIELD = "provenance"
SIGNATURE_FIELD = "provenance signature"


class _Wrong(Exception):
    """What was read is not what the manifest records."""


def _document(reg: ArtifactRegistry, record: Mapping[str, Any], kind: Kind, subject: str) -> bytes:
    repo = repository(record["tag"])
    raw = reg.raw(f"{repo}@{record['digest']}")
    if raw is None:
        raise _Wrong(f"the registry has no {escaped(record['digest'])} any more")
    if "sha256:" + hashlib.sha256(raw).hexdigest() != record["digest"]:
        raise _Wrong(f"{escaped(record['digest'][:19])} reads back as other bytes")
    digest, _ = layer_of(raw, kind, subject)
    return reg.blob(record["tag"], record["digest"], digest)


def _sbom_verdict(
    reg: ArtifactRegistry, attest: Mapping[str, Any], subject: str, rebuilt_image: str
) -> FieldVerdict:
    from release.adapters.syft import syft_sbom

    try:
        recorded = packages(json.loads(_document(reg, attest["sbom"], Kind.SBOM, subject)))
    except (_Wrong, AttachmentError, SbomError, ValueError) as err:
        return FieldVerdict(SBOM_FIELD, State.DRIFT, (f"the attached SBOM: {_said(err)}",))
    except ReleaseError as err:
        return FieldVerdict(SBOM_FIELD, State.NOT_COMPARED, (escaped(err.one_line()),))
    try:
        rebuilt = packages(json.loads(syft_sbom(rebuilt_image, "rebuild")))
    except ReleaseError as err:
        return FieldVerdict(SBOM_FIELD, State.NOT_COMPARED, (escaped(err.one_line()),))
    changes = package_changes(recorded, rebuilt)
    return FieldVerdict(SBOM_FIELD, State.DRIFT if changes else State.MATCH, tuple(changes))


def _said(err: Exception) -> str:
    return escaped(err.one_line() if isinstance(err, ReleaseError) else str(err))


def _provenance_verdicts(
    reg: ArtifactRegistry,
    attest: Mapping[str, Any],
    subject: str,
    commit: str,
    rebuilt: Mapping[str, Any],
) -> list[FieldVerdict]:
    try:
        found = materials_of(_document(reg, attest["provenance"], Kind.PROVENANCE, subject))
    except (_Wrong, AttachmentError, ProvenanceError) as err:
        return [FieldVerdict(PROVENANCE_FIELD, State.DRIFT, (_said(err),))]
    except ReleaseError as err:
        return [FieldVerdict(PROVENANCE_FIELD, State.NOT_COMPARED, (escaped(err.one_line()),))]
    signature = (
        FieldVerdict(
            SIGNATURE_FIELD,
            State.NOT_COMPARED,
            ("the DSSE envelope is unsigned (recorded so: no key signs provenance yet)",),
        )
        if found.signatures == 0
        else FieldVerdict(
            SIGNATURE_FIELD,
            State.NOT_COMPARED,
            (f"{found.signatures} signature(s) not verified here",),
        )
    )
    rows = material_verdicts(found, subject=subject, commit=commit, rebuilt=rebuilt)
    return [*rows, signature]


def attestation_verdicts(
    recorded: Mapping[str, Any],
    rebuilt: Mapping[str, Any],
    *,
    commit: str,
    rebuilt_image: str,
    reg: ArtifactRegistry | None = None,
) -> list[FieldVerdict]:
    """The attachments' fields of a row's verdict ([] for a row with none recorded).
    ``recorded``: the manifest's row; ``rebuilt``: the rebuild's build part."""
    attest, publish = recorded.get("attest"), recorded.get("publish")
    if attest is None or publish is None:
        return []
    reg = reg or ArtifactRegistry()
    subject = publish["digest"]
    if attest["subject"] != subject:
        why = (f"attached to {escaped(attest['subject'][:19])}, published {escaped(subject[:19])}",)
        return [
            FieldVerdict(PROVENANCE_FIELD, State.DRIFT, why),
            FieldVerdict(SBOM_FIELD, State.DRIFT, why),
        ]
    return [
        *_provenance_verdicts(reg, attest, subject, commit, rebuilt),
        _sbom_verdict(reg, attest, subject, rebuilt_image),
    ]

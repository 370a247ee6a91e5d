"""``reproduce`` against a row's attachments: the SBOM and the provenance its manifest
records (the ``attest`` part), read from the registry by the digests recorded, compared
with the rebuild.

- Each attachment is read by digest, never by tag: its manifest must hash to the digest
  recorded and name the published image as its subject; its document is fetched only when
  the manifest says it is of the expected type and no larger than a bound (64 MiB for an
  SBOM, 1 MiB for an envelope), and must hash to the digest the manifest names.
- **provenance**: its statement's materials against the rebuild, one row each: subject
  (the published digest), commit, base (content), build args, input digest, content
  digest (:func:`release.core.provenance.material_verdicts`), and the SBOM it names (by
  its document's digest) against the SBOM attached; and its signature, as ``reproduce``
  verified it against the tester's key before anything was built
  (:mod:`release.images.provenance_trust`): *match* with the signer, or *not compared*
  with the reason (unsigned, or no key to check it with), never a match without one.
- **SBOM packages**: syft's packages of the rebuild against the attached SBOM's; a
  package whose version differs, or that only one of them has, is drift, named.

An attachment that cannot be read (the registry does not answer, syft is missing) is *not
compared*, with the reason; one that is not what the manifest records is drift.
"""

from __future__ import annotations

import hashlib
import json

from release.adapters.registry_artifacts import ArtifactRegistry
from release.core.image_signing import ImageCheck
from release.core.image_signing import ImageSignatureState as Signed
from release.core.manifest_records import (
    AttestRecord,
    BuildRecord,
    Provenance,
    Sbom,
    VariantEntry,
)
from release.core.oci_artifact import AttachmentError, AttachmentKind, layer_of
from release.core.provenance import ProvenanceError, material_verdicts, materials_of
from release.core.references import repository
from release.core.sbom import SbomError, package_changes, packages
from release.core.terminal_text import escaped
from release.core.verdict import FieldVerdict, State
from release.errors import ReleaseError

__all__ = [
    "PROVENANCE_FIELD",
    "SBOM_FIELD",
    "SIGNATURE_FIELD",
    "NotAsRecorded",
    "attached_document",
    "attestation_verdicts",
]

SBOM_FIELD = "SBOM packages"
PROVENANCE_FIELD = "provenance"
SIGNATURE_FIELD = "provenance signature"
SBOM_NAMED_FIELD = "provenance SBOM"


class NotAsRecorded(Exception):
    """What was read is not what the manifest records."""


def _layer(
    reg: ArtifactRegistry, record: Sbom | Provenance, kind: AttachmentKind, subject: str
) -> str:
    """The digest of the document the attachment ``record`` names, read by its digest."""
    repo = repository(record.tag)
    raw = reg.raw(f"{repo}@{record.digest}")
    if raw is None:
        raise NotAsRecorded(f"the registry has no {escaped(record.digest)} any more")
    if "sha256:" + hashlib.sha256(raw).hexdigest() != record.digest:
        raise NotAsRecorded(f"{escaped(record.digest[:19])} reads back as other bytes")
    digest, _ = layer_of(raw, kind, subject)
    return digest


def attached_document(
    reg: ArtifactRegistry, record: Sbom | Provenance, kind: AttachmentKind, subject: str
) -> bytes:
    """The document of the attachment ``record`` (a manifest's ``attest`` entry) of the
    image ``subject``, read by the digests recorded; :class:`NotAsRecorded` (or an
    ``AttachmentError``) when it is not what the manifest records."""
    digest = _layer(reg, record, kind, subject)
    return reg.blob(record.tag, record.digest, digest)


def _sbom_verdict(
    reg: ArtifactRegistry, attest: AttestRecord, subject: str, rebuilt_image: str
) -> FieldVerdict:
    from release.adapters.syft import syft_sbom

    try:
        recorded = packages(
            json.loads(attached_document(reg, attest.sbom, AttachmentKind.SBOM, subject))
        )
    except (NotAsRecorded, AttachmentError, SbomError, ValueError) as err:
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


def _signature_verdict(found: int, checked: ImageCheck | None) -> FieldVerdict:
    """The envelope's signature as reproduce verified it before building (``checked``;
    None: no key to check it with)."""
    if checked is not None and checked.state is Signed.SIGNED:
        return FieldVerdict(SIGNATURE_FIELD, State.MATCH, (f"signed by {checked.signer}",))
    if found == 0:
        why = "the DSSE envelope is unsigned (recorded so: no key signed it)"
    else:
        why = f"{found} signature(s) not verified here: name the key with --image-key FILE"
    return FieldVerdict(SIGNATURE_FIELD, State.NOT_COMPARED, (why,))


def _sbom_named(
    reg: ArtifactRegistry, attest: AttestRecord, subject: str, named: str | None
) -> FieldVerdict:
    """The SBOM the (signed) statement names against the SBOM attached."""
    if named is None:
        why = "the provenance names no SBOM (attested before provenance named one)"
        return FieldVerdict(SBOM_NAMED_FIELD, State.NOT_COMPARED, (why,))
    try:
        attached = _layer(reg, attest.sbom, AttachmentKind.SBOM, subject)
    except (NotAsRecorded, AttachmentError) as err:
        return FieldVerdict(SBOM_NAMED_FIELD, State.DRIFT, (f"the attached SBOM: {_said(err)}",))
    except ReleaseError as err:
        return FieldVerdict(SBOM_NAMED_FIELD, State.NOT_COMPARED, (escaped(err.one_line()),))
    if attached == named:
        return FieldVerdict(SBOM_NAMED_FIELD, State.MATCH)
    said = (
        f"the provenance names {escaped(named[:19])}, the SBOM attached is {escaped(attached[:19])}"
    )
    return FieldVerdict(SBOM_NAMED_FIELD, State.DRIFT, (said,))


def _provenance_verdicts(
    reg: ArtifactRegistry,
    attest: AttestRecord,
    subject: str,
    commit: str,
    rebuilt: BuildRecord,
    checked: ImageCheck | None,
) -> list[FieldVerdict]:
    try:
        document = attached_document(reg, attest.provenance, AttachmentKind.PROVENANCE, subject)
        found = materials_of(document)
    except (NotAsRecorded, AttachmentError, ProvenanceError) as err:
        return [FieldVerdict(PROVENANCE_FIELD, State.DRIFT, (_said(err),))]
    except ReleaseError as err:
        return [FieldVerdict(PROVENANCE_FIELD, State.NOT_COMPARED, (escaped(err.one_line()),))]
    rows = material_verdicts(found, subject=subject, commit=commit, rebuilt=rebuilt)
    return [
        *rows,
        _sbom_named(reg, attest, subject, found.sbom),
        _signature_verdict(found.signatures, checked),
    ]


def attestation_verdicts(
    recorded: VariantEntry,
    rebuilt: BuildRecord,
    *,
    commit: str,
    rebuilt_image: str,
    reg: ArtifactRegistry | None = None,
    signature: ImageCheck | None = None,
) -> list[FieldVerdict]:
    """The attachments' fields of a row's verdict ([] for a row with none recorded).
    ``recorded``: the manifest's row; ``rebuilt``: the rebuild's build record;
    ``signature``: the provenance's signature as checked before building (None: not)."""
    attest, publish = recorded.attest, recorded.publish
    if attest is None or publish is None:
        return []
    reg = reg or ArtifactRegistry()
    subject = publish.digest
    if attest.subject != subject:
        why = (f"attached to {escaped(attest.subject[:19])}, published {escaped(subject[:19])}",)
        return [
            FieldVerdict(PROVENANCE_FIELD, State.DRIFT, why),
            FieldVerdict(SBOM_FIELD, State.DRIFT, why),
        ]
    return [
        *_provenance_verdicts(reg, attest, subject, commit, rebuilt, signature),
        _sbom_verdict(reg, attest, subject, rebuilt_image),
    ]

"""``reproduce``'s check of each row's signed provenance, against the tester's key, before
anything is pulled or built (after the images' signatures, in the same words).

For each published row whose manifest records an ``attest`` part, its DSSE envelope is
read by the digests recorded (:func:`release.images.attest_check.attached_document`) and
each of its signatures verified over the envelope's PAE with gpg, in a scratch keyring of
just the tester's key file (``--image-key``; :class:`release.adapters.openpgp_bytes.
BytesVerifier`). It reads:

- ``provenance ROW: signed by FPR``: a signature verifies; FPR is the key's fingerprint
  as the tester's keyring says, never what the envelope's ``keyid`` claims;
- ``provenance ROW: unsigned``: the envelope has no signature;
- ``provenance ROW: signature does not verify (why)``: the statement was changed after
  signing, it was signed by another key, or what the registry serves is not what the
  manifest records. Always refused (exit 7): nothing is pulled or built.

``--require-signed`` refuses an unsigned provenance too. Only once it verifies are its
fields trusted and compared (:mod:`release.images.attest_check`).
"""

from __future__ import annotations

from collections.abc import Mapping

from release.adapters.openpgp_bytes import BytesVerifier
from release.adapters.registry_artifacts import ArtifactRegistry
from release.core.image_signing import ImageCheck, ImageSignatureState
from release.core.manifest_records import AttestRecord, PublishRecord, VariantEntry
from release.core.oci_artifact import AttachmentError, AttachmentKind
from release.core.provenance import ProvenanceError, opened
from release.core.references import repository
from release.core.say import Say
from release.core.terminal_text import escaped
from release.images.attest_check import NotAsRecorded, attached_document
from release.images.image_signing import ImageSignatureError, ImageTrust

__all__ = ["check_provenance"]

KIND = "provenance"


def _judge(verifier: BytesVerifier, row: str, ref: str, document: bytes) -> ImageCheck:
    try:
        found = opened(document)
    except ProvenanceError as err:
        return ImageCheck(row, ref, ImageSignatureState.BAD, detail=err.one_line(), kind=KIND)
    if not found.signatures:
        return ImageCheck(row, ref, ImageSignatureState.UNSIGNED, kind=KIND)
    details = []
    for signature in found.signatures:
        checked = verifier.verify(found.signed_bytes, signature.sig)
        if checked.signer is not None:
            return ImageCheck(
                row, ref, ImageSignatureState.SIGNED, signer=checked.signer, kind=KIND
            )
        details.append(checked.detail)
    return ImageCheck(row, ref, ImageSignatureState.BAD, detail=details[0], kind=KIND)


def _check_row(
    verifier: BytesVerifier,
    reg: ArtifactRegistry,
    row: str,
    entry: tuple[AttestRecord, PublishRecord],
) -> ImageCheck:
    attest, publish = entry
    record, subject = attest.provenance, publish.digest
    ref = f"{repository(record.tag)}@{record.digest}"
    if attest.subject != subject:
        detail = "it is attached to another image than the one published"
        return ImageCheck(row, ref, ImageSignatureState.BAD, detail=detail, kind=KIND)
    try:
        document = attached_document(reg, record, AttachmentKind.PROVENANCE, subject)
    except (NotAsRecorded, AttachmentError) as err:
        return ImageCheck(row, ref, ImageSignatureState.BAD, detail=str(err), kind=KIND)
    return _judge(verifier, row, ref, document)


def check_provenance(
    recorded: Mapping[str, VariantEntry],
    trust: ImageTrust,
    say: Say,
    reg: ArtifactRegistry | None = None,
) -> dict[str, ImageCheck]:
    """Each attested row's provenance signature, by row, checked against the tester's
    key; refused (exit 7) where one does not verify (or, ``require_signed``, is unsigned).
    A registry that cannot be read stops the run with its own error."""
    reg = reg or ArtifactRegistry()
    checks: dict[str, ImageCheck] = {}
    rows = {r: (e.attest, e.publish) for r, e in recorded.items() if e.attest and e.publish}
    if not rows:
        return checks
    with BytesVerifier(trust.key_file) as verifier:
        for row, entry in rows.items():
            checks[row] = _check_row(verifier, reg, row, entry)
    for check in checks.values():
        say(escaped(check.line()))
    refused = (
        (ImageSignatureState.BAD, ImageSignatureState.UNSIGNED)
        if trust.require_signed
        else (ImageSignatureState.BAD,)
    )
    failed = [c for c in checks.values() if c.state in refused]
    if failed:
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        raise ImageSignatureError(
            escaped(f"{failed[0].line()}; nothing was pulled or built") + more
        )
    return checks

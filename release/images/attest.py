"""``images.attest``: an SBOM and a provenance statement attached to each published platform
image in the release registry, and their digests recorded as each row's ``attest`` part
of the manifest.

For each row published (its ``publish`` part), after ``images.publish``:

- the **SBOM**: syft's SPDX JSON of the image (:mod:`release.adapters.syft`), its creation
  time and namespace made the image's (:func:`release.core.sbom.normalized`), so one
  image's SBOM is the same bytes on every run;
- the **provenance**: an in-toto SLSA v1 statement made from the row's build and publish
  parts (:mod:`release.core.provenance`), naming the SBOM by its digest, in a DSSE
  envelope signed, where a key is named (``--sign-with FPR`` or
  ``RELEASE_IMAGE_SIGNING_KEY``: the images' key), by a detached OpenPGP signature over
  its PAE (``keyid``: the key's fingerprint), else unsigned and recorded so;
- the SBOM attached first, then the provenance that names it; each as an OCI artifact
  whose ``subject`` is the platform image, under cosign's tags ``sha256-<hex>.sbom`` and
  ``.att`` (:mod:`release.core.oci_artifact`), and read back by tag: it must serve the
  bytes pushed.

The rules, as ``images.publish``'s:

- **Read before anything is written.** The image must still be served by the digest its
  publish part records. An attachment tag that is there already is kept when it is an
  attachment of this image of the right kind (a provenance kept is recorded as signed by
  the key its envelope names, or unsigned: it is not signed again); one that holds
  anything else is refused (exit 3), and is never overwritten.
- **A re-run converges.** Stopped at any point, the next run keeps what is attached,
  attaches what is missing and writes the part; a part that records what the registry
  serves already asks nothing more.
- ``--dry-run`` reads the registry and says what would be attached; nothing leaves the
  machine and no part is written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from release.adapters.openpgp_bytes import BytesSigner
from release.adapters.registry import RegistryError
from release.adapters.registry_artifacts import ArtifactRegistry
from release.adapters.syft import syft_sbom
from release.core.dsse import Signature, pae
from release.core.image_signing import fingerprint
from release.core.manifest import ManifestError, loads
from release.core.manifest_records import (
    AttestRecord,
    BuildRecord,
    Part,
    Provenance,
    PublishRecord,
    Sbom,
)
from release.core.oci_artifact import (
    MANIFEST_MEDIA_TYPE,
    Artifact,
    AttachmentError,
    AttachmentKind,
    Blob,
    artifact_manifest,
    attachment_tag,
    layer_of,
)
from release.core.provenance import (
    PAYLOAD_TYPE,
    PREDICATE_TYPE,
    envelope,
    opened,
    payload_of,
    statement,
)
from release.core.references import repository
from release.core.say import Say
from release.core.sbom import SBOM_MEDIA_TYPE, normalized, packages
from release.errors import RefusedError, ReleaseError
from release.images.inputs import SOURCE_LABEL
from release.images.labels import BASE_DIGEST_LABEL
from release.images.manifest import part_path, write_part
from release.images.workspace import Workspace

__all__ = ["Attached", "attest_images"]


@dataclass(frozen=True)
class Attached:
    """One platform image's attachments as the registry serves them (dry: will)."""

    row: str
    subject: str  # the platform image's digest
    repository: str
    sbom: str | None  # the attachment manifest's digest; None: not attached yet (dry)
    provenance: str | None
    packages: int | None
    written: tuple[str, ...] = ()  # attachment tags this run pushed (dry: would)
    signed_by: str | None = None  # the provenance's signer, as recorded (dry: would be)


def _part(ws: Workspace, row: str, name: str) -> Part | None:
    path = part_path(ws, row, name)
    if not path.is_file():
        return None
    return Part.of(loads(path.read_text(encoding="utf-8"), str(path)), str(path))


def _subject(reg: ArtifactRegistry, repo: str, publish: PublishRecord) -> tuple[int, str]:
    """The recorded platform image as the registry serves it: (size, media type)."""
    ref = f"{repo}@{publish.digest}"
    raw = reg.raw(ref)
    if raw is None:
        raise RefusedError(
            f"{ref} is not in the registry any more: publish it again (release images.publish)"
        )
    media = json.loads(raw).get("mediaType") or MANIFEST_MEDIA_TYPE
    return len(raw), str(media)


def _existing(reg: ArtifactRegistry, ref: str, kind: AttachmentKind, subject: str) -> str | None:
    """The digest of the attachment ``ref`` serves (None: none), refused when it is not
    ``kind`` attached to ``subject``."""
    raw = reg.raw(ref)
    if raw is None:
        return None
    try:
        layer_of(raw, kind, subject)
    except AttachmentError as err:
        raise RefusedError(
            f"{ref} is there and is not this tool's {kind.name.lower()} of {subject[:19]} "
            f"({err.message}); it is not overwritten"
        ) from None
    return Blob(raw).digest


def _sbom(ws: Workspace, publish: PublishRecord, repo: str) -> bytes:
    document = json.loads(syft_sbom(publish.image_id, f"{repo}@{publish.digest}"))
    return json.dumps(
        normalized(document, f"{repo}@{publish.digest}", ws.source.epoch), sort_keys=True
    ).encode()


def _provenance(
    ws: Workspace,
    it: _Row,
    sbom: str,
    signer: BytesSigner | None,
) -> bytes:
    """The row's statement, naming the SBOM document ``sbom`` (its digest), in a DSSE
    envelope: signed over its PAE by ``signer``, else with no signature."""
    data = ws.engine.inspect_image(it.publish.image_id)
    labels = dict(data.labels) if data else {}
    document = statement(
        it.header,  # the statement names the release as the publish part's header does
        it.row,
        it.build,
        it.publish,
        source_url=labels.get(SOURCE_LABEL),
        base_digest=labels.get(BASE_DIGEST_LABEL),
        sbom=sbom,
    )
    if signer is None:
        return envelope(document)
    signed = signer.sign(pae(PAYLOAD_TYPE, payload_of(document)))
    return envelope(document, (Signature(signer.key, signed),))


def _signer_of(envelope_bytes: bytes) -> str | None:
    """Who a kept envelope says signed it (its first ``keyid`` that is a fingerprint):
    what this tool wrote there, recorded as it is; reproduce verifies it."""
    for signature in opened(envelope_bytes).signatures:
        try:
            return fingerprint(signature.keyid, "keyid")
        except ReleaseError:
            continue
    return None


def _push(reg: ArtifactRegistry, ref: str, artifact: Artifact) -> str:
    reg.push_artifact(ref, artifact)
    back = reg.raw(ref)
    if back != artifact.manifest.data:
        raise RegistryError(
            f"{ref} does not read back as pushed: it serves "
            f"{'nothing' if back is None else 'another manifest'}, not {artifact.manifest.digest}"
        )
    return artifact.manifest.digest


def _record(
    ws: Workspace, row: str, publish: PublishRecord, done: Attached, repo: str, tool: str
) -> None:
    sbom = Sbom(
        tag=f"{repo}:{attachment_tag(done.subject, AttachmentKind.SBOM)}",
        digest=cast(str, done.sbom),  # attached: not a dry run's
        media_type=SBOM_MEDIA_TYPE,
        packages=cast(int, done.packages),
        tool=tool,
    )
    provenance = Provenance(
        tag=f"{repo}:{attachment_tag(done.subject, AttachmentKind.PROVENANCE)}",
        digest=cast(str, done.provenance),
        predicate_type=PREDICATE_TYPE,
        signed=done.signed_by is not None,
        signed_by=done.signed_by or None,
    )
    write_part(ws, row, "attest", AttestRecord(publish.image_id, done.subject, sbom, provenance))


def _recorded(ws: Workspace, row: str, subject: str) -> AttestRecord | None:
    found = _part(ws, row, "attest")
    record = AttestRecord.of(found.data, found.variant) if found else None
    return record if record and record.subject == subject else None


@dataclass(frozen=True)
class _Row:
    """A published row as read before anything is written."""

    row: str
    header: Part  # the publish part: which release
    build: BuildRecord
    publish: PublishRecord
    subject: str
    size: int
    media: str
    refs: Mapping[AttachmentKind, str]
    found: Mapping[AttachmentKind, str | None]
    recorded: AttestRecord | None

    @property
    def repository(self) -> str:
        return repository(self.publish.tags[0])

    @property
    def settled(self) -> bool:
        """The part records what the registry serves: nothing to do."""
        recorded = self.recorded
        return recorded is not None and all(
            self.found[kind] == _recorded_digest(recorded, kind) for kind in AttachmentKind
        )


def _recorded_digest(recorded: AttestRecord, kind: AttachmentKind) -> str:
    return recorded.sbom.digest if kind is AttachmentKind.SBOM else recorded.provenance.digest


def _read_row(ws: Workspace, reg: ArtifactRegistry, row: str) -> _Row | None:
    build, publish = _part(ws, row, "build"), _part(ws, row, "publish")
    if publish is None:
        return None
    if build is None:
        raise ManifestError(f"{row} was published but has no build part here to attest from")
    pub = PublishRecord.of(publish.data, f"the publish part of {row}")
    repo, subject = repository(pub.tags[0]), pub.digest
    size, media = _subject(reg, repo, pub)
    refs = {kind: f"{repo}:{attachment_tag(subject, kind)}" for kind in AttachmentKind}
    found = {kind: _existing(reg, refs[kind], kind, subject) for kind in AttachmentKind}
    return _Row(
        row, publish, BuildRecord.of(build.data, f"the build part of {row}"), pub, subject, size, media, refs, found,
        _recorded(ws, row, subject),
    )  # fmt: skip


def _kept(reg: ArtifactRegistry, it: _Row, kind: AttachmentKind) -> bytes:
    """A document attached already (a run stopped after attaching it), read back by
    digest."""
    ref, digest = it.refs[kind], str(it.found[kind])
    raw = reg.raw(f"{it.repository}@{digest}") or b""
    return reg.blob(ref, digest, layer_of(raw, kind, it.subject)[0])


_ORDER = (
    AttachmentKind.SBOM,
    AttachmentKind.PROVENANCE,
)  # the provenance names the SBOM: it comes after


def _attest_row(
    ws: Workspace, reg: ArtifactRegistry, it: _Row, say: Say, signer: BytesSigner | None
) -> Attached:
    from release.adapters.syft import syft_version

    pub = it.publish
    missing = tuple(it.refs[kind] for kind in _ORDER if it.found[kind] is None)
    kept = it.found[AttachmentKind.SBOM] is not None
    sbom = _kept(reg, it, AttachmentKind.SBOM) if kept else _sbom(ws, pub, it.repository)
    count = len(packages(json.loads(sbom)))
    digests = dict(it.found)
    signed_by = signer.key if signer else None
    for kind in _ORDER:
        if digests[kind] is not None:
            say(f"attest({it.row}): {it.refs[kind]} is there: {digests[kind]}")
            if kind is AttachmentKind.PROVENANCE:
                signed_by = _signer_of(_kept(reg, it, kind))
            continue
        document = (
            sbom if kind is AttachmentKind.SBOM else _provenance(ws, it, Blob(sbom).digest, signer)
        )
        artifact = artifact_manifest(kind, document, it.subject, it.size, it.media)
        digests[kind] = _push(reg, it.refs[kind], artifact)
        said = f" (signed by {signer.key})" if signer and kind is AttachmentKind.PROVENANCE else ""
        say(f"attest({it.row}): attached {it.refs[kind]}: {digests[kind]}{said}")
    done = Attached(
        it.row, it.subject, it.repository, digests[AttachmentKind.SBOM], digests[AttachmentKind.PROVENANCE], count,
        missing, signed_by,
    )  # fmt: skip
    _record(ws, it.row, pub, done, it.repository, syft_version())
    return done


def _as_is(it: _Row, dry_run: bool, signer: BytesSigner | None) -> Attached:
    recorded = it.recorded if it.settled else None
    count = recorded.sbom.packages if recorded else None
    missing = tuple(it.refs[kind] for kind in _ORDER if it.found[kind] is None)
    signed_by = recorded.provenance.signed_by if recorded else None
    if dry_run and it.found[AttachmentKind.PROVENANCE] is None and signer is not None:
        signed_by = signer.key
    return Attached(
        it.row, it.subject, it.repository, it.found[AttachmentKind.SBOM], it.found[AttachmentKind.PROVENANCE],
        count, missing if dry_run else (), signed_by,
    )  # fmt: skip


def attest_images(
    ws: Workspace,
    ids: Sequence[str] | None,
    *,
    dry_run: bool = False,
    say: Say = print,
    reg: ArtifactRegistry | None = None,
    signer: BytesSigner | None = None,
) -> list[Attached]:
    """Attach each published row's SBOM and provenance (the rows of the variants asked;
    all when None), the provenance signed by ``signer`` where one is given; what the
    registry serves afterwards (dry: before)."""
    reg = reg or ArtifactRegistry()
    rows = [_read_row(ws, reg, variant.id) for variant in ws.variants(ids)]  # all, then act
    read = [it for it in rows if it is not None]
    if not read:
        raise RefusedError("no published image to attest: publish first (release images.publish)")
    done = []
    for it in read:
        if it.settled:
            say(f"attest({it.row}): attached already: {', '.join(it.refs.values())}")
            done.append(_as_is(it, dry_run, signer))
        elif dry_run:
            for kind in _ORDER:
                if it.found[kind] is None:
                    say(f"attest({it.row}): would attach {it.refs[kind]} to {it.subject}")
            done.append(_as_is(it, dry_run, signer))
        else:
            done.append(_attest_row(ws, reg, it, say, signer))
    return done

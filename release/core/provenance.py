"""An image's provenance: an in-toto statement with a SLSA v1 provenance predicate, in a
DSSE envelope, made from what the release manifest records of the build, and read back
for ``reproduce`` to compare its rebuild with, field by field. Pure.

What the statement says (``predicate.buildDefinition``):

- the subject: the platform image, by its manifest's digest in the release registry;
- ``externalParameters``: the tag, version, variant, platform, the build args, and the
  Dockerfile, context and target where recorded;
- ``internalParameters``: ``SOURCE_DATE_EPOCH``;
- ``resolvedDependencies`` (SLSA v0.2's *materials*): the source at the tagged commit
  (``gitCommit``), and the base image by its id, with its content digest, whether it was
  a stand-in made on the build machine, and its registry digest where it came from one;
- ``runDetails``: the builder (this tool and its version) and, as byproducts, the input
  digest, the image's content digest and its image id.

- the SBOM attached beside it, by its document's digest (a byproduct named ``sbom``), so
  a signature over the statement covers the SBOM too.

The envelope is DSSE's (``payloadType`` ``application/vnd.in-toto+json``,
:mod:`release.core.dsse`); :func:`envelope` wraps the statement with the signatures made
over its PAE (none: an unsigned envelope, recorded so, never as signed).

An envelope read back is untrusted: its shape is checked and what it says is taken only
as digests, strings and string maps; every value shown is escaped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from release.core.dsse import EnvelopeError, Opened, Signature, dump, open_envelope
from release.core.json_text import JSONValue, parse_json
from release.core.manifest_records import BuildRecord, Manifest, Part, PublishRecord
from release.core.sbom import SBOM_MEDIA_TYPE
from release.core.terminal_text import escaped
from release.core.verdict import FieldVerdict, State, dict_changes
from release.errors import ExitCode, ReleaseError

__all__ = [
    "BUILD_TYPE",
    "ENVELOPE_MEDIA_TYPE",
    "PAYLOAD_TYPE",
    "PREDICATE_TYPE",
    "STATEMENT_TYPE",
    "Materials",
    "ProvenanceError",
    "envelope",
    "material_verdicts",
    "materials_of",
    "opened",
    "payload_of",
    "statement",
]

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://slsa.dev/provenance/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
ENVELOPE_MEDIA_TYPE = "application/vnd.dsse.envelope.v1+json"
BUILD_TYPE = "urn:release:image-build:v1"
BUILDER_ID = "urn:release:images.build"
_MAX_DEPTH = 16


class ProvenanceError(ReleaseError):
    """An envelope or statement that is not the provenance it is said to be."""

    exit_code = ExitCode.EVIDENCE


def _hex(digest: str) -> str:
    return digest.split(":", 1)[1]


def statement(
    release: Part | Manifest,
    variant: str,
    build: BuildRecord,
    publish: PublishRecord,
    *,
    source_url: str | None = None,
    base_digest: str | None = None,
    sbom: str | None = None,
) -> dict[str, JSONValue]:
    """The provenance of one published platform image, from its manifest parts
    (``release``: the publish part, whose header names the release, or the manifest;
    ``build`` and ``publish``: its parts' records); ``sbom``: the digest of the SBOM document attached beside it."""
    base = build.base
    base_annotations: dict[str, JSONValue] = {
        "content_digest": base.content_digest,
        "standin": base.standin,
    }
    if base_digest:
        base_annotations["registry_digest"] = base_digest
    source = f"git+{source_url}" if source_url else "git"
    parameters: dict[str, JSONValue] = {
        "tag": release.tag,
        "version": release.version,
        "variant": variant,
        "platform": publish.platform,
        "build_args": dict(build.build_args),
        **(build.recipe.document() if build.recipe else {}),
    }
    return {
        "_type": STATEMENT_TYPE,
        "subject": [
            {
                "name": publish.tags[0].rsplit(":", 1)[0],
                "digest": {"sha256": _hex(publish.digest)},
            }
        ],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": parameters,
                "internalParameters": {"source_date_epoch": release.source_date_epoch},
                "resolvedDependencies": [
                    {
                        "name": "source",
                        "uri": f"{source}@refs/tags/{release.tag}",
                        "digest": {"gitCommit": release.commit},
                    },
                    {
                        "name": "base",
                        "uri": f"docker-image://{base.ref}",
                        "digest": {"sha256": _hex(base.id)},
                        "annotations": base_annotations,
                    },
                ],
            },
            "runDetails": {
                "builder": {
                    "id": BUILDER_ID,
                    "version": {"release": release.tool.version},
                },
                "byproducts": [
                    {"name": "input_digest", "digest": {"sha256": _hex(build.input_digest)}},
                    {
                        "name": "content_digest",
                        "digest": {"sha256": _hex(build.content.digest)},
                    },
                    {"name": "image_id", "digest": {"sha256": _hex(build.image_id)}},
                    *([_sbom_byproduct(sbom)] if sbom else []),
                ],
            },
        },
    }


def _sbom_byproduct(digest: str) -> dict[str, JSONValue]:
    return {"name": "sbom", "digest": {"sha256": _hex(digest)}, "mediaType": SBOM_MEDIA_TYPE}


def payload_of(document: Mapping[str, JSONValue]) -> bytes:
    """The statement's bytes, as the envelope carries them (and a signature covers)."""
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


def envelope(document: Mapping[str, JSONValue], signatures: Sequence[Signature] = ()) -> bytes:
    """The statement in a DSSE envelope with ``signatures`` (made over
    ``dsse.pae(PAYLOAD_TYPE, payload_of(document))``), as the bytes attached."""
    return dump(PAYLOAD_TYPE, payload_of(document), signatures)


@dataclass(frozen=True)
class Materials:
    """What a provenance statement says the image was made of."""

    subject: str  # sha256:... of the platform image
    commit: str
    base_ref: str
    base_id: str
    base_content: str
    build_args: dict[str, str]
    input_digest: str
    content_digest: str
    signatures: int
    sbom: str | None = None  # the SBOM document's digest the statement names


def _object(value: object, what: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise ProvenanceError(f"the provenance has no {what}")
    return value


def _sha256(value: object, what: str) -> str:
    digest = _object(value, what).get("sha256")
    if not isinstance(digest, str) or len(digest) != 64 or digest.strip("0123456789abcdef"):
        raise ProvenanceError(f"the provenance's {what} is not a sha256 digest")
    return f"sha256:{digest}"


def _named(entries: object, name: str, what: str) -> Mapping[str, object]:
    if isinstance(entries, list):
        for entry in entries:
            if isinstance(entry, Mapping) and entry.get("name") == name:
                return entry
    raise ProvenanceError(f"the provenance names no {what}")


def _strings(value: object, what: str) -> dict[str, str]:
    found = {
        k: v for k, v in _object(value, what).items() if isinstance(k, str) and isinstance(v, str)
    }
    if len(found) != len(_object(value, what)):
        raise ProvenanceError(f"the provenance's {what} are not strings")
    return found


def opened(data: bytes) -> Opened:
    """An attached envelope opened: refused when it is not a DSSE envelope of a JSON
    in-toto statement."""
    try:
        found = open_envelope(data)
    except EnvelopeError as err:
        raise ProvenanceError(f"the provenance: {err.message}") from None
    if found.payload_type != PAYLOAD_TYPE:
        raise ProvenanceError(f"the envelope's payload is not of type {PAYLOAD_TYPE}")
    return found


def _payload(data: bytes) -> tuple[Mapping[str, object], int]:
    found = opened(data)
    try:
        inner = parse_json(found.payload, max_depth=_MAX_DEPTH)
    except ValueError:
        raise ProvenanceError("the envelope's payload is not a base64 JSON statement") from None
    return _object(inner, "in-toto statement"), len(found.signatures)


def materials_of(data: bytes) -> Materials:
    """The materials of an attached envelope's statement (refused when it is not one)."""
    found, signatures = _payload(data)
    if found.get("_type") != STATEMENT_TYPE or found.get("predicateType") != PREDICATE_TYPE:
        raise ProvenanceError("the envelope holds no in-toto SLSA provenance statement")
    subjects = found.get("subject")
    if not isinstance(subjects, list) or len(subjects) != 1:
        raise ProvenanceError("the provenance names no single subject")
    definition = _object(
        _object(found.get("predicate"), "predicate").get("buildDefinition"), "buildDefinition"
    )
    run = _object(_object(found.get("predicate"), "predicate").get("runDetails"), "runDetails")
    deps = definition.get("resolvedDependencies")
    source = _named(deps, "source", "source")
    commit = _object(source.get("digest"), "source digest").get("gitCommit")
    if (
        not isinstance(commit, str)
        or commit.strip("0123456789abcdef")
        or len(commit) not in (40, 64)
    ):
        raise ProvenanceError("the provenance's source names no commit")
    base = _named(deps, "base", "base image")
    base_annotations = _object(base.get("annotations"), "base annotations")
    content = base_annotations.get("content_digest")
    parameters = _object(definition.get("externalParameters"), "externalParameters")
    byproducts = run.get("byproducts")
    return Materials(
        subject=_sha256(_object(subjects[0], "subject").get("digest"), "subject"),
        commit=commit,
        base_ref=escaped(str(base.get("uri", "")).removeprefix("docker-image://")),
        base_id=_sha256(base.get("digest"), "base image"),
        base_content=str(content) if isinstance(content, str) else "",
        build_args=_strings(parameters.get("build_args"), "build args"),
        input_digest=_sha256(
            _named(byproducts, "input_digest", "input digest").get("digest"), "input digest"
        ),
        content_digest=_sha256(
            _named(byproducts, "content_digest", "content digest").get("digest"), "content digest"
        ),
        signatures=signatures,
        sbom=_sbom_of(byproducts),
    )


def _sbom_of(byproducts: object) -> str | None:
    """The SBOM's digest the statement names (None: it names none)."""
    try:
        return _sha256(_named(byproducts, "sbom", "SBOM").get("digest"), "SBOM")
    except ProvenanceError:
        return None


def _same(name: str, recorded: str, rebuilt: str) -> FieldVerdict:
    if recorded == rebuilt:
        return FieldVerdict(name, State.MATCH)
    return FieldVerdict(
        name, State.DRIFT, (f"the provenance says {escaped(recorded)}, rebuilt {escaped(rebuilt)}",)
    )


def material_verdicts(
    found: Materials, *, subject: str, commit: str, rebuilt: BuildRecord
) -> list[FieldVerdict]:
    """The provenance's fields against the published image (``subject``: its digest), the
    tag's commit and the rebuild's build part (``rebuilt``, its record)."""
    args = dict_changes(found.build_args, dict(rebuilt.build_args))
    return [
        _same("provenance subject", found.subject, subject),
        _same("provenance commit", found.commit, commit),
        _same("provenance base", found.base_content, rebuilt.base.content_digest),
        FieldVerdict("provenance build args", State.DRIFT if args else State.MATCH, tuple(args)),
        _same("provenance input digest", found.input_digest, rebuilt.input_digest),
        _same("provenance content digest", found.content_digest, rebuilt.content.digest),
    ]

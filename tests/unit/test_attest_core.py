"""The pure side of images.attest: SBOM packages and their differences, the provenance
statement made and read back, each of its checks made to fail, and the attachment
manifests' checks (subject, type, size)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from release.core.manifest import PART_SCHEMA
from release.core.manifest_records import BuildRecord, Part, PublishRecord
from release.core.oci_artifact import (
    AttachmentError,
    AttachmentKind,
    artifact_manifest,
    attachment_tag,
    layer_of,
)
from release.core.provenance import (
    ProvenanceError,
    envelope,
    material_verdicts,
    materials_of,
    statement,
)
from release.core.sbom import SbomError, normalized, package_changes, packages
from release.core.verdict import State

D = "sha256:" + "a" * 64
E = "sha256:" + "b" * 64
# the publish part's header: which release the statement is of
HEADER = Part.of({
    "schema": PART_SCHEMA, "version": "0.1.0rc1", "tag": "v0.1.0rc1", "commit": "c" * 40,
    "source_date_epoch": 1, "tool": {"name": "release", "version": "0.1"}, "image": "x/y",
    "variant": "a", "part": "publish", "data": {},
})  # fmt: skip
BUILD = {
    "build_args": {"CUDA_VERSION": "12.9.1"},
    "base": {"ref": "nvidia/cuda:12.9.1", "id": E, "content_digest": D, "standin": True},
    "image_id": E, "input_digest": D, "content": {"digest": E, "parts": {}, "files": 1},
    "tags": ["x/y:v0.1.0rc1"], "inventory": {},
}  # fmt: skip
PUBLISH = {
    "registry": "127.0.0.1:5000", "platform": "linux/amd64", "image_id": E, "digest": D,
    "tags": ["127.0.0.1:5000/x/y:v0.1.0rc1-amd64"],
    "index": {"digest": E, "tags": ["127.0.0.1:5000/x/y:v0.1.0rc1"]},
}  # fmt: skip
BUILT, PUBLISHED = BuildRecord.of(BUILD), PublishRecord.of(PUBLISH)


def spdx(*pkgs: tuple[str, str, str]) -> dict[str, Any]:
    return {
        "spdxVersion": "SPDX-2.3",
        "packages": [
            {"name": n, "versionInfo": v,
             "externalRefs": [{"referenceType": "purl", "referenceLocator": f"pkg:{t}/{n}@{v}"}]}
            for t, n, v in pkgs
        ] + [{"name": "img", "versionInfo": D, "primaryPackagePurpose": "CONTAINER"}],
    }  # fmt: skip


def test_packages_by_type_and_name_and_their_changes() -> None:
    old = packages(spdx(("deb", "libc6", "2.36"), ("pypi", "six", "1.0"), ("deb", "gone", "1")))
    new = packages(spdx(("deb", "libc6", "2.37"), ("pypi", "six", "1.0"), ("pypi", "new", "2")))
    assert old == {"deb:gone": "1", "deb:libc6": "2.36", "pypi:six": "1.0"}  # no root package
    assert package_changes(old, new) == ["- deb:gone 1", "~ deb:libc6 2.36 -> 2.37", "+ pypi:new 2"]
    assert package_changes(old, old) == []
    many = {f"p{i}": "1" for i in range(30)}
    assert package_changes(many, {})[-1] == "... 10 more"


def test_an_sbom_that_is_not_spdx_is_refused_and_names_are_escaped() -> None:
    for bad in ({}, {"spdxVersion": "SPDX-2.3"}, {"spdxVersion": "SPDX-2.3", "packages": [1]}, []):
        with pytest.raises(SbomError):
            packages(bad)
    assert package_changes({"a\x1b[2J": "1"}, {}) == ["- a\\x1b[2J 1"]


def test_normalized_sboms_of_one_image_are_the_same_bytes() -> None:
    one = normalized(
        {**spdx(), "creationInfo": {"created": "now"}, "documentNamespace": "r1"}, "x@" + D, 0
    )
    two = normalized(
        {**spdx(), "creationInfo": {"created": "later"}, "documentNamespace": "r2"}, "x@" + D, 0
    )
    assert one == two and one["creationInfo"]["created"] == "1970-01-01T00:00:00Z"


def test_the_statement_reads_back_as_its_materials_and_matches_its_build() -> None:
    found = materials_of(envelope(statement(HEADER, "a", BUILT, PUBLISHED)))
    assert (found.subject, found.commit, found.base_id, found.signatures) == (D, "c" * 40, E, 0)
    rows = material_verdicts(found, subject=D, commit="c" * 40, rebuilt=BUILT)
    assert [r.state for r in rows] == [State.MATCH] * 6


@pytest.mark.parametrize(
    ("change", "row"),
    [
        ({"build_args": {"CUDA_VERSION": "13.0"}}, "provenance build args"),
        ({"input_digest": E}, "provenance input digest"),
        ({"content": {"digest": D, "parts": {}, "files": 1}}, "provenance content digest"),
        ({"base": {**BUILD["base"], "content_digest": E}}, "provenance base"),
    ],
)
def test_each_material_that_differs_is_drift(change: dict[str, Any], row: str) -> None:
    found = materials_of(envelope(statement(HEADER, "a", BUILT, PUBLISHED)))
    rows = {
        r.name: r.state
        for r in material_verdicts(found, subject=D, commit="c" * 40, rebuilt=BuildRecord.of({**BUILD, **change}))
    }
    assert [name for name, state in rows.items() if state is State.DRIFT] == [row]


def test_another_subject_or_commit_is_drift() -> None:
    found = materials_of(envelope(statement(HEADER, "a", BUILT, PUBLISHED)))
    rows = {
        r.name: r.state for r in material_verdicts(found, subject=E, commit="d" * 40, rebuilt=BUILT)
    }
    assert rows["provenance subject"] is State.DRIFT and rows["provenance commit"] is State.DRIFT


def test_an_envelope_that_is_not_a_provenance_is_refused() -> None:
    good = json.loads(envelope(statement(HEADER, "a", BUILT, PUBLISHED)))
    inner = json.loads(base64.b64decode(good["payload"]))
    bad_payloads = [
        b"not json",
        json.dumps({**good, "payloadType": "text/plain"}).encode(),
        json.dumps({**good, "payload": "!!"}).encode(),
        json.dumps({**good, "signatures": None}).encode(),
        json.dumps(
            {
                **good,
                "payload": base64.b64encode(
                    json.dumps({**inner, "predicateType": "x"}).encode()
                ).decode(),
            }
        ).encode(),
        json.dumps(
            {
                **good,
                "payload": base64.b64encode(json.dumps({**inner, "subject": []}).encode()).decode(),
            }
        ).encode(),
    ]
    for data in bad_payloads:
        with pytest.raises(ProvenanceError):
            materials_of(data)


def test_an_attachment_is_taken_only_for_its_subject_type_and_size() -> None:
    art = artifact_manifest(
        AttachmentKind.SBOM, b"{}", D, 10, "application/vnd.oci.image.manifest.v1+json"
    )
    assert layer_of(art.manifest.data, AttachmentKind.SBOM, D) == (art.layer.digest, 2)
    assert attachment_tag(D, AttachmentKind.SBOM) == "sha256-" + "a" * 64 + ".sbom"
    with pytest.raises(AttachmentError, match="not of image"):
        layer_of(art.manifest.data, AttachmentKind.SBOM, E)
    with pytest.raises(AttachmentError, match="holds no"):
        layer_of(art.manifest.data, AttachmentKind.PROVENANCE, D)
    big = json.loads(art.manifest.data)
    big["layers"][0]["size"] = AttachmentKind.SBOM.limit + 1
    with pytest.raises(AttachmentError, match="more than"):
        layer_of(json.dumps(big).encode(), AttachmentKind.SBOM, D)
    with pytest.raises(AttachmentError, match="too large"):
        layer_of(b" " * 70000, AttachmentKind.SBOM, D)


def test_a_signed_envelope_reads_back_its_signatures_over_the_pae_and_names_the_sbom() -> None:
    from release.core.dsse import EnvelopeError, Signature, open_envelope
    from release.core.provenance import PAYLOAD_TYPE, opened, payload_of

    document = statement(HEADER, "a", BUILT, PUBLISHED, sbom=E)
    data = envelope(document, (Signature("F" * 40, b"\x89sig"),))
    found = opened(data)
    assert found.signatures == (Signature("F" * 40, b"\x89sig"),)
    payload = payload_of(document)
    assert (
        found.signed_bytes
        == b"DSSEv1 28 " + PAYLOAD_TYPE.encode() + b" %d " % len(payload) + payload
    )
    assert materials_of(data).sbom == E and materials_of(data).signatures == 1
    assert materials_of(envelope(statement(HEADER, "a", BUILT, PUBLISHED))).sbom is None
    # a sig that is not base64 is kept as no bytes (which no key verifies); shapes refused
    odd = json.loads(data)
    odd["signatures"][0]["sig"] = "!!"
    assert opened(json.dumps(odd).encode()).signatures[0].sig == b""
    for bad in (b"[]", json.dumps({**odd, "payloadType": 1}).encode(),
                json.dumps({**odd, "signatures": [1]}).encode(),
                json.dumps({**odd, "signatures": [{}] * 17}).encode()):  # fmt: skip
        with pytest.raises(EnvelopeError):
            open_envelope(bad)

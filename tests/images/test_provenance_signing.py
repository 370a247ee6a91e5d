"""Signed provenance, as ``reproduce --image-key`` checks it before anything is built.

An image of one platform is put in Debian's docker-registry on loopback as files (no
engine), with an SBOM and a provenance envelope attached beside it as the tool attaches
them; the envelope is signed here with ``gpg --detach-sign`` over DSSE's PAE spelt out by
hand (not by the code under test). The manifest note records them (``attest``), and a
tester's ``reproduce`` says ``signed by FPR``, ``unsigned`` or ``signature does not
verify``: a statement changed after signing and one signed by another key are refused,
exit 7, before anything is pulled or built; ``--require-signed`` refuses an unsigned one.
No engine answers in those runs: a run past every check stops at the engine (exit 6).
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from release.adapters.registry_artifacts import ArtifactRegistry
from release.adapters.registry_server import LocalRegistry
from release.core.dsse import pae
from release.core.manifest_records import BuildRecord, Manifest, PublishRecord, VariantEntry
from release.core.oci_artifact import AttachmentKind, artifact_manifest, attachment_tag
from release.core.provenance import PREDICATE_TYPE, statement
from release.images.image_signing import ImageSignatureError, ImageTrust
from release.images.provenance_trust import check_provenance
from release.sample import make_sample_engine
from tests.conftest import cut
from tests.engine_support import images
from tests.manifest_support import TAG
from tests.oci_support import Published, published, recorded
from tests.reproduce_support import NO_ENGINE, SNAPSHOT_OPTIONS, faithful, publish, reproduce
from tests.signing_support import Key

SBOM = {"spdxVersion": "SPDX-2.3", "packages": [{"name": "base-files", "versionInfo": "12.4"}]}


def test_pae_is_dsses_encoding() -> None:
    """DSSE's own example (its protocol document): type and body, each after its length."""
    assert pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )
    assert pae("t", b"") == b"DSSEv1 1 t 0 "


def gpg_sign(key: Key, data: bytes, where: Path) -> bytes:
    """A binary detached signature, made by gpg itself."""
    (where / "pae").write_bytes(data)
    subprocess.run(
        ["gpg", "--homedir", str(key.home), "--batch", "--yes", "--local-user", key.fpr,
         "--output", str(where / "pae.sig"), "--detach-sign", str(where / "pae")],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return (where / "pae.sig").read_bytes()


def envelope_of(payload: bytes, signatures: list[tuple[str, bytes]]) -> bytes:
    return json.dumps({
        "payloadType": "application/vnd.in-toto+json",
        "payload": base64.b64encode(payload).decode(),
        "signatures": [{"keyid": k, "sig": base64.b64encode(s).decode()} for k, s in signatures],
    }).encode()  # fmt: skip


def attach(image: Published, kind: AttachmentKind, document: bytes) -> dict[str, str]:
    """``document`` attached to the platform image under cosign's tag; its record."""
    reg = ArtifactRegistry()
    raw = reg.raw(f"{image.repository}@{image.platform}")
    assert raw is not None
    media = json.loads(raw)["mediaType"]
    artifact = artifact_manifest(kind, document, image.platform, len(raw), media)
    ref = f"{image.repository}:{attachment_tag(image.platform, kind)}"
    reg.push_artifact(ref, artifact)
    return {"tag": ref, "digest": artifact.manifest.digest}


def provenance_case(
    case: str, keys: dict[str, Key], image: Published, document: dict[str, Any], where: Path
) -> bytes:
    """The row's envelope, signed (or not, or changed) as ``case`` says."""
    row = document["variants"]["cu130"]
    sbom = json.dumps(SBOM).encode()
    found = statement(
        Manifest.of(document),
        "cu130",
        BuildRecord.of(row["build"]),
        PublishRecord.of(row["publish"]),
        sbom="sha256:" + hashlib.sha256(sbom).hexdigest(),
    )
    payload = json.dumps(found, sort_keys=True, separators=(",", ":")).encode()
    if case == "unsigned":
        return envelope_of(payload, [])
    key = keys["other" if case == "another key" else "maintainer"]
    kind = b"application/vnd.in-toto+json"
    signed = gpg_sign(key, b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload), where)
    if case == "tampered":  # the statement changed after signing: another commit
        found["predicate"]["buildDefinition"]["resolvedDependencies"][0]["digest"]["gitCommit"] = (
            "0" * 40
        )
        payload = json.dumps(found, sort_keys=True, separators=(",", ":")).encode()
    return envelope_of(payload, [(key.fpr, signed)])


def attested_manifest(
    case: str, keys: dict[str, Key], registry: LocalRegistry, tmp_path: Path, repo: Any
) -> dict[str, Any]:
    image = published(
        registry, tmp_path, case.replace(" ", "-"), path=f"prov-{case.replace(' ', '-')}"
    )
    document = faithful(repo, TAG, "0.1.0rc1")
    row = document["variants"]["cu130"]
    row["publish"] = recorded(image) | {"image_id": row["build"]["image_id"]}
    sbom = attach(image, AttachmentKind.SBOM, json.dumps(SBOM).encode())
    envelope = provenance_case(case, keys, image, document, tmp_path)
    provenance = attach(image, AttachmentKind.PROVENANCE, envelope)
    row["attest"] = {
        "image_id": row["build"]["image_id"],
        "subject": image.platform,
        "sbom": {**sbom, "media_type": "application/spdx+json", "packages": 1, "tool": "syft"},
        "provenance": {
            **provenance,
            "predicate_type": PREDICATE_TYPE,
            "signed": case != "unsigned",
        },
    }
    return document


@images
@pytest.mark.parametrize("case", ["signed", "unsigned", "tampered", "another key"])
def test_reproduce_verifies_the_provenance_signature_before_building(
    case: str, keys: dict[str, Key], registry: LocalRegistry, tmp_path: Path
) -> None:
    engine = cut(make_sample_engine(tmp_path / "maintainer"))
    engine.repo.run("tag", "-a", TAG, "-m", TAG)
    document = attested_manifest(case, keys, registry, tmp_path, engine.repo)
    publish(engine, TAG, json.dumps(document, indent=2) + "\n")
    tester = tmp_path / "tester"
    subprocess.run(["git", "clone", "--quiet", str(engine.remote), str(tester)], check=True)
    store = tmp_path / "store"  # no image signatures: the images say unsigned
    store.mkdir()
    result, _ = reproduce(
        tester, tmp_path, TAG, "--allow-host", SNAPSHOT_OPTIONS,
        "--image-key", str(keys["maintainer"].public), "--image-signatures", str(store),
        env=NO_ENGINE,
    )  # fmt: skip
    said = result.stdout + result.stderr
    fpr = keys["maintainer"].fpr
    if case == "signed":
        assert f"provenance cu130: signed by {fpr}" in said, said
        assert result.code == 6, said  # past every check: the engine that is not there
        return
    if case == "unsigned":
        assert "provenance cu130: unsigned" in said, said
        assert result.code == 6, said
        return
    assert result.code == 7, said
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: provenance cu130: signature does not verify"), said
    assert "nothing was pulled or built" in last
    why = "changed after signing" if case == "tampered" else "its key is not the one in"
    assert why in last, last
    assert f"signed by {fpr}" not in said


@images
def test_require_signed_refuses_an_unsigned_provenance(
    keys: dict[str, Key], registry: LocalRegistry, tmp_path: Path
) -> None:
    engine = cut(make_sample_engine(tmp_path / "maintainer"))
    engine.repo.run("tag", "-a", TAG, "-m", TAG)
    found = attested_manifest("unsigned", keys, registry, tmp_path, engine.repo)["variants"]
    rows = {row: VariantEntry.of(entry) for row, entry in found.items()}
    said: list[str] = []
    trust = ImageTrust(keys["maintainer"].public, str(tmp_path), require_signed=False)
    checks = check_provenance(rows, trust, said.append)
    assert [c.state.value for c in checks.values()] == ["unsigned"]
    with pytest.raises(ImageSignatureError, match="provenance cu130: unsigned"):
        check_provenance(
            rows, ImageTrust(trust.key_file, str(tmp_path), require_signed=True), print
        )


@images
def test_the_sbom_the_signed_statement_names_is_compared_with_the_sbom_attached(
    keys: dict[str, Key], registry: LocalRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``provenance SBOM``: a match where the statement names the SBOM attached; drift
    where the SBOM attached is another (an SBOM replaced after signing); the signature row
    says who signed only as checked before building. No engine: the package rows say
    not compared."""
    from release.core.image_signing import ImageCheck
    from release.core.image_signing import ImageSignatureState as Signed
    from release.core.verdict import State
    from release.images.attest_check import attestation_verdicts

    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE["DOCKER_HOST"])
    engine = cut(make_sample_engine(tmp_path / "maintainer"))
    engine.repo.run("tag", "-a", TAG, "-m", TAG)
    row = attested_manifest("signed", keys, registry, tmp_path, engine.repo)["variants"]["cu130"]
    checked = ImageCheck(
        "cu130", "x", Signed.SIGNED, signer=keys["maintainer"].fpr, kind="provenance"
    )
    rows = {
        r.name: r
        for r in attestation_verdicts(
            VariantEntry.of(row), BuildRecord.of(row["build"]), commit=str(engine.repo.rev(TAG)), rebuilt_image="sha256:" + "0" * 64,
            signature=checked,
        )
    }  # fmt: skip
    assert rows["provenance SBOM"].state is State.MATCH
    assert rows["provenance signature"].state is State.MATCH
    assert rows["SBOM packages"].state is State.NOT_COMPARED  # syft has no engine here
    # another SBOM attached in its place: not the one the signed statement names
    image_repo = row["attest"]["sbom"]["tag"].rsplit(":", 1)[0]
    other = json.dumps({**SBOM, "packages": []}).encode()
    image = Published(
        image_repo, row["publish"]["digest"], row["publish"]["index"]["digest"], "", ()
    )
    row["attest"]["sbom"] |= attach(image, AttachmentKind.SBOM, other)
    unchecked = {
        r.name: r
        for r in attestation_verdicts(
            VariantEntry.of(row),
            BuildRecord.of(row["build"]),
            commit=str(engine.repo.rev(TAG)),
            rebuilt_image="sha256:" + "0" * 64,
        )
    }
    assert unchecked["provenance SBOM"].state is State.DRIFT, unchecked
    assert "the SBOM attached is" in unchecked["provenance SBOM"].differences[0]
    assert unchecked["provenance signature"].state is State.NOT_COMPARED  # no key given

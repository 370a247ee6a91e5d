"""``release images.attest`` against a real registry (Debian's docker-registry on loopback,
read back with skopeo), a real engine and the real syft: an engine's image built,
published, then its SBOM and provenance attached as OCI artifacts under cosign's tags,
read back raw, their digests in the manifest; reproduce's comparison of a rebuild with
them (a changed package is SBOM drift, a changed material is provenance drift); a run
killed between the two attachments finished by the next; a tag that holds something else
refused before anything is pushed; a dry run that pushes nothing."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from release.adapters.engine import ContainerEngine
from release.adapters.registry_server import LocalRegistry
from release.core.manifest_records import BuildRecord, VariantEntry
from release.core.verdict import FieldVerdict, State
from release.images.attest_check import attestation_verdicts
from tests.conftest import repo_state
from tests.engine_support import BASE_1291, Repo, built_engine, images
from tests.registry_support import stopping_skopeo
from tests.signing_support import Key

VERSION = "v0.1.0"


@pytest.fixture(scope="module")
def one_variant_built(
    docker: ContainerEngine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Repo]:
    """An engine of one variant for this engine's platform, built."""
    variants = [{"id": "a", "cuda": "12.9.1", "base-image": BASE_1291, "build-args": {"A": "1"}}]
    with built_engine(docker, tmp_path_factory, "attest", variants) as repo:
        yield repo


def publish(repo: Repo, at: str) -> None:
    for path in repo.state.rglob("*.publish.json"):
        path.unlink()
    for path in repo.state.rglob("*.attest.json"):
        path.unlink()
    result = repo.release("images.publish", "--registry", at)
    assert result.code == 0, result.output


@pytest.fixture(scope="module")
def attested(one_variant_built: Repo, registry: LocalRegistry) -> Repo:
    publish(one_variant_built, f"{registry.address}/attested")
    result = one_variant_built.release("images.attest", "--json")
    assert result.code == 0, result.output
    return one_variant_built


def raw(ref: str) -> bytes | None:
    found = subprocess.run(
        ["skopeo", "inspect", "--raw", "--tls-verify=false", f"docker://{ref}"],
        capture_output=True, check=False, timeout=60,
    )  # fmt: skip
    if found.returncode != 0:
        assert b"manifest unknown" in found.stderr.lower(), found.stderr
        return None
    return found.stdout


def blob(registry: LocalRegistry, repository: str, digest: str) -> bytes:
    """A blob read straight from the registry's HTTP API, not through the code under test."""
    path = repository.split("/", 1)[1]
    with urllib.request.urlopen(f"http://{registry.address}/v2/{path}/blobs/{digest}") as r:
        data: bytes = r.read()
    assert "sha256:" + hashlib.sha256(data).hexdigest() == digest
    return data


def part(repo: Repo, name: str) -> dict[str, Any]:
    found = list(repo.state.rglob(f"a.{name}.json"))
    assert len(found) == 1, found
    return dict(json.loads(found[0].read_text())["data"])


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@images
def test_sbom_and_provenance_are_attached_read_back_and_recorded(
    attested: Repo, registry: LocalRegistry, docker: ContainerEngine
) -> None:
    published, recorded, build = (
        part(attested, "publish"),
        part(attested, "attest"),
        part(attested, "build"),
    )
    subject = published["digest"]
    repository = published["tags"][0].rsplit(":", 1)[0]
    hexdigest = subject.split(":")[1]
    sbom_manifest = raw(f"{repository}:sha256-{hexdigest}.sbom")
    att_manifest = raw(f"{repository}:sha256-{hexdigest}.att")
    assert sbom_manifest is not None and att_manifest is not None
    # the digests in the manifest are those of what the registry serves under the tags
    assert recorded["subject"] == subject
    assert recorded["sbom"]["digest"] == sha(sbom_manifest)
    assert recorded["provenance"]["digest"] == sha(att_manifest)
    assert recorded["provenance"]["signed"] is False
    # referrers-style manifests: subject is the platform image
    for manifest, kind in ((sbom_manifest, "application/spdx+json"),
                           (att_manifest, "application/vnd.dsse.envelope.v1+json")):  # fmt: skip
        document = json.loads(manifest)
        assert document["subject"]["digest"] == subject
        assert document["artifactType"] == kind
        assert [layer["mediaType"] for layer in document["layers"]] == [kind]
    # Distribution 2.8 has no referrers API: the tags are what a reader finds
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(
            f"http://{registry.address}/v2/{repository.split('/', 1)[1]}/referrers/{subject}"
        )
    assert err.value.code == 404
    # the SBOM: syft's SPDX, its package count recorded
    sbom = json.loads(blob(registry, repository, json.loads(sbom_manifest)["layers"][0]["digest"]))
    assert sbom["spdxVersion"].startswith("SPDX-")
    named = [p for p in sbom["packages"] if p.get("primaryPackagePurpose") != "CONTAINER"]
    assert recorded["sbom"]["packages"] == len({(p["name"]) for p in named}) > 10
    assert any(p["name"] == "base-files" for p in named)
    # the provenance: an unsigned DSSE envelope holding the build's materials and the SBOM's digest
    envelope = json.loads(
        blob(registry, repository, json.loads(att_manifest)["layers"][0]["digest"])
    )
    assert (
        envelope["payloadType"] == "application/vnd.in-toto+json" and envelope["signatures"] == []
    )
    statement = json.loads(base64.b64decode(envelope["payload"]))
    assert statement["subject"][0]["digest"] == {"sha256": hexdigest}
    definition = statement["predicate"]["buildDefinition"]
    deps = {d["name"]: d for d in definition["resolvedDependencies"]}
    assert deps["source"]["digest"] == {"gitCommit": attested.head}
    assert deps["base"]["digest"] == {"sha256": build["base"]["id"].split(":")[1]}
    assert definition["externalParameters"]["build_args"] == build["build_args"]
    assert definition["externalParameters"]["build_args"]["A"] == "1"
    byproducts = {
        b["name"]: b["digest"]["sha256"] for b in statement["predicate"]["runDetails"]["byproducts"]
    }
    assert byproducts["input_digest"] == build["input_digest"].split(":")[1]
    assert byproducts["sbom"] == json.loads(sbom_manifest)["layers"][0]["digest"].split(":")[1]
    # the merged manifest carries the attest part
    merged = attested.release("manifest", "--partial", "--json")
    assert merged.code == 0, merged.output
    assert json.loads(merged.stdout)["variants"]["a"]["attest"] == recorded
    # again: all there, nothing pushed, the registry as it was
    traffic = registry.traffic()
    again = attested.release("images.attest")
    assert again.code == 0, again.output
    assert "attached already" in again.output and "attached sha256" not in again.output
    assert registry.traffic().manifests_written == traffic.manifests_written


def rebuilt_of(repo: Repo) -> dict[str, Any]:
    return part(repo, "build")


def verdicts_of(row: dict[str, Any], build: dict[str, Any], **given: Any) -> list[FieldVerdict]:
    """``attestation_verdicts`` of a manifest row and a build part written as documents
    (each read as the manifest's codec reads it)."""
    return attestation_verdicts(VariantEntry.of(row), BuildRecord.of(build), **given)


@images
def test_a_rebuild_of_the_same_image_matches_its_attachments(attested: Repo) -> None:
    build = part(attested, "build")
    manifest_row = {"publish": part(attested, "publish"), "attest": part(attested, "attest")}
    rows = verdicts_of(manifest_row, build, commit=attested.head, rebuilt_image=build["image_id"])
    states = {row.name: row.state for row in rows}
    assert states == {
        "provenance subject": State.MATCH,
        "provenance commit": State.MATCH,
        "provenance base": State.MATCH,
        "provenance build args": State.MATCH,
        "provenance input digest": State.MATCH,
        "provenance content digest": State.MATCH,
        "provenance SBOM": State.MATCH,  # the statement names the SBOM attached
        "provenance signature": State.NOT_COMPARED,  # unsigned: never a match
        "SBOM packages": State.MATCH,
    }, rows


@images
def test_a_changed_package_is_sbom_drift_naming_it(
    attested: Repo, docker: ContainerEngine, tmp_path: Path
) -> None:
    """The rebuild has base-files at another version: the SBOM row names it, old -> new."""
    build = part(attested, "build")
    (tmp_path / "Dockerfile").write_text(
        f"FROM {build['image_id']}\n"
        "RUN sed -i '/^Package: base-files$/,/^$/ s/^Version: .*/Version: 99.9-changed/' "
        "/var/lib/dpkg/status\n"
    )
    changed = f"{attested.name}-changed:1"
    docker.run(["build", "--quiet", "-t", changed, str(tmp_path)], timeout=300)
    try:
        manifest_row = {"publish": part(attested, "publish"), "attest": part(attested, "attest")}
        rows = {
            row.name: row
            for row in verdicts_of(manifest_row, build, commit=attested.head, rebuilt_image=changed)
        }
    finally:
        docker.remove_image(changed)
    sbom = rows["SBOM packages"]
    assert sbom.state is State.DRIFT
    assert len(sbom.differences) == 1, sbom.differences
    assert sbom.differences[0].startswith("~ deb:base-files ")
    assert sbom.differences[0].endswith(" -> 99.9-changed")


@images
def test_a_changed_material_is_provenance_drift(attested: Repo) -> None:
    build = part(attested, "build")
    manifest_row = {"publish": part(attested, "publish"), "attest": part(attested, "attest")}
    other = {
        **build,
        "build_args": {**build["build_args"], "A": "2"},
        "input_digest": "sha256:" + "0" * 64,
    }
    rows = {
        row.name: row
        for row in verdicts_of(
            manifest_row, other, commit="1" * 40, rebuilt_image=build["image_id"]
        )
    }
    assert rows["provenance build args"].state is State.DRIFT
    assert rows["provenance build args"].differences == ("~ A 1 -> 2",)
    assert rows["provenance input digest"].state is State.DRIFT
    assert rows["provenance commit"].state is State.DRIFT
    assert "1111111111" in rows["provenance commit"].differences[0]
    assert rows["provenance base"].state is State.MATCH
    # an attachment the manifest does not record (another digest) is drift, never a match
    forged = {
        **manifest_row["attest"],
        "provenance": {
            **manifest_row["attest"]["provenance"],
            "digest": manifest_row["attest"]["sbom"]["digest"],
        },
    }
    rows2 = verdicts_of(
        {**manifest_row, "attest": forged},
        build,
        commit=attested.head,
        rebuilt_image=build["image_id"],
    )
    assert [(r.name, r.state) for r in rows2 if r.name == "provenance"] == [
        ("provenance", State.DRIFT)
    ]


@images
def test_an_attach_killed_between_the_two_attachments_is_finished_by_the_next(
    one_variant_built: Repo, registry: LocalRegistry, tmp_path: Path
) -> None:
    at = f"{registry.address}/killed"
    publish(one_variant_built, at)
    subject = part(one_variant_built, "publish")["digest"]
    repository = part(one_variant_built, "publish")["tags"][0].rsplit(":", 1)[0]
    tags = {k: f"{repository}:sha256-{subject.split(':')[1]}.{k}" for k in ("sbom", "att")}
    proc = subprocess.run(
        [sys.executable, "-m", "release", "images.attest"],
        cwd=one_variant_built.root,
        env={**os.environ, **one_variant_built.env,
             "RELEASE_SKOPEO": str(stopping_skopeo(tmp_path, ("copy", "oci:"), 2, signal.SIGKILL))},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stdout, proc.stderr)
    # the SBOM is attached first, then the provenance that names it: stopped in between
    assert raw(tags["sbom"]) is not None and raw(tags["att"]) is None
    assert not list(one_variant_built.state.rglob("a.attest.json"))  # nothing recorded
    sbom_before = raw(tags["sbom"])
    again = one_variant_built.release("images.attest")
    assert again.code == 0, again.output
    assert f"{tags['sbom']} is there" in again.output  # kept, not made again
    recorded = part(one_variant_built, "attest")
    assert recorded["sbom"]["digest"] == sha(sbom_before or b"")
    assert recorded["provenance"]["digest"] == sha(raw(tags["att"]) or b"")
    # the provenance names the SBOM kept: its document's digest
    envelope = json.loads(
        blob(registry, repository, json.loads(raw(tags["att"]) or b"")["layers"][0]["digest"])
    )
    named = {
        b["name"]: b["digest"]["sha256"]
        for b in json.loads(base64.b64decode(envelope["payload"]))["predicate"]["runDetails"][
            "byproducts"
        ]
    }
    assert named["sbom"] == json.loads(sbom_before or b"")["layers"][0]["digest"].split(":")[1]


@images
def test_a_tag_that_holds_something_else_is_refused_and_nothing_is_pushed(
    one_variant_built: Repo, registry: LocalRegistry, tmp_path: Path
) -> None:
    from tests.oci_support import copy_in, oci_layout

    at = f"{registry.address}/taken"
    publish(one_variant_built, at)
    subject = part(one_variant_built, "publish")["digest"]
    repository = part(one_variant_built, "publish")["tags"][0].rsplit(":", 1)[0]
    # someone else's image under the provenance's tag
    oci_layout(tmp_path / "other", ["linux/amd64"], "not an attestation")
    att = f"{repository}:sha256-{subject.split(':')[1]}.att"
    copy_in(tmp_path / "other", "amd64", att)
    before = (raw(att), raw(f"{repository}:sha256-{subject.split(':')[1]}.sbom"))
    files = repo_state(one_variant_built.root)
    result = one_variant_built.release("images.attest")
    assert result.code == 3, result.output
    assert "is not overwritten" in result.output
    assert (raw(att), raw(f"{repository}:sha256-{subject.split(':')[1]}.sbom")) == before
    assert before[1] is None
    assert repo_state(one_variant_built.root) == files
    assert not list(one_variant_built.state.rglob("a.attest.json"))
    # a dry run elsewhere says what it would attach and pushes nothing
    at2 = f"{registry.address}/dry"
    publish(one_variant_built, at2)
    subject2 = part(one_variant_built, "publish")["digest"]
    dry = one_variant_built.release("images.attest", "--dry-run")
    assert dry.code == 0, dry.output
    assert dry.output.count("would attach") == 2
    repo2 = part(one_variant_built, "publish")["tags"][0].rsplit(":", 1)[0]
    assert raw(f"{repo2}:sha256-{subject2.split(':')[1]}.sbom") is None
    assert not list(one_variant_built.state.rglob("a.attest.json"))


def gpg_verifies(public: Path, data: bytes, signature: bytes, where: Path) -> str:
    """gpg itself, in a keyring of just ``public``: the signer's fingerprint, else ''."""
    home = where / "verify-home"
    home.mkdir(mode=0o700, parents=True)
    gpg = ["gpg", "--homedir", str(home), "--batch", "--no-autostart"]
    subprocess.run([*gpg, "--import", str(public)], capture_output=True, check=False)
    (where / "data").write_bytes(data)
    (where / "data.sig").write_bytes(signature)
    found = subprocess.run(
        [*gpg, "--status-fd", "1", "--verify", str(where / "data.sig"), str(where / "data")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    valid = [line.split() for line in found.stdout.splitlines() if " VALIDSIG " in line]
    return valid[0][-1] if found.returncode == 0 and valid else ""


@images
def test_a_provenance_signed_by_the_image_key_verifies_with_gpg_and_names_the_sbom(
    one_variant_built: Repo, registry: LocalRegistry, keys: dict[str, Key], tmp_path: Path
) -> None:
    from release.core.image_signing import ImageCheck
    from release.core.image_signing import ImageSignatureState as Signed

    publish(one_variant_built, f"{registry.address}/signed")
    maintainer, other = keys["maintainer"], keys["other"]
    # a key this GnuPG holds no secret half of: refused before anything is pushed
    refused = one_variant_built.release(
        "images.attest", "--sign-with", other.fpr, GNUPGHOME=str(maintainer.home)
    )
    assert refused.code == 2 and "no secret key" in refused.output, refused.output
    assert not list(one_variant_built.state.rglob("a.attest.json"))
    result = one_variant_built.release(
        "images.attest",
        "--json",
        RELEASE_IMAGE_SIGNING_KEY=maintainer.fpr,
        GNUPGHOME=str(maintainer.home),
    )
    assert result.code == 0, result.output
    assert json.loads(result.stdout)["images"][0]["provenance"]["signed_by"] == maintainer.fpr
    recorded, published = part(one_variant_built, "attest"), part(one_variant_built, "publish")
    assert (recorded["provenance"]["signed"], recorded["provenance"]["signed_by"]) == (
        True,
        maintainer.fpr,
    )
    repository = published["tags"][0].rsplit(":", 1)[0]
    att = raw(f"{repository}@{recorded['provenance']['digest']}") or b""
    envelope = json.loads(blob(registry, repository, json.loads(att)["layers"][0]["digest"]))
    payload = base64.b64decode(envelope["payload"])
    [signature] = envelope["signatures"]
    assert signature["keyid"] == maintainer.fpr
    kind = envelope["payloadType"].encode()
    spelt = b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)  # DSSE's PAE
    sig = base64.b64decode(signature["sig"])
    assert gpg_verifies(maintainer.public, spelt, sig, tmp_path / "good") == maintainer.fpr
    # the signature covers the statement, and the statement names the SBOM attached
    assert (
        gpg_verifies(
            maintainer.public, spelt.replace(b"gitCommit", b"gitCommiT"), sig, tmp_path / "bad"
        )
        == ""
    )
    assert gpg_verifies(other.public, spelt, sig, tmp_path / "good2") == ""
    sbom = raw(f"{repository}@{recorded['sbom']['digest']}") or b""
    byproducts = {
        b["name"]: b["digest"]["sha256"]
        for b in json.loads(payload)["predicate"]["runDetails"]["byproducts"]
    }
    assert byproducts["sbom"] == json.loads(sbom)["layers"][0]["digest"].split(":")[1]
    # reproduce's rows: the signature as checked before building, the SBOM it names
    build = part(one_variant_built, "build")
    checked = ImageCheck("a", "x", Signed.SIGNED, signer=maintainer.fpr, kind="provenance")
    rows = {
        r.name: r
        for r in verdicts_of(
            {"publish": published, "attest": recorded}, build, commit=one_variant_built.head,
            rebuilt_image=build["image_id"], signature=checked,
        )
    }  # fmt: skip
    assert rows["provenance signature"].state is State.MATCH
    assert rows["provenance signature"].differences == (f"signed by {maintainer.fpr}",)
    assert rows["provenance SBOM"].state is State.MATCH

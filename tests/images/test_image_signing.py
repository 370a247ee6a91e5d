"""Signed images: the simple signing that skopeo verifies, made by the tool and checked by
skopeo as an independent client (a ``policy.json`` written here, not the tool's).

A one-layer image per platform and an index are made as files and copied into Debian's
docker-registry on loopback (no engine needed); the maintainer's and another key are made
in temporary GnuPG homes. The tool signs them into a lookaside store; skopeo with a
``signedBy`` policy accepts the signed image and refuses an unsigned one, one signed by
another key and one whose signature was changed. A signing run killed part way converges
on the next. ``reproduce --image-key`` says the same and refuses, exit 7, before anything
is pulled or built (no engine is reachable in those runs: anything built would fail
otherwise)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from release.adapters.image_signatures import ImageSigner, ImageVerifier
from release.adapters.registry_server import LocalRegistry
from release.core.image_signing import (
    ImageSignatureState,
    fingerprint,
    policy_document,
    registries_d,
    signature_dir,
)
from release.core.manifest_records import Index, PublishRecord, VariantEntry
from release.errors import UsageError
from release.images.image_signing import (
    ImageSignatureError,
    ImageTrust,
    check_published,
    image_signing,
    image_trust,
)
from release.sample import SampleEngine, make_sample_engine
from tests.conftest import cut
from tests.engine_support import images
from tests.manifest_support import TAG
from tests.oci_support import Published, published, recorded
from tests.reproduce_support import NO_ENGINE, faithful, publish, reproduce
from tests.signing_support import Key, signature_files, skopeo_accepts


def signer(key: Key, store: Path, monkeypatch: pytest.MonkeyPatch) -> ImageSigner:
    monkeypatch.setenv("GNUPGHOME", str(key.home))
    return ImageSigner(key.fpr, store)


def sign_all(image: Published, key: Key, store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As ``images.publish --sign-with`` signs a variant."""
    made = signer(key, store, monkeypatch)
    made.sign(image.repository, image.platform, (image.platform_tag, *image.index_tags))
    made.sign(image.repository, image.index, image.index_tags)


def blob_reads(registry: LocalRegistry) -> int:
    """The blobs (layers, configs) the registry has been asked for so far."""
    text = registry.log.read_text(errors="replace")
    return len(re.findall(r'"GET /v2/\S+/blobs/sha256:', text))


# -- the rules, pure ----------------------------------------------------------------


def test_a_signing_key_is_named_by_its_full_fingerprint_only() -> None:
    fpr = "0123456789abcdef0123456789ABCDEF01234567"
    assert fingerprint(fpr) == fpr.upper()
    assert fingerprint("0123 4567 89AB CDEF 0123  4567 89AB CDEF 0123 4567") == fpr.upper()
    for bad in ("89ABCDEF01234567", "maintainer@example.invalid", fpr + "0", "--output=/x", ""):
        with pytest.raises(UsageError, match="full fingerprint"):
            fingerprint(bad)


def test_a_signatures_place_in_the_store_is_the_repository_path_and_digest() -> None:
    digest = "sha256:" + "ab" * 32
    assert signature_dir("127.0.0.1:5000/rel/x", digest) == f"rel/x@sha256={'ab' * 32}"
    for repository, bad in (
        ("127.0.0.1:5000/../x", digest),
        ("h/x", "sha256:zz"),
        ("h/x", "latest"),
    ):
        with pytest.raises(ValueError):
            signature_dir(repository, bad)


def test_the_documents_a_client_reads_quote_every_value() -> None:
    text = registries_d("h:5000/a b", "file:///s\ndefault-docker: {}")
    assert text.count("\n") == 3 and "default-docker: {}" not in text.splitlines()
    document = policy_document("h:5000/r", "/k.pub")
    assert document["default"] == [{"type": "reject"}]


def test_signing_options_are_refused_before_anything_runs(tmp_path: Path) -> None:
    fpr = "A" * 40
    assert image_signing(None, None, {}) is None
    with pytest.raises(UsageError, match="name the key"):
        image_signing(None, str(tmp_path), {})
    with pytest.raises(UsageError, match="needs a store"):
        image_signing(fpr, None, {})
    with pytest.raises(UsageError, match="is not a directory"):
        image_signing(fpr, str(tmp_path / "missing"), {})
    (tmp_path / "link").symlink_to(tmp_path)
    with pytest.raises(UsageError, match="is not a directory"):
        image_signing(fpr, str(tmp_path / "link"), {})
    with pytest.raises(UsageError, match="full fingerprint"):
        image_signing(None, str(tmp_path), {"RELEASE_IMAGE_SIGNING_KEY": "me"})


def test_a_signing_key_this_gnupg_does_not_hold_is_refused_before_publishing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("gpg") is None:
        pytest.skip("no gpg here (Debian package gpg)")
    home = tmp_path / "empty"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("GNUPGHOME", str(home))
    with pytest.raises(UsageError, match="no secret key"):
        image_signing("B" * 40, str(tmp_path), {})


def test_the_testers_key_is_their_own_file(tmp_path: Path, cut_engine: SampleEngine) -> None:
    inside = cut_engine.root / "keys.pub"
    inside.write_text("x")
    with pytest.raises(UsageError, match="work tree"):
        image_trust(cut_engine.root, str(inside), "file:///s")
    outside = tmp_path / "k.pub"
    outside.write_text("x")
    with pytest.raises(UsageError, match="--image-signatures"):
        image_trust(cut_engine.root, str(outside), None)
    with pytest.raises(UsageError, match="--image-key"):
        image_trust(cut_engine.root, None, "file:///s")
    with pytest.raises(UsageError, match="is not a file"):
        image_trust(cut_engine.root, str(tmp_path), "file:///s")
    assert image_trust(cut_engine.root, str(outside), "file:///s") is not None


# -- signed, and checked by skopeo's policy -----------------------------------------


@images
def test_skopeo_accepts_the_signed_image_and_refuses_unsigned_another_key_or_changed(
    keys: dict[str, Key], registry: LocalRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    signed = published(registry, tmp_path, "signed")
    sign_all(signed, keys["maintainer"], store, monkeypatch)
    public = keys["maintainer"].public
    # by digest, by its own tag and by the index tag a pull resolves through
    for ref in (f"{signed.repository}@{signed.platform}", signed.platform_tag, *signed.index_tags):
        ok, said = skopeo_accepts(ref, public, store, tmp_path)
        assert ok, (ref, said)
    # every signature is a whole file where a reader looks, nothing else is in the store
    there = signature_files(store)
    assert sorted(there) == sorted(
        [f"{signature_dir(signed.repository, signed.platform)}/signature-{n}" for n in (1, 2, 3)]
        + [f"{signature_dir(signed.repository, signed.index)}/signature-{n}" for n in (1, 2)]
    )
    # unsigned
    unsigned = published(registry, tmp_path, "unsigned")
    ok, said = skopeo_accepts(unsigned.platform_tag, public, store, tmp_path)
    assert not ok and "no signature exists" in said
    # signed by another key, in the maintainer's place
    resigned = published(registry, tmp_path, "resigned")
    sign_all(resigned, keys["other"], store, monkeypatch)
    ok, said = skopeo_accepts(resigned.platform_tag, public, store, tmp_path)
    assert not ok and "rejected" in said, said
    assert skopeo_accepts(resigned.platform_tag, keys["other"].public, store, tmp_path)[0]
    # a signature changed after signing
    changed = published(registry, tmp_path, "changed")
    sign_all(changed, keys["maintainer"], store, monkeypatch)
    for path in (store / signature_dir(changed.repository, changed.platform)).iterdir():
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0x01
        path.write_bytes(bytes(data))
    ok, said = skopeo_accepts(changed.platform_tag, public, store, tmp_path)
    assert not ok and "rejected" in said, said
    # the tool's own check says the same, index included, and reads no layer or config
    monkeypatch.delenv("GNUPGHOME")
    blobs_read = blob_reads(registry)
    with ImageVerifier(public, str(store)) as verifier:
        states = {
            name: (
                verifier.check(name, image.repository, image.platform, (image.platform_tag,), index=False).state,
                verifier.check(name, image.repository, image.index, image.index_tags, index=True).state,
            )
            for name, image in (("signed", signed), ("unsigned", unsigned), ("resigned", resigned), ("changed", changed))
        }  # fmt: skip
    assert states == {
        "signed": (ImageSignatureState.SIGNED, ImageSignatureState.SIGNED),
        "unsigned": (ImageSignatureState.UNSIGNED, ImageSignatureState.UNSIGNED),
        "resigned": (ImageSignatureState.BAD, ImageSignatureState.BAD),
        "changed": (
            ImageSignatureState.BAD,
            ImageSignatureState.SIGNED,
        ),  # only the platform image's were changed
    }
    assert blob_reads(registry) == blobs_read
    # an unsigned image is said, and refused where the tester requires signatures
    rows = {"cu130": VariantEntry(publish=PublishRecord(
        registry=registry.address, platform="linux/amd64", image_id=unsigned.platform,
        digest=unsigned.platform, tags=(unsigned.platform_tag,),
        index=Index(unsigned.index, tuple(unsigned.index_tags)),
    ))}  # fmt: skip
    said: list[str] = []
    checks = check_published(rows, ImageTrust(public, str(store)), said.append)
    assert [c.state for c in checks] == [
        ImageSignatureState.UNSIGNED,
        ImageSignatureState.UNSIGNED,
    ] and len(said) == 2
    with pytest.raises(ImageSignatureError, match="image cu130: unsigned"):
        check_published(rows, ImageTrust(public, str(store), require_signed=True), print)


@images
def test_a_final_verifies_by_the_rcs_signatures_of_its_repository_only(
    keys: dict[str, Key], registry: LocalRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """promote gives the final's tags the rc's digests: its index verifies by a signature
    made for the rc's tag, in the same repository; one made for another repository's name
    does not count."""
    store = tmp_path / "store"
    store.mkdir()
    rc = published(registry, tmp_path, "final")
    made = signer(keys["maintainer"], store, monkeypatch)
    made.sign(rc.repository, rc.index, rc.index_tags)
    elsewhere = published(registry, tmp_path, "elsewhere", path="other")
    # signed, by the same key, as if it were this repository's rc
    made.sign(elsewhere.repository, elsewhere.index, (f"{rc.repository}:{TAG}",))
    final_tags = (f"{rc.repository}:v0.1.0",)
    monkeypatch.delenv("GNUPGHOME")
    with ImageVerifier(keys["maintainer"].public, str(store)) as verifier:
        final = verifier.check("final", rc.repository, rc.index, final_tags, index=True)
        assert (final.state, final.signer) == (ImageSignatureState.SIGNED, keys["maintainer"].fpr)
        other = (f"{elsewhere.repository}:v0.1.0",)
        assert (
            verifier.check("o", elsewhere.repository, elsewhere.index, other, index=True).state
            is ImageSignatureState.BAD
        )
    assert (store / signature_dir(elsewhere.repository, elsewhere.index) / "signature-1").is_file()


@images
def test_a_signing_run_killed_part_way_is_finished_by_the_next(
    keys: dict[str, Key], registry: LocalRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """skopeo standalone-sign is stopped by SIGKILL to the signing process at its second
    signature; the re-run ends with the signatures an uninterrupted run makes, and a run
    after that writes none."""
    image = published(registry, tmp_path, "killed")
    key = keys["maintainer"]
    wrapper = tmp_path / "skopeo"
    count = tmp_path / "signed"
    wrapper.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = standalone-sign ]; then\n'
        f"  echo x >> {count}\n"
        f'  if [ "$(wc -l < {count})" -ge 2 ] && [ -e {tmp_path}/kill ]; then kill -9 $PPID; sleep 5; fi\n'
        "fi\n"
        'exec skopeo "$@"\n'
    )
    wrapper.chmod(0o755)
    (tmp_path / "kill").touch()
    store = tmp_path / "store"
    store.mkdir()
    script = (
        "import sys\n"
        "from release.adapters.image_signatures import ImageSigner\n"
        f"s = ImageSigner({key.fpr!r}, __import__('pathlib').Path({str(store)!r}))\n"
        f"s.sign({image.repository!r}, {image.platform!r}, {(image.platform_tag, *image.index_tags)!r})\n"
        f"s.sign({image.repository!r}, {image.index!r}, {image.index_tags!r})\n"
    )
    env = {**os.environ, "GNUPGHOME": str(key.home), "RELEASE_SKOPEO": str(wrapper)}
    killed = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, timeout=120
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    partial = signature_files(store)
    assert [p.rsplit("/", 1)[1] for p in partial if "signature-" in p] == ["signature-1"]
    (tmp_path / "kill").unlink()
    again = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, timeout=120
    )
    assert again.returncode == 0, again.stderr
    done = signature_files(store)
    signatures = [p for p in done if p.rsplit("/", 1)[1].startswith("signature-")]
    assert len(signatures) == 5 == len(done)  # whole signatures only, none twice
    assert all(done[path] == data for path, data in partial.items())  # kept as they were
    signs = count.read_text().count("x")
    third = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, timeout=120
    )
    assert third.returncode == 0 and signature_files(store) == done
    assert count.read_text().count("x") == signs  # nothing signed again
    for ref in (image.platform_tag, *image.index_tags):
        assert skopeo_accepts(ref, key.public, store, tmp_path)[0]


# -- reproduce: the tester's key, before anything is pulled or built ----------------


@images
@pytest.mark.parametrize("case", ["signed", "unsigned", "resigned", "changed"])
def test_reproduce_checks_the_images_against_the_testers_key_before_building(
    case: str,
    keys: dict[str, Key],
    registry: LocalRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    image = published(registry, tmp_path, case, path=f"rel-{case}")  # a repository of its own
    if case != "unsigned":
        sign_all(image, keys["other" if case == "resigned" else "maintainer"], store, monkeypatch)
    if case == "changed":
        for path in (store / signature_dir(image.repository, image.index)).iterdir():
            data = bytearray(path.read_bytes())
            data[len(data) // 2] ^= 0x01
            path.write_bytes(bytes(data))

    engine = cut(make_sample_engine(tmp_path / "maintainer"))
    engine.repo.run("tag", "-a", TAG, "-m", TAG)
    document = faithful(engine.repo, TAG, "0.1.0rc1")
    row = document["variants"]["cu130"]
    row["publish"] = recorded(image) | {"image_id": row["build"]["image_id"]}
    publish(engine, TAG, json.dumps(document, indent=2) + "\n")
    tester = tmp_path / "tester"
    subprocess.run(["git", "clone", "--quiet", str(engine.remote), str(tester)], check=True)
    result, _ = reproduce(
        tester, tmp_path, TAG, "--allow-host", "cap-add=SYS_ADMIN,cap-add=SYS_PTRACE,"
        "cap-add=NET_ADMIN,cap-add=SYS_TIME,security-opt=seccomp=unconfined,"
        "security-opt=apparmor=unconfined", "--image-key", str(keys["maintainer"].public),
        "--image-signatures", str(store), env=NO_ENGINE,
    )  # fmt: skip
    fpr = keys["maintainer"].fpr
    said = result.stdout + result.stderr
    if case == "signed":
        assert f"image cu130: signed by {fpr}" in said, said
        assert f"image index {image.index_tags[0]}: signed by {fpr}" in said, said
        assert "image cu128: not published" in said
        assert result.code == 6, said  # past the check: the engine that is not there
        return
    if case == "unsigned":  # said, as an unsigned tag is; refused with --require-signed
        assert f"image cu130: unsigned ({image.repository}@{image.platform})" in said, said
        assert f"image index {image.index_tags[0]}: unsigned" in said, said
        assert result.code == 6, said
        return
    assert result.code == 7, said
    words = "signature does not verify"
    assert words in result.stderr and "nothing was pulled or built" in result.stderr
    # the refusal is the run's one error: the engine (unreachable here) was never asked
    assert [line for line in result.stderr.splitlines() if line.startswith("error:")] == [
        result.stderr.strip().splitlines()[-1]
    ] and result.stderr.strip().splitlines()[-1].startswith("error: image ")
    assert f"signed by {fpr}" not in said or case == "changed"

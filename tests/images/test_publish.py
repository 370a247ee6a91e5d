"""``release images.publish`` against a real registry (Debian's docker-registry on
loopback, read back with skopeo) and a real engine, with a variant built for linux/amd64
and linux/arm64 (under emulation): platform images under their own tags, one multi-arch
index under the tags users pull, its other tags copied by digest, the digests recorded; a
re-run that uploads nothing; a dry run that leaves the registry as it was; a published tag
that serves another image refused before anything is pushed; runs killed (SIGKILL,
SIGTERM) at each step finished by the next; a registry that is stopped, that refuses the
credentials, that is full, that deleted a platform image behind the tool's back; and a tag
that does not read back as pushed."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from release.adapters.engine import ContainerEngine
from release.adapters.registry import Registry
from release.adapters.registry_server import LocalRegistry
from release.core.accelerator import Accelerator
from tests.conftest import repo_state
from tests.engine_support import (
    BASE_1291,
    BOTH,
    TWO_VARIANTS,
    VERSION,
    Repo,
    built_engine,
    images,
)
from tests.registry_support import listed, served, stopping_skopeo


@pytest.fixture(scope="module")
def two_variants_built(
    docker: ContainerEngine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Repo]:
    """An engine of two variants, built: ``a`` (the default) for amd64 and arm64, ``b`` for
    the engine's own platform."""
    with built_engine(docker, tmp_path_factory, "publish", TWO_VARIANTS) as repo:
        yield repo


def where(registry: LocalRegistry, path: str) -> str:
    """A repository path of its own in the registry, so tests do not see each other's tags."""
    return f"{registry.address}/{path}"


def platform_refs(repo: Repo, at: str) -> dict[str, str]:
    """Each row's platform tag, spelt here (not taken from the code under test)."""
    return {
        "a-amd64": f"{at}/{repo.name}:{VERSION}-amd64",
        "a-arm64": f"{at}/{repo.name}:{VERSION}-arm64",
        "b": f"{at}/{repo.name}:{VERSION}-b-amd64",
    }


def index_refs(repo: Repo, at: str) -> dict[str, list[str]]:
    return {
        "a": [f"{at}/{repo.name}:{VERSION}", f"{at}/{repo.name}:{VERSION}-a"],
        "b": [f"{at}/{repo.name}:{VERSION}-b"],
    }


def every_ref(repo: Repo, at: str) -> list[str]:
    return [
        *platform_refs(repo, at).values(),
        *(r for rs in index_refs(repo, at).values() for r in rs),
    ]


def part(repo: Repo, row: str) -> dict[str, object]:
    found = list(repo.state.rglob(f"{row}.publish.json"))
    assert len(found) == 1, found
    return dict(json.loads(found[0].read_text())["data"])


def parts_of(repo: Repo) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in repo.state.rglob("*.publish.json")}


def registry_state(repo: Repo, at: str) -> dict[str, object]:
    return {ref: served(ref) for ref in every_ref(repo, at)}


def clear_parts(repo: Repo) -> None:
    for path in repo.state.rglob("*.publish.json"):
        path.unlink()


@images
def test_platform_images_then_one_index_each_read_back_and_recorded(
    two_variants_built: Repo, registry: LocalRegistry, docker: ContainerEngine
) -> None:
    at = where(registry, "first")
    clear_parts(two_variants_built)
    result = two_variants_built.release("images.publish", "--registry", at, "--json")
    assert result.code == 0, result.output
    document = json.loads(result.stdout)
    assert document["schema"] == "release/images.publish/v1"
    platforms = {}
    for row, ref in platform_refs(two_variants_built, at).items():
        got = served(ref)
        assert got is not None, ref
        local = (
            f"{two_variants_built.name}:{VERSION}-{row.split('-')[1]}"
            if "-" in row
            else f"{two_variants_built.name}:{VERSION}-b"
        )
        assert got[1]["config"]["digest"] == docker.image_id(local)  # type: ignore[index]
        recorded = part(two_variants_built, row)
        assert recorded["digest"] == got[0] and recorded["tags"] == [ref]
        platforms[row] = got[0]
    for group, refs in index_refs(two_variants_built, at).items():
        got = [served(ref) for ref in refs]
        assert all(got) and len({g[0] for g in got if g}) == 1, got  # every tag, one index
        digest, manifest = got[0]  # type: ignore[misc]
        rows = [r for r in platform_refs(two_variants_built, at) if r.split("-")[0] == group]
        want = {part(two_variants_built, r)["platform"]: platforms[r] for r in rows}
        assert listed(manifest) == want  # the index lists each platform's digest
        for row in rows:
            assert part(two_variants_built, row)["index"] == {"digest": digest, "tags": refs}
    assert listed(served(index_refs(two_variants_built, at)["a"][0])[1]).keys() == set(BOTH)  # type: ignore[index]
    # one upload per platform image, one index made, its other tag copied by digest
    said = result.stderr.splitlines()
    assert sum(" pushed " in line for line in said) == 3, said
    assert sum(" index " in line for line in said) == 2, said
    assert sum(" tagged " in line for line in said) == 1, said
    # the alias docker pushed from is gone; the images keep their own tags
    aliases = docker.run(["images", "--quiet", "--filter", f"reference={at}/*"], timeout=60)
    assert aliases.stdout.split() == []
    # the manifest carries each row's digests
    merged = two_variants_built.release("manifest", "--partial", "--json")
    assert merged.code == 0, merged.output
    variants = json.loads(merged.stdout)["variants"]
    assert {r: variants[r]["publish"]["digest"] for r in platforms} == platforms
    # again: everything is there, nothing is uploaded, the registry is as it was
    before, traffic = registry_state(two_variants_built, at), registry.traffic()
    assert traffic.uploads > 0 and traffic.manifests_written >= 5  # the first run's
    again = two_variants_built.release("images.publish", "--registry", at)
    assert again.code == 0, again.output
    assert " pushed " not in again.output and " index " not in again.output
    assert again.output.count(" is there: ") == 6, again.output
    assert registry_state(two_variants_built, at) == before
    assert registry.traffic().uploads == traffic.uploads
    assert registry.traffic().manifests_written == traffic.manifests_written


@images
def test_a_dry_run_reads_the_registry_and_writes_nothing(
    two_variants_built: Repo, registry: LocalRegistry
) -> None:
    at = where(registry, "dry")
    clear_parts(two_variants_built)
    before = repo_state(two_variants_built.root)
    result = two_variants_built.release("images.publish", "--registry", at, "--dry-run")
    assert result.code == 0, result.output
    for ref in platform_refs(two_variants_built, at).values():
        assert f"would push {ref} (linux/" in result.output
    a_index, a_other = index_refs(two_variants_built, at)["a"]
    assert f"would make the index {a_index}: an index of linux/amd64" in result.output
    assert f"would tag {a_other} as the index" in result.output
    assert "dry run, nothing pushed:" in result.output
    assert all(s is None for s in registry_state(two_variants_built, at).values())  # nothing left
    assert repo_state(two_variants_built.root) == before
    assert parts_of(two_variants_built) == {}  # no part recorded for what was not published


@images
def test_a_tag_published_with_another_image_is_refused_before_anything_is_pushed(
    two_variants_built: Repo, registry: LocalRegistry, docker: ContainerEngine
) -> None:
    at = where(registry, "taken")
    theirs = index_refs(two_variants_built, at)["b"][0]
    docker.tag(BASE_1291, [theirs])  # someone else's image under b's rc tag
    try:
        assert docker.push(theirs).ok
    finally:
        docker.remove_image(theirs)
    taken = served(theirs)
    assert taken is not None
    traffic = registry.traffic()
    result = two_variants_built.release("images.publish", "--registry", at)
    assert result.code == 3, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {theirs} is published already with another image")
    assert taken[0] in line and "this build is an index of linux/amd64" in line  # both
    # nothing was pushed, not even the variant that was free
    assert all(served(ref) is None for ref in platform_refs(two_variants_built, at).values())
    assert registry.traffic().uploads == traffic.uploads
    assert served(theirs) == taken


@pytest.mark.parametrize(
    ("words", "nth", "sig"),
    [
        (("inspect", f"{VERSION}-arm64"), 2, signal.SIGKILL),  # pushed, not yet read back
        (("copy",), 1, signal.SIGKILL),  # the index made, its other tag not yet
        (("inspect", f"{VERSION}-b-amd64"), 2, signal.SIGTERM),  # CI's cancel, mid-step
    ],
    ids=["kill-after-a-platform", "kill-after-the-index", "term-before-an-index"],
)
@images
@pytest.mark.slow
def test_a_run_stopped_at_a_step_is_finished_by_the_next(
    two_variants_built: Repo,
    registry: LocalRegistry,
    docker: ContainerEngine,
    tmp_path: Path,
    words: tuple[str, ...],
    nth: int,
    sig: int,
) -> None:
    at = where(registry, f"stopped-{tmp_path.name.lower()}")
    clear_parts(two_variants_built)
    proc = subprocess.run(
        [sys.executable, "-m", "release", "images.publish", "--registry", at],
        cwd=two_variants_built.root,
        env={
            **os.environ,
            **two_variants_built.env,
            "RELEASE_SKOPEO": str(stopping_skopeo(tmp_path, words, nth, sig)),
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode in (-signal.SIGKILL, 143), (proc.returncode, proc.stdout, proc.stderr)
    done_before = {
        ref for ref, s in registry_state(two_variants_built, at).items() if s is not None
    }
    assert done_before and done_before != set(every_ref(two_variants_built, at)), proc.stdout
    assert (
        parts_of(two_variants_built) == {} or sig == signal.SIGTERM
    )  # a killed run recorded nothing
    # what a push killed mid-way leaves here: the image tagged under its registry name
    docker.tag(
        str(docker.image_id(f"{two_variants_built.name}:{VERSION}-b")),
        [platform_refs(two_variants_built, at)["b"]],
    )
    again = two_variants_built.release("images.publish", "--registry", at)
    assert again.code == 0, again.output
    state = registry_state(two_variants_built, at)
    assert all(s is not None for s in state.values()), state
    for group, refs in index_refs(two_variants_built, at).items():
        rows = [r for r in platform_refs(two_variants_built, at) if r.split("-")[0] == group]
        digest, manifest = state[refs[0]]  # type: ignore[misc]
        assert set(listed(manifest).values()) == {
            part(two_variants_built, r)["digest"] for r in rows
        }
        assert all(part(two_variants_built, r)["index"]["digest"] == digest for r in rows)  # type: ignore[index]
    for ref in done_before:  # kept, not pushed again
        assert f"{ref} is there: " in again.output
    # no local alias a killed push tagged is left
    aliases = docker.run(["images", "--quiet", "--filter", f"reference={at}/*/*"], timeout=60)
    assert aliases.stdout.split() == []


@images
def test_a_stopped_registry_is_one_line_and_nothing_recorded_then_it_comes_back(
    two_variants_built: Repo, registry: LocalRegistry
) -> None:
    at = where(registry, "stopped")
    clear_parts(two_variants_built)
    before = repo_state(two_variants_built.root)
    registry.stop()
    try:
        result = two_variants_built.release("images.publish", "--registry", at, "--variant", "b")
    finally:
        registry.start()
    assert result.code == 6, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: the registry {registry.address} does not answer"), line
    assert repo_state(two_variants_built.root) == before
    back = two_variants_built.release("images.publish", "--registry", at, "--variant", "b")
    assert back.code == 0, back.output
    assert served(index_refs(two_variants_built, at)["b"][0]) is not None


def bcrypt(password: str) -> str:
    """A bcrypt hash for the registry's htpasswd file (the C library's, through crypt)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import crypt

    return crypt.crypt(password, "$2b$05$" + "abcdefghijklmnopqrstuv")


@images
def test_a_registry_that_refuses_the_credentials_is_one_line(
    two_variants_built: Repo, tmp_path: Path
) -> None:
    guarded = LocalRegistry(tmp_path / "guarded")
    (guarded.root / "htpasswd").write_text(f"maintainer:{bcrypt('the right one')}\n")
    config = guarded.root / "config.yml"
    config.write_text(
        config.read_text()
        + f"auth:\n  htpasswd:\n    realm: release\n    path: {guarded.root / 'htpasswd'}\n"
    )
    home = Path(two_variants_built.env["HOME"])
    logins = home / ".docker" / "config.json"  # docker login's file, a wrong password in it
    logins.parent.mkdir(exist_ok=True)
    token = base64.b64encode(b"maintainer:a wrong one").decode()
    logins.write_text(json.dumps({"auths": {guarded.address: {"auth": token}}}))
    clear_parts(two_variants_built)
    before = repo_state(two_variants_built.root)
    try:
        with guarded:
            result = two_variants_built.release(
                "images.publish", "--registry", f"{guarded.address}/x"
            )
    finally:
        logins.unlink()
    assert result.code == 6, result.output
    (line,) = result.stderr.splitlines()
    assert f"{guarded.address} refused the credentials" in line, line
    assert f"docker login {guarded.address}" in line
    assert repo_state(two_variants_built.root) == before


@images
def test_a_full_registry_fails_in_one_line_and_a_rerun_with_room_finishes(
    two_variants_built: Repo, tmp_path: Path
) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system for the registry's storage needs root")
    small = LocalRegistry(tmp_path / "small")
    data = small.root / "data"
    data.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(data)], check=True)
    try:
        clear_parts(two_variants_built)
        with small:
            result = two_variants_built.release(
                "images.publish", "--registry", f"{small.address}/x", "--variant", "b"
            )
            assert result.code == 6, result.output
            (line,) = result.stderr.splitlines()
            assert line.startswith("error: docker push ") and "failed" in line, line
            assert parts_of(two_variants_built) == {}
            subprocess.run(["mount", "-o", "remount,size=512m", str(data)], check=True)
            again = two_variants_built.release(
                "images.publish", "--registry", f"{small.address}/x", "--variant", "b"
            )
            assert again.code == 0, again.output
    finally:
        subprocess.run(["umount", "--lazy", str(data)], check=False)


@images
def test_a_platform_image_deleted_behind_the_tools_back_is_pushed_again(
    two_variants_built: Repo, registry: LocalRegistry
) -> None:
    at = where(registry, "deleted")
    clear_parts(two_variants_built)
    assert two_variants_built.release("images.publish", "--registry", at).code == 0
    arm = platform_refs(two_variants_built, at)["a-arm64"]
    digest = part(two_variants_built, "a-arm64")["digest"]
    index = served(index_refs(two_variants_built, at)["a"][0])
    name = arm.split("/", 1)[1].rsplit(":", 1)[0]
    request = urllib.request.Request(
        f"http://{registry.address}/v2/{name}/manifests/{digest}", method="DELETE"
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 202
    assert served(arm) is None  # the index lists a platform image the registry lost
    again = two_variants_built.release("images.publish", "--registry", at)
    assert again.code == 0, again.output
    assert f"publish(a): pushed {arm} (linux/arm64): {digest}" in again.output
    assert served(arm) is not None and served(index_refs(two_variants_built, at)["a"][0]) == index


@images
def test_a_tag_that_does_not_read_back_as_pushed_fails(
    two_variants_built: Repo, registry: LocalRegistry, tmp_path: Path
) -> None:
    """A registry that answers for the tag with another image than the one just pushed
    (stood in for by a skopeo that reports another config once the tag exists)."""
    real = shutil.which("skopeo")
    assert real is not None
    lying = tmp_path / "skopeo"
    lying.write_text(
        f"#!{sys.executable}\n"
        "import json, subprocess, sys\n"
        f"done = subprocess.run([{real!r}, *sys.argv[1:]], capture_output=True)\n"
        "sys.stderr.buffer.write(done.stderr)\n"
        "if done.returncode or sys.argv[1] != 'inspect':\n"
        "    sys.stdout.buffer.write(done.stdout)\n"
        "    sys.exit(done.returncode)\n"
        "manifest = json.loads(done.stdout)\n"
        "if 'config' in manifest:\n"
        "    manifest['config']['digest'] = 'sha256:' + '0' * 64\n"
        "sys.stdout.write(json.dumps(manifest))\n"
    )
    lying.chmod(0o755)
    at = where(registry, "lies")
    clear_parts(two_variants_built)
    result = two_variants_built.release(
        "images.publish", "--registry", at, "--variant", "b", RELEASE_SKOPEO=str(lying)
    )
    assert result.code == 6, result.output
    ref = platform_refs(two_variants_built, at)["b"]
    assert f"error: {ref} does not read back as pushed: it serves sha256:" in result.stderr
    assert parts_of(two_variants_built) == {}


def test_only_a_loopback_registry_is_spoken_to_without_tls() -> None:
    from release.adapters.registry import is_loopback

    assert is_loopback("127.0.0.1:5000/x/y:1") and is_loopback("localhost:5000/y")
    assert is_loopback("[::1]:5000/y:1") and is_loopback("127.9.9.9/y")
    assert not is_loopback("registry.example.com/y:1")
    assert not is_loopback("127.0.0.1.example.com/y")  # a name, not the loopback address
    assert not is_loopback("example.com:5000/127.0.0.1/y")
    assert Registry._tls("tls-verify", "example.com/y") == []


def test_what_a_registry_answers_is_taken_as_digests_and_escaped_names_only() -> None:
    from release.adapters.registry import RegistryError, served_of

    index = {
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [
            {
                "digest": "sha256:" + "a" * 64,
                "platform": {"os": "linux", "architecture": "arm\x1b[2K64"},
            }
        ],
    }
    raw = json.dumps(index).encode()
    served_index = served_of(raw, "x")
    assert (
        served_index.is_index and served_index.digest == "sha256:" + hashlib.sha256(raw).hexdigest()
    )
    assert served_index.platforms == (("linux/arm\\x1b[2K64", "sha256:" + "a" * 64),)
    for bad in ({"config": {"digest": "sha256:zz\x1b[1A"}}, {"manifests": [{"digest": 7}]}):
        with pytest.raises(RegistryError) as refused:
            served_of(json.dumps(bad).encode(), "REF")
        assert (
            refused.value.message
            == "REF: the registry's manifest names no digest where one belongs"
        )
    with pytest.raises(RegistryError):
        served_of(b"<html>not a manifest</html>", "REF")


@images
def test_a_published_multi_arch_base_is_pulled_aside_for_a_foreign_platform(
    two_variants_built: Repo,
    registry: LocalRegistry,
    docker: ContainerEngine,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A base the registry serves for both platforms: the arm64 image is pulled and kept
    under the base's local arm64 name; the base's own name names what it named before."""
    from release.images.standin import ensure_base, platform_alias

    at = where(registry, "bases")
    clear_parts(two_variants_built)
    assert (
        two_variants_built.release("images.publish", "--registry", at, "--variant", "a").code == 0
    )
    ref = index_refs(two_variants_built, at)["a"][0]
    alias = platform_alias(ref, "linux/arm64")
    monkeypatch.delenv("RELEASE_NO_PULL", raising=False)
    try:
        base = ensure_base(
            docker, ref, Accelerator("cuda", "12.9.1"), lambda _: None, platform="linux/arm64"
        )
        assert (base.build_ref, base.how) == (alias, "pulled")  # its labels say stand-in: ours is
        data = docker.inspect_image(alias)
        assert data is not None and data.platform == "linux/arm64"
        assert docker.image_id(ref) is None  # it named nothing before, and names nothing now
        amd = docker.image_id(f"{two_variants_built.name}:{VERSION}-amd64")
        docker.tag(str(amd), [ref])  # the engine's own platform's image under the name
        docker.remove_image(alias)
        again = ensure_base(
            docker, ref, Accelerator("cuda", "12.9.1"), lambda _: None, platform="linux/arm64"
        )
        assert again.build_ref == alias and docker.image_id(ref) == amd  # put back
    finally:
        docker.remove_image(ref)
        docker.remove_image(alias)


@images
def test_published_images_are_signed_recorded_and_verified_by_skopeo(
    two_variants_built: Repo, registry: LocalRegistry, tmp_path: Path
) -> None:
    """``--signatures`` with the key from the environment, as a CI job has it: every
    platform image and index signed once, each tag a user pulls accepted by skopeo's
    ``signedBy`` policy, the key recorded; a re-run signs nothing."""
    from tests.signing_support import make_key, signature_files, skopeo_accepts

    key = make_key(tmp_path, "maintainer")
    made = [key]
    store = tmp_path / "store"
    store.mkdir()
    at = where(registry, "signed")
    clear_parts(two_variants_built)
    env = {"GNUPGHOME": str(key.home), "RELEASE_IMAGE_SIGNING_KEY": key.fpr}
    try:
        result = two_variants_built.release(
            "images.publish", "--registry", at, "--signatures", str(store), **env
        )
        assert result.code == 0, result.output
        # three platform images (own tag + the index's) and two indexes (their tags)
        assert len(signature_files(store)) == (1 + 2) * 2 + (1 + 1) + 2 + 1, signature_files(store)
        # a pull of the default variant's index tag (it resolves to the platform image) and
        # of a platform tag (each copy reads every layer: two stand for the rest, which
        # test_image_signing checks tag by tag on small images)
        for ref in (
            index_refs(two_variants_built, at)["a"][0],
            platform_refs(two_variants_built, at)["b"],
        ):
            ok, said = skopeo_accepts(ref, key.public, store, tmp_path)
            assert ok, (ref, said)
        for row in platform_refs(two_variants_built, at):
            recorded = part(two_variants_built, row)
            assert recorded["signed_by"] == key.fpr == recorded["index"]["signed_by"]  # type: ignore[index]
        there = signature_files(store)
        again = two_variants_built.release(
            "images.publish", "--registry", at, "--signatures", str(store), **env
        )
        assert again.code == 0, again.output
        assert "): signed " not in again.output and again.output.count("is signed by") == 5
        assert signature_files(store) == there
        # another key's public half does not accept them
        other = make_key(tmp_path, "other")
        made.append(other)
        ok, said = skopeo_accepts(
            every_ref(two_variants_built, at)[0], other.public, store, tmp_path
        )
        assert not ok and "rejected" in said, said
    finally:
        for made_key in made:
            made_key.close()

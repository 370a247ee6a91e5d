"""``release images.publish`` against a real registry (Debian's docker-registry on
loopback) and a real engine: every tag pushed once and read back with skopeo, a re-run
that pushes nothing, a dry run that leaves the registry as it was, a published tag that
serves another image refused before anything is pushed, a run killed half-way finished by
the next, a registry that is not there, and a tag that does not read back as pushed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from release.adapters.engine import ContainerEngine
from release.adapters.registry import Registry
from tests.conftest import repo_state
from tests.docker_support import LocalRegistry, local_registry, purge
from tests.test_images import BASE_1291, Repo, images, make_engine_repo

VERSION = "v0.1.0"


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRegistry]:
    with local_registry(tmp_path_factory.mktemp("registry")) as running:
        yield running


@pytest.fixture(scope="module")
def built(docker: ContainerEngine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Repo]:
    """An engine of two variants (``a`` the default), built."""
    root = tmp_path_factory.mktemp("publish")
    repo = make_engine_repo(
        root / "engine",
        tmp_path_factory.mktemp("home"),
        variants=[
            {"id": "a", "cuda": "12.9.1", "base-image": BASE_1291},
            {"id": "b", "cuda": "12.9.1", "base-image": BASE_1291, "build-args": {"B": "1"}},
        ],
        checks=[],
        default="a",
    )
    try:
        result = repo.release("images.build")
        assert result.code == 0, result.output
        yield repo
    finally:
        purge(docker, repo.name, repo.head)


def where(registry: LocalRegistry, path: str) -> str:
    """A repository path of its own in the registry, so tests do not see each other's tags."""
    return f"{registry.address}/{path}"


def refs(repo: Repo, at: str) -> dict[str, list[str]]:
    return {
        "a": [f"{at}/{repo.name}:{VERSION}", f"{at}/{repo.name}:{VERSION}-a"],
        "b": [f"{at}/{repo.name}:{VERSION}-b"],
    }


def served(ref: str) -> tuple[str, str] | None:
    """(digest, config digest) of ``ref`` as skopeo reads it from the registry."""
    raw = subprocess.run(
        ["skopeo", "inspect", "--raw", "--tls-verify=false", f"docker://{ref}"],
        capture_output=True,
        check=False,
    )
    if raw.returncode != 0:
        assert b"manifest unknown" in raw.stderr.lower(), raw.stderr
        return None
    digest = "sha256:" + hashlib.sha256(raw.stdout).hexdigest()
    return digest, json.loads(raw.stdout)["config"]["digest"]


def part(repo: Repo, variant: str) -> dict[str, object]:
    found = list(repo.state.rglob(f"{variant}.publish.json"))
    assert len(found) == 1, found
    return dict(json.loads(found[0].read_text())["data"])


def parts_of(repo: Repo) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in repo.state.rglob("*.publish.json")}


@images
def test_each_tag_is_pushed_once_read_back_and_recorded(
    built: Repo, registry: LocalRegistry, docker: ContainerEngine
) -> None:
    at = where(registry, "first")
    result = built.release("images.publish", "--registry", at, "--json")
    assert result.code == 0, result.output
    document = json.loads(result.stdout)
    assert document["schema"] == "release/images.publish/v1"
    for variant, tags in refs(built, at).items():
        image_id = docker.image_id(
            f"{built.name}:{VERSION}" + ("" if variant == "a" else f"-{variant}")
        )
        got = {ref: served(ref) for ref in tags}
        digests = {g[0] for g in got.values() if g}
        assert all(got.values()) and len(digests) == 1, got  # every tag, one image
        assert {g[1] for g in got.values() if g} == {image_id}  # its config is the image
        (digest,) = digests
        entry = next(v for v in document["variants"] if v["variant"] == variant)
        assert entry["digest"] == digest and sorted(entry["pushed"]) == sorted(tags)
        recorded = part(built, variant)
        assert recorded["digest"] == digest and recorded["tags"] == tags
        assert recorded["image_id"] == image_id and recorded["platform"] == "linux/amd64"
        # one upload, then a copy inside the registry
        said = [
            line for line in result.stderr.splitlines() if line.startswith(f"publish({variant})")
        ]
        assert sum("pushed" in line for line in said) == 1, said
        assert sum("copied" in line for line in said) == len(tags) - 1, said
    # the alias docker pushed from is gone; the image keeps its own tag
    aliases = docker.run(["images", "--quiet", "--filter", f"reference={at}/*"], timeout=60)
    assert aliases.stdout.split() == []
    # the manifest carries each variant's digests
    merged = built.release("manifest", "--partial", "--json")
    assert merged.code == 0, merged.output
    variants = json.loads(merged.stdout)["variants"]
    for variant in ("a", "b"):
        entry = next(v for v in document["variants"] if v["variant"] == variant)
        assert variants[variant]["publish"]["digest"] == entry["digest"]
    # again: every tag is there, nothing is pushed, the registry is as it was
    before = {ref: served(ref) for tags in refs(built, at).values() for ref in tags}
    again = built.release("images.publish", "--registry", at)
    assert again.code == 0, again.output
    assert "pushed" not in again.stdout and "copied" not in again.stdout
    assert again.stdout.count(" is there: ") == 3, again.stdout
    assert {ref: served(ref) for ref in before} == before


@images
def test_a_dry_run_reads_the_registry_and_writes_nothing(
    built: Repo, registry: LocalRegistry
) -> None:
    at = where(registry, "dry")
    before = repo_state(built.root)
    parts_before = parts_of(built)
    result = built.release("images.publish", "--registry", at, "--dry-run")
    assert result.code == 0, result.output
    a_first, a_second = refs(built, at)["a"]
    (b_only,) = refs(built, at)["b"]
    assert f"would write {a_first} (push of sha256:" in result.stdout
    assert f"would write {a_second} (copy of {a_first}" in result.stdout
    assert f"would write {b_only} (push of sha256:" in result.stdout
    assert result.stdout.count("would write ") == 3
    assert "dry run, nothing pushed:" in result.stdout
    assert all(served(ref) is None for ref in (a_first, a_second, b_only))  # nothing left
    assert repo_state(built.root) == before
    assert parts_of(built) == parts_before  # no part recorded for what was not published


@images
def test_a_tag_published_with_another_image_is_refused_before_anything_is_pushed(
    built: Repo, registry: LocalRegistry, docker: ContainerEngine
) -> None:
    at = where(registry, "taken")
    theirs = f"{at}/{built.name}:{VERSION}-b"
    docker.tag(BASE_1291, [theirs])  # someone else's image under b's rc tag
    try:
        assert docker.push(theirs).ok
    finally:
        docker.remove_image(theirs)
    taken = served(theirs)
    assert taken is not None
    result = built.release("images.publish", "--registry", at)
    assert result.code == 3, result.output
    (line,) = result.stderr.splitlines()
    ours = docker.image_id(f"{built.name}:{VERSION}-b")
    assert line.startswith(f"error: {theirs} is published already with another image")
    assert taken[0] in line and str(ours) in line  # both digests
    # nothing was pushed, not even the variant that was free
    assert all(served(ref) is None for ref in refs(built, at)["a"])
    assert served(theirs) == taken


@images
def test_a_run_stopped_half_way_is_finished_by_the_next(
    built: Repo, registry: LocalRegistry
) -> None:
    at = where(registry, "killed")
    proc = subprocess.Popen(
        [sys.executable, "-m", "release", "images.publish", "--registry", at],
        cwd=built.root,
        env={**os.environ, **built.env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    seen = []
    deadline = time.monotonic() + 300
    for line in proc.stdout:  # bounded by the process: it ends, or is killed here
        seen.append(line)
        if line.startswith("publish(a): pushed "):
            os.killpg(proc.pid, signal.SIGKILL)
            break
        assert time.monotonic() < deadline, seen
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, seen
    first = refs(built, at)["a"][0]
    assert served(first) is not None
    assert served(refs(built, at)["b"][0]) is None  # b had not started
    again = built.release("images.publish", "--registry", at)
    assert again.code == 0, again.output
    assert f"publish(a): {first} is there: " in again.stdout
    assert "publish(b): pushed " in again.stdout
    for tags in refs(built, at).values():
        assert all(served(ref) is not None for ref in tags)


@images
def test_a_registry_that_is_not_there_is_one_line_and_nothing_recorded(
    built: Repo, tmp_path: Path
) -> None:
    gone = LocalRegistry("docker-registry", tmp_path)  # a port nothing listens on
    before = repo_state(built.root)
    result = built.release("images.publish", "--registry", f"{gone.address}/x", "--variant", "b")
    assert result.code == 6, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: cannot read {gone.address}/x/") and "connection refused" in line
    assert repo_state(built.root) == before


@images
def test_a_tag_that_does_not_read_back_as_pushed_fails(
    built: Repo, registry: LocalRegistry, tmp_path: Path
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
        f"manifest['config']['digest'] = 'sha256:' + '0' * 64\n"
        "sys.stdout.write(json.dumps(manifest))\n"
    )
    lying.chmod(0o755)
    at = where(registry, "lies")
    result = built.release(
        "images.publish", "--registry", at, "--variant", "b", RELEASE_SKOPEO=str(lying)
    )
    assert result.code == 6, result.output
    ref = refs(built, at)["b"][0]
    assert f"error: {ref} does not read back as pushed: it serves sha256:" in result.stderr
    assert "publish(b): pushed" not in result.stdout


def test_only_a_loopback_registry_is_spoken_to_without_tls() -> None:
    from release.adapters.registry import is_loopback

    assert is_loopback("127.0.0.1:5000/x/y:1") and is_loopback("localhost:5000/y")
    assert is_loopback("[::1]:5000/y:1") and is_loopback("127.9.9.9/y")
    assert not is_loopback("registry.example.com/y:1")
    assert not is_loopback("127.0.0.1.example.com/y")  # a name, not the loopback address
    assert not is_loopback("example.com:5000/127.0.0.1/y")
    assert Registry._tls("tls-verify", "example.com/y") == []

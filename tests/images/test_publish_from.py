"""``release images.publish --from REGISTRY/PATH`` against a real registry (Debian's
docker-registry on loopback): the images ``images.push`` put in the transfer registry are
published without entering an engine (the engine is not even asked), each platform image
with the transfer image's own digest, its layers mounted from the transfer repository, the
index made in the registry and listing them; a re-run writes nothing; a run killed at a
copy or at the index is finished by the next; an image of another commit is refused with
nothing written."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from release.adapters.engine import ContainerEngine
from release.adapters.registry_server import LocalRegistry
from tests.conftest import repo_state
from tests.docker_support import local_registry, recording_client
from tests.engine_support import (
    BASE_1291,
    TWO_VARIANTS,
    VERSION,
    Repo,
    built_engine,
    images,
    make_engine_repo,
)
from tests.registry_support import listed, served, stopping_skopeo


@pytest.fixture(scope="module")
def pushed(
    docker: ContainerEngine, registry: LocalRegistry, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Repo]:
    """An engine of two variants, built and pushed to the transfer registry (``ci``):
    ``a`` (the default) for amd64 and arm64, ``b`` for the engine's own platform."""
    with built_engine(docker, tmp_path_factory, "from", TWO_VARIANTS) as repo:
        sent = repo.release("images.push", "--registry", f"{registry.address}/ci")
        assert sent.code == 0, sent.output
        yield repo


def transfer_refs(repo: Repo, ci: str) -> dict[str, str]:
    """Where ``images.push`` put each row (spelt here, not taken from the code under test)."""
    return {
        "a-amd64": f"{ci}/{repo.name}:{VERSION}-amd64",
        "a-arm64": f"{ci}/{repo.name}:{VERSION}-arm64",
        "b": f"{ci}/{repo.name}:{VERSION}-b",
    }


def release_refs(repo: Repo, at: str) -> dict[str, str]:
    return {
        "a-amd64": f"{at}/{repo.name}:{VERSION}-amd64",
        "a-arm64": f"{at}/{repo.name}:{VERSION}-arm64",
        "b": f"{at}/{repo.name}:{VERSION}-b-amd64",
        "a": f"{at}/{repo.name}:{VERSION}",
        "a-other": f"{at}/{repo.name}:{VERSION}-a",
        "b-index": f"{at}/{repo.name}:{VERSION}-b",
    }


def state(repo: Repo, at: str) -> dict[str, object]:
    return {key: served(ref) for key, ref in release_refs(repo, at).items()}


def part(repo: Repo, row: str) -> dict[str, object]:
    (found,) = repo.state.rglob(f"{row}.publish.json")
    return dict(json.loads(found.read_text())["data"])


def clear_parts(repo: Repo) -> None:
    for path in repo.state.rglob("*.publish.json"):
        path.unlink()


def no_engine(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose docker is a stand-in that writes down every call and fails,
    first in the order the tool looks for one, and whose engine socket is not there: a
    publish that asked the engine anything would leave a line in the log, and could not
    have pulled."""
    env, log = recording_client(tmp_path)
    env |= {
        "PATH": f"{Path(env['DOCKER']).parent}{os.pathsep}{os.environ['PATH']}",
        "DOCKER_HOST": f"unix://{tmp_path / 'no-engine.sock'}",
    }
    return env, log


def requests(registry: LocalRegistry, since: int = 0) -> list[tuple[str, str]]:
    """(method, uri) of each request the registry logged, from the ``since``-th on."""
    text = registry.log.read_text(errors="replace")
    found = re.findall(r'"([A-Z]+) (/v2/\S*) HTTP/[0-9.]+"', text)
    return found[since:]


def manifest_layers(ref: str) -> set[str]:
    got = served(ref)
    assert got is not None, ref
    return {str(layer["digest"]) for layer in got[1]["layers"]}  # type: ignore[attr-defined]


@images
def test_published_from_the_transfer_registry_by_digest_with_no_engine_asked(
    pushed: Repo, registry: LocalRegistry, docker: ContainerEngine, tmp_path: Path
) -> None:
    ci, at = f"{registry.address}/ci", f"{registry.address}/rel"
    clear_parts(pushed)
    transfer = {row: served(ref) for row, ref in transfer_refs(pushed, ci).items()}
    assert all(transfer.values()), transfer
    env, calls = no_engine(tmp_path)
    engine_images = docker.run(["images", "--all", "--quiet", "--no-trunc"], timeout=60).stdout
    dry = pushed.release("images.publish", "--from", ci, "--registry", at, "--dry-run", **env)
    assert dry.code == 0, dry.output
    for row in transfer_refs(pushed, ci):
        digest = transfer[row][0]  # type: ignore[index]
        assert f"would copy {release_refs(pushed, at)[row]} (linux/" in dry.output, dry.output
        assert f"from {ci}/{pushed.name}@{digest})" in dry.output
    assert all(s is None for s in state(pushed, at).values())  # a dry run wrote nothing
    since = len(requests(registry))
    result = pushed.release("images.publish", "--from", ci, "--registry", at, "--json", **env)
    assert result.code == 0, result.output
    assert not calls.exists(), calls.read_text()  # the engine was not asked anything
    # nothing came into it: no image of these (the shared engine's others may come and go)
    after = docker.run(["images", "--all", "--quiet", "--no-trunc"], timeout=60).stdout
    ids = {found[1]["config"]["digest"] for found in transfer.values()}  # type: ignore[index]
    assert not (set(after.split()) - set(engine_images.split())) & ids
    got = state(pushed, at)
    for row in ("a-amd64", "a-arm64", "b"):  # digest exact: the transfer image's manifest
        assert got[row][0] == transfer[row][0], row  # type: ignore[index]
        assert part(pushed, row)["digest"] == transfer[row][0]  # type: ignore[index]
        assert part(pushed, row)["image_id"] == transfer[row][1]["config"]["digest"]  # type: ignore[index]
    a_digest, a_index = got["a"]  # type: ignore[misc]
    assert got["a-other"][0] == a_digest  # type: ignore[index]
    assert listed(a_index) == {
        "linux/amd64": transfer["a-amd64"][0],  # type: ignore[index]
        "linux/arm64": transfer["a-arm64"][0],  # type: ignore[index]
    }
    assert listed(got["b-index"][1]) == {"linux/amd64": transfer["b"][0]}  # type: ignore[index]
    assert part(pushed, "a-arm64")["index"] == {
        "digest": a_digest,
        "tags": [release_refs(pushed, at)["a"], release_refs(pushed, at)["a-other"]],
    }
    document = json.loads(result.stdout)
    froms = [p["from"] for v in document["variants"] for p in v["platforms"]]
    assert froms == [f"{ci}/{pushed.name}@{transfer[r][0]}" for r in ("a-amd64", "a-arm64", "b")]  # type: ignore[index]
    # inside the registry: no layer was sent through this runner, each was mounted or there
    asked = requests(registry, since)
    layers = set().union(*(manifest_layers(transfer_refs(pushed, ci)[r]) for r in transfer))
    uploaded = {
        urllib.parse.parse_qs(urllib.parse.urlsplit(uri).query).get("digest", [""])[0]
        for method, uri in asked
        if method == "PUT" and "/blobs/uploads/" in uri
    }
    assert not uploaded & layers, uploaded & layers
    mounted = [uri for method, uri in asked if method == "POST" and "mount=" in uri]
    assert mounted and all("from=ci%2F" in uri for uri in mounted), mounted
    assert not any(method == "GET" and "/blobs/" in uri and "/rel/" not in uri and
                   any(layer in uri for layer in layers) for method, uri in asked)  # fmt: skip
    # again: everything is there, nothing is written
    before, traffic = state(pushed, at), registry.traffic()
    again = pushed.release("images.publish", "--from", ci, "--registry", at, **env)
    assert again.code == 0, again.output
    assert again.output.count(" is there: ") == 6, again.output
    assert " copied " not in again.output and " index " not in again.output
    assert state(pushed, at) == before
    assert registry.traffic().manifests_written == traffic.manifests_written
    assert registry.traffic().uploads == traffic.uploads


@pytest.mark.parametrize(
    ("words", "nth"),
    [(("copy", "--all", f"{VERSION}-arm64"), 1), (("index-only",), 1)],
    ids=["killed-at-a-platform-copy", "killed-at-the-index"],
)
@images
def test_a_killed_run_from_the_registry_is_finished_by_the_next(
    pushed: Repo, registry: LocalRegistry, tmp_path: Path, words: tuple[str, ...], nth: int
) -> None:
    ci, at = f"{registry.address}/ci", f"{registry.address}/killed-{tmp_path.name.lower()}"
    clear_parts(pushed)
    env, calls = no_engine(tmp_path)
    publish = ("images.publish", "--variant", "a", "--from", ci, "--registry", at)
    proc = subprocess.run(
        [sys.executable, "-m", "release", *publish],
        cwd=pushed.root,
        env={
            **os.environ,
            **pushed.env,
            **env,
            "RELEASE_SKOPEO": str(stopping_skopeo(tmp_path, words, nth, signal.SIGKILL)),
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stdout, proc.stderr)
    first = state(pushed, at)
    assert first["a"] is None and not list(pushed.state.rglob("*.publish.json"))
    assert first["a-amd64"] is not None  # stopped part way: the amd64 copy was done
    again = pushed.release(
        "images.publish", "--variant", "a", "--from", ci, "--registry", at, **env
    )
    assert again.code == 0, again.output
    assert f"{release_refs(pushed, at)['a-amd64']} is there: " in again.output
    got = state(pushed, at)
    transfer = {r: served(transfer_refs(pushed, ci)[r]) for r in ("a-amd64", "a-arm64")}
    assert listed(got["a"][1]) == {  # type: ignore[index]
        "linux/amd64": transfer["a-amd64"][0],  # type: ignore[index]
        "linux/arm64": transfer["a-arm64"][0],  # type: ignore[index]
    }
    assert got["a-other"][0] == got["a"][0]  # type: ignore[index]
    assert part(pushed, "a-amd64")["index"]["digest"] == got["a"][0]  # type: ignore[index]
    assert not calls.exists()


@images
def test_an_image_of_another_commit_in_the_transfer_registry_is_refused_with_nothing_written(
    pushed: Repo, registry: LocalRegistry, docker: ContainerEngine, tmp_path: Path
) -> None:
    ci, at = f"{registry.address}/other-ci", f"{registry.address}/other"
    ours = pushed.release("images.push", "--registry", ci)
    assert ours.code == 0, ours.output
    # b's transfer tag now holds a build of another commit (as a later push would leave it)
    theirs = transfer_refs(pushed, ci)["b"]
    other = "0" * 40
    dockerfile = (
        f"FROM {BASE_1291}\nLABEL org.opencontainers.image.revision={other} org.release.variant=b\n"
    )
    built = subprocess.run(
        [docker.cli, "build", "--quiet", "-t", theirs, "-"],
        input=dockerfile,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "DOCKER_BUILDKIT": "1"},
    )
    assert built.returncode == 0, built.stderr
    try:
        assert docker.push(theirs).ok
    finally:
        docker.remove_image(theirs)
    clear_parts(pushed)
    before, traffic = repo_state(pushed.root), registry.traffic()
    env, calls = no_engine(tmp_path)
    result = pushed.release("images.publish", "--from", ci, "--registry", at, **env)
    assert result.code == 3, result.output
    (line,) = result.stderr.splitlines()
    assert line == (
        f"error: {theirs} is not this checkout's build: built from {other}, "
        f"not {pushed.head}; nothing is published"
    )
    assert all(s is None for s in state(pushed, at).values())  # not even variant a
    assert registry.traffic().manifests_written == traffic.manifests_written
    assert repo_state(pushed.root) == before
    assert not calls.exists()


# -- without an engine: images made as files (tests/oci_support.py) --------------------------


@pytest.fixture
def files_registry(tmp_path: Path) -> Iterator[LocalRegistry]:
    with local_registry(tmp_path / "registry") as running:
        yield running


def engine_config_repo(tmp_path: Path) -> Repo:
    """An engine's repository (not built: no engine is needed) of one variant, ``b``."""
    return make_engine_repo(
        tmp_path / "engine",
        tmp_path / "home",
        variants=[{"id": "b", "cuda": "12.9.1", "base-image": BASE_1291}],
        checks=[],
        default="b",
    )


def test_a_transfer_image_that_is_missing_an_index_or_not_labelled_is_refused(
    files_registry: LocalRegistry, tmp_path: Path
) -> None:
    from tests.oci_support import copy_in, oci_layout

    repo = engine_config_repo(tmp_path)
    ci, at = f"{files_registry.address}/ci", f"{files_registry.address}/rel"
    ref = f"{ci}/{repo.name}:{VERSION}"
    env, calls = no_engine(tmp_path)
    before = repo_state(repo.root)

    def refused() -> str:
        result = repo.release("images.publish", "--from", ci, "--registry", at, **env)
        assert result.code == 3, result.output
        assert served(f"{at}/{repo.name}:{VERSION}") is None
        assert repo_state(repo.root) == before and not calls.exists()
        (line,) = result.stderr.splitlines()
        return line

    assert refused() == (
        f"error: {ref} is not there: the build job of b pushes it "
        "(release images.push --registry REGISTRY/PATH)"
    )
    layout = tmp_path / "layout"
    oci_layout(layout, ["linux/amd64"], "seed")
    copy_in(layout, "index", ref)  # an index where an image belongs
    assert refused() == f"error: {ref} is an index, not b's image as images.push sends it"
    copy_in(layout, "amd64", ref)  # an image no build of this checkout labelled
    assert refused() == (
        f"error: {ref} is not this checkout's build: built from an unknown commit, "
        f"not {repo.head}; nothing is published"
    )


def test_an_index_is_the_same_bytes_for_the_same_images_and_names_each_platform() -> None:
    from release.core.image_index import IndexMember, index_bytes, platform_fields

    docker_v2 = "application/vnd.docker.distribution.manifest.v2+json"
    members = [
        IndexMember("sha256:" + "a" * 64, docker_v2, 528, "linux/amd64"),
        IndexMember("sha256:" + "b" * 64, docker_v2, 529, "linux/arm64/v8"),
    ]
    made = index_bytes(members)
    assert made == index_bytes(list(members))  # no time, no order of its own
    document = json.loads(made)
    assert document["mediaType"] == "application/vnd.oci.image.index.v1+json"
    assert [(m["digest"], m["size"], m["mediaType"]) for m in document["manifests"]] == [
        ("sha256:" + "a" * 64, 528, docker_v2),
        ("sha256:" + "b" * 64, 529, docker_v2),
    ]
    assert document["manifests"][1]["platform"] == {
        "os": "linux",
        "architecture": "arm64",
        "variant": "v8",
    }
    assert index_bytes(members[::-1]) != made  # the order given is the order listed
    for bad in ("linux", "linux/", "/amd64", "a/b/c/d"):
        with pytest.raises(ValueError, match="not a platform"):
            platform_fields(bad)
    with pytest.raises(ValueError, match="at least one"):
        index_bytes([])

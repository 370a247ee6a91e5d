"""The build's layer cache through a registry (BuildKit's inline cache), on the real engine
and Debian's docker-registry on loopback: a first build says there is no cache yet and
builds; ``images.push`` keeps the row's cache tag; a rebuild of the same commit, with this
engine's own copy of the layer gone (the image and the build cache record this test made,
and only those), takes the layer from the registry: the registry serves it, and the
rebuilt layers are the first build's, though the step writes random bytes (a rebuild
without the cache gives another layer). The generated CI's build jobs get the cache."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from release.adapters.engine import ContainerEngine
from release.adapters.registry_server import LocalRegistry
from tests.ci_support import REGISTRY, buildkite_pipeline, github_workflow, root_matrix
from tests.conftest import run_cli
from tests.docker_support import local_registry, purge
from tests.engine_support import BASE_1291, Repo, images, make_engine_repo
from tests.registry_support import served


@pytest.fixture
def fresh_registry(tmp_path: Path) -> Iterator[LocalRegistry]:
    """A registry of the test's own: its log holds only this test's requests."""
    with local_registry(tmp_path / "registry") as running:
        yield running


def random_step_repo(tmp_path: Path, token: str) -> Repo:
    dockerfile = (
        "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n"
        f"RUN echo {token} > /token && head -c 32 /dev/urandom > /random\n"
    )
    return make_engine_repo(
        tmp_path / "engine",
        tmp_path / "home",
        variants=[{"id": "one", "cuda": "12.9.1", "base-image": BASE_1291}],
        checks=[],
        default="one",
        files={"docker/Dockerfile": dockerfile},
    )


def forget_locally(docker: ContainerEngine, repo: Repo, token: str) -> None:
    """This test's image and its build cache records (their step names ``token``) gone
    from the engine; nothing else of the shared engine is touched."""
    purge(docker, repo.name, repo.head)
    listed = docker.run(["system", "df", "--verbose", "--format", "{{json .BuildCache}}"])
    ours = [e["ID"] for e in json.loads(listed.stdout) or () if token in e["Description"]]
    for record in ours:
        docker.run(["builder", "prune", "--force", "--filter", f"id={record}"], timeout=120)
    again = docker.run(["system", "df", "--verbose", "--format", "{{json .BuildCache}}"])
    assert not [e for e in json.loads(again.stdout) or () if token in e["Description"]]


def layers(docker: ContainerEngine, ref: str) -> list[str]:
    data = docker.inspect_image(ref)
    assert data is not None, ref
    return list(data.layers)


def asked(fresh_registry: LocalRegistry, since: int) -> list[str]:
    text = fresh_registry.log.read_text(errors="replace")
    return [f"{m} {u}" for m, u in re.findall(r'"([A-Z]+) (/v2/\S*) HTTP', text)][since:]


@images
def test_a_rebuild_takes_its_layers_from_the_registrys_cache_not_from_the_engine(
    docker: ContainerEngine, fresh_registry: LocalRegistry, tmp_path: Path
) -> None:
    token = f"cache-{uuid.uuid4().hex}"
    repo = random_step_repo(tmp_path, token)
    ci = f"{fresh_registry.address}/ci"
    image = f"{repo.name}:v0.1.0"
    cache = f"{ci}/{repo.name}:cache-one"
    try:
        first = repo.release("images.build", "--cache-from", ci, timeout=900)
        assert first.code == 0, first.output
        assert f"build(one): no cache yet ({cache}): building without it" in first.output
        pushed = repo.release("images.push", "--registry", ci)
        assert pushed.code == 0, pushed.output
        assert f"(and {cache}, the next build's cache)" in pushed.output
        got = served(cache)
        assert got is not None and got == served(f"{ci}/{image}")  # the same manifest
        random_layer = got[1]["layers"][-1]["digest"]  # type: ignore[index]
        built = layers(docker, image)
        forget_locally(docker, repo, token)
        since = len(asked(fresh_registry, 0))
        # the CI's way: the variable the generated build job sets
        again = repo.release("images.build", timeout=900, RELEASE_CI_CACHE=ci)
        assert again.code == 0, again.output
        assert f"build(one): cache from {cache}" in again.output
        requests = asked(fresh_registry, since)
        assert f"GET /v2/ci/{repo.name}/manifests/cache-one" in requests, requests
        # the random step's layer came from the registry, and is the first build's
        assert f"GET /v2/ci/{repo.name}/blobs/{random_layer}" in requests, requests
        assert layers(docker, image) == built
        # without the cache the step runs again: its layer is another (the check can fail)
        forget_locally(docker, repo, token)
        fresh = repo.release("images.build", "--no-cache", timeout=900)
        assert fresh.code == 0, fresh.output
        assert "cache from" not in fresh.output
        assert layers(docker, image)[:-1] == built[:-1] and layers(docker, image) != built
    finally:
        forget_locally(docker, repo, token)


def test_a_cache_registry_is_checked_like_every_registry_value(tmp_path: Path) -> None:
    for bad in ("-x", "reg.example.com/a b", "https://reg.example.com/ci"):
        result = run_cli(tmp_path, "images.build", "--cache-from", bad)
        assert result.code == 2, result.output
        assert "--cache-from" in result.stderr


def test_the_generated_build_jobs_read_the_cache_where_images_travel_through_a_registry() -> None:
    matrix = root_matrix()
    github = github_workflow(matrix, registry=REGISTRY)["jobs"]
    buildkite = {s["key"]: s for s in buildkite_pipeline(matrix, registry=REGISTRY)["steps"]}
    builds = [k for k in github if k.startswith("build-")]
    assert builds
    for key, job in github.items():
        want = REGISTRY if key.startswith("build-") else None
        assert job.get("env", {}).get("RELEASE_CI_CACHE") == want, key
        assert buildkite[key].get("env", {}).get("RELEASE_CI_CACHE") == want, key
    # as artifacts: no registry, no cache
    artifacts = github_workflow(matrix, registry="")["jobs"]
    assert not any("RELEASE_CI_CACHE" in job.get("env", {}) for job in artifacts.values())


def test_a_cache_not_there_or_not_readable_is_said_and_the_build_goes_on_without(
    fresh_registry: LocalRegistry,
) -> None:
    from release.adapters.registry import Registry
    from release.images.build_cache import find_cache
    from tests.oci_support import copy_in, oci_layout

    matrix = root_matrix()
    row = matrix.variants[0]
    here = f"{fresh_registry.address}/ci"
    ref = f"{here}/{matrix.cache_tag(row)}"
    assert ref.endswith(f":cache-{row.id}")
    missing = find_cache(here, matrix, row, Registry())
    assert missing.ref is None and missing.said == f"no cache yet ({ref}): building without it"
    layout = fresh_registry.root / "layout"
    oci_layout(layout, ["linux/amd64"], "cache")
    copy_in(layout, "amd64", ref)
    found = find_cache(here, matrix, row, Registry())
    assert found.ref == ref and found.said == f"cache from {ref}"
    fresh_registry.stop()
    try:
        down = find_cache(here, matrix, row, Registry())
    finally:
        fresh_registry.start()
    assert down.ref is None
    assert down.said.startswith(
        f"cache not read (the registry {fresh_registry.address} does not answer"
    )

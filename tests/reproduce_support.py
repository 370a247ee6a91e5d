"""A hostile remote for ``reproduce``: the sample engine tagged v0.1.0rc1 and pushed with a
manifest note faithful to the tag (the fixture ``maintainer``), a tester's clone of its
remote (``tester_clone``), the note changed and published again (:func:`hostile`), and
``release reproduce`` run in a clone that must be left as it was. Fixtures registered
by conftest."""

from __future__ import annotations

import copy
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from release.adapters.git import GitRepo
from release.adapters.git_notes import notes_ref
from release.core.manifest import Release, merge, part_document, variant_rules
from release.flows.context import ReleaseContext
from release.sample import SampleEngine, make_sample_engine
from tests.conftest import copied_engine, cut, repo_state, run_cli
from tests.manifest_support import TAG, built_by, sha, smoke, snapshot

NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent.sock"}  # past every refusal, nothing is built
SNAPSHOT_OPTIONS = (
    "cap-add=SYS_ADMIN,cap-add=SYS_PTRACE,cap-add=NET_ADMIN,cap-add=SYS_TIME,"
    "security-opt=seccomp=unconfined,security-opt=apparmor=unconfined"
)


def faithful(repo: GitRepo, tag: str, version: str) -> dict[str, Any]:
    """The manifest a build of ``tag`` would record: args, bases and CUDA versions from the
    tag's own configuration (image ids and digests made up: nothing here compares them)."""
    matrix = ReleaseContext(repo.root).config.matrix
    assert matrix is not None
    commit = repo.rev(f"refs/tags/{tag}")
    assert commit is not None
    release = Release(version, tag, commit, repo.commit_time(commit), matrix.name, "0.1.0")
    parts = []
    for n, variant in enumerate(matrix.variants, start=1):
        image = sha(str(n))
        data = built_by(matrix, variant.id, image, version) | {"tags": [matrix.tag(variant, tag)]}
        parts.append(part_document(release, variant.id, "build", data))
        parts.append(part_document(release, variant.id, "smoke", smoke(image)))
        if matrix.has_snapshot(variant):
            parts.append(part_document(release, variant.id, "snapshot", snapshot(image)))
    return merge(parts, variant_rules(matrix))


def note(repo: GitRepo, tag: str, text: str) -> None:
    """``text`` as ``tag``'s manifest note, written byte for byte."""
    blob = repo.run("hash-object", "-w", "--stdin", stdin=text).stdout.strip()
    repo.run("notes", f"--ref={notes_ref(tag)}", "add", "--force", "-C", blob, f"{tag}^{{commit}}")


def publish(engine: SampleEngine, tag: str, text: str) -> None:
    note(engine.repo, tag, text)
    engine.repo.run("push", "--quiet", "--force", "origin", tag, f"+{notes_ref(tag)}")


def tagged_and_published(root: Path) -> SampleEngine:
    """The release branch tagged v0.1.0rc1, pushed with a faithful manifest."""
    engine = cut(make_sample_engine(root))
    engine.repo.run("tag", "-a", TAG, "-m", TAG)
    publish(engine, TAG, json.dumps(faithful(engine.repo, TAG, "0.1.0rc1"), indent=2) + "\n")
    return engine


@pytest.fixture
def maintainer(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> SampleEngine:
    """The release branch tagged v0.1.0rc1, pushed with a faithful manifest (made once and
    copied)."""
    return copied_engine("rc1-published", tagged_and_published, tmp_path / "copy", tmp_path_factory)


def clone_of(engine: SampleEngine, root: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", str(engine.remote), str(root)], check=True)
    return root


@pytest.fixture
def tester_clone(maintainer: SampleEngine, tmp_path: Path) -> Path:
    return clone_of(maintainer, tmp_path / "tester")


def reproduce(
    root: Path, tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[Any, dict[str, object]]:
    """``release reproduce ARGS`` in ``root``; the result, and the repository state it
    must have left as it was (checked here), with no temporary checkout left behind."""
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    before = repo_state(root)
    result = run_cli(root, "reproduce", *args, env={"TMPDIR": str(scratch), **(env or {})})
    assert repo_state(root) == before, result.output
    assert list(scratch.iterdir()) == [], result.output
    return result, before


def hostile(engine: SampleEngine, change: Callable[[dict[str, Any]], object]) -> None:
    """The published manifest of TAG, changed by ``change``, published again."""
    document = copy.deepcopy(faithful(engine.repo, TAG, "0.1.0rc1"))
    change(document)
    publish(engine, TAG, json.dumps(document, indent=2) + "\n")

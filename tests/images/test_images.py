"""Image workflows against a real Docker Engine, through the CLI and nox as a user runs them.

The sample engine (a temporary copy, its own git repository with a unique image name)
is built for every variant, smoke-tested, and snapshotted where the snapshot rule
applies. Small engines of our own make the failure paths real: a failing Dockerfile
step, a failing and a hanging smoke check, Ctrl-C during a build and a smoke run, and
no engine at all. Images are removed afterwards; stand-in base images are kept (cached).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from release.adapters.engine import ContainerEngine
from release.adapters.image_info import ImageInfo
from release.errors import EngineError
from release.images.inputs import context_files
from release.sample import SampleEngine
from tests.conftest import CliResult, repo_state, run_on_terminal
from tests.docker_support import (
    REQUIRE_ENV,
    connect,
    containers,
    interrupt_when,
    managed_leftovers,
    purge,
    unique_name,
)
from tests.engine_support import (
    BASE_1291,
    NOTHING_LEFT,
    Repo,
    check_lines,
    images,
    make_engine_repo,
    smoke_section,
    wait_until_gone,
)

ROOT = Path(__file__).resolve().parents[2]
STANDIN_MARKER = "[on a stand-in base: CUDA layout only, no CUDA libraries]"
VARIANTS = {"cu128": "12.8.1", "cu129": "12.9.1", "cu130": "13.0.1"}
UBUNTU = {"cu128": "22.04", "cu129": "22.04", "cu130": "24.04"}  # the sample's base images


# -- helpers -------------------------------------------------------------------------------


def labels(engine: ContainerEngine, ref: str) -> dict[str, str]:
    data = engine.inspect_image(ref)
    assert data is not None, f"{ref} does not exist"
    return dict(data.labels)


def base_digest(engine: ContainerEngine, ref: str) -> str | None:
    """The digest a registry gave ``ref`` (None for a base made here, as a stand-in is)."""
    data = engine.inspect_image(ref)
    assert data is not None, f"{ref} does not exist"
    digests = [entry.split("@", 1)[1] for entry in data.repo_digests]
    return digests[0] if digests else None


def base_name(engine: ContainerEngine, ref: str) -> str:
    """The base.name label an image built on ``ref`` carries: its reference, or for a
    stand-in made here, that it is one."""
    standin = labels(engine, ref).get("org.release.standin") == "true"
    return f"local stand-in for docker.io/{ref}" if standin else f"docker.io/{ref}"


def standin_note(engine: ContainerEngine, ref: str) -> str:
    """What a build line adds for an image on a stand-in base."""
    standin = labels(engine, ref).get("org.release.standin") == "true"
    return " [on a stand-in base]" if standin else ""


REMOTE = "https://git.example.com/org/testengine.git"  # never contacted by a build
SLOW = str(random.randint(300, 599))  # seconds; tells this run's slow step from others
FAIL_VARIANTS = [
    {"id": "bad", "cuda": "12.9.1", "base-image": BASE_1291, "build-args": {"FAIL": "1"}},
    {"id": "good", "cuda": "12.9.1", "base-image": BASE_1291},
    {"id": "late", "cuda": "12.9.1", "base-image": BASE_1291},
]
FAIL_CHECKS = [
    {"name": "says hello", "command": ["echo", "hello"], "expect-output": "hello"},
    {"name": "says goodbye", "command": ["echo", "hello"], "expect-output": "goodbye"},
    {"name": "hangs", "command": ["sleep", "600"], "timeout": 3},
]


# -- the docker fixture itself (no engine needed) -----------------------------------------------

NO_ENGINE = "unix:///nonexistent.sock"


def test_docker_fixture_skips_saying_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception) as info:
        connect()
    assert "no usable Docker Engine" in str(info.value)
    assert "dockerd" in str(info.value)  # says how to start one


def test_docker_fixture_fails_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    monkeypatch.setenv(REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception) as info:
        connect()
    assert "no usable Docker Engine" in str(info.value)
    assert f"{REQUIRE_ENV}=1" in str(info.value)


@pytest.mark.parametrize("required", [False, True])
def test_image_tests_never_skip_silently_when_required(required: bool) -> None:
    """The real suite, without an engine: skipped with the reason, or failed under CI's flag."""
    env = {k: v for k, v in os.environ.items() if k != REQUIRE_ENV}
    env["DOCKER_HOST"] = NO_ENGINE
    if required:
        env[REQUIRE_ENV] = "1"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "-rs",
            "-m",
            "images",
            "-k",
            "test_rebuild_says_unchanged",
            str(Path(__file__)),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if required:
        assert proc.returncode == 1, proc.stdout
        assert "1 error" in proc.stdout
        assert f"{REQUIRE_ENV}=1: image tests must run here" in proc.stdout
    else:
        assert proc.returncode == 0, proc.stdout
        assert "1 skipped" in proc.stdout
        assert "SKIPPED" in proc.stdout and "no usable Docker Engine" in proc.stdout


def test_missing_engine_exits_6_saying_how_to_start_one(tmp_path: Path) -> None:
    repo = make_engine_repo(
        tmp_path / "engine",
        tmp_path / "home",
        variants=FAIL_VARIANTS[1:2],
        checks=[],
        default="good",
    )
    for command in ("images.build", "images.smoke", "images.snapshot"):
        result = repo.release(command, DOCKER_HOST=NO_ENGINE)
        assert result.code == 6, (command, result.output)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, (command, result.stderr)
        assert re.match(r"error: no (Docker Engine is reachable|docker CLI found)", lines[0])
        assert "start one as root: dockerd" in lines[0] and "DOCKER_HOST" in lines[0]
        assert "Traceback" not in result.output
    result = repo.nox("-s", "build(good)", DOCKER_HOST=NO_ENGINE)
    assert result.code != 0
    assert re.search(
        r"Session build\(good\) aborted: no (Docker Engine is reachable|docker CLI)", result.stderr
    ), result.stderr
    assert not list((repo.state / "logs").glob("build-good*.iid"))


# -- choosing the CLI and batched queries, with a stand-in CLI (no engine needed) ---------------

FAKE_DOCKER = """\
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "calls.log"), "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
with open(os.path.join(here, "state.json")) as f:
    state = json.load(f)
args = sys.argv[1:]
if args[:1] == ["version"]:
    print(state["version"])
    sys.exit(0)
if args[:1] == ["buildx"]:
    config = os.environ.get("DOCKER_CONFIG") or os.path.expanduser("~/.docker")
    sys.exit(0 if os.path.exists(os.path.join(config, "cli-plugins", "docker-buildx")) else 1)
if args[:2] == ["image", "inspect"]:
    if not state.get("daemon", True):
        print("[]")
        sys.stderr.write("Cannot connect to the Docker daemon at unix:///x.sock. Is the docker daemon running?\\n")
        sys.exit(1)
    found, status = [], 0
    for ref in args[2:]:
        image = state["images"].get(ref)
        if image is None:
            sys.stderr.write(f"Error: No such image: {ref}\\n")
            status = 1
        else:
            found.append(image)
    print(json.dumps(found))
    sys.exit(status)
sys.exit(1)
"""


@dataclass
class FakeCli:
    """A docker CLI of our own that answers from ``state.json`` and logs each call."""

    path: Path

    def state(self, **values: Any) -> None:
        file = self.path.parent / "state.json"
        data = json.loads(file.read_text()) if file.exists() else {}
        file.write_text(json.dumps({**data, **values}))

    def calls(self) -> list[str]:
        log = self.path.parent / "calls.log"
        return log.read_text().splitlines() if log.exists() else []

    def change(self) -> None:
        """A new build of the CLI: same path, other size."""
        self.path.write_text(self.path.read_text() + "# rebuilt\n")


@pytest.fixture
def fake_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCli:
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    path = bin_dir / "docker"
    path.write_text(f"#!{sys.executable}\n{FAKE_DOCKER}")
    path.chmod(0o755)
    fake = FakeCli(path)
    fake.state(version="20.10.99", images={})
    monkeypatch.setenv("RELEASE_DOCKER", str(path))
    monkeypatch.delenv("DOCKER", raising=False)
    monkeypatch.setenv("RELEASE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "docker-config"))
    return fake


PROBES = ["version --format {{.Client.Version}}", "buildx version"]


def test_cli_detection_is_cached(fake_cli: FakeCli, monkeypatch: pytest.MonkeyPatch) -> None:
    first = ContainerEngine.detect()
    assert (first.cli, first.builder) == (str(fake_cli.path), "classic-buildkit")
    assert first.description.startswith(f"{fake_cli.path} 20.10.99, classic docker build")
    assert fake_cli.calls() == PROBES

    def no_process(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"a warm detection ran {args}")

    with monkeypatch.context() as mp:
        mp.setattr(subprocess, "run", no_process)
        mp.setattr(subprocess, "Popen", no_process)
        again = ContainerEngine.detect()
    assert (again.cli, again.builder, again.description) == (
        first.cli,
        first.builder,
        first.description,
    )
    assert fake_cli.calls() == PROBES


def test_a_changed_cli_or_a_bad_cache_entry_is_probed_again(fake_cli: FakeCli) -> None:
    cache = Path(os.environ["RELEASE_CACHE_DIR"]) / "engine-cli.json"
    ContainerEngine.detect()
    probes = len(fake_cli.calls())
    assert probes == 2 and cache.exists()

    fake_cli.state(version="20.10.100")
    fake_cli.change()  # another binary at the same path
    assert "20.10.100" in ContainerEngine.detect().description
    assert len(fake_cli.calls()) == probes + 2
    ContainerEngine.detect()
    assert len(fake_cli.calls()) == probes + 2

    for broken in ("{not json", "[]", '{"schema": 99, "clis": {}}'):
        cache.write_text(broken)
        assert "20.10.100" in ContainerEngine.detect().description
    assert len(fake_cli.calls()) == probes + 8
    data = json.loads(cache.read_text())
    (entry,) = data["clis"].values()
    entry["version"] = 20  # not a version string
    cache.write_text(json.dumps(data))
    assert "20.10.100" in ContainerEngine.detect().description
    assert len(fake_cli.calls()) == probes + 10

    # buildx installed as a plugin: the CLI itself is unchanged, the choice is not
    plugin = Path(os.environ["DOCKER_CONFIG"]) / "cli-plugins" / "docker-buildx"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("#!/bin/sh\n")
    chosen = ContainerEngine.detect()
    assert chosen.builder == "buildx"
    assert chosen.description == f"{fake_cli.path} 20.10.100, docker buildx build"
    assert len(fake_cli.calls()) == probes + 12


def test_an_unwritable_cache_still_detects(
    fake_cli: FakeCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("RELEASE_CACHE_DIR", str(blocker / "cache"))
    assert ContainerEngine.detect().builder == "classic-buildkit"
    assert ContainerEngine.detect().builder == "classic-buildkit"
    assert fake_cli.calls() == PROBES * 2


def test_one_inspect_answers_for_every_ref(fake_cli: FakeCli) -> None:
    base = {"Id": "sha256:" + "a" * 64, "RepoTags": ["nvidia/cuda:12.9.1-base-ubuntu22.04"]}
    sample_built = {"Id": "sha256:" + "b" * 64, "RepoTags": ["org/engine:v1", "org/engine:latest"]}
    odd = {"Id": "sha256:" + "c" * 64, "RepoTags": ["elsewhere:1"]}
    fake_cli.state(
        images={
            "docker.io/nvidia/cuda:12.9.1-base-ubuntu22.04": base,
            "org/engine:v1": sample_built,
            "org/engine": sample_built,
            sample_built["Id"]: sample_built,
            "b" * 12: sample_built,
            "odd:1": odd,  # resolved by the engine, but under no name we can match
        }
    )
    engine = ContainerEngine.detect()
    refs = [
        "docker.io/nvidia/cuda:12.9.1-base-ubuntu22.04",
        "org/engine:v1",
        "org/engine:v2",
        "org/engine",
        sample_built["Id"],
        "b" * 12,
        "org/engine:v1",
        "odd:1",
    ]
    found = engine.inspect_images(refs)
    base_info, built_info, odd_info = (
        ImageInfo.of(base),
        ImageInfo.of(sample_built),
        ImageInfo.of(odd),
    )
    assert found == {
        "docker.io/nvidia/cuda:12.9.1-base-ubuntu22.04": base_info,
        "org/engine:v1": built_info,
        "org/engine:v2": None,
        "org/engine": built_info,
        sample_built["Id"]: built_info,
        "b" * 12: built_info,
        "odd:1": odd_info,
    }
    inspects = [c for c in fake_cli.calls() if c.startswith("image inspect")]
    assert inspects == [
        "image inspect " + " ".join(dict.fromkeys(refs)),
        "image inspect odd:1",  # only the ref that could not be matched is asked again
    ]


def test_one_inspect_is_also_the_ping(fake_cli: FakeCli) -> None:
    fake_cli.state(daemon=False)
    engine = ContainerEngine.detect()
    with pytest.raises(EngineError) as info:
        engine.inspect_images(["org/engine:v1", "nvidia/cuda:12.9.1-base-ubuntu22.04"])
    message = info.value.one_line()
    assert message.startswith("no Docker Engine is reachable (Cannot connect to the Docker daemon")
    assert "start one as root: dockerd" in message and "DOCKER_HOST" in message


def test_an_inspect_asked_ahead_answers_the_next_one_once(fake_cli: FakeCli) -> None:
    sample_built = {"Id": "sha256:" + "b" * 64, "RepoTags": ["org/engine:v1"]}
    fake_cli.state(images={"org/engine:v1": sample_built})
    engine = ContainerEngine.detect()
    engine.inspect_ahead(["org/engine:v1", "org/engine:v2", "base:1"])
    asked = [c for c in fake_cli.calls() if c.startswith("image inspect")]
    assert engine.inspect_images(["org/engine:v2", "org/engine:v1"]) == {
        "org/engine:v2": None,
        "org/engine:v1": ImageInfo.of(sample_built),
    }
    rebuilt = {"Id": "sha256:" + "c" * 64, "RepoTags": ["org/engine:v2"]}
    fake_cli.state(images={"org/engine:v1": sample_built, "org/engine:v2": rebuilt})
    # used once: the next call asks the engine again, and sees what changed
    assert engine.inspect_images(["org/engine:v2"]) == {"org/engine:v2": ImageInfo.of(rebuilt)}
    inspects = [c for c in fake_cli.calls() if c.startswith("image inspect")]
    assert inspects == [
        "image inspect org/engine:v1 org/engine:v2 base:1",
        "image inspect org/engine:v2",
    ]
    assert len(asked) <= 1  # asked in the background: maybe not yet when the call returned


def test_an_inspect_ahead_of_other_refs_is_not_used(fake_cli: FakeCli) -> None:
    fake_cli.state(images={})
    engine = ContainerEngine.detect()
    engine.inspect_ahead(["org/engine:v1"])
    assert engine.inspect_images(["org/engine:v1", "base:1"]) == {
        "org/engine:v1": None,
        "base:1": None,
    }
    assert "image inspect org/engine:v1 base:1" in fake_cli.calls()


def test_an_inspect_ahead_raises_where_its_answer_is_taken(fake_cli: FakeCli) -> None:
    fake_cli.state(daemon=False)
    engine = ContainerEngine.detect()
    engine.inspect_ahead(["org/engine:v1"])  # no error here
    with pytest.raises(EngineError, match="no Docker Engine is reachable"):
        engine.inspect_images(["org/engine:v1"])


def test_only_a_workspace_for_an_image_task_asks_ahead(
    fake_cli: FakeCli, cut_engine_copy: SampleEngine
) -> None:
    from release.flows.context import ReleaseContext
    from release.images.workspace import Workspace

    root = cut_engine_copy.root

    def inspects() -> list[str]:
        return [c for c in fake_cli.calls() if c.startswith("image inspect")]

    # push, pull, a dry run: no question to the engine
    Workspace.open(ReleaseContext(root), "0.1.0rc1")
    assert inspects() == []
    ws = Workspace.open(ReleaseContext(root), "0.1.0rc1", inspect=True)
    tags = [ws.image(v) for v in ws.matrix.variants]
    bases = [v.base_image for v in ws.matrix.variants]
    assert ws.engine.inspect_images([*bases, *tags]) == dict.fromkeys([*bases, *tags])
    assert inspects() == ["image inspect " + " ".join(dict.fromkeys([*bases, *tags]))]


# -- the sample engine: build, smoke, snapshot ------------------------------------------------


@pytest.fixture(scope="module")
def sample_built(docker: ContainerEngine, sample: Repo) -> Iterator[CliResult]:
    """``release images.build --jobs 2`` in the sample engine, once for the module."""
    result = sample.release("images.build", "--jobs", "2", timeout=900)
    try:
        if result.code != 0:
            pytest.fail(f"building the sample engine failed:\n{result.output}")
        yield result
    finally:
        purge(docker, sample.name, sample.head)


def tag_of(repo: Repo, variant: str) -> str:
    return f"{repo.name}:v0.1.0rc1" + ("" if variant == "cu130" else f"-{variant}")


@images
def test_build_every_variant(
    sample_built: CliResult, sample: Repo, docker: ContainerEngine
) -> None:
    out = sample_built.stdout
    assert re.search(
        r"^builder: \S+ \S+, (classic docker build with BuildKit|docker buildx build)",
        out,
        re.MULTILINE,
    )
    assert "version 0.1.0rc1 (tag), revision " + sample.head[:10] in out
    summary = out.split("summary:\n", 1)[1].splitlines()
    assert len(summary) == 3
    for line, variant in zip(summary, VARIANTS, strict=True):
        assert line.startswith(f"  build({variant}): built -> {tag_of(sample, variant)} in "), line
        assert docker.image_id(tag_of(sample, variant)) is not None
    logs = sample.state / "logs"
    assert all((logs / f"build-{v}.log").exists() for v in VARIANTS)
    durations = json.loads((logs / "durations.json").read_text())  # the next run's build order
    assert sorted(durations) == sorted(VARIANTS)
    assert all(seconds > 0 for seconds in durations.values())


@images
def test_image_labels_and_build_args(
    sample_built: CliResult, sample: Repo, docker: ContainerEngine
) -> None:
    epoch = int(sample.git("log", "-1", "--format=%ct", "HEAD"))
    created = dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for variant, cuda in VARIANTS.items():
        tag = tag_of(sample, variant)
        found = labels(docker, tag)
        assert found["org.opencontainers.image.version"] == "0.1.0rc1"
        assert found["org.opencontainers.image.revision"] == sample.head
        assert found["org.opencontainers.image.created"] == created  # the commit time, not now
        assert found["org.opencontainers.image.source"] == "https://github.com/example/tinyengine"
        base = f"nvidia/cuda:{cuda}-base-ubuntu{UBUNTU[variant]}"
        assert found["org.opencontainers.image.base.name"] == base_name(docker, base)
        assert found["org.opencontainers.image.ref.name"] == "v0.1.0rc1"  # the tag built
        assert found["org.opencontainers.image.title"] == "tinyengine"  # from [project]
        assert found["org.opencontainers.image.description"].startswith("A tiny inference")
        assert found.get("org.opencontainers.image.base.digest") == base_digest(docker, base)
        assert "org.release.dirty" not in found and "org.release.shallow" not in found
        assert found["org.release.variant"] == variant
        assert found["org.release.cuda"] == cuda
        assert found["org.release.managed"] == "true"
        assert found["org.release.input-digest"].startswith("sha256:")
        # the snapshot rule's build step ran only where the rule applies, and without the
        # version in its cache key: the next rc reuses it from the build cache
        history = docker.run(
            ["image", "history", "--no-trunc", "--format", "{{.CreatedBy}}", tag]
        ).stdout.splitlines()
        step = next(
            line for line in history if 'install_snapshot_runtime.sh "${CRIU_SUITE}"; fi' in line
        )
        wanted = "1" if variant == "cu130" else "0"
        assert f"INSTALL_SNAPSHOT_RUNTIME={wanted} " in step
        assert f"CUDA_VERSION={cuda} " in step and "ENGINE_VERSION" not in step
        assert "CRIU_SUITE=forky " in step
        stamp = next(line for line in history if "_version.py" in line)
        assert "ENGINE_VERSION=0.1.0rc1 " in stamp


@images
def test_rebuild_says_unchanged(
    sample_built: CliResult, sample: Repo, docker: ContainerEngine
) -> None:
    before = {v: docker.image_id(tag_of(sample, v)) for v in VARIANTS}
    again = sample.release("images.build", "--jobs", "2")
    assert again.code == 0, again.output
    summary = again.stdout.split("summary:\n", 1)[1].splitlines()
    for line, variant in zip(summary, VARIANTS, strict=True):
        expected = f"  build({variant}): unchanged, not rebuilt -> {tag_of(sample, variant)}"
        assert line.startswith(expected), line
    assert ": building" not in again.stdout
    assert {v: docker.image_id(tag_of(sample, v)) for v in VARIANTS} == before


@images
def test_a_dirty_tree_builds_only_when_allowed_and_says_so(
    sample_built: CliResult, sample: Repo, docker: ContainerEngine, tmp_path: Path
) -> None:
    """An rc tester's second clone: clean, it finds the same input digest as the first
    clone (another directory, another origin); with a tracked file changed and an untracked
    one in the context, it refuses, then with --allow-dirty builds an image whose version,
    tag and labels say it is not the commit alone, and smoke checks it as that."""
    subprocess.run(
        ["git", "clone", "--quiet", str(sample.root), str(tmp_path / "clone")], check=True
    )
    tester = Repo(tmp_path / "clone", sample.name, sample.env)
    clean = tester.release("images.build", "--variant", "cu129")
    assert clean.code == 0, clean.output
    assert f"build(cu129): unchanged, not rebuilt -> {tag_of(sample, 'cu129')}" in clean.stdout
    (tester.root / "README.md").write_text("edited by the tester\n", encoding="utf-8")
    (tester.root / "notes.txt").write_text("scratch\n", encoding="utf-8")
    before = repo_state(tester.root)
    refused = tester.release("images.build", "--variant", "cu129")
    assert refused.code == 3 and refused.stderr.count("\n") == 1, refused.output
    assert "differs from HEAD (README.md, notes.txt)" in refused.stderr
    assert "--allow-dirty (to build it as 0.1.0rc1+dirty)" in refused.stderr
    assert repo_state(tester.root) == before
    dirty_tag = f"{sample.name}:v0.1.0rc1-dirty-cu129"
    try:
        result = tester.release("images.build", "--variant", "cu129", "--allow-dirty")
        assert result.code == 0, result.output
        assert f"version 0.1.0rc1+dirty (tag), revision {sample.head[:10]}-dirty" in result.stdout
        assert "building uncommitted changes (--allow-dirty): README.md, notes.txt" in result.stdout
        assert f"build(cu129): built -> {dirty_tag} in " in result.stdout
        found = labels(docker, dirty_tag)
        assert found["org.opencontainers.image.version"] == "0.1.0rc1+dirty"
        assert found["org.opencontainers.image.revision"] == sample.head + "-dirty"
        assert found["org.release.dirty"] == "true"
        assert found["org.opencontainers.image.source"] == "https://github.com/example/tinyengine"
        base = "nvidia/cuda:12.9.1-base-ubuntu22.04"
        assert found["org.opencontainers.image.base.name"] == base_name(docker, base)
        assert "org.opencontainers.image.ref.name" not in found  # not the tag's image
        assert found.get("org.opencontainers.image.base.digest") == base_digest(docker, base)
        assert (
            found["org.release.input-digest"]
            != labels(docker, tag_of(sample, "cu129"))["org.release.input-digest"]
        )
        smoked = tester.release("images.smoke", "--variant", "cu129", "--allow-dirty")
        assert smoked.code == 0, smoked.output
        assert "passed    tinyengine imports and reports 0.1.0rc1+dirty" in smoked.stdout
        assert "passed    labels: version, revision, variant, CUDA" in smoked.stdout
    finally:
        docker.remove_image(dirty_tag)  # the rc's own images stay for the other tests


@images
def test_smoke_every_variant(
    sample_built: CliResult, sample: Repo, docker: ContainerEngine
) -> None:
    result = sample.release("images.smoke")
    assert result.code == 0, result.output
    out = result.stdout
    for variant, cuda in VARIANTS.items():
        section = smoke_section(out, variant)
        standin = labels(docker, tag_of(sample, variant)).get("org.release.standin") == "true"
        marker = f" {STANDIN_MARKER}" if standin else ""
        assert section.splitlines()[0] == f"smoke({variant}): {tag_of(sample, variant)}{marker}"
        assert check_lines(section, "passed") == [
            "tinyengine imports and reports 0.1.0rc1",
            f"CUDA_VERSION is {cuda}",
            f"/usr/local/cuda/version.json says {cuda}",
            "labels: version, revision, variant, CUDA",
            "entrypoint answers --help",
            "serves a completion",
        ]
        assert check_lines(section, "not run") == ["GPU visible (nvidia-smi)"]  # never "passed"
        assert section.splitlines()[-1] == f"smoke({variant}): passed: 6 passed, 1 not run"
        record = json.loads((sample.state / "smoke" / "0.1.0rc1" / f"{variant}.json").read_text())
        assert record["passed"] is True and record["standin_base"] is standin
        assert record["image_id"] == docker.image_id(tag_of(sample, variant))
        assert [c["status"] for c in record["checks"]] == ["passed"] * 6 + ["not run"]
    assert containers(docker, f"ancestor={tag_of(sample, 'cu129')}") == []


@images
def test_smoke_json_is_one_document_for_every_variant(
    sample_built: CliResult, sample: Repo
) -> None:
    result = sample.release("images.smoke", "--json")
    assert result.code == 0, result.output
    document = json.loads(result.stdout)  # the whole of stdout: one document
    assert document["version"] == "0.1.0rc1" and document["passed"] is True
    assert [v["variant"] for v in document["variants"]] == list(VARIANTS)
    assert all(v["checks"] for v in document["variants"])
    assert "smoke(cu128): passed: 6 passed, 1 not run" in result.stderr  # the run's lines


@pytest.fixture(scope="module")
def snapshotted(sample_built: CliResult, sample: Repo) -> CliResult:
    return sample.release("images.snapshot")


@images
def test_snapshot_only_where_the_rule_applies(
    snapshotted: CliResult, sample: Repo, docker: ContainerEngine
) -> None:
    assert snapshotted.code == 0, snapshotted.output
    out = snapshotted.stdout
    assert f"snapshot(cu130): {tag_of(sample, 'cu130')}" in out
    assert "snapshot(cu128)" not in out and "snapshot(cu129)" not in out
    assert re.search(
        r"^  checkpoint/restore round trip: passed - restored into a fresh container and "
        r"answered; 2 check\(s\) of the carried state passed; cold start \d+ ms",
        out,
        re.MULTILINE,
    ), out
    assert "baseline: none (first record of this variant)" in out
    store = sample.state / "snapshots"
    records = sorted(p.relative_to(store).as_posix() for p in store.rglob("*.json"))
    assert records == ["0.1.0rc1/cu130.json"]
    record = json.loads((store / "0.1.0rc1" / "cu130.json").read_text())
    assert record["variant"] == "cu130" and record["version"] == "0.1.0rc1"
    assert record["revision"] == sample.head
    assert record["image_id"] == docker.image_id(tag_of(sample, "cu130"))
    assert record["snapshot_runtime"]["passed"] is True
    state = record["state"]
    assert state["cuda"]["CUDA_VERSION"] == "13.0.1" and state["cuda"]["version.json"] == "13.0.1"
    assert state["snapshot_runtime"]["criu"]  # the runtime the cu130 image installed
    if not Path("/proc/driver/nvidia/version").exists():
        assert state["driver"] == "no GPU"
    assert state["os"]["id"] and state["python"]["version"].startswith("3.")
    assert any(path.endswith(".so.6") for path in state["libraries"])
    assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in state["libraries"].values())


@images
@pytest.mark.parametrize("variant", ["cu128", "cu129"])
def test_snapshot_is_refused_for_cuda_12(
    snapshotted: CliResult, sample: Repo, variant: str, docker: ContainerEngine
) -> None:
    result = sample.release("images.snapshot", "--variant", variant)
    assert result.code == 2, result.output
    assert result.stderr.strip() == (
        f"error: variant {variant} (CUDA {VARIANTS[variant]}) has no snapshot: "
        "the snapshot rule cuda !=12.* leaves it out"
    )
    assert not list((sample.state / "snapshots").rglob(f"{variant}.json"))
    assert containers(docker, f"ancestor={tag_of(sample, variant)}") == []


@images
def test_snapshot_diffs_against_a_baseline(
    snapshotted: CliResult, sample: Repo, tmp_path: Path
) -> None:
    record = json.loads((sample.state / "snapshots" / "0.1.0rc1" / "cu130.json").read_text())
    state = record["state"]
    criu = state["snapshot_runtime"]["criu"]
    state["snapshot_runtime"]["criu"] = "Version: 0.1"
    state["libraries"]["/usr/lib/libgone.so.1"] = "0" * 64
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(record))
    result = sample.release("images.snapshot", "--baseline", str(baseline))
    assert result.code == 0, result.output
    assert f"2 change(s) against {baseline}:" in result.stdout
    assert f"    changed snapshot_runtime.criu: Version: 0.1 -> {criu}" in result.stdout
    assert f"    removed libraries./usr/lib/libgone.so.1 (was {'0' * 64})" in result.stdout
    unchanged = tmp_path / "same.json"
    shutil.copy(sample.state / "snapshots" / "0.1.0rc1" / "cu130.json", unchanged)
    result = sample.release("images.snapshot", "--variant", "cu130", "--baseline", str(unchanged))
    assert result.code == 0 and f"no change against {unchanged}" in result.stdout


@images
def test_nox_sessions_in_the_engine_repo(
    sample_built: CliResult, sample: Repo, docker: ContainerEngine
) -> None:
    listed = sample.nox("-l", "--json", "-t", "images")
    assert listed.code == 0, listed.output
    assert [s["session"] for s in json.loads(listed.stdout)] == [
        "build(cu128)",
        "build(cu129)",
        "build(cu130)",
        "smoke(cu128)",
        "smoke(cu129)",
        "smoke(cu130)",
        "snapshot(cu130)",
    ]
    image = docker.image_id(tag_of(sample, "cu129"))
    result = sample.nox("-s", "build(cu129)")
    assert result.code == 0, result.output
    assert f"build(cu129): unchanged, not rebuilt -> {tag_of(sample, 'cu129')}" in result.stderr
    assert "Session build(cu129) was successful" in result.stderr
    assert "git.cmd" not in result.output  # no library debug lines in a session's output
    assert docker.image_id(tag_of(sample, "cu129")) == image
    result = sample.nox("-s", "smoke(cu129)")
    assert result.code == 0, result.output
    assert "smoke(cu129): passed: 6 passed, 1 not run" in result.stderr
    result = sample.nox("-s", "snapshot(cu129)")
    assert result.code != 0
    assert "Sessions not found: snapshot(cu129)" in result.stderr
    assert not list((sample.state / "snapshots").rglob("cu129.json"))


@images
def test_context_files_match_what_docker_copies(docker: ContainerEngine, tmp_path: Path) -> None:
    """``context_files`` (the input digest's view) agrees with docker's own .dockerignore."""
    context = tmp_path / "ctx"
    files = {
        ".dockerignore": "# tests\n**/__pycache__\n*.pyc\n.git\ndocs\n!docs/keep.md\n"
        "build/**/*.o\n**/*.tmp\nsecret*\n!secrets.md\n",
        "engine/__init__.py": "",
        "engine/__pycache__/x.pyc": "",
        "engine/mod.pyc": "",
        "top.pyc": "",
        "docs/index.md": "",
        "docs/keep.md": "",
        "build/a/b/x.o": "",
        "build/a/x.c": "",
        "deep/er/scratch.tmp": "",
        "scratch.tmp": "",
        ".git/HEAD": "",
        "secret.key": "",
        "secrets.md": "",
        "README.md": "",
    }
    for rel, text in files.items():
        (context / rel).parent.mkdir(parents=True, exist_ok=True)
        (context / rel).write_text(text)
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM scratch\nCOPY . /ctx/\n")
    iid = tmp_path / "iid"
    outcome = docker.build(
        context=context,
        dockerfile=dockerfile,
        build_args={},
        labels={"org.release.managed": "true"},
        iidfile=iid,
        platform=None,
        log=tmp_path / "build.log",
    )
    assert outcome.ok, (tmp_path / "build.log").read_text()
    image = iid.read_text().strip()
    try:
        archive = tmp_path / "image.tar"
        subprocess.run(
            [docker.cli, "image", "save", "--output", str(archive), image], check=True, timeout=120
        )
        copied: set[str] = set()
        with tarfile.open(archive) as outer:
            for member in outer.getmembers():
                if member.name.endswith("layer.tar"):
                    layer = outer.extractfile(member)
                    assert layer is not None
                    with tarfile.open(fileobj=layer) as inner:
                        copied |= {
                            m.name.removeprefix("ctx/")
                            for m in inner.getmembers()
                            if m.isfile() and m.name.startswith("ctx/")
                        }
    finally:
        docker.remove_image(image)
    ours = {p.relative_to(context).as_posix() for p in context_files(context)}
    assert ours == copied
    assert "engine/mod.pyc" in ours and "secrets.md" in ours and "docs/keep.md" in ours


@images
def test_one_inspect_against_the_engine(
    docker: ContainerEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "Dockerfile").write_text("FROM scratch\nLABEL org.release.managed=true\n")
    iid = tmp_path / "iid"
    outcome = docker.build(
        context=tmp_path,
        dockerfile=tmp_path / "Dockerfile",
        build_args={},
        labels={},
        iidfile=iid,
        platform=None,
        log=tmp_path / "build.log",
    )
    assert outcome.ok, (tmp_path / "build.log").read_text()
    image = iid.read_text().strip()
    name = unique_name()
    try:
        docker.tag(image, [f"{name}:a", f"{name}:b"])
        refs = [f"{name}:a", f"docker.io/{name}:b", f"{name}:missing", image, image[7:19]]
        found = docker.inspect_images(refs)
        assert found[f"{name}:missing"] is None
        for ref in refs:
            if ref != f"{name}:missing":
                assert found[ref] == docker.inspect_image(ref), ref
                assert (found[ref] or ImageInfo("")).id == image
        monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
        with pytest.raises(EngineError) as info:
            docker.inspect_images(refs)
        assert info.value.one_line().startswith("no Docker Engine is reachable (")
        assert "start one as root: dockerd" in info.value.one_line()
    finally:
        monkeypatch.delenv("DOCKER_HOST", raising=False)
        docker.remove_image(image)


@images
def test_a_rebuilt_tag_leaves_no_old_image_behind(docker: ContainerEngine, tmp_path: Path) -> None:
    """The image a tag pointed at before a rebuild is removed, unless a container uses it
    or another tag points at it."""
    repo = make_engine_repo(
        tmp_path / "engine",
        tmp_path / "home",
        variants=FAIL_VARIANTS[1:2],
        checks=[],
        default="good",
    )
    tag = f"{repo.name}:v0.1.0"
    made: list[str] = []
    revisions: list[str] = []
    user: str | None = None

    def rebuild() -> str:
        if made:  # a new commit: a new revision label, so a new image
            (repo.root / "README.md").write_text(f"change {len(made)}\n")
            repo.git("add", "--all")
            repo.git("commit", "--quiet", "-m", f"Change {len(made)}")
        revisions.append(repo.head)
        result = repo.release("images.build", "--version", "0.1.0")
        assert result.code == 0, result.output
        assert "build(good): built -> " in result.stdout, result.stdout
        image = docker.image_id(tag)
        assert image is not None and image not in made
        made.append(image)
        return image

    try:
        first = rebuild()
        second = rebuild()
        assert docker.inspect_image(first) is None  # dangling once re-tagged: removed
        user = docker.run(
            ["create", "--label", "org.release.managed=true", second, "true"]
        ).stdout.strip()
        third = rebuild()
        kept = docker.inspect_image(second)  # a (stopped) container uses it: kept
        assert kept is not None and not kept.repo_tags
        docker.tag(third, [f"{repo.name}:pinned"])
        rebuild()
        kept = docker.inspect_image(third)  # another tag points at it: kept
        assert kept is not None and kept.repo_tags == (f"{repo.name}:pinned",)
    finally:
        if user:
            docker.remove_container(user)
        for image in made:
            docker.remove_image(image)
        for revision in revisions:
            purge(docker, repo.name, revision)


# -- failure paths, for real ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def failing(docker: ContainerEngine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Repo]:
    """An engine whose ``bad`` variant's Dockerfile step fails; its smoke config has a failing
    check and a check that hangs."""
    root = tmp_path_factory.mktemp("failing")
    repo = make_engine_repo(
        root / "engine",
        tmp_path_factory.mktemp("home"),
        variants=FAIL_VARIANTS,
        checks=FAIL_CHECKS,
        default="good",
        dockerignore=False,
    )
    try:
        yield repo
    finally:
        purge(docker, repo.name, repo.head)


def summary_of(result: CliResult) -> dict[str, str]:
    """The build summary: variant -> what became of it (a failed build's log lines left out)."""
    return {variant: said[0] for variant, said in summary_lines(result).items()}


def summary_lines(result: CliResult) -> dict[str, list[str]]:
    """The build summary: variant -> its summary line, then its log's last lines if it failed."""
    out: dict[str, list[str]] = {}
    for line in result.stdout.split("summary:\n", 1)[1].splitlines():
        if line.startswith("      ") and out:
            out[list(out)[-1]].append(line[6:])
            continue
        match = re.fullmatch(r"  build\((\w+)\): (.*)", line)
        assert match, line
        out[match[1]] = [match[2]]
    return out


@images
def test_failed_step_stops_later_variants(failing: Repo, docker: ContainerEngine) -> None:
    result = failing.release("images.build", "--variant", "bad,late", "--jobs", "1")
    assert result.code == 1, result.output
    summary = summary_of(result)
    assert summary["bad"].startswith("FAILED: ") and "exit code: 3" in summary["bad"]
    assert "(log: " in summary["bad"]
    assert summary["late"] == (
        "not started (an earlier variant failed; --keep-going builds the rest)"
    )
    assert "error: 1 of 2 variant(s) failed to build: bad" in result.stderr
    log = (failing.state / "logs" / "build-bad.log").read_text()
    assert "this step fails on purpose" in log
    # the failed step's last log lines follow its summary line, the path still in it
    tail = summary_lines(result)["bad"][1:]
    assert tail == [line.rstrip() for line in log.splitlines() if line.strip()][-10:]
    assert any(re.fullmatch(r"#\d+ [\d.]+ this step fails on purpose", line) for line in tail)
    assert summary_lines(result)["late"] == [summary["late"]]  # no log lines of a build not run
    assert docker.image_id(f"{failing.name}:v0.1.0-late") is None
    assert docker.image_id(f"{failing.name}:v0.1.0-bad") is None


@images
def test_keep_going_builds_the_others(failing: Repo, docker: ContainerEngine) -> None:
    result = failing.release(
        "images.build", "--variant", "bad,good,late", "--jobs", "2", "--keep-going"
    )
    assert result.code == 1, result.output
    summary = summary_of(result)
    assert summary["bad"].startswith("FAILED: ") and "exit code: 3" in summary["bad"]
    tags = {"good": f"{failing.name}:v0.1.0", "late": f"{failing.name}:v0.1.0-late"}
    for variant, tag in tags.items():
        assert re.match(rf"(built|unchanged, not rebuilt) -> {re.escape(tag)}", summary[variant])
        assert labels(docker, tag)["org.release.variant"] == variant
    assert "error: 1 of 3 variant(s) failed to build: bad" in result.stderr
    assert docker.image_id(f"{failing.name}:v0.1.0-bad") is None
    # the context includes .git, where the logs of the build just made were written
    again = failing.release("images.build", "--variant", "good,late")
    assert again.code == 0, again.output
    assert summary_of(again) == {
        variant: f"unchanged, not rebuilt -> {tag}{standin_note(docker, tag)}"
        for variant, tag in tags.items()
    }
    assert managed_leftovers(docker, failing.head) == NOTHING_LEFT
    # no remote and no repo-url: no source label
    assert "org.opencontainers.image.source" not in labels(docker, f"{failing.name}:v0.1.0")


@pytest.fixture(scope="module")
def failing_smoke(failing: Repo) -> tuple[CliResult, float]:
    sample_built = failing.release("images.build", "--variant", "good")
    assert sample_built.code == 0, sample_built.output
    started = time.monotonic()
    result = failing.release("images.smoke", "--variant", "good")
    return result, time.monotonic() - started


@images
def test_a_failing_smoke_check_fails_smoke(
    failing_smoke: tuple[CliResult, float], failing: Repo
) -> None:
    result, _ = failing_smoke
    assert result.code == 1, result.output
    assert check_lines(result.stdout, "failed") == ["says goodbye"]
    assert re.search(
        r"^  failed +says goodbye \(.*\) - "
        r"Expected string 'goodbye' not found in output 'hello\\n'$",
        result.stdout,
        re.MULTILINE,
    )
    assert check_lines(result.stdout, "passed") == [
        "CUDA_VERSION is 12.9.1",
        "/usr/local/cuda/version.json says 12.9.1",
        "labels: version, revision, variant, CUDA",
        "says hello",
    ]
    assert "smoke(good): FAILED: 4 passed, 1 failed, 1 timed out, 1 not run" in result.stdout
    assert result.stderr.strip() == "error: smoke failed for good"
    record = json.loads((failing.state / "smoke" / "0.1.0" / "good.json").read_text())
    assert record["passed"] is False
    assert {c["name"]: c["status"] for c in record["checks"]}["says goodbye"] == "failed"


@images
def test_smoke_json_of_a_failing_check_is_still_one_document(
    failing_smoke: tuple[CliResult, float], failing: Repo
) -> None:
    result = failing.release("images.smoke", "--variant", "good", "--json")
    assert result.code == 1, result.output
    document = json.loads(result.stdout)
    assert document["passed"] is False
    (good,) = document["variants"]
    assert {c["name"]: c["status"] for c in good["checks"]}["says goodbye"] == "failed"
    assert result.stderr.strip().endswith("error: smoke failed for good")


@images
def test_a_hanging_check_times_out_and_leaves_no_container(
    failing_smoke: tuple[CliResult, float],
    failing: Repo,
    docker: ContainerEngine,
) -> None:
    result, seconds = failing_smoke
    assert check_lines(result.stdout, "timed out") == ["hangs"]
    match = re.search(
        r"^  timed out hangs \((\d+\.\d)s\) - no answer within 3s$", result.stdout, re.MULTILINE
    )
    assert match and 2.5 <= float(match[1]) < 10, result.stdout
    assert seconds < 60  # not the 600 s the command would sleep
    tag = f"{failing.name}:v0.1.0"
    assert containers(docker, f"ancestor={tag}") == []
    assert managed_leftovers(docker, failing.head) == NOTHING_LEFT


@images
def test_static_checks_share_one_run_with_results_per_check(
    failing_smoke: tuple[CliResult, float],
    failing: Repo,
    docker: ContainerEngine,
    tmp_path: Path,
) -> None:
    """Metadata and file checks run in one container-structure-test run; each check still
    gets its own verdict, as when run alone."""
    from release.images.smoke import run_check, run_shared
    from release.images.smoke_checks import CheckStatus, SmokeCheck

    image = docker.image_id(f"{failing.name}:v0.1.0")
    assert image is not None

    def check(name: str, **test: Any) -> SmokeCheck:
        return SmokeCheck(name, {"schemaVersion": "2.0.0", **test}, 30)

    checks = [
        check("env", metadataTest={"envVars": [{"key": "CUDA_VERSION", "value": "12.9.1"}]}),
        check(
            "wrong label", metadataTest={"labels": [{"key": "org.release.variant", "value": "x"}]}
        ),
        check(
            "missing file",
            fileContentTests=[{"name": "gone", "path": "/nope.json", "expectedContents": ["x"]}],
        ),
        check(
            "version.json",
            fileContentTests=[
                {
                    "name": "cuda",
                    "path": "/usr/local/cuda/version.json",
                    "expectedContents": ["12\\.9\\.1"],
                }
            ],
        ),
    ]
    shared = run_shared(docker, image, checks, tmp_path)
    assert shared is not None
    assert [r.status for r in shared] == [
        CheckStatus.PASSED,
        CheckStatus.FAILED,
        CheckStatus.FAILED,
        CheckStatus.PASSED,
    ]
    alone = [run_check(docker, image, c, tmp_path) for c in checks]
    assert [(r.name, r.status) for r in shared] == [(r.name, r.status) for r in alone]
    assert shared[1].detail == alone[1].detail
    assert "does not match expected value: x" in shared[1].detail
    assert "/nope.json" in shared[2].detail and "/nope.json" in alone[2].detail
    assert containers(docker, f"ancestor={image}") == []


@pytest.fixture(scope="module")
def pausing(docker: ContainerEngine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Repo]:
    """An engine whose only build step sleeps a few seconds, as does its one smoke check."""
    root = tmp_path_factory.mktemp("pausing")
    variant = {"id": "pause", "cuda": "12.9.1", "base-image": BASE_1291}
    repo = make_engine_repo(
        root / "engine",
        tmp_path_factory.mktemp("home"),
        variants=[{**variant, "build-args": {"SLOW": "4"}}],
        checks=[{"name": "naps", "command": ["sleep", "2"], "timeout": 60}],
        default="pause",
    )
    try:
        yield repo
    finally:
        purge(docker, repo.name, repo.head)


HEARTBEAT = re.compile(r"build\(pause\): still running \((\d+)s\): (.*)")


@images
def test_a_build_not_on_a_terminal_says_it_is_alive(pausing: Repo) -> None:
    result = pausing.release("images.build", "--force", RELEASE_HEARTBEAT="1")
    assert result.code == 0, result.output
    lines = result.stdout.splitlines()
    beats = [(i, m) for i, line in enumerate(lines) if (m := HEARTBEAT.fullmatch(line))]
    sleeping = [m for _, m in beats if m[2].endswith("slow step: sleeping 4s")]
    # about one a second while the step sleeps, each with the step and the log's last line
    assert len(sleeping) >= 2, result.stdout
    assert all(m[2].startswith("building") and "; log: #" in m[2] for m in sleeping)
    assert int(sleeping[-1][1]) >= int(sleeping[0][1]) + 1
    done = next(i for i, line in enumerate(lines) if line.startswith("build(pause): built -> "))
    assert all(i < done for i, _ in beats)  # none after the build ended, nor after the run
    # the config's interval when the environment says nothing (a minute: none in this build)
    quiet = pausing.release("images.build", "--force")
    assert quiet.code == 0, quiet.output
    assert "still running" not in quiet.stdout
    bad = pausing.release("images.build", RELEASE_HEARTBEAT="often")
    assert bad.code == 2
    assert bad.stderr.strip() == (
        "error: RELEASE_HEARTBEAT: expected a positive number of seconds, got 'often'"
    )


HIDE_CURSOR = "\x1b[?25l"  # a live display takes the cursor while it draws


@images
def test_a_build_on_a_terminal_draws_a_live_line_per_variant(pausing: Repo) -> None:
    result = run_on_terminal(
        pausing.root, "images.build", "--no-cache", env=pausing.env, timeout=300
    )
    assert result.code == 0, result.output
    out = result.stdout
    assert HIDE_CURSOR in out, out
    live = out[out.index(HIDE_CURSOR) :]
    # the variant's line is redrawn as the build goes: its step, then its log's last line
    assert "build(pause): building" in live, live
    assert "slow step: sleep" in live, live  # the column may cut the line short
    # the steps are drawn in place, not said as lines of their own; the summary is
    plain = [line.strip() for line in _plain(out).splitlines()]
    assert not any(line.startswith("build(pause): base ") for line in plain), plain
    assert "summary:" in plain
    # under --json the terminal gets the document only: nothing drawn over it
    document = run_on_terminal(
        pausing.root, "images.build", "--force", "--json", env=pausing.env, timeout=300
    )
    assert document.code == 0, document.output
    assert HIDE_CURSOR not in document.stdout
    assert json.loads(document.stdout)["variants"][0]["variant"] == "pause"
    assert "build(pause): base " in document.stderr
    # a smoke check that runs for a while has its live line too, erased when its result
    # is said; piped, the result is the only line
    smoke = run_on_terminal(pausing.root, "images.smoke", env=pausing.env, timeout=300)
    assert smoke.code == 0, smoke.output
    assert HIDE_CURSOR in smoke.stdout and "smoke(pause): naps" in smoke.stdout, smoke.stdout
    assert check_lines(_plain(smoke.stdout), "passed").count("naps") == 1, smoke.stdout
    piped = pausing.release("images.smoke")
    assert piped.code == 0, piped.output
    assert check_lines(piped.stdout, "passed").count("naps") == 1, piped.stdout
    assert "\x1b" not in piped.stdout and "smoke(pause): naps" not in piped.stdout


def _plain(drawn: str) -> str:
    """What a terminal shows of ``drawn`` once the live lines are gone: its lines, with the
    cursor and colour sequences taken out."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn).replace("\r\n", "\n").replace("\r", "\n")


@pytest.fixture(scope="module")
def interruptible(
    docker: ContainerEngine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Repo]:
    """An engine with a slow build step and a smoke check that waits for a long time."""
    root = tmp_path_factory.mktemp("interrupt")
    repo = make_engine_repo(
        root / "engine",
        tmp_path_factory.mktemp("home"),
        variants=[
            {"id": "good", "cuda": "12.9.1", "base-image": BASE_1291},
            {"id": "slow", "cuda": "12.9.1", "base-image": BASE_1291, "build-args": {"SLOW": SLOW}},
        ],
        checks=[{"name": "waits", "command": ["sleep", "600"], "timeout": 300}],
        default="good",
        remote=REMOTE,
    )
    try:
        yield repo
    finally:
        purge(docker, repo.name, repo.head)


STOPS = [
    pytest.param(signal.SIGINT, True, 130, "interrupted", id="ctrl-c"),
    pytest.param(signal.SIGTERM, False, 143, "terminated", id="sigterm"),
]


@images
@pytest.mark.parametrize(("sig", "group", "code", "says"), STOPS)
def test_stopped_during_a_build_leaves_nothing(
    interruptible: Repo, docker: ContainerEngine, sig: int, group: bool, code: int, says: str
) -> None:
    log = interruptible.state / "logs" / "build-slow.log"
    log.unlink(missing_ok=True)  # a log from an earlier run would say "ready" too soon
    said: list[str] = []

    def sleeping(output: str) -> bool:  # the build log is written as the build goes
        if log.exists() and "slow step: sleeping" in log.read_text():
            said.append(output)
            return True
        return False

    stopped = interrupt_when(
        [sys.executable, "-m", "release", "images.build", "--variant", "slow"],
        interruptible.root,
        {**interruptible.env, "RELEASE_HEARTBEAT": "0.5"},  # stops with the run too
        sleeping,
        sig=sig,
        group=group,
    )
    assert stopped.code == code, stopped.output
    # output to a file (as to a CI log's pipe) shows the progress line while the build runs
    assert "build(slow): building" in said[0], said[0]
    assert f"error: {says}; re-run the same command to continue" in stopped.output
    assert stopped.seconds < 20  # not the minutes the step sleeps
    assert docker.image_id(f"{interruptible.name}:v0.1.0-slow") is None
    iid = interruptible.state / "logs" / "build-slow."  # build-slow.OWNER.iid
    assert wait_until_gone(f"--iidfile {iid}") == []  # no docker build client left
    assert wait_until_gone(f"sleep {SLOW}") == []  # the build step stopped too
    assert managed_leftovers(docker, interruptible.head) == NOTHING_LEFT


@images
@pytest.mark.parametrize(("sig", "group", "code", "says"), STOPS)
def test_stopped_during_smoke_leaves_no_container(
    interruptible: Repo, docker: ContainerEngine, sig: int, group: bool, code: int, says: str
) -> None:
    sample_built = interruptible.release("images.build", "--variant", "good")
    assert sample_built.code == 0, sample_built.output
    tag = f"{interruptible.name}:v0.1.0"

    def waiting(_output: str) -> bool:
        running = docker.run(
            ["ps", "--no-trunc", "--format", "{{.Command}}", "--filter", f"ancestor={tag}"]
        ).stdout
        return "sleep 600" in running

    stopped = interrupt_when(
        [sys.executable, "-m", "release", "images.smoke", "--variant", "good"],
        interruptible.root,
        interruptible.env,
        waiting,
        sig=sig,
        group=group,
    )
    assert stopped.code == code, stopped.output
    assert f"error: {says}" in stopped.output
    assert stopped.seconds < 30
    assert containers(docker, f"ancestor={tag}") == []
    assert managed_leftovers(docker, interruptible.head) == NOTHING_LEFT
    assert docker.image_id(tag) is not None  # the image itself stays: it was built, not interrupted


@images
def test_source_label_from_the_remote(interruptible: Repo, docker: ContainerEngine) -> None:
    """No repo-url in the config: the source label is the remote's URL as the repository's
    web URL (no ``.git``); created is the commit time (SOURCE_DATE_EPOCH semantics), not the
    build time."""
    result = interruptible.release("images.build", "--variant", "good")
    assert result.code == 0, result.output
    found = labels(docker, f"{interruptible.name}:v0.1.0")
    assert found["org.opencontainers.image.source"] == "https://git.example.com/org/testengine"
    epoch = int(interruptible.git("log", "-1", "--format=%ct"))
    assert found["org.opencontainers.image.created"] == (
        dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    )
    assert found["org.opencontainers.image.version"] == "0.1.0"  # from the tag at HEAD


@images
def test_a_local_remote_gives_no_source_label(docker: ContainerEngine, tmp_path: Path) -> None:
    """A remote that is a directory names no repository: the label is left out and the
    build says why once (not per variant). Given a URL later, the same sources are the
    same inputs: nothing is rebuilt."""
    elsewhere = tmp_path / "elsewhere.git"
    repo = make_engine_repo(
        tmp_path / "engine",
        tmp_path / "home",
        variants=FAIL_VARIANTS[1:],
        checks=[],
        default="good",
        remote=str(elsewhere),
    )
    try:
        result = repo.release("images.build")
        assert result.code == 0, result.output
        said = (
            f"no org.opencontainers.image.source label: remote 'origin' is '{elsewhere}', "
            "not the repository's URL (a local path?); set repo-url in [tool.release]"
        )
        assert result.stdout.count(said) == 1, result.stdout
        for tag in (f"{repo.name}:v0.1.0", f"{repo.name}:v0.1.0-late"):
            found = labels(docker, tag)
            assert "org.opencontainers.image.source" not in found
            assert found["org.opencontainers.image.base.name"] == base_name(docker, BASE_1291)
        repo.git("remote", "set-url", "origin", "git@git.example.com:org/testengine.git")
        again = repo.release("images.build")
        assert again.code == 0, again.output
        assert "source label" not in again.stdout
        assert "build(good): unchanged, not rebuilt" in again.stdout
        assert "build(late): unchanged, not rebuilt" in again.stdout
    finally:
        purge(docker, repo.name, repo.head)

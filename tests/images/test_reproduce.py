"""``release reproduce <tag>`` as an rc tester runs it: a maintainer's clone builds, smokes,
snapshots and publishes v0.1.0rc1's manifest to a bare remote; a second clone of that
remote rebuilds every variant and compares. A match, a drift provoked by a changed base,
a tag with no manifest and a local tag that is not the remote's, each on a real engine
and real repositories."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from release.adapters.engine import ContainerEngine
from release.core.accelerator import Accelerator
from release.core.manifest_records import Base, BuildRecord, Content, VariantEntry
from release.core.matrix import Variant
from release.errors import RefusedError
from release.images.reproduce import SUFFIX, _check_bases
from tests.conftest import repo_state
from tests.docker_support import interrupt_when, managed_leftovers, purge, remove_repository
from tests.engine_support import Repo, images

TAG = "v0.1.0rc1"
# the sample's snapshot options (CRIU's capabilities), which the tester allows
ALLOW = (
    "--allow-host",
    "cap-add=SYS_ADMIN,cap-add=SYS_PTRACE,cap-add=NET_ADMIN,cap-add=SYS_TIME,"
    "security-opt=seccomp=unconfined,security-opt=apparmor=unconfined",
)


@pytest.fixture(scope="module")
def published_sample(docker: ContainerEngine, sample: Repo) -> Iterator[Repo]:
    """The sample (cu130 on a base of its own, so changing it touches no other test) built,
    smoked, snapshotted, its manifest recorded and pushed with the tag."""
    base = f"{sample.name}-base:13.0.1"
    pyproject = sample.root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(
        text.replace(
            'base-image = "nvidia/cuda:13.0.1-base-ubuntu24.04"', f'base-image = "{base}"'
        ),
        encoding="utf-8",
    )
    sample.git("commit", "--quiet", "-am", "[CI/Build] cu130 on its own base (#121)")
    sample.git("tag", "-f", "-a", TAG, "-m", TAG)
    try:
        for step in ("images.build", "images.smoke", "images.snapshot", "manifest"):
            result = sample.release(step, *(["--jobs", "2"] if step == "images.build" else []))
            assert result.code == 0, result.output
        sample.git("push", "--quiet", "origin", TAG, f"refs/notes/release/{TAG}")
        yield sample
    finally:
        purge(docker, sample.name, sample.head)
        for image in docker.run(
            ["images", "--format", "{{.Repository}}:{{.Tag}}", "--filter",
             f"reference={sample.name}{SUFFIX}-*"], timeout=60
        ).stdout.split():  # fmt: skip
            docker.remove_image(image)
        remove_repository(docker, base.split(":")[0])


@pytest.fixture
def sample_tester(published_sample: Repo, tmp_path: Path) -> Repo:
    """A second clone of the remote, as an rc tester makes it."""
    remote = published_sample.git("remote", "get-url", "origin")
    root = tmp_path / "tester"
    subprocess.run(
        ["git", "clone", "--quiet", remote, str(root)], env=published_sample.env, check=True
    )
    return Repo(root, published_sample.name, published_sample.env)


def verdicts(output: str) -> dict[str, dict[str, str]]:
    """``variant: {field: state}`` from the printed verdict table."""
    found: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in output.splitlines():
        if (
            line[:1].isalnum()
            and ": " in line
            and line.split(":")[0] in ("cu128", "cu129", "cu130")
        ):
            current = found.setdefault(line.split(":")[0], {})
        elif current is not None and line.startswith("  ") and not line.startswith("    "):
            name, _, state = line.strip().partition("  ")
            current[name] = state.strip()
    return found


def rebuilt_images(docker: ContainerEngine, sample_tester: Repo) -> list[str]:
    """Every image a reproduce run of the tester's tagged (``NAME-reproduce-<run>:...``)."""
    pattern = f"reference={sample_tester.name}{SUFFIX}-*"
    return docker.run(["images", "--quiet", "--filter", pattern], timeout=60).stdout.split()


def manifest_of(repo: Repo) -> dict[str, Any]:
    note = repo.git("notes", f"--ref=refs/notes/release/{TAG}", "show", f"{TAG}^{{commit}}")
    return dict(json.loads(note))


@images
def test_a_testers_rebuild_of_the_rc_matches_field_by_field(
    sample_tester: Repo, published_sample: Repo, docker: ContainerEngine
) -> None:
    before = repo_state(sample_tester.root)
    result = sample_tester.release("reproduce", TAG, "--jobs", "2", *ALLOW, timeout=900)
    assert result.code == 0, result.output
    assert f"read {TAG} and its manifest (refs/notes/release/{TAG}) from origin" in result.stdout
    got = verdicts(result.stdout)
    assert set(got) == {"cu128", "cu129", "cu130"}
    for variant, fields in got.items():
        assert fields["content digest"] == "match", (variant, result.stdout)
        assert fields["input digest"] == "match" and fields["base"] == "match"
        assert fields["Python packages"] == fields["shared libraries"] == "match"
        assert fields["image id"] == "differs (expected)"
        assert fields["smoke"] == "match" and fields["snapshot"] == "match"
    assert result.stdout.rstrip().endswith(
        f"reproduce {TAG}: match (3 variant(s), against the manifest)"
    )
    # each smoke and snapshot block is said once: its head, each check, its verdict
    lines = result.stdout.splitlines()
    for variant in got:
        heads = [line for line in lines if line.startswith(f"smoke({variant}): ")]
        assert len(heads) == 2, (variant, heads)  # the head, then the verdict
        assert heads[-1].startswith(f"smoke({variant}): passed: "), heads
        trips = [
            at
            for at, line in enumerate(lines)
            if line.startswith(f"snapshot({variant}): ") and ": serve, warm" not in line
        ]
        assert len(trips) == (0 if variant.startswith("cu12") else 1), (variant, trips)
    # the rc's images were compared, not rebuilt under their tags; nothing rebuilt is left
    recorded = manifest_of(published_sample)["variants"]
    for variant, entry in recorded.items():
        tag = entry["build"]["tags"][0]
        assert docker.image_id(tag) == entry["build"]["image_id"], variant
    assert rebuilt_images(docker, sample_tester) == []
    # branch, HEAD, index, work tree and every ref as they were: the manifest was read
    # into the scratch clone, not fetched here; the one file written is the verdict, kept
    # for the rc page
    after = repo_state(sample_tester.root)
    kept = after["release_dir"].pop("reproduce/v0.1.0rc1.json")  # type: ignore[union-attr]
    assert json.loads(kept)["against"] == "the manifest" and json.loads(kept)["drifted"] == []
    after["release_dir"] = after["release_dir"] or None  # the directory made for it
    assert after == before


@images
def test_a_changed_base_is_reported_as_drift_and_fails(
    sample_tester: Repo, published_sample: Repo, docker: ContainerEngine, tmp_path: Path
) -> None:
    entry = manifest_of(published_sample)["variants"]["cu130"]["build"]
    ref = entry["base"]["ref"]
    original = docker.image_id(ref)
    assert original == entry["base"]["id"]
    changed = tmp_path / "changed"
    changed.mkdir()
    (changed / "Dockerfile").write_text(f"FROM {ref}\nRUN echo changed > /etc/base-changed\n")
    made = docker.run(["build", "--quiet", "--tag", ref, str(changed)], timeout=300, check=False)
    assert made.ok, made.stderr
    try:
        result = sample_tester.release("reproduce", TAG, "--variant", "cu130", *ALLOW, timeout=900)
    finally:
        docker.tag(original, [ref])
    assert result.code == 1, result.output
    fields = verdicts(result.stdout)["cu130"]
    assert fields["base"] == fields["input digest"] == fields["content digest"] == "drift"
    assert "~ etc " in result.stdout  # the part of the filesystem that changed
    assert fields["Python packages"] == "match"
    assert result.stdout.rstrip().endswith(
        f"reproduce {TAG}: DRIFT in cu130 (against the manifest)"
    )


class NoBases:
    """An engine that has no base and can pull none (only what ``_check_bases`` asks)."""

    def inspect_images(self, refs: list[str]) -> dict[str, None]:
        return dict.fromkeys(refs)

    def pull(self, ref: str) -> bool:
        return False


def test_a_recorded_base_that_cannot_be_had_is_refused_unless_a_standin_is_asked() -> None:
    variant = Variant("cu130", Accelerator("cuda", "13.0.1"), "nvidia/cuda:13.0.1-base-ubuntu24.04")

    def recorded(standin: bool) -> dict[str, VariantEntry]:
        base = Base(variant.base_image, "sha256:" + "b" * 64, "sha256:" + "c" * 64, standin)
        build = BuildRecord({}, base, "sha256:" + "1" * 64, (), "sha256:" + "d" * 64,
                            Content("sha256:" + "e" * 64, {}, 0), {})  # fmt: skip
        return {"cu130": VariantEntry(build=build)}

    engine: Any = NoBases()
    with pytest.raises(RefusedError) as refused:
        _check_bases(engine, [variant], recorded(False), standin=False)
    assert "is not here and cannot be pulled" in str(refused.value)
    assert "--standin" in str(refused.value)
    said = _check_bases(engine, [variant], recorded(False), standin=True)
    assert said == [
        "cu130: the recorded base nvidia/cuda:13.0.1-base-ubuntu24.04 cannot be had here: "
        "built on a stand-in, as asked (--standin); its base row says how it differs"
    ]
    # the rc itself was built on a stand-in: one is made the same way
    assert (
        "the rc was built on a stand-in"
        in _check_bases(engine, [variant], recorded(True), False)[0]
    )


@images
def test_two_testers_reproducing_one_tag_at_once_each_rebuild_their_own_images(
    sample_tester: Repo, published_sample: Repo, docker: ContainerEngine, tmp_path: Path
) -> None:
    """Each run tags its rebuilds with a name of its own, so neither smokes, compares or
    removes the other's images (a shared name gave one of them a false smoke drift)."""
    other = Repo(tmp_path / "other", published_sample.name, published_sample.env)
    remote = published_sample.git("remote", "get-url", "origin")
    subprocess.run(
        ["git", "clone", "--quiet", remote, str(other.root)], env=published_sample.env, check=True
    )
    argv = [sys.executable, "-m", "release", "reproduce", TAG, "--variant", "cu128"]
    runs = [
        subprocess.Popen(argv, cwd=repo.root, env={**os.environ, **repo.env}, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
        for repo in (sample_tester, other)
    ]  # fmt: skip
    said = [run.communicate(timeout=900)[0] for run in runs]
    for run, output in zip(runs, said, strict=True):
        assert run.returncode == 0, output
        assert output.rstrip().endswith(
            f"reproduce {TAG}: match (1 variant(s), against the manifest)"
        ), output
    names = [
        set(re.findall(rf"{re.escape(sample_tester.name)}{SUFFIX}-[0-9a-f]+", out)) for out in said
    ]
    assert all(len(n) == 1 for n in names) and names[0] != names[1], names
    assert rebuilt_images(docker, sample_tester) == []


@images
def test_an_interrupted_reproduce_leaves_no_image_container_or_checkout(
    sample_tester: Repo, docker: ContainerEngine, tmp_path: Path
) -> None:
    """SIGTERM, as CI's cancel sends it; Ctrl-C ends in the same clean-up (KeyboardInterrupt
    through the same ``finally``), tested for builds and smoke in test_images."""
    sig = signal.SIGTERM
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    before = repo_state(sample_tester.root)
    stopped = interrupt_when(
        [sys.executable, "-m", "release", "reproduce", TAG, *ALLOW],
        sample_tester.root,
        {**sample_tester.env, "TMPDIR": str(scratch)},
        lambda out: "smoke(cu1" in out,  # one variant is rebuilt and tagged, its smoke running
        sig=sig,
        group=False,
    )
    assert stopped.code == 143, stopped.output
    assert list(scratch.glob("release-reproduce*")) == []
    assert rebuilt_images(docker, sample_tester) == []
    # the containers of this commit's images (a container carries its image's labels):
    # others on the engine, another test's or anyone's, are not this run's to judge
    assert managed_leftovers(docker, sample_tester.git("rev-parse", "HEAD"))["containers"] == []
    assert repo_state(sample_tester.root) == before

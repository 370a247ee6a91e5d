"""``reproduce`` against a hostile remote: the tag, its note and its tree are written by
whoever can push, so each is refused before anything is built when it would widen what
runs here or when the note is not the tag's. No engine needed: every refusal comes first.

The sample engine is tagged and pushed with a manifest note that is faithful to the tag
(made from its own configuration, as a real build would record it); each test breaks one
thing, on the remote, and runs ``release reproduce`` in a tester's clone, comparing the
tester's repository (every ref, notes included) before and after.
"""

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
from release.core.host_access import asked_by, consent, spelt, widening
from release.core.manifest import ManifestError
from release.errors import UsageError
from release.flows.context import ReleaseContext
from release.sample import SampleEngine, make_sample_engine
from tests.conftest import run_cli
from tests.manifest_support import TAG
from tests.reproduce_support import (
    NO_ENGINE,
    SNAPSHOT_OPTIONS,
    clone_of,
    faithful,
    hostile,
    note,
    publish,
    reproduce,
)

# -- the tag's name -------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["v*", "v0.1.0rc[12]", "refs/tags/v0.1.0rc1", "v0.1.0rc1^{}", "v 1", "v0..1", ""]
)
def test_a_pattern_or_a_bad_name_is_refused_before_anything_is_fetched(
    maintainer: SampleEngine, tester_clone: Path, tmp_path: Path, name: str
) -> None:
    maintainer.repo.run("tag", "-a", "v0.1.0rc2", "-m", "v0.1.0rc2")
    publish(maintainer, "v0.1.0rc2", json.dumps(faithful(maintainer.repo, "v0.1.0rc2", "0.1.0rc2")))
    # the tester's own manifest of rc1, which a forced fetch of every note would overwrite
    note(GitRepo(tester_clone), TAG, '{"mine": true}\n')
    objects = GitRepo(tester_clone).out("count-objects", "-v")
    result, _ = reproduce(tester_clone, tmp_path, name)
    assert result.code == 2, result.output
    assert "is not a tag name" in result.stderr and result.stderr.count("\n") == 1
    assert GitRepo(tester_clone).out("count-objects", "-v") == objects  # nothing was fetched


def test_a_local_tag_that_is_not_the_remotes_is_refused_before_anything_is_fetched(
    tester_clone: Path, tmp_path: Path
) -> None:
    repo = GitRepo(tester_clone)
    repo.run("tag", "-f", "-a", TAG, "-m", "moved", "HEAD~1")
    result, _ = reproduce(tester_clone, tmp_path, TAG)
    assert result.code == 3, result.output
    assert f"the tag {TAG} here is not origin's" in result.stderr
    assert f"git tag -d {TAG}" in result.stderr


def test_a_tag_without_a_manifest_is_refused_in_one_line(
    maintainer: SampleEngine, tester_clone: Path, tmp_path: Path
) -> None:
    maintainer.repo.run("tag", "-a", "v0.1.0rc9", "-m", "v0.1.0rc9")
    maintainer.repo.run("push", "--quiet", "origin", "v0.1.0rc9")
    result, _ = reproduce(tester_clone, tmp_path, "v0.1.0rc9")
    assert result.code == 7, result.output
    assert "v0.1.0rc9 has no manifest (refs/notes/release/v0.1.0rc9)" in result.stderr
    assert "origin has no manifest for v0.1.0rc9" in result.stdout
    assert result.stderr.count("\n") == 1


def test_a_lightweight_tag_is_read_as_an_annotated_one(
    maintainer: SampleEngine, tester_clone: Path, tmp_path: Path
) -> None:
    """vllm-gaudi's first tags are lightweight (a ref to the commit, no tag object, so
    ``ls-remote`` lists no peeled line): read the same way, up to the same refusal."""
    maintainer.repo.run("tag", "v0.1.0rc2")
    publish(maintainer, "v0.1.0rc2", json.dumps(faithful(maintainer.repo, "v0.1.0rc2", "0.1.0rc2")))
    result, _ = reproduce(tester_clone, tmp_path, "v0.1.0rc2")
    assert result.code == 3, result.output
    assert (
        "read v0.1.0rc2 and its manifest (refs/notes/release/v0.1.0rc2) from origin"
        in result.stdout
    )
    assert "access to this host (snapshot: --cap-add=SYS_ADMIN" in result.stderr


@pytest.mark.parametrize("how", ["shallow", "worktree"])
def test_a_shallow_clone_or_a_linked_worktree_reads_the_tag_the_same_way(
    maintainer: SampleEngine, tmp_path: Path, how: str
) -> None:
    """A CI checkout is shallow (``git clone --shared`` of one copies only what its refs
    reach, so the fetched tag would be missing from the scratch clone); a tester may work
    in a linked worktree (its objects live in the common git directory)."""
    maintainer.repo.run("commit", "--quiet", "--allow-empty", "-m", "[Misc] after the rc (#300)")
    maintainer.repo.run("push", "--quiet", "origin", "HEAD:refs/heads/releases/v0.1.0")
    root = tmp_path / "checkout"
    if how == "shallow":
        url = f"file://{maintainer.remote}"
        branch = ["--branch", "releases/v0.1.0", "--no-tags"]
        subprocess.run(
            ["git", "clone", "--quiet", "--depth", "1", *branch, url, str(root)], check=True
        )
        assert GitRepo(root).rev(f"{TAG}^{{commit}}") is None  # the tag's commit is not here
    else:
        main = clone_of(maintainer, tmp_path / "main")
        GitRepo(main).run("worktree", "add", "--quiet", "--detach", str(root))
    shallow = (GitRepo(root).common_dir / "shallow").read_bytes() if how == "shallow" else None
    result, _ = reproduce(root, tmp_path, TAG)
    assert result.code == 3, result.output  # read, checked out, checked: no consent given
    assert "access to this host (snapshot: --cap-add=SYS_ADMIN" in result.stderr
    if shallow is not None:
        assert (GitRepo(root).common_dir / "shallow").read_bytes() == shallow


def test_a_refused_run_leaves_the_testers_own_manifest_note_as_it_was(
    maintainer: SampleEngine, tester_clone: Path, tmp_path: Path
) -> None:
    """The remote's note is read into the scratch clone only: a note the tester has for
    the tag (one made here, not pushed) is neither replaced nor fetched over."""
    note(GitRepo(tester_clone), TAG, '{"mine": true}\n')
    result, before = reproduce(tester_clone, tmp_path, TAG)  # refused: no consent to the options
    assert result.code == 3, result.output
    assert f"{notes_ref(TAG)} " in str(before["refs"])


# -- a manifest that is not the tag's -------------------------------------------


def _other_tag(d: dict[str, Any]) -> None:
    d["tag"] = "v0.0.9rc1"


def _other_commit(d: dict[str, Any]) -> None:
    d["commit"] = "0" * 40


def _late_epoch(d: dict[str, Any]) -> None:
    d["source_date_epoch"] += 1


def _absurd_epoch(d: dict[str, Any]) -> None:
    d["source_date_epoch"] = 10**30


def _base_swapped(d: dict[str, Any]) -> None:
    build_ = d["variants"]["cu130"]["build"]
    build_["build_args"]["BASE_IMAGE"] = "evil/base:latest"


def _frontend_added(d: dict[str, Any]) -> None:
    d["variants"]["cu129"]["build"]["build_args"]["BUILDKIT_SYNTAX"] = "evil/frontend:1"


def _base_ref_swapped(d: dict[str, Any]) -> None:
    d["variants"]["cu128"]["build"]["base"]["ref"] = "evil/base:latest"


def _variant_added(d: dict[str, Any]) -> None:
    d["variants"]["cu999"] = copy.deepcopy(d["variants"]["cu130"])


def _variant_dropped(d: dict[str, Any]) -> None:
    del d["variants"]["cu129"]


def _other_version(d: dict[str, Any]) -> None:
    d["version"] = "0.1.0rc7"


def _other_image(d: dict[str, Any]) -> None:
    d["image"] = "evil/engine"


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (_other_tag, "names another release (tag 'v0.0.9rc1'"),
        (_other_commit, "names another release (commit 000000000000"),
        (_late_epoch, "source_date_epoch"),
        (_absurd_epoch, "source_date_epoch: 1000000000000000000000000000000 is greater than"),
        (_base_swapped, "cu130: build args ~ BASE_IMAGE evil/base:latest ->"),
        (_frontend_added, "cu129: build args - BUILDKIT_SYNTAX evil/frontend:1"),
        (_base_ref_swapped, "cu128: base 'evil/base:latest', the tag's is nvidia/cuda:12.8.1"),
        (_variant_added, "variants 'cu128', 'cu129', 'cu130', 'cu999', the tag's are"),
        (_variant_dropped, "variants 'cu128', 'cu130', the tag's are cu128, cu129, cu130"),
        (_other_version, "version '0.1.0rc7', the tag's is 0.1.0rc1"),
        (_other_image, "image 'evil/engine', the tag's is example/tinyengine"),
    ],
)
def test_a_manifest_that_is_not_the_tags_is_refused_before_building(
    maintainer: SampleEngine,
    tester_clone: Path,
    tmp_path: Path,
    change: Callable[[dict[str, Any]], object],
    said: str,
) -> None:
    hostile(maintainer, change)
    result, _ = reproduce(tester_clone, tmp_path, TAG, "--allow-host", SNAPSHOT_OPTIONS)
    assert result.code == 7, result.output
    assert said in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1
    assert "match" not in result.stdout


def test_a_manifest_with_a_key_twice_is_refused_by_reproduce_and_status(
    maintainer: SampleEngine, tester_clone: Path, tmp_path: Path
) -> None:
    """JSON readers disagree on which of two values counts: a note with a variant twice
    (the second a copy that would pass) is no manifest at all."""
    text = json.dumps(faithful(maintainer.repo, TAG, "0.1.0rc1"), indent=2)
    entry = json.dumps({"cu130": {"build": {}}})[1:-1]
    publish(maintainer, TAG, text.replace('"variants": {', '"variants": {' + entry + ",", 1) + "\n")
    result, _ = reproduce(tester_clone, tmp_path, TAG, "--allow-host", SNAPSHOT_OPTIONS)
    assert result.code == 7, result.output
    assert "the key 'cu130' is there twice" in result.stderr
    maintainer.repo.run("switch", "--quiet", "releases/v0.1.0")
    status = run_cli(maintainer.root, "status", "--offline")
    assert "the key 'cu130' is there twice" in status.output
    assert "manifest: published" not in status.stdout


@pytest.mark.parametrize("change", [_other_tag, _other_commit, _absurd_epoch])
def test_status_does_not_show_a_manifest_that_is_not_the_tags_as_published(
    maintainer: SampleEngine, change: Callable[[dict[str, Any]], object]
) -> None:
    hostile(maintainer, change)
    result = run_cli(maintainer.root, "status", "--offline")
    assert result.code == 0, result.output
    assert "manifest: published" not in result.stdout
    assert f"the manifest of {TAG}" in result.stdout


def test_deeply_nested_json_in_a_note_is_refused_in_one_line(
    maintainer: SampleEngine, tester_clone: Path, tmp_path: Path
) -> None:
    publish(maintainer, TAG, "[" * 100_000 + "]" * 100_000 + "\n")
    result, _ = reproduce(tester_clone, tmp_path, TAG)
    assert result.code == 7, result.output
    assert "nested too deep" in result.stderr and "Traceback" not in result.stderr


# -- host access the tag asks for ----------------------------------------------


def test_the_tags_host_options_need_the_testers_consent_each(
    maintainer: SampleEngine, tester_clone: Path, tmp_path: Path
) -> None:
    """The sample's snapshot needs CRIU's capabilities; a tag that adds --privileged and a
    device to a smoke check gets them refused too, each named, until each is allowed."""
    pyproject = maintainer.root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(
        text.replace(
            "startup-timeout = 30\n",
            'startup-timeout = 30\nrun-options = ["--privileged", "--device", "/dev/kvm", '
            '"--cap-add", "CHOWN", "--cap-drop", "ALL", "--ipc", "host"]\n',
        ),
        encoding="utf-8",
    )
    maintainer.repo.run("commit", "--quiet", "-am", "[CI/Build] more access (#200)")
    maintainer.repo.run("tag", "-a", "v0.1.0rc2", "-m", "v0.1.0rc2")
    publish(maintainer, "v0.1.0rc2", json.dumps(faithful(maintainer.repo, "v0.1.0rc2", "0.1.0rc2")))
    result, _ = reproduce(tester_clone, tmp_path, "v0.1.0rc2")
    assert result.code == 3, result.output
    line = result.stderr
    assert line.count("\n") == 1
    assert "smoke check 'serves a completion': --privileged --device=/dev/kvm --ipc=host" in line
    assert "snapshot: --cap-add=SYS_ADMIN --cap-add=SYS_PTRACE" in line
    assert "CHOWN" not in line and "cap-drop" not in line  # the defaults and drops stay inside
    assert f"add --allow-host privileged,device=/dev/kvm,ipc=host,{SNAPSHOT_OPTIONS} (" in line
    assert "nothing was built" in line
    # consent to some: the rest are still refused, and only they are asked for
    partly, _ = reproduce(tester_clone, tmp_path, "v0.1.0rc2", "--allow-host", SNAPSHOT_OPTIONS)
    assert partly.code == 3, partly.output
    assert "add --allow-host privileged,device=/dev/kvm,ipc=host (nothing" in partly.stderr
    # a variant without the snapshot does not need its options: with the others allowed,
    # the run goes on to the engine (none answers here, so it stops there, exit 6)
    alone, _ = reproduce(
        tester_clone, tmp_path, "v0.1.0rc2", "--variant", "cu128", "--allow-host", "privileged",
        "--allow-host", "--device=/dev/kvm,--ipc host", env=NO_ENGINE,
    )  # fmt: skip
    assert alone.code == 6, alone.output
    assert "access to this host" not in alone.stderr and "no Docker Engine" in alone.stderr


def test_consent_values_are_checked_like_run_options() -> None:
    assert consent(["cap-add=SYS_ADMIN,--privileged", "--security-opt seccomp=unconfined"]) == {
        "--cap-add=SYS_ADMIN",
        "--privileged",
        "--security-opt=seccomp=unconfined",
    }
    for bad in (["volume=/:/host"], ["cap-add=SYS_ADMIN;rm"], ["mount=type=bind"]):
        with pytest.raises(UsageError):
            consent(bad)


def test_what_widens_a_containers_reach_into_the_host() -> None:
    given = (
        "--cap-add=SYS_ADMIN", "--cap-add=CAP_NET_RAW", "--cap-add=chown", "--cap-add=ALL",
        "--cap-drop=ALL", "--security-opt=seccomp=unconfined", "--security-opt=no-new-privileges",
        "--security-opt=apparmor=unconfined", "--security-opt=label=disable", "--privileged",
        "--device=/dev/fuse", "--gpus=all", "--ipc=host", "--ipc=private", "--runtime=runc",
        "--shm-size=8g", "--user=0", "--tmpfs=/x", "--env=A=1", "--sysctl=net.ipv4.ip_forward=1",
        "--ulimit=memlock=-1", "--pids-limit=-1", "--read-only", "--init",
    )  # fmt: skip
    assert widening(given) == (
        "--cap-add=SYS_ADMIN", "--cap-add=ALL", "--security-opt=seccomp=unconfined",
        "--security-opt=apparmor=unconfined", "--security-opt=label=disable", "--privileged",
        "--device=/dev/fuse", "--gpus=all", "--ipc=host", "--runtime=runc",
    )  # fmt: skip
    assert spelt(["--privileged", "--cap-add=SYS_ADMIN"]) == "privileged,cap-add=SYS_ADMIN"


def test_gpu_checks_ask_for_the_gpus_only_where_a_gpu_would_be_given(tmp_path: Path) -> None:
    matrix = ReleaseContext(make_sample_engine(tmp_path, with_remote=False).root).config.matrix
    assert matrix is not None
    cu128 = [matrix.variant("cu128")]
    assert asked_by(matrix, cu128, gpu=False) == {}
    assert asked_by(matrix, cu128, gpu=True) == {"the GPU smoke check": ("--gpus=all",)}
    assert set(asked_by(matrix, matrix.variants, gpu=False)) == {"snapshot"}


def test_a_final_is_rebuilt_as_the_rc_it_was_promoted_from(maintainer: SampleEngine) -> None:
    """The final's images are the rc's (promote tags them by id), so the final's manifest is
    read as that rc's build; the rc itself, sharing its commit with the final, as the rc.
    Only a final is promoted, and only from an rc of its version."""
    from release.core.manifest_records import Manifest
    from release.flows.manifest_store import published_manifest
    from release.images.promote import final_manifest
    from release.images.reproduce import _rebuild_of

    repo = maintainer.repo
    repo.run("tag", "-a", "v0.1.0", "-m", "v0.1.0")
    here = ReleaseContext(maintainer.root)
    assert here.config.matrix is not None
    rc = faithful(repo, TAG, "0.1.0rc1")
    final = final_manifest(Manifest.of(rc), here.config.matrix, "v0.1.0", "0.1.0").document()
    note(repo, "v0.1.0", json.dumps(final))
    commit = str(repo.rev(TAG))
    for tag, version in (("v0.1.0", "0.1.0"), (TAG, "0.1.0rc1")):
        read = published_manifest(repo, tag, commit)
        assert read is not None, tag
        assert (read.version.pep440(), read.built_as.pep440()) == (version, "0.1.0rc1")
        rebuild = _rebuild_of(here, read, ())
        assert rebuild.source.version == "0.1.0rc1", tag
        assert rebuild.matrix.name.startswith("example/tinyengine-reproduce-")
    # a final said to come from another release's rc is not this final's
    forged = copy.deepcopy(final) | {"promoted_from": final["promoted_from"] | {"tag": "v0.0.9rc1"}}
    note(repo, "v0.1.0", json.dumps(forged))
    with pytest.raises(ManifestError, match=r"promoted from 'v0\.0\.9rc1', which is not an rc"):
        published_manifest(repo, "v0.1.0", commit)
    # an rc is built, never promoted
    promoted_rc = copy.deepcopy(rc) | {"promoted_from": final["promoted_from"]}
    note(repo, TAG, json.dumps(promoted_rc))
    with pytest.raises(ManifestError, match=r"0\.1\.0rc1 is not a final: only a final is promoted"):
        published_manifest(repo, TAG, commit)

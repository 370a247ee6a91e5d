"""A PyTorch-style release line, end to end: one ``release/0.14`` branch carries
``v0.14.0-rc1``, ``-rc2``, ``v0.14.0``, then the patch release ``v0.14.1-rc1`` and
``v0.14.1``, configured from a file outside the tree (nothing committed for it). ``tag``,
``status``, ``promote``, ``push`` and the notes follow the newest tag on the branch, and
no rc of a version already final is ever proposed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from release.sample import AFTER_CUT, LATE_FIX, SampleEngine
from tests.config_support import run, status
from tests.conftest import repo_state, run_cli

BRANCH = "release/0.14"
PYTORCH = """\
main-branch = "main"
remote = "origin"
branch = "release/{major}.{minor}"
tag = "v{version}"
version-scheme = "pep440"
rc-spelling = "-rc{n}"
changelog = ""
repo-url = "https://github.com/example/tinyengine"
"""

pytestmark = pytest.mark.slow


@pytest.fixture
def line(engine: SampleEngine, tmp_path: Path) -> tuple[SampleEngine, Path]:
    """The sample engine with ``release/0.14`` cut where main was, main moved on."""
    config = tmp_path / "pytorch.toml"
    config.write_text(PYTORCH, encoding="utf-8")
    engine.repo.run("branch", BRANCH, "main")
    for change in (*AFTER_CUT, LATE_FIX):
        engine.commit(change)
    engine.repo.run("push", "--quiet", "origin", "main", BRANCH)
    engine.repo.run("switch", "--quiet", BRANCH)
    return engine, config


def test_a_release_line_carries_x_y_0_and_its_patch_release(line) -> None:
    engine, config = line
    batch, port, late = 109, 111, 112  # --port parsing, the build tools, HTTP 400

    state = status(engine, config)
    assert state["release"] == "0.14.0" and state["next_rc"] == "v0.14.0-rc1"

    run(engine, config, "pick", f"#{batch}", "--reason", "regression")
    assert "tagged v0.14.0-rc1" in run(engine, config, "tag").stdout
    run(engine, config, "pick", f"#{port}", "--reason", "release-only")
    assert "tagged v0.14.0-rc2" in run(engine, config, "tag").stdout
    run(engine, config, "push")
    assert status(engine, config)["next_command"].startswith("release promote")
    assert "tagged v0.14.0 on v0.14.0-rc2" in run(engine, config, "promote").stdout
    run(engine, config, "push")

    # released: the next tag is the patch release's first rc, never an rc of 0.14.0
    state = status(engine, config)
    assert (state["release"], state["final"]) == ("0.14.0", "v0.14.0")
    assert state["next_rc"] == "v0.14.1-rc1"
    assert state["next_command"] == "nothing: the release is final"
    before = repo_state(engine.root)
    dry = run(engine, config, "tag", "--dry-run").stdout
    assert dry.startswith("dry run, nothing changed: nothing to tag: release/0.14 has nothing")
    nothing = run(engine, config, "tag")
    assert "nothing to tag: release/0.14 has nothing new since v0.14.0" in nothing.stdout
    assert repo_state(engine.root) == before
    again = run(engine, config, "promote", code=3)
    assert "0.14.0 is already released (v0.14.0 exists); the next on this line is a patch" in (
        again.stderr
    )
    back = run(engine, config, "tag", "--version", "0.14.0rc3", code=3)
    assert "0.14.0rc3 is not greater than the latest tag of this release, 0.14.0; " in back.stderr
    assert "next valid: 0.14.1rc1" in back.stderr
    assert repo_state(engine.root) == before

    # a fix picked the plain-git way (no -x): counted by its PR, and tagged as 0.14.1-rc1
    engine.repo.run("cherry-pick", engine.shas[late])
    state = status(engine, config)
    assert state["untagged_commits"] == 1 and state["next_command"] == "release tag"
    assert state["picks_done"][-1]["from"] == engine.shas[late]
    assert state["picks_done"][-1]["how"] == f"PR #{late}"
    assert state["unpushed"] == [BRANCH]
    tagged = run(engine, config, "tag")
    assert "tagged v0.14.1-rc1" in tagged.stdout
    message = engine.repo.out("tag", "-l", "--format=%(contents)", "v0.14.1-rc1")
    assert "Changes v0.14.0..v0.14.1-rc1" in message
    assert f"#{late}" in message and f"#{batch}" not in message  # what 0.14.0 shipped is out

    state = status(engine, config)
    assert (state["release"], state["final"], state["next_rc"]) == ("0.14.1", None, "v0.14.1-rc2")
    assert state["unpushed"] == [BRANCH, "v0.14.1-rc1"]
    assert state["next_command"] == "release push"
    run(engine, config, "push")
    assert status(engine, config)["next_command"].startswith("release promote")
    assert "tagged v0.14.1 on v0.14.1-rc1" in run(engine, config, "promote").stdout
    run(engine, config, "push")

    state = status(engine, config)
    assert (state["release"], state["final"], state["next_rc"]) == (
        "0.14.1",
        "v0.14.1",
        "v0.14.2-rc1",
    )
    assert state["next_command"] == "nothing: the release is final" and state["unpushed"] == []
    made = ["v0.14.0-rc1", "v0.14.0-rc2", "v0.14.0", "v0.14.1-rc1", "v0.14.1"]
    assert sorted(engine.repo.out("tag", "--list", "v0.14*").split()) == sorted(made)
    remote = engine.repo.out("ls-remote", "--tags", "origin").split()
    assert [name for name in made if f"refs/tags/{name}" not in remote] == []


def test_a_patch_release_is_refused_before_its_x_y_0_is_final(line) -> None:
    engine, config = line
    run(engine, config, "tag")
    before = repo_state(engine.root)
    early = run(engine, config, "tag", "--version", "0.14.1rc1", code=3)
    assert "0.14.1rc1 is a later patch release, and 0.14.0 is not released yet" in early.stderr
    other = run(engine, config, "tag", "--version", "0.15.0rc1", code=2)
    assert "0.15.0rc1 is not a version of the 0.14.0 release branch" in other.stderr
    assert repo_state(engine.root) == before


def test_a_pick_without_x_is_counted_by_its_patch(line) -> None:
    """A backport that keeps the patch but not the subject nor -x: found by patch id."""
    engine, config = line
    batch = 109
    engine.repo.run("cherry-pick", "--no-commit", engine.shas[batch])
    engine.repo.run("commit", "--quiet", "-m", "Backport the batch limit fix")
    engine.repo.run("commit", "--quiet", "--allow-empty", "-m", "Bump the version")
    state = status(engine, config)
    assert [(p["from"], p["how"]) for p in state["picks_done"]] == [
        (engine.shas[batch], "same patch")
    ]
    text = run(engine, config, "status").stdout
    assert "picks:    1 done, 0 pending" in text and "(same patch)" in text


def test_the_picks_counted_are_kept_for_the_tip_and_main_only(line) -> None:
    """status keeps what it counted by (branch tip, main): asked again it reads neither
    history; a tip that moved is counted afresh; RELEASE_REPO_CACHE=0 keeps nothing."""
    engine, config = line
    cache = engine.root / ".git" / "release" / "picks.cache"
    on, off = {"RELEASE_REPO_CACHE": "1"}, {"RELEASE_REPO_CACHE": "0"}
    engine.repo.run("cherry-pick", engine.shas[109])  # no -x: counted by its PR
    assert json.loads(
        run_cli(engine.root, "--config", str(config), "status", "--json", env=off).stdout
    )["picks_done"]
    assert not cache.exists()

    def done(env: dict[str, str]) -> list[tuple[str, str]]:
        result = run_cli(engine.root, "--config", str(config), "status", "--json", env=env)
        assert result.code == 0, result.output
        return [(p["from"], p["how"]) for p in json.loads(result.stdout)["picks_done"]]

    first = done(on)
    assert cache.exists() and first == [(engine.shas[109], "PR #109")]
    kept = cache.stat().st_ino  # a count writes the file anew (an atomic write: a new inode)
    assert done(on) == first and cache.stat().st_ino == kept  # read, not counted again
    engine.repo.run("cherry-pick", engine.shas[111])
    assert done(on) == [*first, (engine.shas[111], "PR #111")]  # the tip moved: afresh


def test_picks_known_by_their_x_lines_are_kept_too(line) -> None:
    """A branch whose every pick carries its ``-x`` line is counted from its messages alone;
    on a long branch that read is most of a status, so it is kept as well."""
    engine, config = line
    cache = engine.root / ".git" / "release" / "picks.cache"
    on = {"RELEASE_REPO_CACHE": "1"}
    engine.repo.run("cherry-pick", "-x", engine.shas[109])

    def done() -> list[tuple[str, str]]:
        result = run_cli(engine.root, "--config", str(config), "status", "--json", env=on)
        assert result.code == 0, result.output
        return [(p["from"], p["how"]) for p in json.loads(result.stdout)["picks_done"]]

    assert not cache.exists()
    first = done()
    assert first == [(engine.shas[109], "-x")] and cache.exists()
    kept = cache.stat().st_ino
    assert done() == first and cache.stat().st_ino == kept  # read, not counted again


def test_an_rc1_tagged_on_main_at_the_branch_point_starts_the_line(line) -> None:
    """torchtune tags ``vX.Y.0-rc1`` on main where the release branch leaves it: the branch
    holds that rc (its history does), so the next tag is rc2, with rc1's range behind."""
    engine, config = line
    point = engine.repo.out("merge-base", "main", BRANCH).strip()
    engine.repo.run("tag", "-a", "-m", "v0.14.0-rc1", "v0.14.0-rc1", point)
    state = status(engine, config)
    assert (state["release"], state["next_rc"], state["untagged_commits"]) == (
        "0.14.0",
        "v0.14.0-rc2",
        0,
    )
    before = repo_state(engine.root)
    assert (
        "nothing to tag: release/0.14 has nothing new since v0.14.0-rc1"
        in run(engine, config, "tag").stdout
    )
    assert repo_state(engine.root) == before
    run(engine, config, "pick", "#109", "--reason", "regression")
    assert "tagged v0.14.0-rc2" in run(engine, config, "tag").stdout
    message = engine.repo.out("tag", "-l", "--format=%(contents)", "v0.14.0-rc2")
    assert "Changes v0.14.0-rc1..v0.14.0-rc2" in message and "#109" in message


def test_status_says_when_the_remote_branch_has_commits_not_here(line, tmp_path: Path) -> None:
    """The remote's branch moved on elsewhere: push would be refused, so status does not
    propose it and says to fetch first."""
    engine, config = line
    assert engine.remote is not None
    other = tmp_path / "other"
    subprocess.run(
        ["git", "clone", "--quiet", "--branch", BRANCH, str(engine.remote), str(other)], check=True
    )
    (other / "ELSEWHERE").write_text("pushed from another clone\n")
    for args in (
        ["add", "ELSEWHERE"],
        [
            "-c",
            "user.name=O",
            "-c",
            "user.email=o@example.com",
            "commit",
            "--quiet",
            "-m",
            "Elsewhere",
        ],
        ["push", "--quiet", "origin", BRANCH],
    ):
        subprocess.run(["git", "-C", str(other), *args], check=True)
    engine.repo.run("cherry-pick", engine.shas[109])
    state = status(engine, config)
    assert BRANCH not in state["unpushed"]
    assert (
        f"origin/{BRANCH} has commits that are not here (git fetch origin, then merge)"
        in state["notes"]
    )

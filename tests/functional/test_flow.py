"""The rc cycle through the CLI, on real repositories with a bare remote."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from release.core.changelog import Changelog
from release.sample import LATE_FIX, RESOLVED_SCHEDULER_108, Change, SampleEngine
from tests.conftest import CliResult, run_cli

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BRANCH = "releases/v0.1.0"
DATED = {"SOURCE_DATE_EPOCH": "1764100000"}  # 2025-11-25
SUBJECT_108 = "[BugFix] Fix off-by-one in the batch limit (#108)"
SUBJECT_109 = "[bugfix] Fix --port parsing when the value is missing (#109)"


def release(engine: SampleEngine, *args: str, code: int = 0) -> CliResult:
    result = run_cli(engine.root, *args, env=DATED)
    assert result.code == code, f"release {' '.join(args)} exited {result.code}:\n{result.output}"
    return result


def git(engine: SampleEngine, *args: str) -> str:
    return engine.repo.run(*args).stdout


def head(engine: SampleEngine) -> str:
    return git(engine, "rev-parse", "HEAD").strip()


def message(engine: SampleEngine, ref: str = "HEAD") -> str:
    return git(engine, "log", "-1", "--format=%B", ref)


def trailer(engine: SampleEngine, key: str, ref: str = "HEAD") -> str:
    return git(engine, "log", "-1", f"--format=%(trailers:key={key},valueonly)", ref).strip()


def tag_message(engine: SampleEngine, name: str) -> str:
    return git(engine, "for-each-ref", "--format=%(contents)", f"refs/tags/{name}")


def status(engine: SampleEngine, *args: str) -> dict:
    return json.loads(release(engine, "status", "--json", *args).stdout)


def on_main(engine: SampleEngine, *changes: Change) -> None:
    """Land ``changes`` on main (and push it), then go back to the release branch."""
    git(engine, "switch", "--quiet", "main")
    for change in changes:
        engine.commit(change)
    git(engine, "push", "--quiet", "origin", "main")
    git(engine, "switch", "--quiet", BRANCH)


def changelog_text(engine: SampleEngine) -> str:
    return (engine.root / "CHANGELOG.md").read_text(encoding="utf-8")


def changelog_labels(engine: SampleEngine) -> list[str | None]:
    return Changelog.parse(changelog_text(engine)).labels()


def resolve_108(engine: SampleEngine) -> None:
    """The maintainer's resolution of #108 picked without #107's rename, staged."""
    path = engine.root / "tinyengine" / "scheduler.py"
    path.write_text(RESOLVED_SCHEDULER_108, encoding="utf-8")
    git(engine, "add", "tinyengine/scheduler.py")


# -- cut ----------------------------------------------------------------------------


def test_cut_at_the_tip_of_main(engine: SampleEngine) -> None:
    main = head(engine)
    result = release(engine, "cut", "0.1.0")
    assert result.stdout == f"created {BRANCH} at {main[:10]}\nswitched to {BRANCH}\n"
    assert engine.repo.current_branch() == BRANCH
    assert engine.repo.rev(BRANCH) == main


def test_cut_at_a_main_commit(engine: SampleEngine, snapshot) -> None:
    at = engine.shas[103]
    before = snapshot(engine.root)
    plan = json.loads(release(engine, "cut", "0.1.0", "--at", at, "--dry-run", "--json").stdout)
    assert snapshot(engine.root) == before
    assert plan["command"] == "cut" and plan["dry_run"] is True
    assert plan["branch"] == BRANCH and plan["at"] == at
    assert [s["action"] for s in plan["steps"]] == ["create-branch", "switch"]

    release(engine, "cut", "0.1.0", "--at", at[:10], "--no-switch")
    assert engine.repo.rev(BRANCH) == at
    assert engine.repo.current_branch() == "main"


# -- pick ---------------------------------------------------------------------------


def test_pick_records_the_reason_and_the_x_line(cut_engine: SampleEngine) -> None:
    sha = cut_engine.shas[109]
    result = release(cut_engine, "pick", "#109", "--reason", "regression")
    assert result.stdout == f"picked {sha[:10]} {SUBJECT_109}\n"
    text = message(cut_engine)
    assert f"(cherry picked from commit {sha})" in text
    assert "Co-authored-by: Eve Park <eve@example.com>" in text
    assert trailer(cut_engine, "Cherry-pick-reason") == "regression"
    assert git(cut_engine, "log", "-1", "--format=%an <%ae>") == "Bob Okafor <bob@example.com>"

    # again, with another: what is there is skipped, in main's order
    result = release(cut_engine, "pick", "#111,#109", "--reason", "release-only")
    assert result.stdout.splitlines() == [
        f"skipped {sha[:10]} [bugfix] Fix --port parsing when the value is missing (#109) "
        "(already on the branch (cherry-picked))",
        f"picked {cut_engine.shas[111][:10]} [main][CI/Build] Pin the build tools (#111)",
    ]
    assert trailer(cut_engine, "Cherry-pick-reason") == "release-only"
    assert f"(cherry picked from commit {cut_engine.shas[111]})" in message(cut_engine)


def test_pick_plan_as_json_changes_nothing(cut_engine: SampleEngine, snapshot) -> None:
    before = snapshot(cut_engine.root)
    result = release(
        cut_engine, "pick", "#111 #109 #106", "--reason", "regression", "--dry-run", "--json"
    )
    assert snapshot(cut_engine.root) == before
    plan = json.loads(result.stdout)
    assert plan["command"] == "pick" and plan["dry_run"] is True and plan["branch"] == BRANCH
    assert [(s["action"], s["sha"]) for s in plan["steps"]] == [
        ("skip", cut_engine.shas[106]),  # before the cut
        ("cherry-pick", cut_engine.shas[109]),
        ("cherry-pick", cut_engine.shas[111]),
    ]
    assert {s["reason"] for s in plan["steps"]} == {"regression"}


def test_pick_a_revert_by_its_own_pr_number(cut_engine: SampleEngine) -> None:
    # 'Revert "[Kernel] Add fused add kernel stub (#104)" (#105)': #105 is the revert's own PR
    plan = json.loads(release(cut_engine, "pick", "#105", "--dry-run", "--json").stdout)
    assert [(s["action"], s["sha"]) for s in plan["steps"]] == [("skip", cut_engine.shas[105])]


def _pick_plan(engine: SampleEngine, *refs: str) -> list[tuple[str, str, str | None]]:
    plan = json.loads(release(engine, "pick", *refs, "--dry-run", "--json").stdout)
    return [(s["action"], s["sha"], s.get("why")) for s in plan["steps"]]


def test_a_pick_without_x_is_found_by_its_patch(cut_engine: SampleEngine) -> None:
    engine = cut_engine
    git(engine, "cherry-pick", engine.shas[109])  # no -x: only the patch says it is there
    assert _pick_plan(engine, "#109 #111") == [
        ("skip", engine.shas[109], "already on the branch (same patch)"),
        ("cherry-pick", engine.shas[111], None),
    ]


def test_other_changes_to_the_same_files_are_not_the_same_patch(cut_engine: SampleEngine) -> None:
    engine = cut_engine
    server = engine.root / "tinyengine" / "server.py"
    server.write_text(server.read_text(encoding="utf-8") + "\n# a branch-only note\n")
    git(engine, "commit", "--quiet", "-am", "[Misc] Note on the branch")
    (engine.root / "NOTES.txt").write_text("release notes\n", encoding="utf-8")
    git(engine, "add", "NOTES.txt")
    git(engine, "commit", "--quiet", "-m", "[Doc] Another branch-only file")
    # #109 changes server.py too (git cherry decides); #111 shares no file with the branch
    assert _pick_plan(engine, "#109 #111") == [
        ("cherry-pick", engine.shas[109], None),
        ("cherry-pick", engine.shas[111], None),
    ]


def _stop_on_108(engine: SampleEngine, *refs: str) -> str:
    before = head(engine)
    result = release(engine, "pick", " ".join(refs or ("#108",)), "--reason", "regression", code=4)
    assert result.stderr.startswith(f"error: conflict picking {engine.shas[108][:10]} ")
    assert "in tinyengine/scheduler.py" in result.stderr
    assert "release pick --continue" in result.stderr and "release pick --abort" in result.stderr
    assert head(engine) == before
    assert engine.repo.worktree.dirty_paths() == []
    progress = status(engine)["pick_in_progress"]
    assert progress["status"] == "conflict"
    assert progress["conflict"]["sha"] == engine.shas[108]
    return before


def _assert_108_picked(engine: SampleEngine) -> None:
    ref = "HEAD" if "#109" not in message(engine) else "HEAD~1"
    text = message(engine, ref)
    assert text.startswith("[BugFix] Fix off-by-one in the batch limit (#108)\n")
    assert f"(cherry picked from commit {engine.shas[108]})" in text
    assert trailer(engine, "Cherry-pick-reason", ref) == "regression"
    assert git(engine, "log", "-1", "--format=%an", ref) == "Alice Chen"
    assert git(engine, "show", f"{ref}:tinyengine/scheduler.py") + "\n" == RESOLVED_SCHEDULER_108
    assert engine.repo.worktree.dirty_paths() == []
    assert engine.repo.worktree.cherry_pick_head() is None
    # the pick's state is gone (status's picks cache may stay, where caches are written:
    # never on CI, so the directory itself may be gone)
    kept = engine.repo.git_dir / "release"
    assert not (kept / "pick.json").exists()
    left = sorted(p.name for p in kept.iterdir()) if kept.is_dir() else []
    assert [name for name in left if name != "picks.cache"] == []


def test_conflict_resolved_with_cherry_pick_then_continue(cut_engine: SampleEngine) -> None:
    engine = cut_engine
    _stop_on_108(engine, "#108 #109")
    engine.repo.run("cherry-pick", "-x", engine.shas[108], check=False)  # stops on the conflict
    assert engine.repo.worktree.unmerged_paths() == ["tinyengine/scheduler.py"]
    resolve_108(engine)
    result = release(engine, "pick", "--continue")
    assert result.stdout.splitlines() == [
        f"picked {engine.shas[108][:10]} {SUBJECT_108} (resolved by hand)",
        f"picked {engine.shas[109][:10]} {SUBJECT_109}",
    ]
    _assert_108_picked(engine)
    assert trailer(engine, "Cherry-pick-reason") == "regression"  # the rest of the queue too


def test_conflict_resolution_staged_without_cherry_pick(cut_engine: SampleEngine) -> None:
    engine = cut_engine
    _stop_on_108(engine)
    resolve_108(engine)
    result = release(engine, "pick", "--continue")
    assert result.stdout == f"picked {engine.shas[108][:10]} {SUBJECT_108} (resolved by hand)\n"
    _assert_108_picked(engine)
    assert status(engine)["picks_done"][-1]["from"] == engine.shas[108]


def test_continue_before_resolving_is_refused(cut_engine: SampleEngine) -> None:
    _stop_on_108(cut_engine)
    result = release(cut_engine, "pick", "--continue", code=3)
    assert "is not on releases/v0.1.0 yet" in result.stderr


def test_conflict_then_abort_restores_everything(cut_engine: SampleEngine, snapshot) -> None:
    engine = cut_engine
    carol = ("Carol Diaz", "carol@example.com")
    readme_fix = Change(
        "[Doc] Say how to run the server (#120)",
        carol,
        {
            "README.md": lambda text: text + "\nRun it with `python -m tinyengine.server`.\n",
        },
    )
    readme_fix_2 = Change(
        "[Doc] Mention --port (#121)",
        carol,
        {
            "README.md": lambda text: text.replace("server`.", "server --port 8000`."),
        },
    )
    on_main(engine, readme_fix, readme_fix_2)
    before = snapshot(engine.root)
    orig = head(engine)
    # #109 applies, then #121 stops: it edits a line that #120 (not picked) added
    result = release(engine, "pick", "#109 #121", "--reason", "docs", code=4)
    assert f"conflict picking {engine.shas[121][:10]}" in result.stderr
    assert head(engine) != orig  # #109 is on the branch
    result = release(engine, "pick", "--abort")
    assert result.stdout == f"aborted: {BRANCH} is back at {orig[:10]}\n"
    after = snapshot(engine.root)
    # the index file's stat data changes with the checkout; its entries must not
    assert after.pop("index") and before.pop("index")
    assert after == before
    tree = git(engine, "ls-tree", "-r", "--format=%(objectmode) %(objectname) 0\t%(path)", "HEAD")
    assert git(engine, "ls-files", "--stage") == tree


# -- tag --------------------------------------------------------------------------


def test_tag_rc1_and_rc2(cut_engine: SampleEngine, snapshot) -> None:
    engine = cut_engine
    release(engine, "pick", "#109", "--reason", "regression")
    before = snapshot(engine.root)
    dry = release(engine, "tag", "--dry-run")
    assert dry.stdout.startswith(
        "dry run, nothing changed: would tag v0.1.0rc1 (5 changes in its notes)\n"
        "  1. update CHANGELOG.md with [0.1.0rc1] and commit it\n"
        "  2. create annotated tag v0.1.0rc1 at the changelog commit\n\n"
        "v0.1.0rc1\n\nChanges (start)..v0.1.0rc1:\n\n### Bug Fixes\n"
    )
    plan = json.loads(release(engine, "tag", "--dry-run", "--json").stdout)
    assert snapshot(engine.root) == before  # --dry-run changes nothing, not even .git/release
    assert plan["tag"] == "v0.1.0rc1" and plan["version"] == "0.1.0rc1" and plan["dry_run"] is True
    assert [s["action"] for s in plan["steps"]] == ["commit-changelog", "create-tag"]

    assert release(engine, "tag").stdout == "tagged v0.1.0rc1\nnext: release push\n"
    assert git(engine, "cat-file", "-t", "v0.1.0rc1") == "tag"  # annotated
    text = tag_message(engine, "v0.1.0rc1")
    assert text == plan["message"]
    assert "- Fix --port parsing when the value is missing" in text
    assert "[picked: regression]" in text
    # the rc is the commit that adds its changelog section
    assert engine.repo.rev("v0.1.0rc1") == head(engine)
    assert message(engine).startswith("Update CHANGELOG.md for v0.1.0rc1\n")
    assert trailer(engine, "Release-changelog") == "v0.1.0rc1"
    assert git(engine, "show", "--name-only", "--format=", "HEAD") == "CHANGELOG.md"
    assert engine.repo.worktree.dirty_paths() == []
    assert changelog_labels(engine) == ["Unreleased", "0.1.0rc1"]
    assert "## [0.1.0rc1] - 2025-11-25\n" in changelog_text(engine)

    release(engine, "pick", "#111", "--reason", "release-only")
    assert release(engine, "tag").stdout.startswith("tagged v0.1.0rc2\n")
    text = tag_message(engine, "v0.1.0rc2")
    assert text.startswith(
        "v0.1.0rc2\n\nChanges v0.1.0rc1..v0.1.0rc2:\n\n### CI/Build\n\n- Pin the build tools"
    )
    assert "#109" not in text  # shipped in rc1
    assert changelog_labels(engine) == ["Unreleased", "0.1.0rc2", "0.1.0rc1"]
    assert status(engine)["next_command"] == "release push"


def test_tag_with_the_semver_scheme(cut_engine: SampleEngine) -> None:
    engine = cut_engine
    path = engine.root / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"pep440"', '"semver"'), encoding="utf-8")
    git(engine, "commit", "--quiet", "-am", "[CI/Build] Spell versions the SemVer way")
    assert release(engine, "tag").stdout.startswith("tagged v0.1.0-rc.1\n")
    assert changelog_labels(engine) == ["Unreleased", "0.1.0-rc.1"]
    assert status(engine)["next_rc"] == "v0.1.0-rc.2"
    release(engine, "promote")
    on_main(engine, LATE_FIX)
    release(engine, "pick", "#112", "--reason", "critical")
    post = release(engine, "tag", "--version", "0.1.0.post1")
    assert post.stdout.startswith("tagged v0.1.0+post.1\n")
    state = status(engine)
    assert [t["name"] for t in state["tags"]] == ["v0.1.0-rc.1", "v0.1.0", "v0.1.0+post.1"]
    assert state["untagged_commits"] == 0
    assert changelog_labels(engine) == ["Unreleased", "0.1.0+post.1", "0.1.0"]


def test_a_project_whose_first_rc_is_rc0(cut_engine: SampleEngine) -> None:
    """vllm-gaudi's tags: v0.16.0rc0, v0.16.0rc1, v0.16.0. With ``first-rc = 0`` the first
    rc is rc0; the setting is refused as anything but 0 or 1."""
    engine = cut_engine
    path = engine.root / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("[tool.release]\n", "[tool.release]\nfirst-rc = 0\n"), encoding="utf-8"
    )
    git(engine, "commit", "--quiet", "-am", "[CI/Build] Number rcs from 0")
    assert status(engine)["next_rc"] == "v0.1.0rc0"
    assert release(engine, "tag").stdout.startswith("tagged v0.1.0rc0\n")
    assert changelog_labels(engine) == ["Unreleased", "0.1.0rc0"]
    release(engine, "pick", "#109", "--reason", "regression")
    assert release(engine, "tag").stdout.startswith("tagged v0.1.0rc1\n")
    assert tag_message(engine, "v0.1.0rc1").startswith(
        "v0.1.0rc1\n\nChanges v0.1.0rc0..v0.1.0rc1:\n"
    )

    path.write_text(path.read_text(encoding="utf-8").replace("first-rc = 0", "first-rc = 2"))
    refused = release(engine, "status", code=2)
    assert "[tool.release] first-rc: expected 0 or 1, got 2" in refused.stderr


def test_an_rc0_tag_made_elsewhere_is_read_under_the_default(cut_engine: SampleEngine) -> None:
    """A history tagged ``rc0`` by hand (or by another tool) is read as it is: rc0 counts as
    this release's rc, the next rc is rc1, and its notes start from rc0; typing rc0 is
    refused under the default ``first-rc = 1``."""
    engine = cut_engine
    git(engine, "tag", "-a", "-m", "v0.1.0rc0", "v0.1.0rc0")
    state = status(engine)
    assert [t["name"] for t in state["tags"]] == ["v0.1.0rc0"]
    assert state["next_rc"] == "v0.1.0rc1"
    release(engine, "pick", "#109", "--reason", "regression")
    refused = release(engine, "tag", "--version", "0.1.0rc0", code=2)
    assert "rc numbers start at 1 (first-rc in [tool.release])" in refused.stderr
    assert release(engine, "tag").stdout.startswith("tagged v0.1.0rc1\n")
    assert tag_message(engine, "v0.1.0rc1").startswith(
        "v0.1.0rc1\n\nChanges v0.1.0rc0..v0.1.0rc1:\n"
    )


def test_next_rc_counts_a_tag_only_on_the_remote(cut_engine: SampleEngine) -> None:
    engine = cut_engine
    release(engine, "pick", "#109", "--reason", "regression")
    release(engine, "tag")
    release(engine, "push")
    assert engine.remote is not None
    subprocess.run(["git", "-C", str(engine.remote), "tag", "v0.1.0rc3", BRANCH], check=True)
    release(engine, "pick", "#111", "--reason", "release-only")

    assert json.loads(release(engine, "tag", "--dry-run", "--json").stdout)["tag"] == "v0.1.0rc4"
    offline = json.loads(release(engine, "tag", "--offline", "--dry-run", "--json").stdout)
    assert offline["tag"] == "v0.1.0rc2"  # what local tags alone would say
    text = release(engine, "status").stdout
    assert "tags:     v0.1.0rc1, v0.1.0rc3 (remote only)\n" in text
    assert "next rc:  v0.1.0rc4\n" in text
    assert release(engine, "tag").stdout.startswith("tagged v0.1.0rc4\n")
    rc4 = tag_message(engine, "v0.1.0rc4")
    assert rc4.startswith("v0.1.0rc4\n\nChanges v0.1.0rc1..v0.1.0rc4:\n")
    assert engine.repo.rev("v0.1.0rc2") is None  # never reused below the remote's rc3


def test_promote_then_a_post_release(cut_engine: SampleEngine) -> None:
    engine = cut_engine
    release(engine, "pick", "#109", "--reason", "regression")
    release(engine, "tag")
    release(engine, "pick", "#111", "--reason", "release-only")
    release(engine, "tag")
    rc2 = engine.repo.rev("v0.1.0rc2")

    plan = json.loads(release(engine, "promote", "--dry-run", "--json").stdout)
    assert plan["tag"] == "v0.1.0" and plan["from_rc"] == "v0.1.0rc2" and plan["dry_run"] is True
    assert [s["action"] for s in plan["steps"]] == ["create-tag", "commit-changelog"]
    assert plan["steps"][0]["target"] == rc2

    assert release(engine, "promote").stdout == (
        "tagged v0.1.0 on v0.1.0rc2\n"
        "images: not promoted: v0.1.0rc2 has no manifest (no images were recorded for it)\n"
        "next: release push\n"
    )
    assert engine.repo.rev("v0.1.0") == rc2  # the last rc's commit, unchanged
    assert git(engine, "cat-file", "-t", "v0.1.0") == "tag"
    assert tag_message(engine, "v0.1.0").startswith(
        "v0.1.0\n\nChanges (start)..v0.1.0:\n\n### Bug Fixes\n"
    )
    assert message(engine).startswith("Update CHANGELOG.md for v0.1.0\n")
    assert changelog_labels(engine) == ["Unreleased", "0.1.0"]  # rc sections folded
    final_section = Changelog.parse(changelog_text(engine)).section("0.1.0")
    assert final_section is not None
    assert final_section.count("Fix --port parsing") == 1
    assert final_section.count("Pin the build tools") == 1

    refused = release(engine, "tag", code=3)
    assert "already released" in refused.stderr and "0.1.0.post1" in refused.stderr
    release(engine, "push")
    assert status(engine)["next_command"] == "nothing: the release is final"

    on_main(engine, LATE_FIX)
    release(engine, "pick", "#112", "--reason", "critical")
    state = status(engine)
    assert state["untagged_commits"] == 1
    assert state["next_command"] == "release tag --version 0.1.0.post1"
    # what the post release will say, in either view: what came since the final
    final_view = release(engine, "notes", "--view", "final").stdout
    assert final_view == release(engine, "notes").stdout
    assert "Return 400" in final_view and "#109" not in final_view
    post = release(engine, "tag", "--version", "0.1.0.post1")
    assert post.stdout.startswith("tagged v0.1.0.post1\n")
    text = tag_message(engine, "v0.1.0.post1")
    assert text.startswith(
        "v0.1.0.post1\n\nChanges v0.1.0..v0.1.0.post1:\n\n### Bug Fixes\n\n- Return 400"
    )
    assert "#109" not in text
    assert changelog_labels(engine) == ["Unreleased", "0.1.0.post1", "0.1.0"]
    again = release(engine, "tag", "--version", "0.1.0.post1", code=3)
    assert "0.1.0.post2" in again.stderr
    assert status(engine)["next_command"] == "release push"


# -- status ---------------------------------------------------------------------------


def test_status_text_and_json(cut_engine: SampleEngine) -> None:
    engine = cut_engine
    sha109, sha111 = engine.shas[109], engine.shas[111]
    release(engine, "pick", "#109", "--reason", "regression")
    (engine.root / "release-picks.txt").write_text(
        "# picks for 0.1.0rc1\n#109 regression\n#111 release-only  # CI pin\n", encoding="utf-8"
    )
    text = release(engine, "status").stdout
    assert text == (
        f"branch:   {BRANCH}  (release 0.1.0)\n"
        "tags:     none yet\n"
        "next rc:  v0.1.0rc1\n"
        "picks:    1 done, 1 pending\n"
        f"  done     {sha109[:10]} {SUBJECT_109} [regression]\n"
        f"  pending  {sha111[:10]} [main][CI/Build] Pin the build tools (#111)\n"
        "next:     release pick --file release-picks.txt\n"
    )
    state = status(engine)
    assert state["branch"] == BRANCH and state["release"] == "0.1.0"
    assert state["head"] == head(engine)
    assert state["next_rc"] == "v0.1.0rc1" and state["final"] is None and state["tags"] == []
    assert state["picks_done"] == [
        {
            "sha": head(engine),
            "from": sha109,
            "subject": SUBJECT_109,
            "reason": "regression",
            "how": "-x",
        }
    ]
    assert state["picks_pending"] == [
        {
            "sha": sha111,
            "ref": "#111",
            "subject": "[main][CI/Build] Pin the build tools (#111)",
            "reason": "release-only",
            "likely": None,
            "via": None,
        }
    ]
    assert state["picks_from_github"] == []
    assert state["pick_in_progress"] is None and state["remote_checked"] is True
    assert state["next_command"] == "release pick --file release-picks.txt"

    release(engine, "pick", "--file", "release-picks.txt")
    state = status(engine)
    assert [p["from"] for p in state["picks_done"]] == [sha109, sha111]
    assert state["picks_pending"] == []
    assert state["next_command"] == "release tag"

    release(engine, "tag")
    state = status(engine)
    assert state["tags"] == [
        {"name": "v0.1.0rc1", "commit": head(engine), "local": True, "remote": False},
    ]
    assert state["next_rc"] == "v0.1.0rc2"
    assert state["next_command"] == "release push"

    plan = json.loads(release(engine, "push", "--dry-run", "--json").stdout)
    assert plan["command"] == "push" and plan["remote"] == "origin"
    assert [s["ref"] for s in plan["steps"]] == [f"refs/heads/{BRANCH}", "refs/tags/v0.1.0rc1"]
    release(engine, "push")
    state = status(engine)
    assert state["tags"][0]["remote"] is True
    assert state["next_command"].startswith("release promote")

    git(engine, "switch", "--quiet", "main")
    state = status(engine)
    assert state["release"] is None and state["release_branches"] == [BRANCH]
    assert state["next_command"] == f"git switch {BRANCH}"
    assert release(engine, "status").stdout.endswith(
        f"release branches: {BRANCH}\nnext:     git switch {BRANCH}\n"
    )


# -- entry points ----------------------------------------------------------------------


TASKS = ("cut", "notes", "pick", "promote", "push", "rehearse", "status", "tag")


def test_inv_list_through_the_root_tasks_file(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "invoke", "-r", str(ROOT), "--list"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    listed = {line.split()[0] for line in proc.stdout.splitlines() if line.startswith("  release.")}
    assert {f"release.{name}" for name in TASKS} <= listed


def test_release_help_and_list(tmp_path: Path) -> None:
    listing = run_cli(tmp_path, "--list")
    assert listing.code == 0, listing.output
    listed = {
        line.split()[0]
        for line in listing.stdout.splitlines()
        if line.startswith("  ") and not line.startswith("   ")
    }
    assert set(TASKS) <= listed
    usage = run_cli(tmp_path, "--help")
    assert usage.code == 0 and usage.stdout.startswith("usage: release ")
    tag_help = run_cli(tmp_path, "--help", "tag")
    assert tag_help.code == 0
    for flag in ("--sign", "--offline", "--dry-run", "--json", "--version"):
        assert flag in tag_help.stdout


# -- a signed tag --------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
def test_signed_tag_with_an_ssh_key(cut_engine: SampleEngine, tmp_path: Path) -> None:
    engine = cut_engine
    key = tmp_path / "signing_key"
    subprocess.run(
        [
            "ssh-keygen",
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            "maintainer@example.com",
            "-f",
            str(key),
        ],
        check=True,
        capture_output=True,
    )
    allowed = tmp_path / "allowed_signers"
    public = key.with_suffix(".pub").read_text(encoding="utf-8")
    allowed.write_text(f"maintainer@example.com {public}", encoding="utf-8")
    for name, value in (
        ("gpg.format", "ssh"),
        ("user.signingkey", f"{key}.pub"),
        ("gpg.ssh.allowedSignersFile", str(allowed)),
    ):
        git(engine, "config", name, value)
    release(engine, "pick", "#109", "--reason", "regression")
    plan = release(engine, "tag", "--sign", "--dry-run").stdout
    assert "create signed tag v0.1.0rc1" in plan
    release(engine, "tag", "--sign")
    verified = engine.repo.run("tag", "-v", "v0.1.0rc1", check=False)
    assert verified.ok, verified.stderr
    assert 'Good "git" signature for maintainer@example.com' in verified.stderr
    assert "-----BEGIN SSH SIGNATURE-----" in git(engine, "cat-file", "-p", "v0.1.0rc1")
    assert "### Bug Fixes" in tag_message(engine, "v0.1.0rc1")


# The rehearsal (the v0.31.0rc1 story) is tested in tests/images/test_rehearse.py: end to end with
# an engine, and its git steps without one.


def test_cut_on_a_dirty_tree_creates_the_branch_and_says_it_did_not_switch(
    engine: SampleEngine,
) -> None:
    (engine.root / "README.md").write_text("local edit\n", encoding="utf-8")
    result = release(engine, "cut", "0.1.0")
    assert engine.repo.current_branch() == "main"
    assert engine.repo.rev(BRANCH) == head(engine)
    assert "uncommitted changes" in result.stdout and f"git switch {BRANCH}" in result.stdout


def test_cut_refuses_when_the_remote_cannot_be_reached_unless_offline(
    engine: SampleEngine,
) -> None:
    engine.repo.run("remote", "set-url", "origin", str(engine.root.parent / "gone.git"))
    refused = release(engine, "cut", "0.1.0", code=3)
    assert "--offline" in refused.stderr
    assert not engine.repo.branch_exists(BRANCH)
    offline = release(engine, "cut", "0.1.0", "--offline")
    assert engine.repo.branch_exists(BRANCH)
    assert "not checked" in offline.stdout


def test_a_pick_git_cannot_commit_is_reported_not_skipped(cut_engine: SampleEngine) -> None:
    """A commit hook that refuses: the pick stops with git's reason, nothing is called skipped."""
    hook = cut_engine.repo.git_dir / "hooks" / "prepare-commit-msg"
    hook.write_text("#!/bin/sh\necho 'policy: no commits today' >&2\nexit 1\n", encoding="utf-8")
    hook.chmod(0o755)
    before = head(cut_engine)
    result = release(cut_engine, "pick", "#109", code=3)
    assert "skipped" not in result.output
    assert "could not commit the pick" in result.stderr
    assert head(cut_engine) == before
    assert not cut_engine.repo.worktree.dirty_paths()
    hook.unlink()
    retried = release(cut_engine, "pick", "#109")
    assert "picked" in retried.stdout
    assert head(cut_engine) != before


def test_a_pick_whose_change_is_on_the_branch_in_another_commit_is_skipped(
    cut_engine: SampleEngine,
) -> None:
    """#109's change came with another in one branch commit (not the same patch, so the
    plan picks it): git finds the pick empty, it is reported skipped, and the check that
    every pick reads as on the branch leaves it out; #111 is picked."""
    engine = cut_engine
    git(engine, "cherry-pick", "--no-commit", engine.shas[109])
    (engine.root / "NOTES.txt").write_text("release notes\n", encoding="utf-8")
    git(engine, "add", "NOTES.txt")
    git(engine, "commit", "--quiet", "-m", "[Misc] The port fix and a note, by hand")
    assert [a for a, _, _ in _pick_plan(engine, "#109 #111")] == ["cherry-pick", "cherry-pick"]
    result = release(engine, "pick", "#109 #111")
    assert (
        f"skipped {engine.shas[109][:10]} {SUBJECT_109} (its change is already on the branch)"
        in result.stdout.splitlines()
    )
    assert any(
        line.startswith(f"picked {engine.shas[111][:10]}") for line in result.stdout.splitlines()
    )
    assert not engine.repo.worktree.dirty_paths()

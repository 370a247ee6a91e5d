"""Repositories as people have them, through the CLI: odd bytes that are fine, numbering
across spellings, tags that only look moved, linked worktrees, shallow clones, names that
collide, and commands run twice. Each case checks what the tool did and that nothing else
changed."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

from release.adapters.git import GitRepo
from release.adapters.lock import repo_lock
from release.sample import ALICE, Change, SampleEngine, add_commit
from tests.conftest import repo_state, run_cli

BRANCH = "releases/v0.1.0"


def _ok(engine: SampleEngine, *args: str) -> str:
    result = run_cli(engine.root, *args)
    assert result.code == 0, result.output
    assert "Traceback" not in result.output
    return result.stdout


def _git(engine: SampleEngine, *args: str) -> str:
    return engine.repo.run(*args).stdout.strip()


def test_a_config_with_a_byte_order_mark_is_read(cut_engine_copy: SampleEngine) -> None:
    path = cut_engine_copy.root / "pyproject.toml"
    path.write_bytes("\ufeff".encode() + path.read_bytes())
    assert "releases/v0.1.0" in _ok(cut_engine_copy, "status")


def test_a_changelog_with_a_byte_order_mark_keeps_it(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    path = engine.root / "CHANGELOG.md"
    path.write_bytes("\ufeff# Changelog\r\n\r\n## [Unreleased]\r\n\r\n".encode())
    _git(engine, "add", "CHANGELOG.md")
    _git(engine, "commit", "--quiet", "-m", "[Misc] A changelog saved by another editor")
    _ok(engine, "tag")
    data = path.read_bytes()
    assert data.startswith("\ufeff# Changelog\r\n".encode())
    assert b"## [0.1.0rc1] - " in data and b"\n" not in data.replace(b"\r\n", b"")


def test_a_pr_number_thousands_of_digits_long_breaks_nothing(
    cut_engine_copy: SampleEngine,
) -> None:
    """A subject ending in ``(#`` and 5,000 digits used to crash pick, notes and tag."""
    engine = cut_engine_copy
    _git(engine, "switch", "--quiet", "main")
    add_commit(engine.repo, Change(f"[Bugfix] Odd (#{'9' * 5000})", ALICE, {"odd.txt": "x\n"}))
    _git(engine, "switch", "--quiet", BRANCH)
    assert "picked" in _ok(engine, "pick", "#109")
    _ok(engine, "tag", "--dry-run")
    notes = _ok(engine, "notes", "--since", "main~3", "--until", "main")
    assert "- Odd (#999" in notes and "pull/999" not in notes  # a title, not a PR number


def test_rc_numbers_count_every_spelling(cut_engine_copy: SampleEngine) -> None:
    """rc1 and rc2 tagged under pep440; the scheme switched to semver: the next is rc.3."""
    engine = cut_engine_copy
    for n in (1, 2):
        _git(engine, "commit", "--quiet", "--allow-empty", "-m", f"[Misc] Step {n}")
        _git(engine, "tag", "-a", f"v0.1.0rc{n}", "-m", f"v0.1.0rc{n}")
    path = engine.root / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('version-scheme = "pep440"', 'version-scheme = "semver"'))
    _git(engine, "commit", "--quiet", "-am", "[Misc] Tags spelt the semver way from now on")
    plan = json.loads(_ok(engine, "tag", "--dry-run", "--json"))
    assert plan["tag"] == "v0.1.0-rc.3"


def test_a_lightweight_and_an_annotated_tag_on_one_commit_are_not_moved(
    cut_engine_copy: SampleEngine,
) -> None:
    engine = cut_engine_copy
    _git(engine, "tag", "-a", "v0.1.0rc1", "-m", "annotated")
    _ok(engine, "push")
    _git(engine, "tag", "-d", "v0.1.0rc1")
    _git(engine, "tag", "v0.1.0rc1")  # lightweight, same commit
    assert "up to date" in _ok(engine, "push")


def test_tag_twice_is_a_no_op_the_second_time(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    _ok(engine, "tag")
    engine.repo.run("status", "--porcelain")
    before = repo_state(engine.root)
    again = _ok(engine, "tag")
    assert "nothing to tag" in again and "v0.1.0rc1" in again
    assert repo_state(engine.root) == before


def test_linked_worktrees_share_one_lock(cut_engine_copy: SampleEngine, tmp_path: Path) -> None:
    engine = cut_engine_copy
    _git(engine, "branch", "releases/v0.2.0", "main")
    linked = tmp_path / "linked"
    _git(engine, "worktree", "add", "--quiet", str(linked), "releases/v0.2.0")
    before = repo_state(linked)
    with repo_lock(engine.repo.common_dir, "held by a test"):
        result = run_cli(linked, "tag")
    assert result.code == 3, result.output
    assert "another release task is running" in result.stderr
    assert repo_state(linked) == before


def test_a_shallow_clone_refuses_to_read_history(
    cut_engine_copy: SampleEngine, tmp_path: Path
) -> None:
    engine = cut_engine_copy
    clone = tmp_path / "shallow"
    assert engine.remote is not None
    GitRepo(engine.root).run(
        "clone",
        "--quiet",
        "--depth",
        "1",
        "--branch",
        BRANCH,
        f"file://{engine.remote}",
        str(clone),
    )
    before = repo_state(clone)
    for args in (("tag",), ("pick", "#109"), ("notes",)):
        result = run_cli(clone, *args)
        assert result.code == 3, result.output
        assert "shallow clone" in result.stderr and "--unshallow" in result.stderr
    assert repo_state(clone) == before
    assert "shallow clone" in run_cli(clone, "status").stdout


def test_tags_named_like_branches_change_nothing(cut_engine_copy: SampleEngine) -> None:
    """A tag called ``main`` (at an old commit) and one called like the release branch."""
    engine = cut_engine_copy
    old = _git(engine, "rev-parse", "main~6")
    _git(engine, "tag", "main", old)
    _git(engine, "tag", BRANCH, old)
    assert "picked" in _ok(engine, "pick", "#109")
    status = _ok(engine, "status", "--json")
    assert json.loads(status)["picks_done"][0]["from"] == engine.shas[109]


def _commits_sharing_a_prefix(engine: SampleEngine) -> str:
    """Make commits (off every branch) until two share a four-digit sha prefix."""
    stream = []
    for n in range(1, 1500):
        message = f"probe {n}\n"
        stream.append(
            f"commit refs/probes/p{n}\ncommitter T <t@example.com> 0 +0000\n"
            f"data {len(message)}\n{message}\n"
        )
    engine.repo.run("fast-import", "--quiet", stdin="".join(stream))
    shas = engine.repo.out("for-each-ref", "--format=%(objectname)", "refs/probes").split()
    seen = collections.Counter(sha[:4] for sha in shas)
    return next(prefix for prefix, count in seen.items() if count > 1)


def test_an_ambiguous_sha_prefix_is_called_ambiguous(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    prefix = _commits_sharing_a_prefix(engine)
    result = run_cli(engine.root, "pick", prefix)
    assert result.code == 2, result.output
    assert f"'{prefix}' is ambiguous" in result.stderr


@pytest.mark.parametrize("args", [("tag", "--version", "0.1.0rc1"), ("promote",)])
def test_a_missing_remote_is_fine_offline(
    cut_engine_copy: SampleEngine, args: tuple[str, ...]
) -> None:
    engine = cut_engine_copy
    _git(engine, "remote", "remove", "origin")
    if args[0] == "promote":
        _git(engine, "tag", "-a", "v0.1.0rc1", "-m", "v0.1.0rc1")
    _ok(engine, *args, "--offline")


@pytest.mark.parametrize(
    "args",
    [("cut", "--help"), ("pick", "--help"), ("tag", "-h"), ("images.build", "--help")],
    ids=lambda a: a[0],
)
def test_help_on_every_task(cut_engine_copy: SampleEngine, args: tuple[str, ...]) -> None:
    out = _ok(cut_engine_copy, *args)
    assert out.startswith(f"usage: release {args[0]} ")


def test_several_commits_as_separate_arguments(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    out = _ok(engine, "pick", engine.shas[109], "#111", "--reason", "regression", "--dry-run")
    assert "2 to pick" in out and "#109" in out and "#111" in out


def test_a_conflict_first_lists_what_was_picked(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    add_commit(
        engine.repo, Change("[Misc] Branch-only note (#160)", ALICE, {"NOTE.txt": "branch\n"})
    )
    _git(engine, "switch", "--quiet", "main")
    add_commit(engine.repo, Change("[Bugfix] Clean fix (#161)", ALICE, {"clean.txt": "ok\n"}))
    add_commit(engine.repo, Change("[Bugfix] Clashing fix (#162)", ALICE, {"NOTE.txt": "main\n"}))
    _git(engine, "switch", "--quiet", BRANCH)

    result = run_cli(engine.root, "pick", "#161", "#162")

    assert result.code == 4, result.output
    picked = result.output.index("picked ")
    assert "Clean fix (#161)" in result.output[picked:].splitlines()[0]
    assert picked < result.output.index("error: conflict picking")


def test_main_is_read_from_the_remote_when_there_is_no_local_branch(
    cut_engine_copy: SampleEngine,
) -> None:
    engine = cut_engine_copy
    _git(engine, "branch", "--quiet", "-D", "main")
    out = _ok(engine, "pick", "#109", "--dry-run")
    assert "1 to pick" in out
    assert "note: no local branch main: using origin/main" in out


@pytest.mark.parametrize("how", ["env", "option"])
def test_main_branch_overridden_for_one_run(cut_engine_copy: SampleEngine, how: str) -> None:
    engine = cut_engine_copy
    _git(engine, "branch", "--quiet", "-m", "main", "trunk")
    _git(engine, "branch", "--quiet", "-D", "-r", "origin/main")
    assert run_cli(engine.root, "pick", "#109", "--dry-run").code == 3  # no main anywhere
    if how == "env":
        result = run_cli(
            engine.root, "pick", "#109", "--dry-run", env={"RELEASE_MAIN_BRANCH": "trunk"}
        )
    else:
        result = run_cli(engine.root, "--main-branch", "trunk", "pick", "#109", "--dry-run")
    assert result.code == 0, result.output
    assert "1 to pick" in result.stdout


def test_status_tells_not_pushed_from_not_checked(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    _git(engine, "tag", "-a", "v0.1.0rc1", "-m", "v0.1.0rc1")
    assert "v0.1.0rc1 (not pushed)" in _ok(engine, "status")
    offline = _ok(engine, "status", "--offline")
    assert "v0.1.0rc1 (remote not checked)" in offline and "not pushed" not in offline


def test_untagged_counts_from_the_nearest_tag_in_history(cut_engine_copy: SampleEngine) -> None:
    """An rc tag made on another line of history says nothing about this branch's commits."""
    engine = cut_engine_copy
    _git(engine, "tag", "-a", "v0.1.0rc1", "-m", "v0.1.0rc1")
    _git(engine, "commit", "--quiet", "--allow-empty", "-m", "[Misc] After rc1 (#170)")
    _git(engine, "switch", "--quiet", "-c", "elsewhere", "main")
    _git(engine, "tag", "-a", "v0.1.0rc2", "-m", "made on the wrong branch")
    _git(engine, "switch", "--quiet", BRANCH)
    status = json.loads(_ok(engine, "status", "--json", "--offline"))
    assert status["untagged_commits"] == 1


def test_notes_map_people_through_mailmap_and_name_newcomers(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    _git(engine, "switch", "--quiet", "main")
    (engine.root / ".mailmap").write_text(
        "Eve Park <eve@example.com> <eve.p@old.example>\n"
        "Zoe Quinn <zoe@example.com> Zed <zed@old.example>\n",
        encoding="utf-8",
    )
    _git(engine, "add", ".mailmap")
    _git(engine, "commit", "--quiet", "-m", "[Misc] Map old addresses (#180)")
    since = _git(engine, "rev-parse", "HEAD")
    add_commit(
        engine.repo,
        Change(
            "[Bugfix] From a newcomer (#181)",
            ("Zed", "zed@old.example"),
            {"new.txt": "n\n"},
            body="Co-authored-by: Eve P <eve.p@old.example>\nCo-authored-by: renovate[bot] <r@x>",
        ),
    )
    notes = json.loads(
        _ok(engine, "notes", "--since", since, "--until", "main", "--format", "json")
    )
    [entry] = [e for s in notes["sections"] for e in s["entries"]]
    assert [p["name"] for p in entry["credits"]] == ["Zoe Quinn", "Eve Park"]
    assert [p["name"] for p in notes["new_contributors"]] == ["Zoe Quinn"]
    assert notes["new_contributors"][0]["pr"] == 181


def test_a_backport_without_x_is_not_listed_again_after_the_final(
    cut_engine_copy: SampleEngine,
) -> None:
    """0.1.0 shipped #109 picked without -x; 0.2.0's notes since v0.1.0 must not list it."""
    engine = cut_engine_copy
    _git(engine, "cherry-pick", engine.shas[109])  # no -x: only the patch says it is there
    _git(engine, "tag", "-a", "v0.1.0rc1", "-m", "v0.1.0rc1")
    _git(engine, "tag", "-a", "v0.1.0", "-m", "v0.1.0")
    _git(engine, "switch", "--quiet", "main")
    _ok(engine, "cut", "0.2.0", "--offline")
    notes = _ok(engine, "notes", "--view", "final")
    assert "#109" not in notes
    assert "#108" in notes and "#111" in notes  # the rest of main since the cut is there


def test_a_guessed_category_never_refuses_a_pick(cut_engine_copy: SampleEngine) -> None:
    """Notes read "Add support for ..." as a feature; pick refuses only what a prefix says."""
    engine = cut_engine_copy
    _git(engine, "switch", "--quiet", "main")
    add_commit(engine.repo, Change("Add support for empty prompts (#190)", ALICE, {"e.txt": "e\n"}))
    _git(engine, "switch", "--quiet", BRANCH)
    assert "1 to pick" in _ok(engine, "pick", "#190", "--dry-run")
    notes = _ok(engine, "notes", "--since", "main~1", "--until", "main")
    assert notes.startswith("## Features\n\n- Add support for empty prompts")


def test_a_core_option_with_a_value_before_the_task(cut_engine_copy: SampleEngine) -> None:
    """``--main-branch NAME`` is not taken for the task: help and several commits still work."""
    engine = cut_engine_copy
    out = _ok(engine, "--main-branch", "main", "tag", "--help")
    assert out.startswith("usage: release tag ")
    out = _ok(engine, "--main-branch", "main", "pick", engine.shas[109], "#111", "--dry-run")
    assert "2 to pick" in out

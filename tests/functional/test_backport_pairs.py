"""The prefilter of adapted-backport detection: which main and branch commits are compared
by changed lines, decided from the paths they change, the paths each side has and the
size of the branch commits, before any main commit's patch is read."""

from __future__ import annotations

import json

import pytest

from release.adapters.patch_cache import PatchCache, patch_cache_key, patch_cache_path
from release.core.backport_pairs import by_paths, moved_between, without_small
from release.core.backports import MIN_SHARED
from release.flows.context import ReleaseContext
from release.sample import SampleEngine
from tests.backport_support import git
from tests.conftest import run_cli

# -- pure -------------------------------------------------------------------------

FILES = {
    "m1": {"pkg/a/__init__.py"},
    "m2": {"pkg/a/server.py", "docs/x.md"},
    "m3": {"pkg/new/server.py"},  # main moved the file after the cut
    "m4": {"setup.py"},
    "b1": {"pkg/b/__init__.py"},
    "b2": {"pkg/a/server.py"},
    "b3": {"pkg/old/server.py"},
    "b4": {"setup.py"},
}
ON_MAIN = {"pkg/a/__init__.py", "pkg/b/__init__.py", "pkg/a/server.py", "pkg/new/server.py",
           "docs/x.md", "setup.py"}  # fmt: skip
ON_BRANCH = {"pkg/a/__init__.py", "pkg/b/__init__.py", "pkg/a/server.py", "pkg/old/server.py",
             "docs/x.md", "setup.py"}  # fmt: skip
MAIN, BRANCH = ["m1", "m2", "m3", "m4"], ["b1", "b2", "b3", "b4"]


def test_commits_pair_by_path_and_by_name_only_across_a_move() -> None:
    pairs = by_paths(MAIN, BRANCH, FILES, {}, moved_between(ON_MAIN, ON_BRANCH))
    assert pairs == {
        # m1 and b1 change two files called __init__.py that both sides have: not paired
        "m2": ["b2", "b3"],  # b3's path is not on main: a move explains the other path
        "m3": ["b2", "b3"],  # m3's path is not on the branch
        "m4": ["b4"],
    }


def test_without_a_move_rule_any_file_of_the_same_name_pairs() -> None:
    pairs = by_paths(MAIN, BRANCH, FILES, {}, None)
    assert pairs["m1"] == ["b1"]
    assert pairs["m2"] == ["b2", "b3"]


def test_a_revert_pairs_with_a_revert_only() -> None:
    reverts = {"m4": True}
    assert "m4" not in by_paths(MAIN, BRANCH, FILES, reverts, None)
    assert by_paths(MAIN, BRANCH, FILES, {**reverts, "b4": True}, None)["m4"] == ["b4"]


def test_a_branch_commit_too_small_to_count_pairs_with_nothing() -> None:
    pairs = {"m2": ["b2", "b3"], "m4": ["b4"]}
    sizes = {"b2": MIN_SHARED - 1, "b3": MIN_SHARED, "b4": 2}
    assert without_small(pairs, sizes) == {"m2": ["b3"]}


# -- on a repository ------------------------------------------------------------------

HELPER = "\n\ndef clamp(value, low, high):\n    if value < low:\n        return low\n    if value > high:\n        return high\n    return value\n"


def _plan(engine: SampleEngine, *shas: str) -> dict[str, tuple[str, str | None]]:
    result = run_cli(engine.root, "pick", *shas, "--dry-run", "--allow-feature", "--json")
    assert result.code == 0, result.output
    steps = json.loads(result.stdout)["steps"]
    return {s["sha"]: (s["action"], s.get("why")) for s in steps}


def _commit(engine: SampleEngine, path: str, text: str, subject: str) -> str:
    target = engine.root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text((target.read_text() if target.exists() else "") + text)
    git(engine, "add", path)
    git(engine, "commit", "--quiet", "-m", subject)
    return git(engine, "rev-parse", "HEAD")


def _two_packages(engine: SampleEngine) -> None:
    """Two files called helpers.py, in two packages, on main and on the branch alike."""
    for branch in ("main", "releases/v0.1.0"):
        git(engine, "switch", "--quiet", branch)
        for package in ("tinyengine/alpha", "tinyengine/beta"):
            _commit(engine, f"{package}/helpers.py", '"""Helpers."""\n', f"Add {package}")


@pytest.mark.parametrize("same_path", [True, False])
def test_lines_in_a_file_of_the_same_name_in_another_package_are_no_evidence(
    cut_engine_copy: SampleEngine, same_path: bool
) -> None:
    """The same lines added to ``beta/helpers.py`` on the branch say nothing of a main
    commit adding them to ``alpha/helpers.py``: both files are on both sides, so no move
    explains the other path. Into the same path, they are evidence."""
    engine = cut_engine_copy
    _two_packages(engine)
    git(engine, "switch", "--quiet", "main")
    fix = _commit(engine, "tinyengine/alpha/helpers.py", HELPER, "[Misc] A clamp helper (#140)")
    git(engine, "switch", "--quiet", "releases/v0.1.0")
    where = "tinyengine/alpha/helpers.py" if same_path else "tinyengine/beta/helpers.py"
    copy = _commit(engine, where, HELPER + "LIMIT = 8\n", "Bound the values")  # adapted
    action, why = _plan(engine, fix)[fix]
    if same_path:
        assert action == "hold"
        assert why is not None and why.startswith(f"likely already backported as {copy[:12]} (")
    else:
        assert (action, why) == ("cherry-pick", None)


def test_the_patches_of_commits_paired_with_nothing_are_not_read(
    cut_engine_copy: SampleEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A main commit that shares a file name only with a branch commit too small to count
    (a one-line pin), or only with a file of that name in another package, is ruled out
    before its patch is read: the patch cache, which keeps every patch a dry run read,
    holds its files but not its lines; the main commit that pairs has its lines read."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("RELEASE_REPO_CACHE", "1")
    engine = cut_engine_copy
    _two_packages(engine)
    git(engine, "switch", "--quiet", "main")
    other = _commit(engine, "tinyengine/alpha/helpers.py", HELPER, "[Misc] A clamp helper (#140)")
    pinned = _commit(engine, "requirements.txt", "numpy>=2\nrich>=13\n", "[CI] Pins (#141)")
    paired = _commit(engine, "tinyengine/beta/helpers.py", "VERSION = 2\n", "[Misc] v2 (#142)")
    git(engine, "switch", "--quiet", "releases/v0.1.0")
    _commit(engine, "tinyengine/beta/helpers.py", HELPER + "LIMIT = 8\n", "Bound the values")
    _commit(engine, "requirements.txt", "numpy>=2\n", "Pin numpy")
    plan = _plan(engine, other, pinned, paired)
    assert [action for action, _ in plan.values()] == ["cherry-pick"] * 3
    context = ReleaseContext(engine.root)
    cache = PatchCache.load(
        patch_cache_path(engine.repo.common_dir), patch_cache_key(context.repo_identity)
    )
    assert {other, pinned, paired} <= set(cache.files)  # the tree diffs were read
    assert cache.lines_of(paired) is not None  # compared with the branch's helpers.py
    assert cache.lines_of(other) is None
    assert cache.lines_of(pinned) is None

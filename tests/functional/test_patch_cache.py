"""The patch cache of ``pick`` and ``status``: a dry run keeps what it read of commits'
changes (files, line signatures, pairs compared, message facts, git cherry's answer); a
later run gives the same plan from it, reads only what is new, and a pick that changes the
branch leaves the git directory to its journal.
"""

from __future__ import annotations

import json
from collections import Counter
from copy import deepcopy
from pathlib import Path

import pytest

from release.adapters.patch_cache import CHERRY_KEPT, PatchCache, patch_cache_key, patch_cache_path
from release.flows.branch import EARLY_CHERRY
from release.flows.context import ReleaseContext
from release.sample import SampleEngine, make_sample_engine
from tests.backport_support import git, moved_file_backport
from tests.conftest import copied, cut, repo_state, run_cli

OFF = {"RELEASE_REPO_CACHE": "0"}


pytestmark = pytest.mark.usefixtures("no_ci")  # the runner's CI settings do not leak in


def _path(engine: SampleEngine) -> Path:
    return patch_cache_path(engine.repo.common_dir)


def _key(engine: SampleEngine) -> str:
    return patch_cache_key(ReleaseContext(engine.root).repo_identity)


def _plan(engine: SampleEngine, *shas: str, env: dict[str, str] | None = None) -> list[dict]:
    result = run_cli(engine.root, "pick", *shas, "--dry-run", "--allow-feature", "--json", env=env)
    assert result.code == 0, result.output
    return json.loads(result.stdout)["steps"]


_UNCACHED: dict[tuple[str, ...], list[dict]] = {}


def uncached_plan(engine: SampleEngine, *shas: str) -> list[dict]:
    """``_plan(engine, *shas, env=OFF)`` of a ``busy`` no test has changed yet, made once:
    each test's is a copy of the same repositories, and a plan with the caches off
    writes nothing (tested below), so it is the same for every copy."""
    if shas not in _UNCACHED:
        _UNCACHED[shas] = _plan(engine, *shas, env=OFF)
    return deepcopy(_UNCACHED[shas])


def _actions(steps: list[dict]) -> dict[str, str]:
    return {s["sha"]: s["action"] for s in steps}


@pytest.fixture
def busy(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[SampleEngine, list[str], str, str, str]:
    """More main commits than start git cherry at once; one of them already on the branch
    by patch (a plain cherry-pick), one as an adapted copy in a moved file (made once and
    copied)."""
    engine, (shas, same, fix, copy) = copied("busy", _busy, tmp_path / "copy", tmp_path_factory)
    return engine, list(shas), same, fix, copy


def _busy(root: Path) -> tuple[SampleEngine, tuple[tuple[str, ...], str, str, str]]:
    engine = cut(make_sample_engine(root))
    git(engine, "switch", "--quiet", "main")
    (engine.root / "notes").mkdir()
    for n in range(EARLY_CHERRY + 2):
        (engine.root / "notes" / f"{n}.txt").write_text(f"note {n}\n")
        git(engine, "add", "notes")
        git(engine, "commit", "--quiet", "-m", f"[Doc] Note {n} (#{300 + n})")
    same = git(engine, "rev-parse", "HEAD~3")
    fix, copy = moved_file_backport(engine)  # ends on the release branch
    git(engine, "cherry-pick", same)
    # the copy's own PR is another (a backport PR): only git cherry says it is the same
    subject = git(engine, "log", "-1", "--format=%s")
    git(engine, "commit", "--quiet", "--amend", "-m", f"{subject} (#400)")
    shas = git(engine, "rev-list", "--no-merges", "--reverse", "releases/v0.1.0..main").split()
    return engine, (tuple(shas), same, fix, copy)


def test_cold_warm_and_no_cache_give_the_same_plan(busy) -> None:
    engine, shas, same, fix, _ = busy
    assert len(shas) >= EARLY_CHERRY
    uncached = _plan(engine, *shas, env=OFF)
    assert not _path(engine).exists()  # off: not written either
    actions = _actions(uncached)
    assert actions[same] == "skip" and actions[fix] == "hold"
    assert _plan(engine, *shas) == uncached  # cold: written
    written = _path(engine).read_bytes()
    assert _plan(engine, *shas) == uncached  # warm
    assert _path(engine).read_bytes() == written  # nothing new: not written again


def test_the_warm_run_reads_the_pairs_and_git_cherrys_answer_from_the_cache(busy) -> None:
    """Facts changed in the file (with its own key) show in the plan: the warm run took
    them from there, not from git."""
    engine, shas, same, fix, copy = busy
    _plan(engine, *shas)
    cache = PatchCache.load(_path(engine), _key(engine))
    assert cache.shared[fix][copy] >= 4
    cache.shared[fix][copy] = 0  # the copy shares no line with the fix, says the cache
    (key,) = cache.cherry
    cache.cherry[key] = ()  # and git cherry marked nothing
    cache.changed = True
    cache.save()
    actions = _actions(_plan(engine, *shas))
    assert actions[fix] == "cherry-pick"
    assert actions[same] == "hold"  # not "skip": only the number it names says so now
    assert _actions(_plan(engine, *shas, env=OFF))[same] == "skip"


def test_new_branch_commits_are_compared_on_a_warm_run(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    git(engine, "switch", "--quiet", "main")
    server = engine.root / "tinyengine" / "server.py"
    handler = (
        "\n\ndef ready():\n    state = load_state()\n    waiting = len(state.queue)\n"
        "    busy = waiting > state.limit\n    log('ready', waiting, busy)\n"
        "    return {'ready': state.ok and not busy, 'queue': waiting}\n"
    )
    server.write_text(server.read_text() + handler)
    git(engine, "commit", "--quiet", "-am", "[Bugfix] Say when the server is ready (#150)")
    fix = git(engine, "rev-parse", "HEAD")
    git(engine, "switch", "--quiet", "releases/v0.1.0")
    assert _actions(_plan(engine, fix))[fix] == "cherry-pick"  # cached: nothing on the branch
    server.write_text(server.read_text() + handler.replace("ready", "is_ready", 1))
    git(engine, "commit", "--quiet", "-am", "Readiness answer for the v0.1 line")
    copy = git(engine, "rev-parse", "HEAD")
    (step,) = _plan(engine, fix)
    assert step["action"] == "hold" and copy[:12] in step["detail"]


def test_a_pick_leaves_the_git_directory_to_its_journal(busy) -> None:
    engine, _, _, fix, _ = busy
    git(engine, "switch", "--quiet", "main")
    readme = engine.root / "README.md"
    readme.write_text(readme.read_text() + "\nOne more line.\n")
    git(engine, "commit", "--quiet", "-am", "[Doc] One more line (#160)")
    doc = git(engine, "rev-parse", "HEAD")
    git(engine, "switch", "--quiet", "releases/v0.1.0")
    result = run_cli(engine.root, "pick", doc, fix)
    assert result.code == 0, result.output
    assert "held" in result.stdout and not _path(engine).exists()


@pytest.mark.parametrize("damage", ["truncated", "foreign", "empty"])
def test_a_damaged_or_foreign_patch_cache_is_ignored_and_written_anew(busy, damage: str) -> None:
    engine, shas, *_ = busy
    uncached = uncached_plan(engine, *shas)
    _plan(engine, *shas)
    path = _path(engine)
    data = path.read_bytes()
    path.write_bytes(
        {
            "truncated": data[: len(data) // 2],
            "foreign": data.replace(b"release-patches 1 ", b"release-patches 1 0", 1),
            "empty": b"",
        }[damage]
    )
    assert _plan(engine, *shas) == uncached
    assert PatchCache.load(path, _key(engine)).lines  # written anew, whole


def test_what_the_cache_holds_reads_back_the_same(tmp_path: Path) -> None:
    path = tmp_path / "patches.cache"
    cache = PatchCache(path, "k")
    lines = Counter({11: 2, 7: 1, 2**64 - 1: 3})
    cache.add_lines({"a" * 40: lines})
    cache.add_files({"a" * 40: frozenset({"x/y.py", "z"})})
    cache.add_facts({"a" * 40: (12, (3, 4), "fix the thing")})
    cache.add_shared({"a" * 40: {"b" * 40: 5}})
    for n in range(CHERRY_KEPT + 2):
        cache.keep_cherry(f"tip{n} main base", {f"{n}" * 40})
    cache.save()
    back = PatchCache.load(path, "k")
    assert Counter(back.lines_of("a" * 40)) == lines
    assert back.total_of("a" * 40) == lines.total()
    assert back.files_of("a" * 40) == frozenset({"x/y.py", "z"})
    assert back.facts_of("a" * 40) == (12, (3, 4), "fix the thing")
    assert back.shared_with("a" * 40) == {"b" * 40: 5}
    assert list(back.cherry) == [f"tip{n} main base" for n in range(2, CHERRY_KEPT + 2)]
    assert PatchCache.load(path, "another key").lines == {}


def test_a_cache_file_that_cannot_be_written_changes_nothing(busy) -> None:
    engine, shas, *_ = busy
    uncached = uncached_plan(engine, *shas)
    _path(engine).mkdir(parents=True)  # a directory where the file would be
    assert _plan(engine, *shas) == uncached
    assert _plan(engine, *shas) == uncached


@pytest.mark.parametrize("args", [("--dry-run",), ()], ids=["dry-run", "pick"])
def test_a_file_where_the_state_directory_would_be_is_refused_clearly(
    cut_engine_copy: SampleEngine, args: tuple[str, ...]
) -> None:
    engine = cut_engine_copy
    (engine.repo.common_dir / "release").write_text("not a directory\n", encoding="utf-8")
    before = repo_state(engine.root)
    result = run_cli(engine.root, "pick", "#109", *args)
    assert result.code == 3, result.output
    assert "Traceback" not in result.output
    assert ".git/release" in result.stderr and "move aside what is in the way" in result.stderr
    assert repo_state(engine.root) == before


def test_with_replaced_commits_the_cache_is_not_used(cut_engine_copy: SampleEngine) -> None:
    """``git replace`` changes what git says of a sha: a copy replaced by a commit without
    the change no longer holds the fix back, cache or not."""
    engine = cut_engine_copy
    fix, copy = moved_file_backport(engine)
    assert _actions(_plan(engine, fix))[fix] == "hold"  # and the cache is written
    parent_tree = git(engine, "rev-parse", f"{copy}^^{{tree}}")
    raw = git(engine, "cat-file", "commit", copy)
    tree = raw.split("\n", 1)[0].split()[1]
    replacement = raw.replace(f"tree {tree}", f"tree {parent_tree}", 1) + "\n"
    new = engine.repo.run("hash-object", "-t", "commit", "-w", "--stdin", stdin=replacement).stdout
    git(engine, "replace", copy, new.strip())
    replaced = _plan(engine, fix)
    assert _actions(replaced)[fix] == "cherry-pick"
    assert replaced == _plan(engine, fix, env=OFF)


def test_with_grafts_the_cache_is_not_used(cut_engine_copy: SampleEngine) -> None:
    """A grafts file gives a commit other parents: the branch's history, and its commits'
    patches against their parents, are not what was kept for their shas (git cherry's
    answer is kept under the same tip, main and merge-base). A plain cherry-pick grafted
    out of the branch's history, its change now part of the next commit's patch, is no
    longer "already there", cache or not."""
    engine = cut_engine_copy
    fix = engine.shas[109]
    start = git(engine, "rev-parse", "HEAD")
    git(engine, "cherry-pick", fix)  # a copy git cherry finds by patch id
    (path,) = git(engine, "diff-tree", "--no-commit-id", "--name-only", "-r", fix).split()
    with (engine.root / path).open("a") as handle:
        handle.write("# 0.1.0\n")
    git(engine, "commit", "--quiet", "-am", "Note the release in the server")
    assert _actions(_plan(engine, fix))[fix] == "skip"  # and the cache is written
    tip = git(engine, "rev-parse", "HEAD")
    (engine.repo.common_dir / "info" / "grafts").write_text(f"{tip} {start}\n")
    grafted = _plan(engine, fix)
    assert _actions(grafted)[fix] == "cherry-pick"
    assert grafted == _plan(engine, fix, env=OFF)


def test_after_the_branch_gains_commits_only_they_are_compared_with_main(busy) -> None:
    """git cherry's answer for an earlier tip of the branch is kept; once the branch has
    gained commits, only they are compared with main, and what they match is added to it.
    A main commit put in the kept answer by hand shows as picked: the kept answer was
    used. Once the branch is rewritten (the earlier tip no longer in its history), git
    cherry runs whole again."""
    engine, shas, same, _, _ = busy
    first = _actions(_plan(engine, *shas))
    planted, copied = (
        git(engine, "log", "-1", "--format=%H", f"--grep=Note {n} ", "main") for n in (0, 1)
    )
    assert first[planted] == first[copied] == "cherry-pick" and same not in (planted, copied)
    cache = PatchCache.load(_path(engine), _key(engine))
    (key,) = cache.cherry
    cache.cherry[key] = (*cache.cherry[key], planted)  # "already there", says the cache
    cache.changed = True
    cache.save()
    tip = git(engine, "rev-parse", "HEAD")
    git(engine, "cherry-pick", copied)  # the same patch, no -x: only git's patch ids say so
    actions = _actions(_plan(engine, *shas))
    assert actions[copied] == "skip" and actions[planted] == "skip"
    uncached = _actions(_plan(engine, *shas, env=OFF))
    assert uncached[copied] == "skip" and uncached[planted] == "cherry-pick"
    git(engine, "reset", "--quiet", "--hard", f"{tip}~1")  # rewritten: the tip is gone
    git(engine, "cherry-pick", copied)
    rewritten = _plan(engine, *shas)
    assert _actions(rewritten)[planted] == "cherry-pick" and _actions(rewritten)[copied] == "skip"
    assert rewritten == _plan(engine, *shas, env=OFF)

"""Where ``release notes`` takes a shorter way, it prints what the general way prints:

- a range whose ends are one commit (``--since v1 --until v1``) is answered without
  reading a commit, a previous final's branch or the cache;
- a previous final in the range's own history (its tag on main, or a release branch
  nothing was picked onto) has no commit the range lacks: its branch's log and the
  range's patch ids are not read.
"""

from __future__ import annotations

import pytest

from release.adapters.commit_cache import cache_path
from release.adapters.notes_cache import notes_cache_dir
from release.core.notes import render_json, render_markdown
from release.flows.context import ReleaseContext
from release.flows.history import _shipped, _shipped_from_branch, notes_for_range
from release.flows.notes_range import given_range
from release.sample import SampleEngine

from .conftest import run_cli


@pytest.fixture(autouse=True)
def _caches_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("RELEASE_REPO_CACHE", "1")


def test_an_empty_range_prints_what_its_notes_built_in_full_print(
    cut_engine_copy: SampleEngine,
) -> None:
    engine = cut_engine_copy
    repo = engine.repo
    repo.run("tag", "-a", "v0.1.0", "-m", "v0.1.0")  # a final: what it shipped is left out
    ends = [
        ("v0.1.0", "v0.1.0"),
        ("v0.1.0", "releases/v0.1.0"),  # another name of the same commit
        ("main", "refs/heads/main"),
    ]
    for since, until in ends:
        ctx = ReleaseContext(engine.root)
        rng = given_range(ctx, since, until)
        built = notes_for_range(ctx, rng)  # the general way: the range's commits read
        for fmt, render in (("md", render_markdown), ("json", render_json)):
            result = run_cli(engine.root, "notes", "--since", since, "--until", until,
                             "--format", fmt)  # fmt: skip
            assert result.code == 0, result.output
            assert result.stdout == render(built, repo_url=ctx.repo_url)
    assert "No changes." in render_markdown(built)
    # nothing was read: the general way keeps the range's commits and earlier people
    assert not cache_path(repo.common_dir).exists()
    assert not notes_cache_dir(repo.common_dir).exists()
    run_cli(engine.root, "notes", "--since", "v0.1.0~1", "--until", "v0.1.0")
    assert cache_path(repo.common_dir).exists()


def test_a_final_in_the_ranges_history_leaves_out_what_reading_its_branch_would(
    cut_engine_copy: SampleEngine,
) -> None:
    engine = cut_engine_copy
    repo = engine.repo
    repo.run("tag", "-a", "v0.1.0", "-m", "v0.1.0")  # the cut: main's history holds it
    repo.run("cherry-pick", "-x", engine.shas[109])
    repo.run("tag", "-a", "v0.1.1", "-m", "v0.1.1")  # a commit of its own: read
    repo.run("tag", "-a", "v0.0.9", "-m", "v0.0.9", "main~3")  # on main
    found = {}
    for final in ("v0.1.0", "v0.1.1", "v0.0.9"):
        ctx = ReleaseContext(engine.root)
        rng = given_range(ctx, final, "main")
        assert rng.exclude_from == final
        base = ctx.repo.merge_base(final, "main")
        found[final] = _shipped(ctx, rng)
        assert found[final] == _shipped_from_branch(ctx, rng, base)
    assert found["v0.1.0"] == found["v0.0.9"] == (set(), set())
    assert engine.shas[109] in found["v0.1.1"][0]  # the general way, taken where it must be

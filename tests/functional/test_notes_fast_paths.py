"""Where ``release notes`` takes a shorter way, it prints what the general way prints:

- a range whose ends are one commit (``--since v1 --until v1``) is answered without
  reading a commit, a previous final's branch or the cache;
- a previous final in the range's own history (its tag on main, or a release branch
  nothing was picked onto) has no commit the range lacks: its branch's log and the
  range's patch ids are not read;
- a prefix-less ASCII subject skips the regexes of the kinds of change its words rule out.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from release.adapters.commit_cache import cache_path
from release.adapters.notes_cache import notes_cache_dir
from release.core import categories
from release.core.config import Config
from release.core.notes import render_json, render_markdown
from release.flows.context import ReleaseContext
from release.flows.history import _shipped, _shipped_from_branch, notes_for_range
from release.flows.notes_range import given_range
from release.sample import SampleEngine
from tests.conftest import run_cli


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


_ROWS = [*categories._ABOUT, *categories._KINDS]


@pytest.mark.parametrize("row", _ROWS, ids=[row[1] for row in _ROWS])
@given(data=st.data())
@settings(max_examples=300, deadline=None)
def test_what_a_kind_of_change_is_found_by_holds_one_of_its_words(
    row: tuple[re.Pattern[str], str, tuple[str, ...]], data: st.DataObject
) -> None:
    pattern = re.compile(row[0].pattern, row[0].flags)
    text = data.draw(st.from_regex(pattern))
    found = pattern.search(text)
    assert found is not None
    if text.isascii():
        assert any(word in text.lower() for word in row[2]), (row[1], found.group())


_WORDS = [
    word for row in _ROWS for word in row[2]
] + ["Fix", "WORKAROUND", "unit test", "github_actions", "Cherry-pick", "optimizes", "the",
     "Add", "Automatically", "adjust", "[CI]", "[v0.1.0]", ":", "-", "\u2013", "(#12)", "K", "\u017f",
     "refactoring", "docs", "Docker", "e2e", "UT", "speedups", "İ", "ci(x):", "Port:", "oom"]  # fmt: skip


@given(st.lists(st.sampled_from(_WORDS) | st.text(max_size=6), max_size=8), st.sampled_from(" :-"))
@settings(max_examples=500, deadline=None)
def test_a_subjects_words_say_the_same_kind_either_way(words: list[str], glue: str) -> None:
    aliases = Config().alias_map()
    subject = glue.join(words)
    for known in (frozenset(aliases.values()), frozenset({"Tests", "Misc"})):
        quick = categories.category_from_words(subject, aliases, known)
        assert quick == categories.category_from_words(subject, aliases, known, quick=False)

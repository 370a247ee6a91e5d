"""Tables one edit away from [tool.release]: found, said wherever config is loaded."""

from __future__ import annotations

import difflib
import itertools
from pathlib import Path

import pytest

from release.adapters.config_file import read_config
from release.adapters.git import GitRepo
from release.core.table_names import misspelt_tables, one_edit_apart
from release.flows.context import ReleaseContext


@pytest.mark.parametrize("name", ["relase", "releases", "rlease", "erlease", "relaese", "relea5e",
                                  "releas", "xrelease"])  # fmt: skip
def test_one_edit_from_release_is_found_both_ways(name: str) -> None:
    assert one_edit_apart(name, "release") and one_edit_apart("release", name)


@pytest.mark.parametrize("name", ["release", "relaxes", "ruff", "rel", "reelasse", "eelrase", ""])
def test_two_edits_or_none_is_not(name: str) -> None:
    assert not one_edit_apart(name, "release") and not one_edit_apart("release", name)


def distance(a: str, b: str) -> int:
    """Optimal string alignment distance, written out: the reference for the fast check."""
    d = {(i, j): max(i, j) if min(i, j) == 0 else 0 for i in range(len(a) + 1)
         for j in range(len(b) + 1)}  # fmt: skip
    for i, j in itertools.product(range(1, len(a) + 1), range(1, len(b) + 1)):
        cost = a[i - 1] != b[j - 1]
        d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + cost)
        if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
            d[i, j] = min(d[i, j], d[i - 2, j - 2] + 1)
    return d[len(a), len(b)]


def test_the_check_agrees_with_the_distance_on_every_short_word() -> None:
    words = ["".join(p) for n in range(0, 4) for p in itertools.product("ab", repeat=n)]
    for a, b in itertools.product(words, repeat=2):
        assert one_edit_apart(a, b) == (distance(a, b) == 1), (a, b)
    for a in ("release", "relase", "releases", "rlease", "erlease"):
        ratio = difflib.SequenceMatcher(None, a, "release").ratio()
        assert ratio > 0.8 and distance(a, "release") <= 1


def test_only_without_a_release_table() -> None:
    assert misspelt_tables({"tool": {"relase": {}, "ruff": {}}}) == ["relase"]
    assert misspelt_tables({"tool": {"relase": {}, "release": {}}}) == []
    assert misspelt_tables({"tool": "x"}) == [] and misspelt_tables({}) == []


def test_a_misspelt_table_is_a_notice_where_config_is_loaded(tmp_path: Path) -> None:
    GitRepo.init(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.relase]\ntag = "v{version}"\n')
    expected = "[tool.relase] in pyproject.toml is not read; did you mean [tool.release]?"
    assert read_config(tmp_path)[1] == (expected,)
    assert ReleaseContext(tmp_path).notices == [expected]
    (tmp_path / "pyproject.toml").write_text("[tool.release]\n[tool.relase]\n")
    assert ReleaseContext(tmp_path).notices == []

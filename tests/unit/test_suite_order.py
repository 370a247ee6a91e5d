"""The order ``nox -s tests`` hands the files to its two workers: the longest first
(:data:`tests.conftest.LONGEST_FIRST`), as named, each file's tests in their order."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import cast

import pytest

from tests.conftest import LONGEST_FIRST, pytest_collection_modifyitems

ROOT = Path(__file__).resolve().parents[2]


class Item:
    def __init__(self, path: str, name: str) -> None:
        self.path, self.name = ROOT / "tests" / path, name


def test_each_file_named_longest_is_a_test_file_here() -> None:
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
    for name in LONGEST_FIRST:
        assert any((ROOT / "tests").rglob(name)), f"{name} is named first but is not here"


def test_the_longest_files_come_first_in_their_order_and_the_rest_as_collected() -> None:
    collected = [
        Item("test_a.py", "1"),
        Item(LONGEST_FIRST[1], "1"),
        Item("test_z.py", "1"),
        Item(LONGEST_FIRST[0], "1"),
        Item(LONGEST_FIRST[1], "2"),
        Item("test_a.py", "2"),
        Item(LONGEST_FIRST[0], "2"),
    ]
    items = list(collected)
    pytest_collection_modifyitems(cast("list[pytest.Item]", items))
    assert [(i.path.name, i.name) for i in items] == [
        (LONGEST_FIRST[0], "1"),
        (LONGEST_FIRST[0], "2"),
        (LONGEST_FIRST[1], "1"),
        (LONGEST_FIRST[1], "2"),
        ("test_a.py", "1"),
        ("test_z.py", "1"),
        ("test_a.py", "2"),
    ]


def test_the_tests_session_keeps_that_order_on_its_workers() -> None:
    """xdist would otherwise hand out the files with the most tests first."""
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    (session,) = (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "tests")
    args = [
        [a.value for a in call.args if isinstance(a, ast.Constant)]
        for call in ast.walk(session)
        if isinstance(call, ast.Call) and ast.unparse(call.func) == "session.run"
    ]
    (pytest_args,) = (a for a in args if a[:1] == ["pytest"])
    assert "loadfile" in pytest_args and "--no-loadscope-reorder" in pytest_args

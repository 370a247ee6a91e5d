"""Tables under ``[tool]`` one edit away from ``release`` (``[tool.relase]``,
``[tool.releases]``, ``[tool.rlease]``): a typo that would otherwise be read as no
configuration at all. One edit is an insertion, a deletion, a substitution or two
adjacent letters swapped (the Damerau-Levenshtein distance, restricted to one). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["misspelt_notices", "misspelt_tables", "one_edit_apart"]

TABLE = "release"


def one_edit_apart(a: str, b: str) -> bool:
    """Whether ``a`` becomes ``b`` by exactly one insertion, deletion, substitution or
    swap of two adjacent characters (symmetric; equal strings are not one edit apart)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    start = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(a))
    if len(a) < len(b):  # one insertion into the shorter
        return a[start:] == b[start + 1 :]
    if a[start + 1 :] == b[start + 1 :]:  # one substitution
        return True
    return (
        start + 1 < len(a)
        and a[start] == b[start + 1]
        and a[start + 1] == b[start]
        and a[start + 2 :] == b[start + 2 :]
    )


def misspelt_tables(document: Mapping[str, object]) -> list[str]:
    """The tables under ``[tool]`` of a parsed ``pyproject.toml`` one edit away from
    ``release``, when there is no ``[tool.release]`` (with one, the others are someone
    else's)."""
    tool = document.get("tool")
    if not isinstance(tool, Mapping) or TABLE in tool:
        return []
    return [name for name in tool if isinstance(name, str) and one_edit_apart(name, TABLE)]


def misspelt_notices(document: Mapping[str, object], file: str = "pyproject.toml") -> list[str]:
    """One line per misspelt table: ``[tool.relase] in pyproject.toml is not read; did you
    mean [tool.release]?``"""
    from release.core.terminal_text import escaped

    return [
        f"[tool.{escaped(name)}] in {file} is not read; did you mean [tool.{TABLE}]?"
        for name in misspelt_tables(document)
    ]

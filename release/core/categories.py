"""Categories from a subject's ``[...]`` prefixes: the alias map's spellings, noise left
out (versions, branches, series), and a typo read as the one category it is close to.
Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from release.core.config import normalize_category

__all__ = ["decide_category", "near_category"]

_PREFIX = re.compile(r"^\s*\[([^\]]*)\]\s*")
# A version needs a "v" or a dot ([v0.23.0], [0.9.1], [v1]); a bare number with letters is
# a name ([310P] is hardware).
_NOISE = re.compile(
    r"^(v\d+(\.\d+)*([a-z-]*\d*)?|\d+(\.\d+)+([a-z]+\d*)?|\d+|main|master|release"
    r"|releases?/\S*|\d+\s*/\s*(\d+|n)|wip|draft|cherry-?pick|backport)$",
    re.IGNORECASE,
)


def decide_category(block: str, aliases: Mapping[str, str]) -> tuple[str, tuple[str, ...]]:
    """Category and raw prefixes of a subject's leading ``[...]`` block.

    The first prefix that names a known category wins; noise prefixes are dropped;
    anything else leaves the commit under "Other".
    """
    prefixes: list[str] = []
    rest = block
    while True:
        match = _PREFIX.match(rest)
        if not match:
            break
        prefixes.append(match.group(1).strip())
        rest = rest[match.end() :]
    category = "Other"
    for prefix in prefixes:
        canonical = aliases.get(normalize_category(prefix))
        if _NOISE.match(prefix) and canonical is None:
            continue  # a configured spelling wins: vLLM's [V1] also looks like a version
        if canonical:
            category = canonical
            break
    else:
        for prefix in prefixes:  # no spelling known: a typo of one ([BufFix], [Perfomance])
            canonical = near_category(prefix, aliases)
            if canonical:
                category = canonical
                break
    return category, tuple(prefixes)


def near_category(prefix: str, aliases: Mapping[str, str]) -> str | None:
    """The category a misspelt prefix means: one spelling within one edit (two, for long
    ones), and only one category that close. None when unsure."""
    key = normalize_category(prefix)
    if len(key) < 4 or _NOISE.match(prefix):
        return None
    limit = 2 if len(key) >= 9 else 1
    found = {c for spelling, c in aliases.items() if _within(key, spelling, limit)}
    return found.pop() if len(found) == 1 else None


def _within(a: str, b: str, limit: int) -> bool:
    """Whether the edit distance (insertions, deletions, substitutions, transpositions) of
    ``a`` and ``b`` is at most ``limit``."""
    if abs(len(a) - len(b)) > limit or a == b:
        return a == b
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i]
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            value = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                value = min(value, previous2[j - 2] + 1)
            row.append(value)
        if min(row) > limit:
            return False
        previous2, previous = previous, row
    return previous[-1] <= limit

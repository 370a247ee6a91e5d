"""Categories from a subject's ``[...]`` prefixes: the alias map's spellings, noise left
out (versions, branches, series), and a typo read as the one category it is close to.
Pure.
"""

from __future__ import annotations

import re
from collections.abc import Container, Mapping

from release.core.config import normalize_category

__all__ = ["category_from_words", "decide_category", "near_category"]

_PREFIX = re.compile(r"^\s*\[([^\]]*)\]\s*")
# A version needs a "v" or a dot ([v0.23.0], [0.9.1], [v1]); a bare number with letters is
# a name ([310P] is hardware).
_NOISE = re.compile(
    r"^(v\d+(\.\d+)*([a-z-]*\d*)?|\d+(\.\d+)+([a-z]+\d*)?|\d+|main|master|release"
    r"|releases?/\S*|\d+\s*/\s*(\d+|n)|wip|draft|cherry-?pick|backport"
    r"|[A-Z][A-Z0-9]*-\d+|fix_for_vllm\S*)$",  # ticket ids (GAUDISW-123), pinned-upstream marks
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


# Subjects with no [prefix]: a conventional-commit type ("fix: ...", "ci(x): ..."), else the
# leading verb, corrected by what the subject is about.
_CONVENTIONAL = re.compile(r"^(?P<type>[A-Za-z][\w/-]*)(?:\([^)]*\))?!?:\s")
_VERBS = {
    "Bug Fixes": ("fix", "fixes", "fixed", "fixing", "bugfix", "hotfix", "resolve", "correct",
                  "restore", "patch", "avoid", "prevent", "handle"),
    "Features": ("add", "adds", "added", "adding", "support", "enable", "enables",
                 "implement", "introduce", "create", "allow", "initial", "new"),
    "Performance": ("optimize", "optimise", "speed", "accelerate", "improve", "reduce",
                    "eliminate"),
    "Misc": ("remove", "delete", "cleanup", "clean", "refactor", "rename", "move", "unify",
             "unified", "use", "change", "set", "update", "updates", "bump", "upgrade", "port",
             "disable", "skip", "align", "modify", "temp", "temporary", "cap", "limit",
             "revert", "replace", "simplify", "migrate", "sync"),
}  # fmt: skip
_ABOUT = (  # the subject mentions ... -> it is about (checked in this order)
    (re.compile(r"\b(tests?|unit ?tests?|ut|e2e|pytest)\b", re.I), "Tests"),
    (re.compile(r"\b(readme|docs?|documentation)\b", re.I), "Documentation"),
    (re.compile(r"\b(ci|workflows?|github[ _]actions?|jenkins|dockerfile|requirements)\b", re.I),
     "CI/Build"),
)  # fmt: skip


def category_from_words(
    subject: str, aliases: Mapping[str, str], known: Container[str]
) -> str | None:
    """The category a prefix-less subject's words say, among the ``known`` (configured)
    ones; None when they say nothing clear."""
    conventional = _CONVENTIONAL.match(subject)
    if conventional:
        found = aliases.get(normalize_category(conventional["type"]))
        if found:
            return found
    first = subject.split(maxsplit=1)[0].lower().rstrip(":,") if subject.strip() else ""
    verb = next((c for c, words in _VERBS.items() if first in words), None)
    about = next((c for p, c in _ABOUT if p.search(subject)), None)
    if about in known:  # "Fix the CI", "Add a test", "README update for ..."
        return about
    return verb if verb in known else None

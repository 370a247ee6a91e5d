"""Categories from a subject's ``[...]`` prefixes: the alias map's spellings, noise left
out (versions, branches, series), and a typo read as the one category it is close to;
for notes only, what a subject no prefix categorizes says in its words. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Container, Mapping

from release.core.config import normalize_category
from release.core.patterns import lazy_pattern

__all__ = ["category_from_words", "decide_category", "near_category", "prefix_key"]

_PREFIX = lazy_pattern(r"^\s*\[([^\]]*)\]\s*")
_PREFIXES = lazy_pattern(r"^(?:\s*\[[^\]]*\])+\s*")
# A version needs a "v" or a dot ([v0.23.0], [0.9.1], [v1]); a bare number with letters is
# a name ([310P] is hardware).
_NOISE = lazy_pattern(
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
        canonical = aliases.get(prefix_key(prefix))
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


def prefix_key(prefix: str) -> str:
    """The spelling a prefix is looked up by: normalized, a ``=value`` after a name dropped
    (``[FIX_FOR_VLLM_CUSTOM=<sha>]`` is a ``FIX_FOR_VLLM_CUSTOM``)."""
    name, equals, _ = prefix.partition("=")
    return normalize_category(name if equals and name.strip() else prefix)


def near_category(prefix: str, aliases: Mapping[str, str]) -> str | None:
    """The category a misspelt prefix means: one spelling within one edit (two, for long
    ones), and only one category that close. None when unsure."""
    key = prefix_key(prefix)
    if len(key) < 4 or _NOISE.match(prefix):
        return None
    limit = 2 if len(key) >= 9 else 1
    chars = set(key)
    found = {
        c
        for spelling, c in aliases.items()
        if abs(len(spelling) - len(key)) <= limit
        and _few_apart(chars, set(spelling), limit)
        and _within(key, spelling, limit)
    }
    return found.pop() if len(found) == 1 else None


def _few_apart(a: set[str], b: set[str], limit: int) -> bool:
    """Whether two spellings' letters allow ``limit`` edits between them: an edit brings in
    at most one letter the other lacks, and takes away at most one (a quick test that
    spares most of the distance computations)."""
    return len(a - b) <= limit and len(b - a) <= limit


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


# Subjects with no [prefix]: a conventional-commit type ("fix: ...", "ci(x): ..."), else what
# the subject is about, its leading verb (also after a "topic:" label or an adverb), else a
# word anywhere that names a kind of change ("Interleaved sliding window fix").
_LABEL = lazy_pattern(r"^(?P<type>[^\s:()][^:()]{0,30}?)(?:\([^)]*\))?!?(?::|\s[-\u2013])\s+")
_VERBS = {
    "Bug Fixes": ("fix", "bugfix", "hotfix", "resolve", "correct", "restore", "patch",
                  "avoid", "prevent", "handle"),
    "Features": ("add", "support", "enable", "implement", "introduce", "create", "allow",
                 "initial", "new", "enhance"),
    "Performance": ("optimize", "optimise", "speed", "accelerate", "improve", "reduce",
                    "eliminate"),
    "CI/Build": ("pin", "bump", "upgrade"),  # dependency versions
    "Misc": ("remove", "delete", "cleanup", "clean", "refactor", "rename", "move", "unify",
             "unified", "use", "change", "set", "update", "port",
             "disable", "skip", "align", "modify", "temp", "temporary", "cap", "limit",
             "clamp", "revert", "replace", "simplify", "migrate", "sync", "adjust", "adapt",
             "drop", "increase", "decrease", "reset", "reenable", "re-enable", "separate"),
}  # fmt: skip
_VERB = {word: category for category, words in _VERBS.items() for word in words}
_KINDS = (  # words that name a kind of change wherever they stand (checked in this order)
    (lazy_pattern(r"\b((bug|hot)?fix(es|ed|ing)?|workarounds?|wa|crash(es|ed)?|segfaults?|oom)\b",
                re.I), "Bug Fixes", ("fix", "workaround", "wa", "crash", "segfault", "oom")),
    (lazy_pattern(r"\b(support|enablement|implementation|impl|integration)\b", re.I), "Features",
     ("support", "enablement", "impl", "integration")),
    (lazy_pattern(r"\b(optimi[sz]\w*|speedups?)\b", re.I), "Performance", ("optimi", "speedup")),
    (lazy_pattern(r"\b(cleanup|refactor(ing)?|reverts?|updates?|cherry[- ]?pick(s|ed)?)\b", re.I),
     "Misc", ("cleanup", "refactor", "revert", "update", "cherry")),
)  # fmt: skip
_ABOUT = (  # the subject mentions ... -> it is about (checked in this order)
    (lazy_pattern(r"\b(tests?|unit ?tests?|ut|e2e|pytest)\b", re.I), "Tests", ("test", "ut", "e2e")),
    (lazy_pattern(r"\b(readme|docs?|documentation)\b", re.I), "Documentation", ("readme", "doc")),
    (lazy_pattern(r"\b(ci|workflows?|github[ _]actions?|gha|jenkins|dockers?|dockerfiles?"
                r"|requirements?)\b", re.I), "CI/Build",
     ("ci", "workflow", "action", "gha", "jenkins", "docker", "requirement")),
)  # fmt: skip
# The third of each row: what every text the pattern finds holds, in lower case. In an
# ASCII subject (where re.I is lower case: no Unicode folding), none of them there means
# no match, and the regex (a step at every character) is not run: most subjects are
# looked through for a kind of change by a few substring tests (the tests check both).
_Row = tuple["re.Pattern[str]", str, tuple[str, ...]]


def category_from_words(
    subject: str, aliases: Mapping[str, str], known: Container[str], *, quick: bool = True
) -> str | None:
    """The category a prefix-less subject's words say, among the ``known`` (configured)
    ones; None when they say nothing clear. (``quick``: let an ASCII subject skip the
    regexes its words rule out; the answer is the same.)"""
    subject = subject.lstrip("-\u2013: ")
    low = subject.lower() if quick and subject.isascii() else None
    # _LABEL needs a ":" or a dash after a space
    label = _LABEL.match(subject) if low is None or ":" in low or "-" in low else None
    if label:
        found = aliases.get(normalize_category(label["type"]))
        if found:
            return found
    about = _first(_ABOUT, subject, low, None)
    if about in known:  # "Fix the CI", "Add a test", "README update for ..."
        return about
    for lead in (subject[label.end() :], subject) if label else (subject,):
        if "[" in lead:  # (what _PREFIXES needs)
            lead = _PREFIXES.sub("", lead, count=1)
        words = lead.split(maxsplit=2)  # "Port: [v0.24.0] Fix ..."
        if len(words) > 1 and words[0].lower().endswith("ly") and not _verb(words[0]):
            words = words[1:]  # an adverb first: "Automatically adjust ..."
        verb = _verb(words[0]) if words else None
        if verb in known:
            return verb
    return _first(_KINDS, subject, low, known)


def _first(
    rows: tuple[_Row, ...], subject: str, low: str | None, known: Container[str] | None
) -> str | None:
    """The category of the first row (among the ``known``, when given) whose pattern finds
    something in ``subject`` (``low``: it in lower case, when ASCII). Loops, not
    generators: this runs for most subjects of a long history."""
    for pattern, category, holds in rows:
        if known is not None and category not in known:
            continue
        if low is not None:
            for text in holds:
                if text in low:
                    break
            else:
                continue  # none of its words: it finds nothing
        if pattern.search(subject) is not None:
            return category
    return None


def _verb(word: str) -> str | None:
    """The category of a leading verb in any of its forms ("Removing", "Enabled", "Adds")."""
    word = word.lower().strip(":,.")
    found = _VERB.get(word)
    if found is not None:  # the word as it is: the first stem tried
        return found
    stems = [word]
    for ending, replacements in (("ing", ("", "e")), ("ied", ("y",)), ("ed", ("", "e")),
                                 ("es", ("", "e")), ("s", ("",))):  # fmt: skip
        if word.endswith(ending) and len(word) - len(ending) >= 2:
            base = word[: -len(ending)]
            stems += [base + r for r in replacements]
            if len(base) > 2 and base[-1] == base[-2]:  # "Dropped", "Mapping"
                stems.append(base[:-1])
            break
    return next((_VERB[s] for s in stems if s in _VERB), None)

"""Backports that no ``-x`` line names and no patch id finds: evidence that a main commit
is likely on the release branch already. Pure: reads commit messages and patch text.

On real release branches backports mostly carry no ``-x``, get a PR number of their own
and a ``[v0.13.0][cherry-pick]`` or ``Port of #N:`` prefix, and are often adapted: files
moved, context changed, a conflict resolved. So evidence is looked for in this order:

1. **PR numbers.** The main commit's PR is referenced from the branch commit: in a chain
   of numbers (``Fix x (#5702) (#6120)``), after a port word (``Port of #1247:``,
   ``Cherry-pick #1212:``, ``backport of #N`` in the body; a PR's URL there only when it is
   this repository's, :class:`~release.core.pull_requests.RepoIdentity`), or the other way
   round (a main commit forward-ported from the branch names the branch commit's PR).
2. **The title**, with category, version and cherry-pick prefixes stripped
   (:func:`normalized_title`), when it is long enough to say something and names one main
   commit only.
3. **Changed lines.** The added and removed lines, compared as text so that moved files
   still match (:func:`similarity`): most of the main commit's lines are in the branch
   commit (:data:`LINES_THRESHOLD`), or a sizeable branch commit is almost all a part of
   the main commit (:data:`CONTAINED_THRESHOLD`: a partial port).

A branch commit that a later, still standing, revert on the branch undid is no evidence:
the change is not there (:func:`undone`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TypeVar

from release.core.commits import Commit, is_revert, pr_number, title_key
from release.core.patch_lines import changed_lines, patches, signature, signatures
from release.core.pull_requests import RepoIdentity

__all__ = [
    "CONTAINED_THRESHOLD",
    "LINES_THRESHOLD",
    "MIN_SHARED",
    "Evidence",
    "Facts",
    "Message",
    "by_counts",
    "by_lines",
    "by_message",
    "changed_lines",
    "joint_shared",
    "normalized_title",
    "patches",
    "shared_lines",
    "signature",
    "signatures",
    "similarity",
    "undone",
]

LINES_THRESHOLD = 0.7  # share of the main commit's changed lines the branch commit makes too
CONTAINED_THRESHOLD = 0.85  # or share of a branch commit's lines that are the main commit's
MIN_SHARED = 4  # fewer common lines than this say nothing (a version pin, an import)
_HALF = 0.5  # a branch commit with this share of a main commit's lines helps a joint match
_MIN_CONTAINED = 20  # a part of a main commit, ported alone, is evidence when this large
_MIN_TITLE_WORDS = 3  # "Fix typo" names many changes

# a port word, not part of a flag or a path ("--port", "ports/x")
_PORT = r"(?<![-\w/.])(?:(?:back-?)?port|cherry[- ]?pick)(?:ed|s|ing)?\b"
_PORT_WORD = re.compile(_PORT, re.I)
# a number after a port word: "Port #1247:", "Port of: ... #1454", "Cherry-pick from PR#1258",
# "Partly port of 1436,", "backport of https://github.com/org/repo/pull/12"
_AFTER_PORT = re.compile(
    r"^\s*(?:of|from|to)?\s*:?\s*(?:PR\s*)?"
    r"(?:#|(?P<url>https?://[^\s,]+)/pull/)?(?P<number>\d{1,9})\b",
    re.I,
)
_HASH_NUMBER = re.compile(r"(?<![\w#])(?:PR\s*)?#(\d{1,9})\b")
_UPSTREAM_NUMBER = re.compile(r"\b(?:vllm|upstream)\s+(?:PR\s*)?#\d+", re.I)
_CHAIN = re.compile(r"(?:\s*\(#(\d{1,9})\))+\s*$")
_CHAIN_ITEM = re.compile(r"\(#(\d{1,9})\)")
# in a body: "Backport of #1485", "Cherry-picked from #1210 and #1244"
_BODY_PORT = re.compile(
    _PORT + r"\s+(?:of|from)\s+"
    r"((?:(?:PR\s*)?(?:#|https?://\S+/pull/)\d{1,9}\b(?:\s*(?:,|and|&)\s*)?)+)",
    re.I,
)
# one of the numbers such a list names: "#1210", "https://github.com/org/repo/pull/12"
_LISTED = re.compile(r"(?:#|(?P<url>https?://[^\s,]+)/pull/)(?P<number>\d{1,9})\b")
# what a port puts around a title: leading "[...]" blocks, "Port of #12:", "Cherry-pick to
# v0.19.0", "Partly port of 1436,"; trailing "(#N)" chains, "#N", "(cherry-pick to ...)",
# "for v0.19.0"
_LEAD = re.compile(
    r"^(?:\s*\[[^\]]*\]\s*:?"
    r"|\s*(?:partly\s+|partial\s+)?(?:back-?)?port(?:ed)?(?:\s+(?:of|from))?"
    r"(?:\s+(?:PR\s*)?#?\d+(?:\s*,\s*part\s*\d+)?)?\s*[:.,-]?"
    r"|\s*cherry[- ]?pick(?:ed|s)?(?:\s+(?:of|from|to|for|into))?"
    r"(?:\s+(?:PR\s*)?#?\d+|\s+(?:releases/)?v?\d+(?:\.\w+)+)?\s*[:.,-]?"
    r"|\s*(?:releases/)?v\d+(?:\.\w+)+\s*[:.,-]"
    r")+",
    re.I,
)
_TRAIL = re.compile(
    r"(?:\s*\((?:cherry[- ]?pick(?:ed)?|back-?port(?:ed)?)\b[^)]*\)"
    r"|\s*\(#\d{1,9}\)|\s*-?\s*#\d{1,9}"
    r"|\s+(?:for|to|into)\s+(?:releases/)?v?\d+(?:\.\w+)+(?:\s+release)?)+\s*$",
    re.I,
)
_NOT_WORD = re.compile(r"[^0-9a-z]+")
_Line = TypeVar("_Line", str, int)  # a changed line, as text or as its signature
Facts = tuple[int | None, tuple[int, ...], str]  # Message.pr, .refs and .title


def normalized_title(subject: str) -> str:
    """What a port and its original share of a subject: lower case, words only, with
    category, version and cherry-pick prefixes and PR numbers stripped."""
    text = subject.strip()
    for _ in range(3):  # "[Cherry-pick] Port of #1: ..." takes more than one round
        stripped = _TRAIL.sub("", _LEAD.sub("", text, count=1), count=1)
        if stripped == text:
            break
        text = stripped
    cut = text.endswith(("…", "..."))
    words = _NOT_WORD.sub(" ", text.lower()).strip()
    return f"{words}…" if cut else words


@dataclass(frozen=True)
class Message:
    """A commit as this module reads it: its sha, subject and body, and the repository
    whose PRs it may name by URL (None: its URL is unknown)."""

    sha: str
    subject: str
    body: str = ""
    repo: RepoIdentity | None = None

    @classmethod
    def of(cls, commit: Commit, repo: RepoIdentity | None = None) -> Message:
        return cls(commit.sha, commit.subject, commit.body, repo)

    @classmethod
    def known(cls, sha: str, subject: str, body: str, facts: Facts) -> Message:
        """A message whose :attr:`facts` were worked out before (by a run that read it)."""
        message = cls(sha, subject, body)
        pr, refs, title = facts
        message.__dict__.update(pr=pr, refs=frozenset(refs), title=title)
        return message

    @property
    def facts(self) -> Facts:
        """What this module reads from the message: its PR number, the numbers it says it
        carries, its normalized title."""
        return self.pr, tuple(sorted(self.refs)), self.title

    @cached_property
    def reverts(self) -> bool:
        """Whether it undoes a commit (:func:`~release.core.commits.is_revert`), also as a
        port words it: ``Cherry-pick: Revert "X" (#N) (#M)`` is the port of a revert."""
        if is_revert(self.subject, self.body):
            return True
        ported = _LEAD.sub("", self.subject, count=1)
        return ported != self.subject and is_revert(ported.lstrip(), "")

    @cached_property
    def pr(self) -> int | None:
        found = pr_number(self.subject)
        return found[0] if found else None

    @cached_property
    def refs(self) -> frozenset[int]:
        """PR numbers this message says it carries, besides its own."""
        numbers: set[int | None] = set()
        chain = _CHAIN.search(self.subject)
        if chain:
            numbers.update(int(n) for n in _CHAIN_ITEM.findall(chain.group()))
        if _PORT_WORD.search(self.subject):
            # a port names what it ports; upstream numbers ("vLLM #41184") are not ours
            text = _UPSTREAM_NUMBER.sub("", self.subject)
            numbers.update(int(n) for n in _HASH_NUMBER.findall(text))
            for word in _PORT_WORD.finditer(text):
                after = _AFTER_PORT.match(text[word.end() :])
                if after:
                    numbers.add(self._ours(after))
        body = self.body
        lower = body.lower()  # no port word, no need to look further: most bodies
        if "port" in lower or "pick" in lower:
            for listed in _BODY_PORT.findall(body):  # "from #1210 and #1244"
                numbers.update(self._ours(m) for m in _LISTED.finditer(listed))
        return frozenset(n for n in numbers if n is not None and n != self.pr)

    def _ours(self, match: re.Match[str]) -> int | None:
        """The PR number a match names, when it is this repository's: a ``#N``, or a PR
        URL of :attr:`repo` (where that is unknown, no URL is)."""
        url = match["url"]
        ours = url is None or (self.repo is not None and self.repo.is_url_of(url))
        return int(match["number"]) if ours else None

    @cached_property
    def title(self) -> str:
        return normalized_title(self.subject)


@dataclass(frozen=True)
class Evidence:
    """Why a main commit is likely on the branch already, as ``branch``."""

    branch: str
    kind: str  # "pr", "title" or "lines"
    detail: str

    def describe(self, short: int = 12) -> str:
        return f"likely already backported as {self.branch[:short]} ({self.detail})"


def undone(branch: Sequence[Commit]) -> dict[str, str]:
    """Branch commit -> the revert that undid it, for reverts still standing (a revert that
    was itself reverted, or reapplied, undoes nothing). ``branch``: newest first."""
    shas = [c.sha for c in branch]
    by_pr: dict[int, str] = {}
    by_title: dict[str, str] = {}
    for c in reversed(branch):  # oldest first: the latest of a title wins
        if c.pr is not None:
            by_pr[c.pr] = c.sha
        by_title[title_key(c.subject)] = c.sha
    standing: dict[str, bool] = {}
    undid: dict[str, str] = {}
    for c in branch:  # newest first: whether a revert stands is known before its target
        standing.setdefault(c.sha, True)
        if c.reverts_subject is None or not standing[c.sha]:
            continue
        target = None
        if c.reverts_sha:
            target = next((s for s in shas if s.startswith(c.reverts_sha)), None)
        if target is None and c.reverts_pr is not None:
            target = by_pr.get(c.reverts_pr)
        if target is None and c.reverts_title:
            target = by_title.get(c.reverts_title)
        if target is not None and target != c.sha and target not in undid:
            undid[target] = c.sha
            standing[target] = False
    return undid


def by_message(main: Iterable[Message], branch: Iterable[Message]) -> dict[str, Evidence]:
    """Main commit -> evidence from PR numbers, then from the title. A revert is evidence
    only of a revert (the branch's copy of main's revert): a revert on the branch that
    names a PR says the change is gone, never that it is there."""
    main, branch = list(main), list(branch)
    found: dict[str, Evidence] = {}
    for kind in (False, True):
        found.update(
            _by_message(
                [m for m in main if m.reverts is kind], [b for b in branch if b.reverts is kind]
            )
        )
    return found


def _by_message(main: list[Message], branch: list[Message]) -> dict[str, Evidence]:
    own: dict[int, list[Message]] = {}
    named: dict[int, list[Message]] = {}
    titles: dict[str, list[Message]] = {}
    cut_titles: list[Message] = []
    for b in branch:
        if b.pr is not None:
            own.setdefault(b.pr, []).append(b)
        for number in b.refs:
            named.setdefault(number, []).append(b)
        if len(b.title.split()) >= _MIN_TITLE_WORDS:
            (cut_titles if b.title.endswith("…") else titles.setdefault(b.title, [])).append(b)
    # a port's subject often quotes the ported subject whole, with the numbers that one
    # names: "Port of: fix kernel block size, port of #1439 (#1453) (#1461)" carries #1453,
    # not #1439 as well; numbers a matched main commit names are that commit's
    by_pr = {m.pr: m for m in main if m.pr is not None}
    quoted: dict[str, set[int]] = {}
    for b in branch:
        for number in b.refs:
            if number in by_pr:
                quoted.setdefault(b.sha, set()).update(by_pr[number].refs)
    title_count = Counter(m.title for m in main)
    found: dict[str, Evidence] = {}
    for m in main:
        naming = (
            [b for b in named.get(m.pr, ()) if m.pr not in quoted.get(b.sha, ())]
            if m.pr is not None
            else []
        )
        if naming:
            b = naming[0]
            found[m.sha] = Evidence(b.sha, "pr", f"#{m.pr} named by '{b.subject}'")
            continue
        hit = next((b for n in sorted(m.refs) for b in own.get(n, ())), None)
        if hit is None and m.pr is not None and m.pr in own:
            hit = own[m.pr][0]
        if hit is not None:
            found[m.sha] = Evidence(hit.sha, "pr", f"#{hit.pr} is '{hit.subject}'")
            continue
        if title_count[m.title] > 1:  # two main commits of one title: the title cannot tell
            continue
        same = titles.get(m.title) or [
            b for b in cut_titles if len(b.title) > 20 and m.title.startswith(b.title[:-1])
        ]
        if same:
            found[m.sha] = Evidence(same[0].sha, "title", f"same title as '{same[0].subject}'")
    return found


def _shared(a: Mapping[_Line, int], b: Mapping[_Line, int]) -> int:
    """How many changed lines two commits have in common (counted as often as both have
    them); the keys are intersected first, which is quick when there are none."""
    if len(b) < len(a):
        a, b = b, a
    common = a.keys() & b.keys()  # one pass in C; most pairs share few lines or none
    return sum(min(a[line], b[line]) for line in common) if common else 0


def similarity(main: Mapping[_Line, int], branch: Mapping[_Line, int]) -> float:
    """How much of the main commit's change the branch commit makes too: its share of the
    main commit's changed lines (0 when they share fewer than a handful). A branch commit
    that carries more (a squash of several, a resolved conflict) still scores."""
    if not main or not branch:
        return 0.0
    shared = _shared(main, branch)
    if shared < MIN_SHARED:
        return 0.0
    return shared / sum(main.values())


def shared_lines(
    main: Mapping[str, Mapping[_Line, int]],
    branch: Mapping[str, Mapping[_Line, int]],
    pairs: Mapping[str, Iterable[str]] | None = None,
) -> dict[str, dict[str, int]]:
    """Main commit -> branch commit -> how many changed lines the two share, for each pair
    (``pairs``, default: every branch commit with every main commit)."""
    empty: dict[_Line, int] = {}
    return {
        sha: {
            other: _shared(lines, branch.get(other, empty))
            for other in (branch if pairs is None else pairs.get(sha, ()))
        }
        for sha, lines in main.items()
    }


def joint_shared(main: Mapping[_Line, int], parts: Iterable[Mapping[_Line, int]]) -> int:
    """How many of a main commit's changed lines several branch commits make together."""
    return _shared(main, _joined(parts))


def by_lines(
    main: Mapping[str, Mapping[_Line, int]],
    branch: Mapping[str, Mapping[_Line, int]],
    pairs: Mapping[str, Iterable[str]] | None = None,
) -> dict[str, Evidence]:
    """:func:`by_counts` of the changed lines of main and branch commits."""
    sizes = {sha: sum(lines.values()) for sha, lines in branch.items()}
    totals = {sha: sum(lines.values()) for sha, lines in main.items()}
    return by_counts(
        shared_lines(main, branch, pairs),
        totals,
        sizes,
        lambda sha, others: joint_shared(main[sha], (branch[b] for b in others)),
    )


def by_counts(
    shared: Mapping[str, Mapping[str, int]],
    totals: Mapping[str, int],
    sizes: Mapping[str, int],
    joint: Callable[[str, list[str]], int],
) -> dict[str, Evidence]:
    """Main commit -> the branch commit sharing the most of its changed lines, when that
    share reaches :data:`LINES_THRESHOLD`, or else a branch commit of at least
    :data:`_MIN_CONTAINED` lines that is almost all part of it.

    ``shared``: main commit -> branch commit -> lines they share, the branch commits in the
    order they are weighed (:func:`shared_lines`); ``totals`` and ``sizes``: the number of
    changed lines of each main and branch commit; ``joint``: how many of a main commit's
    lines several branch commits make together (:func:`joint_shared`), asked only when more
    than one branch commit is made mostly of its lines."""
    found: dict[str, Evidence] = {}
    for sha, counts in shared.items():
        total = totals.get(sha, 0)
        if not total:
            continue
        best, score, part = None, 0.0, None
        mostly_this: list[str] = []  # branch commits made mostly of this one's lines
        for other, common in counts.items():
            if common < MIN_SHARED:
                continue
            size = sizes[other]
            if common / total > score:
                best, score = other, common / total
            if part is None and common >= max(_MIN_CONTAINED, CONTAINED_THRESHOLD * size):
                part = (other, common)
            if common >= _HALF * size:
                mostly_this.append(other)
        if best is not None and score >= LINES_THRESHOLD:
            found[sha] = Evidence(best, "lines", f"{round(100 * score)}% of its changed lines")
        elif (
            len(mostly_this) > 1
            and (together := joint(sha, mostly_this) / total) >= LINES_THRESHOLD
        ):
            # a squash on main of several branch commits
            found[sha] = Evidence(
                mostly_this[0],
                "lines",
                f"{round(100 * together)}% of its changed lines, with "
                + ", ".join(b[:12] for b in mostly_this[1:]),
            )
        elif part is not None:
            other, common = part
            found[sha] = Evidence(
                other,
                "lines",
                f"a part of it: {common} of its changed lines, nearly all of that commit",
            )
    return found


def _joined(parts: Iterable[Mapping[_Line, int]]) -> Counter[_Line]:
    joined: Counter[_Line] = Counter()
    for part in parts:
        joined.update(part)
    return joined

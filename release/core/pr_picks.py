"""Picks from GitHub: a milestone's or a label's pull requests, mapped to main's commits.

Pure: the pull requests are records GitHub answered (:class:`release.core.github.PullRequest`,
untrusted), and what main holds is given by the caller, read from git. A merged PR is
picked as the commit it landed as on main:

- its merge commit, when that commit is on main and is no merge (GitHub's squash or
  rebase: what vLLM and most engines do);
- else the one commit on main whose subject ends with ``(#N)`` (how ``#N`` resolves on the
  command line: a mirror whose oids differ, a PR landed by hand);
- else it is not pickable, and why is said: merged with a merge commit (pick what it
  merged by sha), merged into another branch, or merged but not on main.

An open PR, or one closed without merging, is not pickable either. Not being pickable
never stops the others: each is listed with its reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from release.core.github import PullRequest
from release.core.terminal_text import escaped
from release.errors import UsageError

__all__ = [
    "QUERY_KINDS",
    "NotPickable",
    "PrCommit",
    "PrQuery",
    "map_pull_requests",
    "query_name",
    "wanting_subjects",
]

QUERY_KINDS = ("milestone", "label")


@dataclass(frozen=True)
class PrQuery:
    """``--milestone NAME`` or ``--label NAME`` (or a picks file's ``milestone: NAME``):
    the PRs GitHub lists for it, picked with ``reason``."""

    kind: str  # one of QUERY_KINDS
    name: str
    reason: str | None = None

    def describe(self) -> str:
        return f'{self.kind} "{self.name}"'


@dataclass(frozen=True)
class PrCommit:
    """A merged PR and the commit on main it landed as."""

    number: int
    title: str
    sha: str
    via: str  # the query that listed it, as :meth:`PrQuery.describe` says it
    reason: str | None = None


@dataclass(frozen=True)
class NotPickable:
    """A PR a query listed that cannot be picked, and why."""

    number: int
    title: str
    why: str
    via: str
    url: str = ""

    def line(self) -> str:
        """For a terminal: the title and why as single-line fields, escaped."""
        return f"#{self.number} {escaped(self.title)} ({escaped(self.why)}; {escaped(self.via)})"


def query_name(kind: str, name: str, where: str) -> PrQuery:
    """A milestone's or label's name as given (``where``: the option or file line), checked:
    it goes into GitHub's search text between double quotes, so none may be in it."""
    text = name.strip()
    problem = (
        "is empty" if not text
        else 'has a double quote (")' if '"' in text
        else "has a control character" if any(ord(ch) < 32 or ord(ch) == 127 for ch in text)
        else None
    )  # fmt: skip
    if problem:
        raise UsageError(f"{where}: the {kind} name {escaped(name)!r} {problem}")
    return PrQuery(kind, text)


def wanting_subjects(prs: Iterable[PullRequest], on_main: Mapping[str, int]) -> set[int]:
    """The merged PRs whose merge commit does not settle which commit they are (not on main,
    or a merge): they are looked for by ``(#N)`` on main."""
    return {
        pr.number
        for pr in prs
        if pr.state == "MERGED" and on_main.get(pr.merge_commit or "", 0) != 1
    }


def _why_not(pr: PullRequest, main_branch: str, on_main: Mapping[str, int], found: int) -> str:
    oid = pr.merge_commit or ""
    if found > 1:
        return (
            f"{found} commits on {main_branch} end with (#{pr.number}); pick the one meant by sha"
        )
    if on_main.get(oid, 0) > 1:
        return f"merged with a merge commit ({oid[:10]}); pick the commits it merged by sha"
    if pr.base != main_branch:
        return f"merged into {pr.base}, not {main_branch}"
    said = f"its merge commit {oid[:10]}" if oid else "no merge commit"
    return f"merged, but {said} is not on {main_branch} and no commit there ends with (#{pr.number}) (fetch {main_branch}?)"


def map_pull_requests(
    listed: Sequence[tuple[PrQuery, Sequence[PullRequest]]],
    *,
    main_branch: str,
    on_main: Mapping[str, int],
    by_subject: Mapping[int, Sequence[str]],
) -> tuple[list[PrCommit], list[NotPickable]]:
    """Each query's PRs as the commits to pick and those that cannot be. ``on_main``: of the
    PRs' merge commits, those on main (before the cut too), with their parent count;
    ``by_subject``: main's commits whose subject ends with ``(#N)``, by N. A PR two queries
    list is taken once, as the first lists it."""
    picks: list[PrCommit] = []
    refused: list[NotPickable] = []
    seen: set[int] = set()
    for query, prs in listed:
        for pr in prs:
            if pr.number in seen:
                continue
            seen.add(pr.number)
            via = query.describe()
            if pr.state != "MERGED":
                why = (
                    "open: not merged yet" if pr.state == "OPEN" else "closed without being merged"
                )
                refused.append(NotPickable(pr.number, pr.title, why, via, pr.url))
                continue
            oid = pr.merge_commit or ""
            found = list(by_subject.get(pr.number, ()))
            if on_main.get(oid, 0) == 1:
                picks.append(PrCommit(pr.number, pr.title, oid, via, query.reason))
            elif len(found) == 1:
                picks.append(PrCommit(pr.number, pr.title, found[0], via, query.reason))
            else:
                why = _why_not(pr, main_branch, on_main, len(found))
                refused.append(NotPickable(pr.number, pr.title, why, via, pr.url))
    return picks, sorted(refused, key=lambda n: n.number)

"""What ``pick`` is asked for, and its plan. Pure: no git here.

Requests come from the command line and a picks file (:func:`parse_requests`); the
candidates they resolve to (:mod:`release.flows.branch`) are ordered by main, what is
already on the branch is skipped, what is likely there already (an adapted backport) is
held back unless ``--repick`` names it, and merges and feature work are refused
(:func:`plan_pick`). A step's detail shows commit subjects and the evidence about them as
single-line fields, control characters escaped (:mod:`release.core.terminal_text`); its
data keeps them as git has them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from release.core.config import PICK_REASONS
from release.core.plan import Plan, Step, StepKind, short
from release.core.plan_steps import NotPickableData, PickData
from release.core.pr_picks import NotPickable, PrQuery, query_name
from release.core.terminal_text import escaped
from release.errors import RefusedError, UsageError

if TYPE_CHECKING:
    from release.core.github import GitHubRepo

__all__ = [
    "PR_REF",
    "SHA_REF",
    "Candidate",
    "PickAsk",
    "PickInfo",
    "PickState",
    "RequestedPick",
    "parse_picks",
    "parse_requests",
    "plan_pick",
    "reported",
]

PR_REF = re.compile(r"^#([0-9]{1,9})$")
SHA_REF = re.compile(r"^[0-9a-fA-F]{4,40}$")
_COMMENT = re.compile(r"(^|\s)#(\s.*)?$")  # "#" then a space (or the end): a comment
# "milestone:" or "label:" leads the line: no sha, #PR or comment starts so (":" is no hex)
_QUERY_LINE = re.compile(r"^(?P<kind>milestone|label):(?P<rest>.*)$")
_QUOTED = re.compile(r'^"([^"]*)"')
_WORD = re.compile(r"^\S+")


@dataclass(frozen=True)
class RequestedPick:
    ref: str
    reason: str | None = None
    link: GitHubRepo | None = None  # a PR's address named this repository (ref: "#N")
    asked: str | None = None  # the address as given
    pr: int | None = None  # a milestone's or label's PR, picked as its commit (ref: the sha)
    via: str | None = None  # the milestone or label that listed it


@dataclass(frozen=True)
class Candidate:
    request: RequestedPick
    sha: str
    subject: str
    category: str
    position: int  # index in main's order since the branch point; -1 = before the cut
    parents: int = 1
    skip: str | None = None  # why it is not picked
    likely: str | None = None  # evidence it is likely on the branch already (held back)
    again: str | None = None  # its earlier copy the branch has reverted since


@dataclass(frozen=True)
class PickState:
    branch: str
    head: str
    candidates: tuple[Candidate, ...]
    feature_categories: tuple[str, ...]
    allow_feature: bool = False
    repick: frozenset[str] = frozenset()  # held back as likely there, but asked for by sha
    not_pickable: tuple[NotPickable, ...] = ()  # listed by a milestone or label, and why not


def _query(text: str, number: int) -> PrQuery | None:
    """A picks file's ``milestone: NAME [reason]`` or ``label: NAME [reason]`` line (a name
    with spaces in double quotes), else None."""
    found = _QUERY_LINE.match(text)
    if not found:
        return None
    kind, rest = found["kind"], found["rest"].strip()
    quoted = _QUOTED.match(rest)
    if quoted:
        name, tail = quoted[1], rest[quoted.end() :]
    else:
        word = _WORD.match(rest)
        name, tail = (word[0], rest[word.end() :]) if word else ("", "")
    words = tail.split()
    if not rest or len(words) > 1 or (tail and not tail[0].isspace()):
        raise UsageError(
            f"picks file line {number}: expected '{kind}: NAME [reason]' "
            f"(a name with spaces in double quotes), got {text!r}"
        )
    query = query_name(kind, name, f"picks file line {number}")
    return PrQuery(query.kind, query.name, words[0] if words else None)


def _reason_checked(reason: str | None, where: str) -> str | None:
    if reason is not None and reason not in PICK_REASONS:
        raise UsageError(f"{where}reason {reason!r} is not one of {', '.join(PICK_REASONS)}")
    return reason


def _link(ref: str) -> RequestedPick | None:
    """A PR's web address as ``#N``, remembering the repository it named."""
    if "://" not in ref:
        return None
    from release.core.github import pr_link

    found = pr_link(ref)
    if found is None:
        return None
    repo, number = found
    return RequestedPick(f"#{number}", link=repo, asked=ref)


@dataclass(frozen=True)
class PickAsk:
    """What ``pick`` is asked for: commits (sha, ``#PR``, a PR's address) and the
    milestones and labels whose PRs are picked (:mod:`release.core.pr_picks`)."""

    requests: tuple[RequestedPick, ...] = ()
    queries: tuple[PrQuery, ...] = ()

    @property
    def links(self) -> tuple[RequestedPick, ...]:
        return tuple(r for r in self.requests if r.link is not None)

    def own(self, repo: GitHubRepo | None) -> PickAsk:
        """Every PR address must be this repository's (``repo``, where it lives on GitHub);
        another's is refused, naming both."""
        for request in self.links:
            assert request.link is not None
            if repo is None:
                raise UsageError(
                    f"{escaped(request.asked or '')} names a pull request, but where this "
                    "repository lives on GitHub is not known (set [tool.release.github] repo, "
                    "or pick it as #N)"
                )
            if not _same_repo(request.link, repo):
                raise UsageError(
                    f"{escaped(request.asked or '')} is a pull request of "
                    f"{escaped(request.link.spec)}, not of this repository ({escaped(repo.spec)})"
                )
        return self


def _same_repo(a: GitHubRepo, b: GitHubRepo) -> bool:
    """As GitHub tells repositories apart: host, owner and name in any case."""
    return (a.host.lower(), a.owner.lower(), a.name.lower()) == (
        b.host.lower(),
        b.owner.lower(),
        b.name.lower(),
    )


def parse_picks(
    commits: str | Sequence[str] = "",
    file_text: str | None = None,
    reason: str | None = None,
    *,
    milestones: Sequence[str] = (),
    labels: Sequence[str] = (),
) -> PickAsk:
    """Requests from the command line (space/comma separated; ``--milestone``, ``--label``)
    and a picks file.

    A picks file has one ``<sha, #PR or PR address> [reason]`` per line, or
    ``milestone: NAME [reason]`` / ``label: NAME [reason]``; ``#`` followed by a space (or
    alone) starts a comment.
    """
    _reason_checked(reason, "--")
    tokens = commits.replace(",", " ").split() if isinstance(commits, str) else list(commits)
    requests = [_link(t) or RequestedPick(t, reason) for t in tokens]
    requests = [replace(r, reason=reason) if r.link else r for r in requests]
    queries = [
        replace(query_name(kind, name, f"--{kind}"), reason=reason)
        for kind, names in (("milestone", milestones), ("label", labels))
        for name in names
    ]
    for number, line in enumerate((file_text or "").splitlines(), 1):
        text = (_COMMENT.sub("", line) if "#" in line else line).strip()
        if not text:
            continue
        query = _query(text, number)
        if query is not None:
            where = f"picks file line {number}: "
            queries.append(replace(query, reason=_reason_checked(query.reason, where) or reason))
            continue
        parts = text.split()
        if parts[0].endswith(":") and "://" not in parts[0]:
            raise UsageError(
                f"picks file line {number}: {parts[0]!r} is neither 'milestone:' nor 'label:'"
            )
        if len(parts) > 2:
            raise UsageError(
                f"picks file line {number}: expected '<sha or #PR> [reason]', got {line!r}"
            )
        line_reason = parts[1] if len(parts) == 2 else reason
        _reason_checked(line_reason, f"picks file line {number}: ")
        link = _link(parts[0])
        requests.append(
            replace(link, reason=line_reason) if link else RequestedPick(parts[0], line_reason)
        )
    for request in requests:
        if not (PR_REF.match(request.ref) or SHA_REF.match(request.ref)):
            raise UsageError(
                f"{request.ref!r} is neither a commit sha, a #PR number nor a pull request's "
                "address"
            )
    return PickAsk(tuple(requests), tuple(dict.fromkeys(queries)))


def parse_requests(
    commits: str | Sequence[str] = "",
    file_text: str | None = None,
    reason: str | None = None,
    *,
    repo: GitHubRepo | None = None,
) -> list[RequestedPick]:
    """The commits asked for (:func:`parse_picks`), PR addresses checked against ``repo``;
    a milestone or label is refused here (only ``pick`` and ``status`` ask GitHub)."""
    ask = parse_picks(commits, file_text, reason)
    if ask.queries:
        raise UsageError(f"{escaped(ask.queries[0].describe())} names no commit: give shas or #PRs")
    return list(ask.own(repo).requests if ask.links else ask.requests)


@dataclass(frozen=True)
class PickInfo:
    """What a pick's plan knows: the release branch and its head; where the branch is
    protected (``routed``), the pick branch the picks go onto (None: none this run) and
    the pick branches whose pull requests this run sees to."""

    branch: str
    head: str
    routed: bool = False
    pick_branch: str | None = None
    pull_requests: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        routed = {"pick_branch": self.pick_branch, "pull_requests": list(self.pull_requests)}
        return {"branch": self.branch, "head": self.head, **(routed if self.routed else {})}


def plan_pick(state: PickState) -> Plan[PickInfo]:
    """Order by main, skip what is there, refuse what must not be picked. Pure."""
    if not state.candidates and not state.not_pickable:
        raise UsageError(
            "nothing to pick: give commits (sha, #PR or a PR's address), --milestone, --label "
            "or --file"
        )
    for c in state.candidates:
        if c.skip:
            continue
        if c.parents > 1:
            raise RefusedError(
                f"{short(c.sha)} is a merge commit; pick the commits it merged instead"
            )
        if c.category in state.feature_categories and not state.allow_feature:
            raise RefusedError(
                f"{short(c.sha)} '{escaped(c.subject)}' is feature work ({c.category}); release branches take "
                "fixes only (pass --allow-feature to override)"
            )
    seen: set[str] = set()
    steps: list[Step] = []
    ordered = sorted(state.candidates, key=lambda c: (c.skip is None, c.position))
    for c in ordered:
        if c.sha in seen:
            continue
        seen.add(c.sha)
        data = PickData(c.sha, c.subject, c.request.reason, c.request.pr, c.request.via)
        subject, likely = escaped(c.subject), escaped(c.likely or "")
        if c.skip:
            steps.append(
                Step(
                    StepKind.SKIP,
                    f"skip {short(c.sha)} {subject} ({c.skip})",
                    replace(data, why=c.skip),
                )
            )
        elif c.likely and c.sha not in state.repick:
            steps.append(
                Step(
                    StepKind.HOLD,
                    f"hold {short(c.sha)} {subject}: {likely}; "
                    f"--repick {short(c.sha)} picks it anyway",
                    replace(data, why=c.likely),
                )
            )
        else:
            notes = [f"[{c.request.reason}]"] if c.request.reason else []
            if c.request.via:
                notes.append(f"({escaped(c.request.via)})")
            if c.again:
                notes.append(f"(picked again: it {escaped(c.again)})")
            if c.likely:
                notes.append(f"(asked by --repick although {likely})")
            data = replace(data, again=c.again or None, likely=c.likely or None)
            why = "".join(f" {note}" for note in notes)
            steps.append(
                Step(StepKind.CHERRY_PICK, f"cherry-pick -x {short(c.sha)} {subject}{why}", data)
            )
    steps += [
        Step(
            StepKind.NOT_PICKABLE,
            f"not pickable {n.line()}",
            NotPickableData(n.number, n.title, n.why, n.via, n.url),
        )
        for n in state.not_pickable
    ]
    counts = {
        kind: sum(1 for s in steps if s.action is kind)
        for kind in (StepKind.CHERRY_PICK, StepKind.SKIP, StepKind.HOLD, StepKind.NOT_PICKABLE)
    }
    held = counts[StepKind.HOLD]
    held_said = f", {held} held as likely already backported" if held else ""
    refused = counts[StepKind.NOT_PICKABLE]
    held_said += f", {refused} not pickable" if refused else ""
    return Plan(
        "pick",
        f"pick onto {state.branch} (at {short(state.head)}): {counts[StepKind.CHERRY_PICK]} to pick, "
        f"{counts[StepKind.SKIP]} already there{held_said}",
        tuple(steps),
        PickInfo(state.branch, state.head),
    )


def reported(step: Step) -> str:
    """A step that does nothing (skip, hold, not pickable), as a pick's report says it."""
    if step.action is StepKind.NOT_PICKABLE:
        return step.detail
    done = "skipped" if step.action is StepKind.SKIP else "held"
    data = step.data_of(PickData)
    return f"{done} {short(data.sha)} {escaped(data.subject)} ({escaped(data.why or '')})"

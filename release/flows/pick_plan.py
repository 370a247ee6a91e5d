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
from dataclasses import dataclass
from typing import Any

from release.core.config import PICK_REASONS
from release.core.plan import Plan, Step, StepKind, short
from release.core.terminal_text import escaped
from release.errors import RefusedError, UsageError

__all__ = [
    "PR_REF",
    "SHA_REF",
    "Candidate",
    "PickRequest",
    "PickState",
    "parse_requests",
    "plan_pick",
]

PR_REF = re.compile(r"^#([0-9]{1,9})$")
SHA_REF = re.compile(r"^[0-9a-fA-F]{4,40}$")
_COMMENT = re.compile(r"(^|\s)#(\s.*)?$")  # "#" then a space (or the end): a comment


@dataclass(frozen=True)
class PickRequest:
    ref: str
    reason: str | None = None


@dataclass(frozen=True)
class Candidate:
    request: PickRequest
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


def parse_requests(
    commits: str | Sequence[str] = "", file_text: str | None = None, reason: str | None = None
) -> list[PickRequest]:
    """Requests from the command line (space/comma separated) and a picks file.

    A picks file has one ``<sha or #PR> [reason]`` per line; ``#`` followed by a space
    (or alone) starts a comment.
    """
    if reason is not None and reason not in PICK_REASONS:
        raise UsageError(f"--reason {reason!r} is not one of {', '.join(PICK_REASONS)}")
    tokens = commits.replace(",", " ").split() if isinstance(commits, str) else list(commits)
    requests = [PickRequest(t, reason) for t in tokens]
    if file_text is not None:
        for number, line in enumerate(file_text.splitlines(), 1):
            text = (_COMMENT.sub("", line) if "#" in line else line).strip()
            if not text:
                continue
            parts = text.split()
            if len(parts) > 2:
                raise UsageError(
                    f"picks file line {number}: expected '<sha or #PR> [reason]', got {line!r}"
                )
            line_reason = parts[1] if len(parts) == 2 else reason
            if line_reason is not None and line_reason not in PICK_REASONS:
                raise UsageError(
                    f"picks file line {number}: reason {line_reason!r} is not one of {', '.join(PICK_REASONS)}"
                )
            requests.append(PickRequest(parts[0], line_reason))
    for request in requests:
        if not (PR_REF.match(request.ref) or SHA_REF.match(request.ref)):
            raise UsageError(f"{request.ref!r} is neither a commit sha nor a #PR number")
    return requests


def plan_pick(state: PickState) -> Plan:
    """Order by main, skip what is there, refuse what must not be picked. Pure."""
    if not state.candidates:
        raise UsageError("nothing to pick: give commits (sha or #PR) or --file")
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
        data: dict[str, Any] = {"sha": c.sha, "subject": c.subject, "reason": c.request.reason}
        subject, likely = escaped(c.subject), escaped(c.likely or "")
        if c.skip:
            steps.append(
                Step(
                    StepKind.SKIP,
                    f"skip {short(c.sha)} {subject} ({c.skip})",
                    {**data, "why": c.skip},
                )
            )
        elif c.likely and c.sha not in state.repick:
            steps.append(
                Step(
                    StepKind.HOLD,
                    f"hold {short(c.sha)} {subject}: {likely}; "
                    f"--repick {short(c.sha)} picks it anyway",
                    {**data, "why": c.likely},
                )
            )
        else:
            notes = [f"[{c.request.reason}]"] if c.request.reason else []
            if c.again:
                notes.append(f"(picked again: it {escaped(c.again)})")
                data["again"] = c.again
            if c.likely:
                notes.append(f"(asked by --repick although {likely})")
                data["likely"] = c.likely
            why = "".join(f" {note}" for note in notes)
            steps.append(
                Step(StepKind.CHERRY_PICK, f"cherry-pick -x {short(c.sha)} {subject}{why}", data)
            )
    counts = {
        kind: sum(1 for s in steps if s.action is kind)
        for kind in (StepKind.CHERRY_PICK, StepKind.SKIP, StepKind.HOLD)
    }
    held = counts[StepKind.HOLD]
    held_said = f", {held} held as likely already backported" if held else ""
    return Plan(
        "pick",
        f"pick onto {state.branch} (at {short(state.head)}): {counts[StepKind.CHERRY_PICK]} to pick, "
        f"{counts[StepKind.SKIP]} already there{held_said}",
        tuple(steps),
        {"branch": state.branch, "head": state.head},
    )

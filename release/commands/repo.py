"""The commands that change the release branch: ``cut`` and ``pick`` (``status`` and
``notes``, which only read, are modules of their own: a short command imports no other's
request)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from release.commands.common import context, notices
from release.commands.outcome import Run
from release.commands.plan_outcome import CutOutcome, PickOutcome
from release.errors import UsageError

if TYPE_CHECKING:
    from release.flows.main_reverts import MainRevert

__all__ = ["CutRequest", "PickRequest", "cut", "pick"]


@dataclass(frozen=True)
class CutRequest:
    version: str
    at: str | None = None
    no_switch: bool = False
    offline: bool = False
    dry_run: bool = False
    json: bool = False


def cut(request: CutRequest, run: Run) -> CutOutcome:
    from release.core.plan import StepKind
    from release.core.plan_steps import SwitchTo
    from release.flows.cut import cut as make

    ctx = context(run)
    plan = make(
        ctx,
        request.version,
        at=request.at,
        switch=not request.no_switch,
        offline=request.offline,
        dry_run=request.dry_run,
        say=run.say,
    )
    done = [f"created {plan.info.branch} at {plan.info.at[:10]}"]
    done += [
        f"switched to {s.data_of(SwitchTo).branch}" if s.action is StepKind.SWITCH else s.detail
        for s in plan.steps
        if s.action in (StepKind.SWITCH, StepKind.SKIP, StepKind.BUMP_VERSION)
    ]
    diff = (plan.info.version_diff or ()) if request.dry_run else ()
    return CutOutcome(
        plan,
        request.dry_run,
        report=None if request.dry_run else tuple(done),
        before=tuple(notices(ctx)),
        after=diff,
    )


@dataclass(frozen=True)
class PickRequest:
    commits: tuple[str, ...] = ()
    file: str | None = None
    reverts: bool = False
    reason: str | None = None
    allow_feature: bool = False
    repick: tuple[str, ...] = ()
    milestone: tuple[str, ...] = ()
    label: tuple[str, ...] = ()
    continue_: bool = False
    abort: bool = False
    dry_run: bool = False
    json: bool = False


def pick(request: PickRequest, run: Run) -> PickOutcome:
    from release.adapters.files import read_text
    from release.flows import pick as flow
    from release.flows.pick_github import github_repo
    from release.flows.pick_plan import RequestedPick as Wanted
    from release.flows.pick_plan import parse_picks

    ctx = context(run)
    if ctx.config.github.protected:  # the PR route: a branch of its own, pushed, and a PR
        from release.flows import pick_route as flow  # type: ignore[no-redef]
    commits = " ".join(request.commits)
    if request.continue_ or request.abort:
        if request.continue_ and request.abort:
            raise UsageError("--continue and --abort: give one of them")
        asked_for = (request.file, request.repick, request.reverts, request.milestone)
        if commits or request.label or any(asked_for):
            raise UsageError("--continue and --abort take no commits; run them alone")
        if request.continue_:
            lines = flow.continue_pick(ctx, say=run.say)
        else:
            lines = [flow.abort_pick(ctx, say=run.say)]
        return PickOutcome(None, report=tuple(lines))
    picks = read_text(Path(request.file), "--file") if request.file is not None else None
    if request.file is not None and picks is None:
        raise UsageError(f"--file {request.file}: no such file")
    ask = parse_picks(
        commits,
        picks.text if picks else None,
        request.reason,
        milestones=request.milestone,
        labels=request.label,
    )
    again = parse_picks(" ".join(request.repick))
    links = [*ask.links, *again.links]
    repo = github_repo(ctx) if links else None  # read only where an address is given
    ask, again = ask.own(repo), again.own(repo)
    requests = list(ask.requests)
    said: list[str] = []
    if request.reverts:
        from release.flows.main_reverts import reverts_to_pick

        branch, reverts = reverts_to_pick(ctx, remember=request.dry_run)
        said = _reverts_said(branch, reverts)
        asked = {r.ref for r in requests}
        requests += [Wanted(r.sha, request.reason) for r in reverts if r.sha not in asked]
        if not requests and not ask.queries:  # nothing to pick: said, and nothing else is read
            return PickOutcome(None, report=tuple(said), reverts=())
    plan, report = flow.pick(
        ctx,
        requests,
        allow_feature=request.allow_feature,
        repick=[r.ref for r in again.requests],
        queries=ask.queries,
        dry_run=request.dry_run,
        say=run.say,
    )
    return PickOutcome(
        plan,
        request.dry_run,
        report=None if request.dry_run else tuple(report),
        before=(*notices(ctx), *said),
        reverts=tuple(r.sha for r in reverts) if request.reverts else None,
    )


def _reverts_said(branch: str, reverts: list[MainRevert]) -> list[str]:
    """What ``--reverts`` found, before the plan."""
    from release.core.terminal_text import escaped

    if not reverts:
        return [f"--reverts: no revert on main since the cut undoes what {escaped(branch)} carries"]
    return [
        f"--reverts: {len(reverts)} on main undo what {escaped(branch)} carries: "
        + ", ".join(
            f"{r.sha[:10]} (reverts {escaped(r.reverts[:10])}, {r.carried})" for r in reverts
        )
    ]

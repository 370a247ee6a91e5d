"""The PR route of ``pick``: where the release branch is protected (``protected = true``
under ``[tool.release.github]``), picks go onto a branch of their own, that branch is
pushed, and a pull request brings it into the release branch. The release branch itself
is never moved here.

Plan on the release branch as :mod:`release.flows.pick` does (the same evidence, skips
and holds), then choose the pick branch (:func:`choose_route`): picks that a pushed pick
branch of this release already carries are not picked again, that branch's PR is only
made sure of; the rest go onto ``release-picks/<release>/<first sha>``, or, where that
name holds other picks, the next free ``-2``, ``-3``. Pick there with the same
:class:`~release.flows.pick.Picker` (journal, ``-x``, reasons, conflicts, ``--continue``
and ``--abort``), switch back, push, and open the PR (:mod:`release.flows.pick_prs`).

Re-running converges: the state is in git (the pick branch here and on the remote) and
on GitHub (``gh pr list --head``): a run killed while picking is recovered from the
journal and goes on with the same branch; one killed after the push finds the pushed
branch and opens its PR; a PR that exists is said, never made twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from release.adapters.lock import repo_lock
from release.core.pick_pr import PICK_BRANCH_ROOT, pick_branch_names
from release.core.pick_pr import pick_branch_scope as scope_of
from release.core.plan import Plan, Step, StepKind, short
from release.core.plan_steps import BranchAt, PickData, SwitchTo
from release.core.pr_picks import PrQuery
from release.core.say import Say
from release.core.terminal_text import escaped
from release.errors import RefusedError, ReleaseError
from release.flows import pick as direct
from release.flows.branch import ReleaseBranch
from release.flows.context import ReleaseContext
from release.flows.pick_github import list_pull_requests
from release.flows.pick_journal import Journal, PickJournal, QueuedPick
from release.flows.pick_plan import PickInfo, RequestedPick, plan_pick, reported
from release.flows.pick_prs import (
    PickBranch,
    deliver,
    delivery_steps,
    gh_client,
    pick_branches,
)

__all__ = ["Route", "abort_pick", "choose_route", "continue_pick", "pick"]


@dataclass(frozen=True)
class Route:
    """Where this run's picks go: ``branch`` (made at ``base`` when ``new``), with
    ``queue`` left to pick onto it; ``carried``: pushed pick branches that hold some of
    the asked picks already (their PRs are made sure of, nothing is picked again)."""

    release: str
    branch: str | None
    base: str
    new: bool
    queue: tuple[QueuedPick, ...]
    carried: tuple[PickBranch, ...] = field(default=())

    @property
    def delivered(self) -> tuple[str, ...]:
        """The pick branches this run pushes and makes sure have their PR."""
        own = (self.branch,) if self.branch else ()
        return (*(b.name for b in self.carried), *own)


def _queue(plan: Plan[PickInfo]) -> tuple[QueuedPick, ...]:
    picks = [s.data_of(PickData) for s in plan.steps if s.action is StepKind.CHERRY_PICK]
    return tuple(QueuedPick(d.sha, d.subject, d.reason) for d in picks)


def choose_route(
    release: str, tip: str, queue: Sequence[QueuedPick], branches: Sequence[PickBranch]
) -> Route:
    """Pure: the pick branch for ``queue`` given this release's pick branches.

    A pushed branch's picks are carried (not picked again). What is left goes onto the
    first name of its first pick that is free, or that is a local branch holding the
    first of those picks in order and nothing else (a run stopped while picking, or
    before its push): it goes on from there. A name holding anything else is passed by.
    """
    carried = tuple(b for b in branches if b.pushed and set(b.originals) & {q.sha for q in queue})
    held = {sha for b in carried for sha in b.originals}
    left = tuple(q for q in queue if q.sha not in held)
    if not left:
        return Route(release, None, tip, False, (), carried)
    by_name = {b.name: b for b in branches}
    for name in pick_branch_names(release, left[0].sha):
        found = by_name.get(name)
        if found is None:
            return Route(release, name, tip, True, left, carried)
        shas = tuple(q.sha for q in left)
        if not found.pushed and found.originals == shas[: len(found.originals)]:
            return Route(release, name, found.tip, False, left[len(found.originals) :], carried)
    raise RefusedError(
        f"every pick branch name for {short(left[0].sha)} is taken; "
        f"delete the pick branches of {release} that are done with (git branch -D)"
    )


def _routed(plan: Plan[PickInfo], route: Route, delivery: Sequence[Step]) -> Plan[PickInfo]:
    """The pick plan with the route's own steps: the pick branch, the picks onto it, then
    each branch's push and PR. A pick a pushed pick branch carries is a skip."""
    queued = {q.sha for q in route.queue}
    carried = {sha: b.name for b in route.carried for sha in b.originals}
    steps = [s for s in plan.steps if s.action is not StepKind.CHERRY_PICK]
    picks = [s.data_of(PickData) for s in plan.steps if s.action is StepKind.CHERRY_PICK]
    steps += [
        Step(
            StepKind.SKIP,
            f"skip {short(d.sha)} {escaped(d.subject)} "
            f"(on {carried[d.sha]}, pushed: it goes by that branch's pull request)",
            replace(d, why=f"on {carried[d.sha]}"),
        )
        for d in picks
        if d.sha in carried
    ]
    if route.branch and route.new:
        steps.append(
            Step(
                StepKind.CREATE_BRANCH,
                f"create {route.branch} at {short(route.base)} ({route.release} is protected: "
                "its picks go by pull request)",
                BranchAt(route.branch, route.base),
            )
        )
    if route.branch and route.queue:
        steps.append(
            Step(
                StepKind.SWITCH,
                f"switch to {route.branch}, pick there, then back to {route.release}",
                SwitchTo(route.branch),
            )
        )
    steps += [
        s
        for s in plan.steps
        if s.action is StepKind.CHERRY_PICK and s.data_of(PickData).sha in queued
    ]
    steps += delivery
    info = replace(plan.info, routed=True, pick_branch=route.branch, pull_requests=route.delivered)
    summary = plan.summary
    if route.branch:
        summary = summary.replace(f"onto {route.release} ", f"onto {route.branch} ", 1)
    elif route.carried:
        names = ", ".join(b.name for b in route.carried)
        summary = f"nothing to pick: what is asked is on {names}, pushed"
    if route.delivered:
        summary += f"; by pull request into {route.release} (it is protected)"
    return Plan(plan.command, summary, tuple(steps), info)


def _on_release(ctx: ReleaseContext, say: Say) -> None:
    """A run stopped on a pick branch (after its picks, before the switch back) is taken
    back to its release branch; any other branch is left to ``current_release``."""
    here = ctx.repo.current_branch() or ""
    if not here.startswith(f"{PICK_BRANCH_ROOT}/"):
        return
    release = release_of(ctx, here)
    ctx.require_clean()
    ctx.repo.switch(release)
    say(f"switched back to {release} from its pick branch {escaped(here)}")


def release_of(ctx: ReleaseContext, pick_branch: str) -> str:
    """The local release branch whose pick branch ``pick_branch`` is, or refuse."""
    found = [
        b
        for b in ctx.repo.local_branches()
        if ctx.config.branch.parse(b) is not None and pick_branch.startswith(scope_of(b))
    ]
    if len(found) != 1:
        raise RefusedError(
            f"{escaped(pick_branch)} is a pick branch, but of no one release branch here "
            f"({', '.join(found) or 'none'}); git switch to the release branch"
        )
    return found[0]


def _confirm(ctx: ReleaseContext, branch: str, picked: Sequence[str]) -> None:
    """Every pick made must read as on the pick branch (by ``-x`` or patch)."""
    info = ReleaseBranch(ctx, branch, ctx.main_sha())
    missing = [sha for sha, why in info.already_there(picked).items() if why is None]
    if missing:
        raise RefusedError(
            f"after picking, {', '.join(short(s) for s in missing)} is not on {branch}; "
            "inspect with git log and re-run"
        )


def _pick_onto(ctx: ReleaseContext, route: Route, picker: direct.Picker) -> list[str]:
    assert route.branch is not None
    if route.new:
        ctx.repo.create_branch(route.branch, route.base)
    ctx.repo.switch(route.branch)
    done = picker.run_queue(PickJournal(route.branch, route.base, route.queue))
    _confirm(ctx, route.branch, [q.sha for q in route.queue if q.sha not in done.emptied])
    ctx.repo.switch(route.release)
    return list(done.lines)


def pick(
    ctx: ReleaseContext,
    requests: list[RequestedPick],
    *,
    allow_feature: bool = False,
    repick: Sequence[str] = (),
    queries: Sequence[PrQuery] = (),
    dry_run: bool = False,
    say: Say = print,
) -> tuple[Plan[PickInfo], list[str]]:
    """``release pick`` by pull request; the same answer as :func:`release.flows.pick.pick`
    (the plan, what was done), with the route's steps in the plan. The PR names the
    milestone where the picks came from one (``queries``)."""
    journal = Journal(ctx.repo.git_dir).read()
    if journal is not None and journal.conflict is not None:
        return direct.pick(ctx, requests, dry_run=dry_run, say=say)  # refuses, saying why
    ctx.require_settled(own_pick=journal is not None)
    ctx.require_full_history("pick")
    listed = list_pull_requests(ctx, queries)
    milestones = {q.name for q in queries if q.kind == "milestone"}
    milestone = milestones.pop() if len(milestones) == 1 else None
    if dry_run:
        state, _ = direct.read_pick_state(
            ctx, requests, allow_feature, repick, remember=True, listed=listed
        )
        plan = plan_pick(state)
        branches = pick_branches(ctx, state.branch, state.head)
        route = choose_route(state.branch, state.head, _queue(plan), branches)
        delivery = delivery_steps(
            ctx, route.release, route.delivered, route.queue, milestone, exact=True
        )
        return _routed(plan, route, delivery), []
    gh_client(ctx)  # where the PR goes must be known before anything changes
    with repo_lock(ctx.repo.common_dir, "pick", notify=say):
        picker = direct.Picker(ctx, say)
        saved = picker.journal.read()
        if saved:
            picker.recover(saved)
            picker.journal.clear()
        _on_release(ctx, say)
        ctx.require_clean()
        state, _ = direct.read_pick_state(ctx, requests, allow_feature, repick, listed=listed)
        plan = plan_pick(state)
        branches = pick_branches(ctx, state.branch, state.head)
        route = choose_route(state.branch, state.head, _queue(plan), branches)
        report = [reported(s) for s in plan.steps if not s.action.acts]
        if route.queue:
            report += _pick_onto(ctx, route, picker)
        try:
            report += deliver(ctx, route.release, route.delivered, milestone=milestone, say=say)
        except ReleaseError:  # stopped after the picks: say first what this run did
            for line in report:
                say(line)
            raise
        delivery = delivery_steps(ctx, route.release, route.delivered, exact=False)
        return _routed(plan, route, delivery), report


def continue_pick(ctx: ReleaseContext, *, say: Say = print) -> list[str]:
    """``--continue`` of a pick on a pick branch: the picks, then back, push and PR."""
    journal = Journal(ctx.repo.git_dir).read()
    lines = direct.continue_pick(ctx, say=say)
    if journal is None or not journal.branch.startswith(f"{PICK_BRANCH_ROOT}/"):
        return lines
    release = release_of(ctx, journal.branch)
    ctx.require_clean()
    ctx.repo.switch(release)
    return lines + deliver(ctx, release, (journal.branch,), say=say)


def abort_pick(ctx: ReleaseContext, *, say: Say = print) -> str:
    """``--abort`` of a pick on a pick branch: it goes back to where it started, and a
    pick branch this pick made (nothing of its own, never pushed) is deleted."""
    journal = Journal(ctx.repo.git_dir).read()
    said = direct.abort_pick(ctx, say=say)
    if journal is None or not journal.branch.startswith(f"{PICK_BRANCH_ROOT}/"):
        return said
    branch = journal.branch
    release = release_of(ctx, branch)
    ctx.repo.switch(release)
    try:
        mine = pick_branches(ctx, release, ctx.repo.head())
    except ReleaseError:  # the remote out of reach: whether it has the branch is not known
        mine = []
    if any(b.name == branch and not b.pushed and not b.originals for b in mine):
        ctx.repo.delete_branch(branch)
        return f"{said}; deleted {branch}, back on {release}"
    return f"{said}; back on {release}"

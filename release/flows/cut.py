"""``cut``: create the release branch at a commit of main."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from release.adapters.lock import repo_lock
from release.core.plan import Plan, Step, StepKind, short
from release.core.versions import ReleaseVersion, parse_version
from release.errors import GitError, RefusedError, ReleaseError, UsageError
from release.flows.context import ReleaseContext
from release.flows.task_journal import TaskJournal, TaskJournals

__all__ = ["CutState", "cut", "plan_cut"]

Say = Callable[[str], None]


@dataclass(frozen=True)
class CutState:
    version: ReleaseVersion
    branch: str
    at: str
    at_label: str
    on_main: bool
    exists_locally: bool
    exists_remotely: bool
    final_tagged: bool
    switch: bool
    dirty: bool = False
    remote_note: str | None = None
    line: bool = False  # the branch carries X.Y.0 and its patch releases (no patch in its name)


def plan_cut(state: CutState) -> Plan:
    patch = state.line and state.version.patch > 0
    if state.exists_locally or state.exists_remotely:
        where = "here" if state.exists_locally else "on the remote"
        also = (
            f" ({state.version} is a patch release of its line: release tag makes its rc "
            "there once the release before it is final)"
            if patch
            else ""
        )
        raise RefusedError(
            f"branch {state.branch} already exists {where}; pick into it instead{also}"
        )
    if patch:
        first = f"{state.version.major}.{state.version.minor}.0"
        raise RefusedError(
            f"{state.branch} carries {first} and its patch releases: cut {first}, "
            f"not {state.version}"
        )
    if state.final_tagged:
        raise RefusedError(f"{state.version} is already released; cut a new version")
    if not state.on_main:
        raise RefusedError(
            f"{state.at_label} ({short(state.at)}) is not on main; cut from a main commit"
        )
    steps = [
        Step(
            StepKind.CREATE_BRANCH,
            f"create branch {state.branch} at {short(state.at)} ({state.at_label})",
            {"branch": state.branch, "at": state.at},
        )
    ]
    if state.switch and not state.dirty:
        steps.append(Step(StepKind.SWITCH, f"switch to {state.branch}", {"branch": state.branch}))
    elif state.switch:
        steps.append(
            Step(
                StepKind.SKIP,
                f"stay on the current branch: the work tree has uncommitted changes "
                f"(git switch {state.branch} when ready)",
            )
        )
    if state.remote_note:
        steps.append(Step(StepKind.SKIP, state.remote_note))
    return Plan(
        "cut",
        f"cut {state.branch} for {state.version} at {short(state.at)}",
        tuple(steps),
        {"version": str(state.version), "branch": state.branch, "at": state.at},
    )


def read_cut_state(
    ctx: ReleaseContext, version_text: str, at: str | None, switch: bool, offline: bool = False
) -> CutState:
    version = parse_version(version_text)
    if not version.is_final:
        raise UsageError(f"cut takes the release version X.Y.Z, not {version}; try {version.base}")
    ctx.require_settled()
    main = ctx.main_sha()
    label = at if at is not None else ctx.config.main_branch
    sha = ctx.repo.rev(at) if at is not None else main
    if sha is None:
        candidates = ctx.repo.ambiguous(at) if at else []
        if candidates:
            raise UsageError(
                f"--at {at!r} is ambiguous: it could be {', '.join(map(short, candidates[:4]))}; give more of the sha"
            )
        raise UsageError(f"--at {at!r} is not a commit here")
    branch = ctx.branch_name(version)
    exists_remotely = False
    remote_note = None
    if ctx.repo.remotes.has(ctx.config.remote) and not offline:
        try:
            heads = ctx.repo.remotes.refs(ctx.config.remote, "--heads", branch)
        except GitError:
            raise RefusedError(
                f"cannot reach {ctx.config.remote} to check that {branch} does not exist there; "
                "retry when it is reachable, or pass --offline"
            ) from None
        exists_remotely = bool(heads)
    elif offline:
        remote_note = (
            f"not checked: whether {branch} or a {version} tag exists on the remote (--offline)"
        )
    tags = ctx.tags(offline=offline)
    return CutState(
        version=version,
        branch=branch,
        at=sha,
        at_label=label,
        on_main=ctx.repo.is_ancestor(sha, main),
        exists_locally=ctx.repo.branch_exists(branch),
        exists_remotely=exists_remotely,
        final_tagged=any(t.version == version for t in tags),
        switch=switch,
        dirty=bool(ctx.repo.worktree.dirty_paths()),
        remote_note=remote_note,
        line=ctx.config.branch.carries_patches,
    )


def _resume(
    ctx: ReleaseContext, journals: TaskJournals, journal: TaskJournal, say: Say
) -> Plan | None:
    """A killed cut: finish it (the branch exists where it was going) or forget it (no
    branch yet); a branch somewhere else is not ours to touch."""
    journals.release_locks(journal, say)
    branch, at = journal.name, journal.target
    where = ctx.repo.rev(journal.ref)
    if where is None:
        journals.clear()
        return None
    if where != at:
        raise RefusedError(
            f"an interrupted cut was making {branch} at {short(at)}, and it is at {short(where)}; "
            f"look at it, then remove {journals.file.path}"
        )
    steps = []
    if (
        journal.switch
        and ctx.repo.current_branch() != branch
        and not ctx.repo.worktree.dirty_paths()
    ):
        ctx.repo.switch(branch)
        steps.append(Step(StepKind.SWITCH, f"switch to {branch}", {"branch": branch}))
    journals.clear()
    say(f"finished the interrupted cut of {branch}")
    return Plan("cut", f"cut {branch} at {short(at)}: finished", tuple(steps),
                {"branch": branch, "at": at})  # fmt: skip


def cut(
    ctx: ReleaseContext,
    version: str,
    *,
    at: str | None = None,
    switch: bool = True,
    offline: bool = False,
    dry_run: bool = False,
    say: Say = print,
) -> Plan:
    journals = TaskJournals(ctx.repo, "cut")
    if journals.read() is None or dry_run:
        plan = plan_cut(read_cut_state(ctx, version, at, switch, offline))  # refuse before locking
        if dry_run:
            return plan
    with repo_lock(ctx.repo.common_dir, "cut", notify=say):
        journal = journals.read()
        finished = _resume(ctx, journals, journal, say) if journal is not None else None
        if finished is not None:
            return finished
        plan = plan_cut(read_cut_state(ctx, version, at, switch, offline))
        branch = plan.info["branch"]
        switching = any(s.action is StepKind.SWITCH for s in plan.steps)
        journals.write(
            TaskJournal("cut", f"refs/heads/{branch}", ctx.repo.rev("HEAD") or "",
                        plan.info["at"], switch=switching)
        )  # fmt: skip
        created = False
        try:
            for step in plan.steps:
                if step.action is StepKind.CREATE_BRANCH:
                    ctx.repo.create_branch(step.data["branch"], step.data["at"])
                    created = True
                elif step.action is StepKind.SWITCH:
                    ctx.repo.switch(step.data["branch"])
        except ReleaseError:
            if created:  # leave the repository as it was
                ctx.repo.delete_branch(branch)
            journals.clear()
            raise
        journals.clear()
        if ctx.repo.rev(f"refs/heads/{branch}") != plan.info["at"]:
            raise RefusedError(f"branch {branch} was not created at {short(plan.info['at'])}")
    return plan

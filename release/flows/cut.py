"""``cut``: create the release branch at a commit of main; with ``bump-main-after-cut``,
then commit main's version files set to the next minor release (X.(Y+1).0), as pytorch/ao
does after each cut. That commit is made on main wherever ``cut`` runs
(:mod:`release.adapters.git_commit`), under the cut's journal: a killed cut is finished
by the next run, a failed one leaves main and the branches as they were."""

from __future__ import annotations

from dataclasses import dataclass

from release.adapters.lock import repo_lock
from release.core.plan import Plan, Step, StepKind, short
from release.core.plan_steps import BranchAt, SwitchTo, VersionBump
from release.core.say import Say
from release.core.version_files import VersionEdit, set_version
from release.core.versions import ReleaseVersion, parse_version
from release.errors import GitError, RefusedError, ReleaseError, UsageError
from release.flows.context import ReleaseContext
from release.flows.task_journal import TaskJournal, TaskJournals

__all__ = ["CutInfo", "CutState", "cut", "plan_cut"]

BUMP_TRAILER = "Release-version"  # on main's commit that sets its version files after a cut


@dataclass(frozen=True)
class CutInfo:
    """What a cut's plan knows: the branch and the commit it is made at; a new cut also the
    version, and (where main's version files are bumped) their diff."""

    branch: str
    at: str
    version: str | None = None  # None: a killed cut, finished
    version_diff: tuple[str, ...] | None = None  # None: no bump of main's version files

    def to_dict(self) -> dict[str, object]:
        return {
            **({"version": self.version} if self.version is not None else {}),
            "branch": self.branch,
            "at": self.at,
            **({"version_diff": list(self.version_diff)} if self.version_diff is not None else {}),
        }


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
    bump: MainBump | None = None  # main's version files to set after the cut


@dataclass(frozen=True)
class MainBump:
    """Main's version files set to the next minor release after a cut."""

    branch: str  # main
    at: str  # main's tip they are read from (and the new commit's parent)
    version: ReleaseVersion
    edits: tuple[VersionEdit, ...] = ()
    note: str = ""  # why nothing is set, when nothing is

    def message(self, cut: str) -> str:
        return (
            f"Bump the version to {self.version} after the {cut} branch cut\n\n"
            f"{BUMP_TRAILER}: {self.version}\n"
        )


def plan_cut(state: CutState) -> Plan[CutInfo]:
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
            BranchAt(state.branch, state.at),
        )
    ]
    if state.switch and not state.dirty:
        steps.append(Step(StepKind.SWITCH, f"switch to {state.branch}", SwitchTo(state.branch)))
    elif state.switch:
        steps.append(
            Step(
                StepKind.SKIP,
                f"stay on the current branch: the work tree has uncommitted changes "
                f"(git switch {state.branch} when ready)",
            )
        )
    bump = state.bump
    if bump is not None and bump.edits:
        files = ", ".join(e.path for e in bump.edits)
        steps.insert(
            1,
            Step(
                StepKind.BUMP_VERSION,
                f"commit on {bump.branch}: set {files} to {bump.version} (after the cut)",
                VersionBump(bump.branch, bump.at, str(bump.version),
                            tuple(e.path for e in bump.edits)),
            ),
        )  # fmt: skip
    elif bump is not None and bump.note:
        steps.append(Step(StepKind.SKIP, bump.note))
    if state.remote_note:
        steps.append(Step(StepKind.SKIP, state.remote_note))
    return Plan(
        "cut",
        f"cut {state.branch} for {state.version} at {short(state.at)}",
        tuple(steps),
        CutInfo(
            state.branch,
            state.at,
            str(state.version),
            tuple(ln for e in bump.edits for ln in e.diff()) if bump else None,
        ),
    )


def _checked_out_elsewhere(ctx: ReleaseContext, branch: str) -> str | None:
    """Another work tree where ``branch`` is checked out (its files are not ours to move)."""
    here = str(ctx.root.resolve())
    path = None
    for line in ctx.repo.out("worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            path = line.removeprefix("worktree ")
        elif line == f"branch refs/heads/{branch}" and path is not None and path != here:
            return path
    return None


def main_bump(ctx: ReleaseContext, version: ReleaseVersion) -> MainBump | None:
    """Main's version files set to X.(Y+1).0 after cutting ``version`` (configured with
    ``bump-main-after-cut``); a file that says that or later already is left alone."""
    from packaging.version import InvalidVersion, Version

    config = ctx.config
    if not config.bump_main_after_cut or not config.version_files:
        return None
    main = config.main_branch
    to = ReleaseVersion(version.major, version.minor + 1, 0)
    at = ctx.repo.rev(f"refs/heads/{main}")
    if at is None:
        return MainBump(main, "", to, note=f"no local {main}: its version files are not set")
    elsewhere = _checked_out_elsewhere(ctx, main)
    if elsewhere is not None:
        return MainBump(main, at, to, note=f"{main} is checked out in {elsewhere}: set its "
                        f"version files to {to} there")  # fmt: skip
    edits = []
    for rel in config.version_files:
        text = ctx.repo.committed_text(at, rel, f"version file {rel}", limit=1 << 20,
                                       error=RefusedError)  # fmt: skip
        if text is None:
            raise RefusedError(f"version file {rel} is not on {main}; nothing changed")
        edit = set_version(rel, text, to)
        try:
            later = Version(edit.old).release >= (to.major, to.minor, 0) if edit else True
        except InvalidVersion:
            later = False
        if edit is not None and not later:
            edits.append(edit)
    if ctx.repo.current_branch() == main:
        dirty = sorted(set(ctx.repo.worktree.dirty_paths()) & {e.path for e in edits})
        if dirty:
            raise RefusedError(f"{', '.join(dirty)} has uncommitted changes on {main}, and cut "
                               "sets it; commit or stash them first (nothing changed)")  # fmt: skip
    return MainBump(main, at, to, tuple(edits))


def _apply_bump(ctx: ReleaseContext, bump: MainBump, cut: str) -> str:
    """Commit the bump on main (following it with the work tree where main is checked out
    here); the new commit."""
    from release.adapters.git_commit import commit_on_branch, follow_branch

    files = {e.path: e.after for e in bump.edits}
    sha = commit_on_branch(ctx.repo, bump.branch, bump.at, files, bump.message(cut))
    if ctx.repo.current_branch() == bump.branch:
        follow_branch(ctx.repo, bump.at, sha)
    return sha


def _undo_bump(ctx: ReleaseContext, bump: MainBump, sha: str) -> None:
    from release.adapters.git_commit import follow_branch

    if ctx.repo.current_branch() == bump.branch:
        follow_branch(ctx.repo, sha, bump.at)
    ctx.repo.run("update-ref", f"refs/heads/{bump.branch}", bump.at, sha, mutating=True)


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
        bump=main_bump(ctx, version),
    )


def _resume(
    ctx: ReleaseContext, journals: TaskJournals, journal: TaskJournal, say: Say
) -> Plan[CutInfo] | None:
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
    if journal.main:
        _finish_bump(ctx, journal, branch, say)
    if (
        journal.switch
        and ctx.repo.current_branch() != branch
        and not ctx.repo.worktree.dirty_paths()
    ):
        ctx.repo.switch(branch)
        steps.append(Step(StepKind.SWITCH, f"switch to {branch}", SwitchTo(branch)))
    journals.clear()
    say(f"finished the interrupted cut of {branch}")
    return Plan("cut", f"cut {branch} at {short(at)}: finished", tuple(steps), CutInfo(branch, at))


def _finish_bump(ctx: ReleaseContext, journal: TaskJournal, branch: str, say: Say) -> None:
    """The killed cut's commit on main: made now where main is still where it was, the
    work tree brought along where it was made; a main someone moved is left alone."""
    main = ctx.config.main_branch
    tip = ctx.repo.rev(f"refs/heads/{main}")
    named = ctx.config.branch.parse(branch)
    if tip == journal.main and named is not None:
        bump = main_bump(ctx, named)
        if bump is not None and bump.edits:
            _apply_bump(ctx, bump, str(named))
    elif (
        tip is not None
        and ctx.repo.first_parent(tip) == journal.main
        and f"{BUMP_TRAILER}: {journal.version}" in ctx.repo.message(tip)
    ):
        if ctx.repo.current_branch() == main:
            from release.adapters.git_commit import follow_branch

            follow_branch(ctx.repo, journal.main, tip)
    else:
        say(f"{main} moved since the interrupted cut: its version files are not set")


def cut(
    ctx: ReleaseContext,
    version: str,
    *,
    at: str | None = None,
    switch: bool = True,
    offline: bool = False,
    dry_run: bool = False,
    say: Say = print,
) -> Plan[CutInfo]:
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
        state = read_cut_state(ctx, version, at, switch, offline)
        plan = plan_cut(state)
        branch = plan.info.branch
        switching = any(s.action is StepKind.SWITCH for s in plan.steps)
        bump = state.bump if state.bump is not None and state.bump.edits else None
        journals.write(
            TaskJournal("cut", f"refs/heads/{branch}", ctx.repo.rev("HEAD") or "",
                        plan.info.at, switch=switching,
                        version=str(bump.version) if bump else "", main=bump.at if bump else "")
        )  # fmt: skip
        created, bumped = False, ""
        try:
            for step in plan.steps:
                if step.action is StepKind.CREATE_BRANCH:
                    made = step.data_of(BranchAt)
                    ctx.repo.create_branch(made.branch, made.at)
                    created = True
                elif step.action is StepKind.BUMP_VERSION and bump is not None:
                    bumped = _apply_bump(ctx, bump, str(state.version))
                elif step.action is StepKind.SWITCH:
                    ctx.repo.switch(step.data_of(SwitchTo).branch)
        except ReleaseError:
            if bumped and bump is not None:
                _undo_bump(ctx, bump, bumped)
            if created:  # leave the repository as it was
                ctx.repo.delete_branch(branch)
            journals.clear()
            raise
        journals.clear()
        if ctx.repo.rev(f"refs/heads/{branch}") != plan.info.at:
            raise RefusedError(f"branch {branch} was not created at {short(plan.info.at)}")
    return plan

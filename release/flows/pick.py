"""``pick``: cherry-pick main commits onto the release branch, in main's order, with ``-x``.

Plan (:mod:`release.flows.pick_plan`, on what :mod:`release.flows.branch` reads), then
act: one ``git cherry-pick -x`` per run of commits with the same reason (git's own
sequencer), with the journal (:mod:`release.flows.pick_journal`) written first, so that
a crash or a conflict can be continued, aborted, or simply re-run. Then re-check: every
picked commit must read as on the branch.

On a conflict the branch and work tree are left as they were before the failing commit.
A killed run leaves the journal; the next run (the same command, ``--continue`` or
``--abort``) first brings the work tree back to a commit boundary (:meth:`Picker.recover`).
The report's lines show commit subjects as single-line fields, control characters
escaped (:mod:`release.core.terminal_text`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NoReturn

from release.adapters.git_process import cause
from release.adapters.lock import repo_lock, require_ended
from release.adapters.process import last_line
from release.core.commits import REASON_TRAILER
from release.core.messages import is_pick_of, with_pick_line, with_trailer
from release.core.plan import Plan, StepKind, short
from release.core.plan_steps import PickData
from release.core.pr_picks import PrQuery
from release.core.say import Say
from release.core.terminal_text import escaped
from release.errors import ConflictError, RefusedError, ReleaseError
from release.flows.branch import ReleaseBranch
from release.flows.candidates import resolve_candidates
from release.flows.context import ReleaseContext
from release.flows.pick_github import Listed, list_pull_requests, pr_requests
from release.flows.pick_journal import (
    Conflict,
    Journal,
    JournalStatus,
    PickJournal,
    QueuedPick,
    QueueRun,
)
from release.flows.pick_plan import PickInfo, PickState, RequestedPick, plan_pick, reported

__all__ = ["abort_pick", "continue_pick", "pick", "read_pick_state"]


def read_pick_state(
    ctx: ReleaseContext,
    requests: list[RequestedPick],
    allow_feature: bool,
    repick: Sequence[str] = (),
    *,
    remember: bool = False,
    listed: Listed = (),
) -> tuple[PickState, ReleaseBranch]:
    """What the plan needs. ``repick``: commits (sha or ``#PR``) to pick even though they
    are likely backported already; each is picked as if asked for too. ``remember``: keep
    what was read of the commits' changes in the patch cache (a dry run: nothing else in
    the repository changes). ``listed``: the PRs milestones and labels list
    (:func:`release.flows.pick_github.list_pull_requests`), picked as their commits on main."""
    branch, _ = ctx.current_release()
    tip = ctx.repo.rev("HEAD")  # the branch is checked out: its tip is HEAD
    info = ReleaseBranch(ctx, branch, ctx.main_sha(), tip, remember=remember)
    from_prs, not_pickable = pr_requests(ctx, listed, info)
    requests = [*requests, *from_prs]
    asked = {r.ref for r in requests}
    extra = [RequestedPick(ref) for ref in dict.fromkeys(repick) if ref not in asked]
    candidates = resolve_candidates(ctx, [*requests, *extra], info)
    wanted = set(repick)
    state = PickState(
        branch=branch,
        head=tip or ctx.repo.head(),
        candidates=tuple(candidates),
        feature_categories=ctx.config.feature_categories,
        allow_feature=allow_feature,
        repick=frozenset(c.sha for c in candidates if c.request.ref in wanted),
        not_pickable=tuple(not_pickable),
    )
    return state, info


def _with_reason(ctx: ReleaseContext, sha: str, reason: str | None) -> None:
    """HEAD, the pick of ``sha``, carries the reason trailer: added to the message git
    wrote, every other byte kept (no editor, no cleanup: they drop ``#`` lines)."""
    if reason is None:
        return
    message = ctx.repo.raw_message()
    if not is_pick_of(message, sha):
        return  # HEAD is not that pick: nothing of ours to amend
    if f"\n{REASON_TRAILER}: {reason}\n" in message:
        return
    ctx.repo.commit(
        with_trailer(message, f"{REASON_TRAILER}: {reason}"), amend=True, cleanup="verbatim"
    )


def _picked(items: Iterable[QueuedPick]) -> list[str]:
    return [f"picked {short(i.sha)} {escaped(i.subject)}" for i in items]


class Picker:
    """Applies a journal's queue to the branch, and recovers from a killed run."""

    def __init__(self, ctx: ReleaseContext, say: Say) -> None:
        self.ctx = ctx
        self.repo = ctx.repo
        self.journal = Journal(ctx.repo.git_dir)
        self.say = say

    def in_progress(self, what: str) -> PickJournal:
        """The pick ``--continue``/``--abort`` works on, in a work tree git is not busy in."""
        journal = self.journal.read()
        if not journal:
            raise RefusedError(f"no pick in progress; nothing to {what}")
        self.ctx.require_settled(own_pick=True)
        return journal

    def recover(self, journal: PickJournal) -> None:
        """Bring the work tree back to a commit boundary after a killed run."""
        require_ended(journal.pgid, "pick")
        branch = journal.branch
        if self.repo.current_branch() != branch:
            raise RefusedError(
                f"an interrupted pick on {branch} needs recovery; git switch {branch} first"
            )
        for path in self.repo.worktree.lock_files(f"refs/heads/{branch}"):
            if path.exists():
                path.unlink()
                self.say(f"removed {path.name} left by the interrupted pick")
        if self.repo.worktree.sequencer_active() or self.repo.worktree.cherry_pick_head():
            self.repo.cherry_pick_quit()
        self.repo.reset_hard()
        self._remove_left_files(journal)
        if journal.queue:  # killed between a pick and its trailer
            _with_reason(self.ctx, journal.queue[0].sha, journal.queue[0].reason)
        self.say(f"recovered an interrupted pick: {branch} is at {short(self.repo.head())}")

    def _remove_left_files(self, journal: PickJournal) -> None:
        """Remove the files a killed pick wrote that git had not added yet (``reset --hard``
        leaves untracked files): new in a queued commit, untracked now, and with that
        commit's content, or the first part of it when the kill cut the write short, so a
        file of the user's own at such a path is kept."""
        added = self.repo.history.added_blobs([item.sha for item in journal.queue])
        left = self.repo.worktree.untracked(sorted(added))
        for path, blob in zip(left, self.repo.worktree.blob_ids(left), strict=True):
            if blob not in added[path] and not self._cut_short(path, added[path]):
                continue
            file = self.repo.root / path
            file.unlink()
            for parent in file.parents:  # the directories git made for it, now empty
                if parent == self.repo.root or any(parent.iterdir()):
                    break
                parent.rmdir()
            self.say(f"removed {escaped(path)}, left by the interrupted pick")

    def _cut_short(self, path: str, blobs: set[str]) -> bool:
        """The file at ``path`` is what git began to write for one of ``blobs`` when it was
        killed: written since the journal was, and shorter than and the start of the bytes
        git writes for that blob (an empty file, if the kill came right after the open)."""
        file = self.repo.root / path
        since = self.journal.written_ns()
        if since is None or file.is_symlink() or file.stat().st_mtime_ns < since:
            return False
        data = file.read_bytes()
        forms = (self.repo.worktree.checkout_form(blob, path) for blob in sorted(blobs))
        return any(
            form is not None and len(data) < len(form) and form.startswith(data) for form in forms
        )

    def run_queue(self, journal: PickJournal) -> QueueRun:
        """Apply the queued commits; the lines that report them, and those found empty."""
        queue = journal.queue
        report: list[str] = []
        emptied: set[str] = set()
        while queue:
            reason = queue[0].reason
            group: list[
                QueuedPick
            ] = []  # one sequencer run; one commit at a time when a trailer is added
            for item in queue:
                if item.reason != reason or (group and reason is not None):
                    break
                group.append(item)
            journal = self.journal.write(journal.advanced(queue))
            result = self.repo.cherry_pick([i.sha for i in group])
            if result.ok:
                _with_reason(self.ctx, group[0].sha, reason)
                report += _picked(group)
                queue = queue[len(group) :]
                continue
            stopped = self.repo.worktree.cherry_pick_head()
            if stopped is None:  # git gave up before it began the next pick (or after all)
                done = self._applied(group)
                report += _picked(group[:done])
                self._refused(journal, queue, report, done, len(group), result.stderr)
            index = next((k for k, i in enumerate(group) if i.sha == stopped), 0)
            report += _picked(group[:index])
            queue = queue[index:]
            try:
                skipped = self._stopped(journal, queue, last_line(result.stderr))
            except ReleaseError:  # stopped: say first what this run did pick
                for line in report:
                    self.say(line)
                raise
            report.append(skipped)
            emptied.add(queue[0].sha)
            queue = queue[1:]
        self.journal.clear()
        return QueueRun(tuple(report), frozenset(emptied))

    def _applied(self, group: Sequence[QueuedPick]) -> int:
        """How many of ``group`` git picked before it gave up: the newest commits on the
        branch are the picks of its first ones, in order."""
        newest = self.repo.history.newest_messages(len(group))
        for done in range(len(group), 0, -1):
            picks = reversed(newest[:done])  # oldest first
            if len(newest) >= done and all(
                is_pick_of(m, i.sha) for i, m in zip(group, picks, strict=False)
            ):
                return done
        return 0

    def _refused(
        self,
        journal: PickJournal,
        queue: tuple[QueuedPick, ...],
        report: list[str],
        done: int,
        ran: int,
        stderr: str,
    ) -> NoReturn:
        """git, given the first ``ran`` of ``queue``, refused to begin ``queue[done]`` (an
        untracked file in the way, a lock) and changed nothing of it, or failed after
        picking them all: the journal goes on from there; say what was picked, then why."""
        if done == ran:  # the last pick carries its reason, as after a pick that ended well
            _with_reason(self.ctx, queue[done - 1].sha, queue[done - 1].reason)
        if self.repo.worktree.sequencer_active():
            self.repo.cherry_pick_quit()
        self.journal.write(journal.advanced(queue[done:]))
        for line in report:
            self.say(line)
        at = f"{journal.branch} is at {short(self.repo.head())}"
        why = cause(stderr, "no reason given")
        if done == ran:
            raise RefusedError(f"git cherry-pick failed after the last pick: {why}; {at}")
        current = queue[done]
        raise RefusedError(
            f"git cherry-pick would not begin {short(current.sha)} '{current.subject}': "
            f"{why}; {at} (fix the cause, then re-run, or release pick --abort)"
        )

    def _stopped(self, journal: PickJournal, queue: tuple[QueuedPick, ...], why: str) -> str:
        """git stopped on ``queue[0]``: back to before it, then raise, or (its change is
        already on the branch) report it skipped."""
        unmerged = self.repo.worktree.unmerged_paths()
        # applied cleanly but not committed: git failed for another reason (hook, identity)
        uncommitted = not unmerged and self.repo.worktree.has_staged_changes()
        self.repo.cherry_pick_quit()
        self.repo.reset_hard()
        current = queue[0]
        if uncommitted:
            self.journal.write(journal.advanced(queue))
            raise RefusedError(
                f"git could not commit the pick of {short(current.sha)} "
                f"'{current.subject}': {why or 'git cherry-pick stopped'}; {journal.branch} is at "
                f"{short(self.repo.head())}, before that commit "
                "(fix the cause, then re-run, or release pick --abort)"
            )
        if not unmerged:
            return f"skipped {short(current.sha)} {escaped(current.subject)} (its change is already on the branch)"
        conflict = Conflict(current.sha, current.subject, tuple(unmerged))
        self.journal.write(journal.stopped(queue, conflict))
        raise ConflictError(
            f"conflict picking {short(current.sha)} '{current.subject}' in {', '.join(unmerged)}; "
            f"{journal.branch} is back at {short(self.repo.head())}, before that commit, work tree clean",
            hint=(
                f"resolve with: git cherry-pick -x {short(current.sha)}, fix and git add the files, "
                "then release pick --continue; or release pick --abort to undo this whole pick"
            ),
        )


def _queue(plan: Plan[PickInfo]) -> tuple[QueuedPick, ...]:
    picks = [s.data_of(PickData) for s in plan.steps if s.action is StepKind.CHERRY_PICK]
    return tuple(QueuedPick(d.sha, d.subject, d.reason) for d in picks)


def _confirm(info: ReleaseBranch, shas: Iterable[str]) -> None:
    info.moved()
    missing = [sha for sha, why in info.already_there(shas).items() if why is None]
    if missing:
        raise RefusedError(
            f"after picking, {', '.join(short(s) for s in missing)} is not on {info.branch}; "
            "inspect with git log and re-run"
        )


def _refuse_if_stopped(journal: PickJournal | None) -> None:
    if journal is not None and journal.conflict is not None:
        conflict = journal.conflict
        raise RefusedError(
            f"a pick stopped on a conflict at {short(conflict.sha)} ('{conflict.subject}'); "
            "resolve it and run release pick --continue, or release pick --abort"
        )


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
    """``queries``: milestones and labels whose PRs are picked; GitHub is asked before
    anything here changes."""
    journal = Journal(ctx.repo.git_dir).read()
    _refuse_if_stopped(journal)
    ctx.require_settled(own_pick=journal is not None)  # a killed pick's cherry-pick is ours
    ctx.require_full_history("pick")
    listed = list_pull_requests(ctx, queries)
    if dry_run:
        state, _ = read_pick_state(
            ctx, requests, allow_feature, repick, remember=True, listed=listed
        )
        return plan_pick(state), []
    with repo_lock(ctx.repo.common_dir, "pick", notify=say):
        picker = Picker(ctx, say)
        saved = picker.journal.read()
        if saved:
            picker.recover(saved)
            picker.journal.clear()
        ctx.require_clean()
        state, info = read_pick_state(ctx, requests, allow_feature, repick, listed=listed)
        plan = plan_pick(state)
        queue = _queue(plan)
        report = [reported(s) for s in plan.steps if not s.action.acts]
        if queue:
            done = picker.run_queue(PickJournal(state.branch, state.head, queue))
            report += done.lines
            _confirm(info, [i.sha for i in queue if i.sha not in done.emptied])
        return plan, report


def continue_pick(ctx: ReleaseContext, *, say: Say = print) -> list[str]:
    with repo_lock(ctx.repo.common_dir, "pick --continue", notify=say):
        picker = Picker(ctx, say)
        journal = picker.in_progress("continue")
        if journal.conflict is None:
            picker.recover(journal)
            info = ReleaseBranch(ctx, journal.branch, ctx.main_sha())
            there = info.already_there(i.sha for i in journal.queue)
            left = tuple(i for i in journal.queue if there[i.sha] is None)
            return list(picker.run_queue(journal.advanced(left)).lines)
        return _finish_conflict(ctx, picker, journal, journal.conflict)


def _finish_conflict(
    ctx: ReleaseContext, picker: Picker, journal: PickJournal, conflict: Conflict
) -> list[str]:
    """The conflicting commit, resolved by hand: commit it if git has not, check it is on
    the branch, then go on with the rest."""
    sha = conflict.sha
    if ctx.repo.current_branch() != journal.branch:
        raise RefusedError(
            f"the pick in progress is on {journal.branch}; git switch {journal.branch} first"
        )
    reason = journal.queue[0].reason
    if ctx.repo.worktree.cherry_pick_head():
        unmerged = ctx.repo.worktree.unmerged_paths()
        if unmerged:
            raise RefusedError(
                f"still unmerged: {', '.join(unmerged)}; resolve them and git add them"
            )
        ctx.repo.cherry_pick_continue()
        _ensure_pick_message(ctx, sha, reason)
    elif ctx.repo.worktree.has_staged_changes():
        _commit_resolution(ctx, sha, reason)
    else:  # finished by hand with git cherry-pick --continue: the reason goes on too
        _with_reason(ctx, sha, reason)
    info = ReleaseBranch(ctx, journal.branch, ctx.main_sha())
    if info.already_there([sha])[sha] is None:
        raise RefusedError(
            f"{short(sha)} is not on {journal.branch} yet; run git cherry-pick -x {short(sha)}, "
            "resolve, git add, then release pick --continue"
        )
    ctx.require_clean()
    report = [f"picked {short(sha)} {escaped(conflict.subject)} (resolved by hand)"]
    return report + list(picker.run_queue(journal.advanced(journal.queue[1:])).lines)


def _ensure_pick_message(ctx: ReleaseContext, sha: str, reason: str | None) -> None:
    """A hand-finished pick still carries the ``-x`` line and the reason trailer; every
    other byte of its message is kept."""
    message = ctx.repo.raw_message()
    if not is_pick_of(message, sha):
        ctx.repo.commit(with_pick_line(message, sha), amend=True, cleanup="verbatim")
    _with_reason(ctx, sha, reason)


def _commit_resolution(ctx: ReleaseContext, sha: str, reason: str | None) -> None:
    """Commit a staged resolution as the pick of ``sha`` (author, message and ``-x`` kept),
    the message as ``git cherry-pick -x`` writes it."""
    name, email, date = ctx.repo.authorship(sha)
    message = with_pick_line(ctx.repo.raw_message(sha), sha)
    if reason:
        message = with_trailer(message, f"{REASON_TRAILER}: {reason}")
    ctx.repo.commit(message, author=f"{name} <{email}>", date=date, cleanup="verbatim")


def _refuse_to_strand_tags(ctx: ReleaseContext, orig_head: str) -> None:
    """``--abort`` resets to where the pick started: a tag on a commit made since would be
    left off the branch."""
    stranded = sorted(ctx.repo.tags_merged_into("HEAD") - ctx.repo.tags_merged_into(orig_head))
    if stranded:
        raise RefusedError(
            f"--abort would leave {', '.join(stranded)} off the branch (tagged after the pick "
            "started); finish the pick with release pick --continue instead"
        )


def abort_pick(ctx: ReleaseContext, *, say: Say = print) -> str:
    with repo_lock(ctx.repo.common_dir, "pick --abort", notify=say):
        picker = Picker(ctx, say)
        journal = picker.in_progress("abort")
        branch = journal.branch
        if ctx.repo.current_branch() != branch:
            raise RefusedError(f"the pick in progress is on {branch}; git switch {branch} first")
        _refuse_to_strand_tags(ctx, journal.orig_head)
        if journal.status is JournalStatus.RUNNING:
            picker.recover(journal)
        if ctx.repo.worktree.cherry_pick_head() or ctx.repo.worktree.sequencer_active():
            ctx.repo.cherry_pick_quit()
        ctx.repo.reset_hard(journal.orig_head)
        picker.journal.clear()
        return f"aborted: {branch} is back at {short(journal.orig_head)}"

"""Making a tag (``tag``, ``promote``): the steps of the plan, run under a journal.

Before it changes anything a run writes its journal (:mod:`release.flows.task_journal`);
when it is done the journal is cleared. A run that fails rolls the branch back itself
(tag deleted, branch reset, a changelog it created removed) and says so. A run that was
killed leaves the journal, and the next run of the command reads it first:

- the tag exists: the killed run's work is done but for what follows the tag (promote's
  changelog commit), which is finished now;
- the tag does not exist: the branch goes back to where the killed run started, and the
  command runs from the beginning, as if the killed run had never been.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from release.adapters.files import atomic_write
from release.adapters.lock import repo_lock
from release.core.commits import CHANGELOG_TRAILER
from release.core.plan import Plan, StepKind, short
from release.core.versions import ReleaseVersion
from release.errors import RefusedError, ReleaseError
from release.flows.context import ReleaseContext
from release.flows.task_journal import TaskJournal, TaskJournals

__all__ = ["TagRequest", "run_journaled"]

Say = Callable[[str], None]
Build = Callable[[], tuple[Plan, "TagRequest | None"]]


@dataclass(frozen=True)
class TagRequest:
    version: ReleaseVersion
    name: str
    target: str
    message: str
    changelog_label: str | None
    changelog_text: str | None  # the new CHANGELOG.md, or None when unchanged/disabled
    sign: bool


def changelog_message(ctx: ReleaseContext, name: str) -> str:
    return f"Update {ctx.config.changelog} for {name}\n\n{CHANGELOG_TRAILER}: {name}\n"


def _write_changelog(ctx: ReleaseContext, text: str, name: str) -> None:
    """Write, stage and commit the changelog (the file replaced whole; its scratch copy
    kept under ``.git/release/``, so a kill leaves nothing in the work tree)."""
    scratch = ctx.repo.git_dir / "release" / "changelog.tmp"
    atomic_write(ctx.root / ctx.config.changelog, text, scratch=scratch)
    ctx.repo.add(ctx.config.changelog)
    ctx.repo.commit(changelog_message(ctx, name), cleanup="strip")


def _drop_new_changelog(ctx: ReleaseContext, text: str | None) -> None:
    """A changelog this run created (none was tracked) and left untracked goes too:
    ``reset --hard`` keeps untracked files."""
    if (
        not ctx.config.changelog
        or text is None
        or ctx.repo.worktree.is_tracked(ctx.config.changelog)
    ):
        return
    path = ctx.root / ctx.config.changelog
    kept = path.is_file() and not path.is_symlink()
    found = ctx.tree_text(ctx.config.changelog, "changelog") if kept else None
    if found is not None and found.restore(found.text) == text:
        path.unlink()


def _execute(
    ctx: ReleaseContext, plan: Plan, request: TagRequest, say: Callable[[str], None]
) -> None:
    repo = ctx.repo
    orig = repo.head()
    target = request.target
    tagged = False
    try:
        for step in plan.steps:
            if step.action is StepKind.COMMIT_CHANGELOG:
                assert request.changelog_text is not None
                _write_changelog(ctx, request.changelog_text, request.name)
                if not tagged:  # tag: the rc goes on the changelog commit
                    target = repo.head()
            elif step.action is StepKind.CREATE_TAG:
                tagged = True
                repo.create_tag(request.name, target, request.message, sign=request.sign)
    except ReleaseError:
        if repo.rev(f"refs/tags/{request.name}"):  # it did not exist before: refused otherwise
            repo.delete_tag(request.name)
        repo.reset_hard(orig)
        _drop_new_changelog(ctx, request.changelog_text)
        say(f"nothing changed: the branch is back at {short(orig)}")
        raise
    if repo.rev(f"refs/tags/{request.name}") != target:
        raise RefusedError(f"tag {request.name} does not point at {short(target)} as planned")


def _is_changelog_commit(ctx: ReleaseContext, sha: str, name: str) -> bool:
    return f"{CHANGELOG_TRAILER}: {name}" in ctx.repo.message(sha)


def _resume(ctx: ReleaseContext, journals: TaskJournals, journal: TaskJournal, say: Say) -> bool:
    """Finish or roll back the run the journal describes; True when its work is now done."""
    journals.release_locks(journal, say)
    (ctx.repo.git_dir / "release" / "changelog.tmp").unlink(missing_ok=True)
    repo, name, orig = ctx.repo, journal.name, journal.orig_head
    head = repo.head()
    on_top = (
        head != orig and repo.first_parent(head) == orig and _is_changelog_commit(ctx, head, name)
    )
    if head != orig and not on_top:
        raise RefusedError(
            f"an interrupted {journal.command} of {name} started at {short(orig)}, and the branch "
            f"is now at {short(head)}; look at git log, then remove {journals.file.path}"
        )
    if repo.rev(journal.ref) is not None:  # the tag is made: only what follows it is left
        if journal.command == "promote" and journal.changelog is not None and not on_top:
            repo.reset_hard(orig)
            _write_changelog(ctx, journal.changelog, name)
        journals.clear()
        say(f"finished the interrupted {journal.command} of {name}")
        return True
    repo.reset_hard(orig)
    _drop_new_changelog(ctx, journal.changelog)
    journals.clear()
    say(f"rolled back the interrupted {journal.command} of {name}: the branch is at {short(orig)}")
    return False


def run_journaled(
    ctx: ReleaseContext, command: str, build: Build, *, dry_run: bool, say: Say
) -> Plan:
    """Plan outside the lock for --dry-run; under the lock, finish or roll back a killed run
    first, plan again, write the journal, act, clear the journal."""
    journals = TaskJournals(ctx.repo, command)
    if dry_run:
        if journals.read() is not None:
            return Plan(command, f"{command}: first finish or roll back the interrupted run")
        return build()[0]
    with repo_lock(ctx.repo.common_dir, command, notify=say):
        journal = journals.read()
        if journal is not None and _resume(ctx, journals, journal, say):
            return Plan(command, f"{command} {journal.name}: finished", (), {"tag": journal.name})
        plan, request = build()
        if request is None:
            return plan
        journals.write(
            TaskJournal(
                command,
                f"refs/tags/{request.name}",
                ctx.repo.head(),
                request.target,
                request.changelog_text,
            )
        )
        try:
            _execute(ctx, plan, request, say)
        except ReleaseError:
            journals.clear()  # rolled back: nothing is left to finish
            raise
        journals.clear()
    return plan

"""Making a tag (``tag``, ``promote``): the steps of the plan, run under a journal.

Before it changes anything a run writes its journal (:mod:`release.flows.task_journal`);
when it is done the journal is cleared. A run that fails rolls the branch back itself
(tag deleted, branch reset, a changelog it created removed) and says so. The changelog
is the maintainers' file once created, edited in place by its sections; carrying no
header, it is created only where there is none, by an exclusive write: a file that
appears there while the run works is left as it is and the run refused. A run that was
killed leaves the journal, and the next run of the command reads it first:

- the tag exists: the killed run's work is done but for what follows the tag (promote's
  changelog commit), which is finished now;
- the tag does not exist: the branch goes back to where the killed run started, and the
  command runs from the beginning, as if the killed run had never been.

Promote's image side (the rc's images given the final's tags: :class:`ImageSide`, made by
the command floor) is part of the same transaction. It is checked while planning, before
the first change, so whatever the registry or the engine would refuse leaves git as it
was; it runs after the git side, under the same journal, and the journal is cleared only
when it is done. A run stopped anywhere in it leaves the journal: the next run finishes the
git side, checks the image side again (what it already copied is kept) and finishes it. A
failure there keeps the journal too, and says that a re-run finishes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from release.adapters.files import atomic_write
from release.adapters.lock import repo_lock
from release.core.commits import CHANGELOG_TRAILER
from release.core.plan import Plan, Step, StepKind, short
from release.core.say import Say
from release.core.versions import ReleaseVersion
from release.errors import RefusedError, ReleaseError
from release.flows.context import ReleaseContext
from release.flows.task_journal import TaskJournal, TaskJournals

__all__ = [
    "ImageSide",
    "ImagesFor",
    "ImagesPending",
    "NewTag",
    "Promotion",
    "TagPlanInfo",
    "run_journaled",
]


@dataclass(frozen=True)
class TagPlanInfo:
    """What a tag's or a promote's plan knows. A tag to make has its ``message`` (and the
    version, the branch, the range its notes cover since, the changelog; promote the rc it
    comes ``from_rc``, tag whether the remote was asked and main's version files' diff);
    one not made, the branch that has nothing new (``tag`` None); a killed run finished
    (``finished``), its tag; a run waiting for a killed one, nothing."""

    tag: str | None = None
    branch: str | None = None
    message: str | None = None
    version: str | None = None
    from_rc: str | None = None
    since: str | None = None
    changelog: str | None = None
    remote_checked: bool | None = None  # None: not asked (promote)
    version_diff: tuple[str, ...] | None = None  # None: not made (promote)
    finished: bool = False

    def to_dict(self) -> dict[str, object]:
        if self.finished:
            return {"tag": self.tag, "finished": True}
        if self.message is None:
            return {} if self.branch is None else {"tag": self.tag, "branch": self.branch}
        made: dict[str, object] = {
            "version": self.version,
            "tag": self.tag,
            "message": self.message,
            "branch": self.branch,
        }
        made |= {"from_rc": self.from_rc} if self.from_rc is not None else {}
        made |= {"since": self.since, "changelog": self.changelog}
        made |= {"remote_checked": self.remote_checked} if self.remote_checked is not None else {}
        diff = self.version_diff
        return made | ({"version_diff": list(diff)} if diff is not None else {})


Build = Callable[[], tuple[Plan[TagPlanInfo], "NewTag | None"]]


@dataclass(frozen=True)
class Promotion:
    """A final and the rc it is made from: what promote's image side needs, and what its
    journal keeps for a run that finishes a killed one."""

    final: str  # the final's tag
    version: str  # the final's version
    rc: str  # the last rc's tag, whose images the final gets
    commit: str  # the commit both name


class ImageSide(Protocol):
    """Promote's image side, checked already (made only when nothing refuses): the steps
    it adds to the plan, and the work itself, which converges when run again."""

    @property
    def steps(self) -> tuple[Step, ...]: ...

    def apply(self, say: Say) -> None: ...


ImagesFor = Callable[[Promotion], "ImageSide | None"]  # None: the rc has no images to give


class ImagesPending(ReleaseError):
    """The final is tagged but its images are not all promoted; a re-run finishes them.
    Its exit code is that of the failure underneath."""

    def __init__(self, final: str, cause: ReleaseError) -> None:
        super().__init__(
            f"{final} is tagged, but its images are not promoted yet: {cause.one_line()}; "
            "re-run release promote to finish (what is done is kept)"
        )
        self.exit_code = cause.exit_code


@dataclass(frozen=True)
class NewTag:
    version: ReleaseVersion
    name: str
    target: str
    message: str
    changelog_label: str | None
    changelog_text: str | None  # the new CHANGELOG.md, or None when unchanged/disabled
    sign: bool
    promotion: Promotion | None = None  # promote: the final, and the rc it is made from
    images: ImageSide | None = field(default=None, compare=False)  # promote's image side
    versions: tuple[tuple[str, str], ...] = ()  # version files set to it: (path, new text)

    @property
    def commits(self) -> bool:
        """A commit is made for the release: its changelog, its version files."""
        return self.changelog_text is not None or bool(self.versions)


def changelog_message(
    ctx: ReleaseContext, name: str, versions: tuple[tuple[str, str], ...] = ()
) -> str:
    paths = ([ctx.config.changelog] if ctx.config.changelog else []) + [p for p, _ in versions]
    what = ", ".join(paths[:-1]) + (" and " if len(paths) > 1 else "") + paths[-1]
    return f"Update {what} for {name}\n\n{CHANGELOG_TRAILER}: {name}\n"


def _write_changelog(
    ctx: ReleaseContext,
    text: str | None,
    name: str,
    versions: tuple[tuple[str, str], ...] = (),
) -> None:
    """Write, stage and commit the changelog and the version files (each replaced whole;
    its scratch copy kept under ``.git/release/``, so a kill leaves nothing in the work
    tree). A committed changelog is edited in place; one that is not committed is created,
    never replaced. Version files are committed ones, checked while planning."""
    scratch = ctx.repo.git_dir / "release" / "changelog.tmp"
    if text is not None:
        path = ctx.root / ctx.config.changelog
        if ctx.repo.worktree.is_tracked(ctx.config.changelog):
            atomic_write(path, text, scratch=scratch)
        else:
            _create_changelog(ctx, text, scratch)
        ctx.repo.add(ctx.config.changelog)
    for rel, new in versions:
        atomic_write(ctx.root / rel, new, scratch=scratch)
        ctx.repo.add(rel)
    ctx.repo.commit(changelog_message(ctx, name, versions), cleanup="strip")


def _create_changelog(ctx: ReleaseContext, text: str, scratch: Path) -> None:
    """The changelog's first creation: only where there is none (or the one a killed run
    of this command created). A file that appeared since the run looked is someone's: it is
    left as it is, and the run refused (and rolled back)."""
    rel = ctx.config.changelog
    found = ctx.tree_text(rel, "changelog")
    if found is not None and found.restore(found.text) == text:
        return
    try:
        atomic_write(ctx.root / rel, text, scratch=scratch, exclusive=True)
    except FileExistsError:
        raise RefusedError(
            f"{rel} is there now, not committed, and release did not write it: a changelog "
            "is created only where there is none, never replaced; commit it (release then "
            "adds its sections to it) or move it away, then run again"
        ) from None


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
    ctx: ReleaseContext, plan: Plan[TagPlanInfo], request: NewTag, say: Callable[[str], None]
) -> None:
    repo = ctx.repo
    orig = repo.head()
    target = request.target
    tagged = False
    try:
        for step in plan.steps:
            if step.action is StepKind.COMMIT_CHANGELOG:
                _write_changelog(ctx, request.changelog_text, request.name, request.versions)
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


def _resume(
    ctx: ReleaseContext,
    journals: TaskJournals,
    journal: TaskJournal,
    images: ImagesFor | None,
    say: Say,
) -> bool:
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
        if journal.rc and images is not None:
            promotion = Promotion(name, journal.version, journal.rc, journal.target)
            _images_of(promotion, lambda: images(promotion), say)
        journals.clear()
        say(f"finished the interrupted {journal.command} of {name}")
        return True
    repo.reset_hard(orig)
    _drop_new_changelog(ctx, journal.changelog)
    journals.clear()
    say(f"rolled back the interrupted {journal.command} of {name}: the branch is at {short(orig)}")
    return False


def _images_of(promotion: Promotion, side: Callable[[], ImageSide | None], say: Say) -> None:
    """Promote's image side (checked, then applied), after its git side: a refusal or a
    failure keeps the journal, and says that a re-run finishes."""
    try:
        checked = side()
        if checked is not None:
            checked.apply(say)
    except ReleaseError as err:
        raise ImagesPending(promotion.final, err) from err


def run_journaled(
    ctx: ReleaseContext,
    command: str,
    build: Build,
    *,
    dry_run: bool,
    say: Say,
    images: ImagesFor | None = None,
) -> Plan[TagPlanInfo]:
    """Plan outside the lock for --dry-run; under the lock, finish or roll back a killed run
    first, plan again, write the journal, act (the git side, then promote's image side),
    clear the journal. ``images``: promote's image side, for a run that finishes a killed
    one (a new run's is in its request)."""
    journals = TaskJournals(ctx.repo, command)
    if dry_run:
        if journals.read() is not None:
            summary = f"{command}: first finish or roll back the interrupted run"
            return Plan(command, summary, (), TagPlanInfo())
        return build()[0]
    with repo_lock(ctx.repo.common_dir, command, notify=say):
        journal = journals.read()
        if journal is not None and _resume(ctx, journals, journal, images, say):
            return Plan(
                command,
                f"{command} {journal.name}: finished",
                (),
                TagPlanInfo(journal.name, finished=True),
            )
        plan, request = build()
        if request is None:
            return plan
        promotion = request.promotion
        journals.write(
            TaskJournal(
                command,
                f"refs/tags/{request.name}",
                ctx.repo.head(),
                request.target,
                request.changelog_text,
                rc=promotion.rc if promotion and request.images else "",
                version=promotion.version if promotion else "",
            )
        )
        try:
            _execute(ctx, plan, request, say)
        except ReleaseError:
            journals.clear()  # rolled back: nothing is left to finish
            raise
        if promotion is not None:
            say(f"tagged {promotion.final} on {promotion.rc}")
            _images_of(promotion, lambda: request.images, say)
        journals.clear()
    return plan

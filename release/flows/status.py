"""``status``: where the release stands, what to run next. Reads only; lines: status_lines."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from release.core.json_text import JSONValue
from release.errors import ConfigError, RefusedError, ReleaseError, UsageError
from release.flows.branch_picks import BranchPick as DonePick
from release.flows.branch_picks import (
    FromGitHub,
    PendingPick,
    kept_picks,
    pending_picks,
    picks_done,
)
from release.flows.context import ReleaseContext, ReleaseLine, TagInfo
from release.flows.pick_journal import Conflict, read_journal
from release.flows.pick_status import PickPr, picks_next, read_pick_prs, waiting_on
from release.flows.tag_due import tag_due
from release.flows.task_journal import interrupted

# Loaded where they are used, not here: what is already on the branch (the backport
# evidence behind it) only for a picks file, the manifest only for a matrix with a tag.
if TYPE_CHECKING:
    from release.core.manifest import VariantRule
    from release.core.manifest_records import Manifest
    from release.flows.branch import ReleaseBranch
    from release.flows.main_reverts import MainRevert

__all__ = [
    "DonePick",
    "ImagesState",
    "PendingPick",
    "PickInProgress",
    "Status",
    "StatusTag",
    "read_status",
]


@dataclass(frozen=True)
class StatusTag:
    """One of the release's tags: where it points, and whether it is here and pushed."""

    name: str
    commit: str
    local: bool
    remote: bool


@dataclass(frozen=True)
class PickInProgress:
    """A pick that has not finished: running or stopped on a conflict, with what is left."""

    status: str
    branch: str
    remaining: int
    conflict: Conflict | None


@dataclass(frozen=True)
class ImagesState:
    """The newest tag's images, per variant of the matrix: built, smoked, snapshot (each a
    short word), from its published manifest or the parts written here."""

    tag: str
    manifest: str  # where it was read: published, local parts, none yet
    variants: Mapping[str, Mapping[str, str]]
    missing: list[str]


@dataclass(frozen=True)
class Status:
    branch: str | None
    release: str | None
    head: str | None
    dirty: list[str]
    tags: list[StatusTag]
    next_rc: str | None
    final: str | None
    picks_done: list[DonePick] = field(default_factory=list)
    picks_pending: list[PendingPick] = field(default_factory=list)
    pick_in_progress: PickInProgress | None = None
    remote_checked: bool = False
    untagged_commits: int = 0
    release_branches: list[str] = field(default_factory=list)
    images: ImagesState | None = None  # the latest tag's manifest, per variant
    notes: list[str] = field(default_factory=list)
    next_command: str = ""
    unpushed: list[str] = field(default_factory=list)  # what push would send (remote read)
    # a cut, tag or promote stopped half-way: (the command, the branch or tag it makes)
    interrupted: tuple[str, str] | None = None
    picks_held: list[PendingPick] = field(default_factory=list)  # pick would hold them
    picks_refused: str | None = None  # why pick --file would refuse
    tagged_since: str | None = None  # the tag the untagged commits follow (None: no tag here)
    tag_due: bool = False  # tag would make a tag (what tag --dry-run reads, read the same)
    pick_prs: list[PickPr] = field(default_factory=list)  # the PR route's open and merged PRs
    from_github: list[FromGitHub] = field(default_factory=list)  # the picks file's milestones
    # reverts on main of what the branch carries, not on it yet (release pick --reverts)
    reverts_pending: list[MainRevert] = field(default_factory=list)

    def to_dict(self) -> dict[str, JSONValue]:
        """The ``--json`` document's fields (``status --json`` adds its ``schema``)."""
        progress = self.pick_in_progress
        conflict = progress.conflict if progress else None
        images = self.images
        return {
            "branch": self.branch,
            "release": self.release,
            "head": self.head,
            "dirty": list(self.dirty),
            "tags": [
                {"name": t.name, "commit": t.commit, "local": t.local, "remote": t.remote}
                for t in self.tags
            ],
            "next_rc": self.next_rc,
            "final": self.final,
            "picks_done": [
                {
                    "sha": p.sha,
                    "from": p.picked_from,
                    "subject": p.subject,
                    "reason": p.reason,
                    "how": p.how,
                }
                for p in self.picks_done
            ],
            "picks_pending": [p.to_dict() for p in self.picks_pending],
            "picks_held": [p.to_dict() for p in self.picks_held],
            "picks_refused": self.picks_refused,
            "picks_from_github": [g.to_dict() for g in self.from_github],
            "reverts_pending": [
                {
                    "sha": r.sha,
                    "subject": r.subject,
                    "reverts": r.reverts,
                    "reverts_subject": r.reverts_subject,
                    "carried": r.carried,
                    "command": r.command,
                }
                for r in self.reverts_pending
            ],
            "pick_in_progress": None
            if progress is None
            else {
                "status": progress.status,
                "branch": progress.branch,
                "remaining": progress.remaining,
                "conflict": None
                if conflict is None
                else {
                    "sha": conflict.sha,
                    "subject": conflict.subject,
                    "files": list(conflict.files),
                },
            },
            "remote_checked": self.remote_checked,
            "untagged_commits": self.untagged_commits,
            "tagged_since": self.tagged_since,
            "tag_due": self.tag_due,
            "unpushed": list(self.unpushed),
            "release_branches": list(self.release_branches),
            "images": None
            if images is None
            else {
                "tag": images.tag,
                "manifest": images.manifest,
                "variants": {v: dict(row) for v, row in images.variants.items()},
                "missing": list(images.missing),
            },
            "interrupted": None
            if self.interrupted is None
            else {"command": self.interrupted[0], "name": self.interrupted[1]},
            "notes": list(self.notes),
            "next_command": self.next_command,
            "pick_prs": [pr.to_dict() for pr in self.pick_prs],
        }

    def to_json(self) -> str:
        import json  # (here: the text status never imports it)

        return json.dumps(self.to_dict(), indent=2)


def _next_command(s: Status, picks_file: str, post: str | None = None) -> str:
    if s.interrupted:
        command, name = s.interrupted
        return f"release {command}   (finishes the interrupted {command} of {name})"
    if s.release is None:
        if s.release_branches:
            return f"git switch {s.release_branches[-1]}"
        return "release cut X.Y.Z"
    if s.pick_in_progress:
        return "release pick --continue   (or release pick --abort)"
    if s.dirty:
        return "commit or stash your changes"
    if s.picks_refused:
        return f"fix {picks_file}: release pick --file {picks_file} would refuse it"
    if s.picks_pending or waiting_on(s.pick_prs, s.picks_pending):
        return picks_next(s.pick_prs, s.picks_pending, picks_file)
    if any(g.unread for g in s.from_github):  # its picks are not known: none is "done"
        return f"release pick --file {picks_file}   (once GitHub can be read)"
    if s.reverts_pending and not s.final:  # main undid what the rcs carry: before the next
        return "release pick --reverts"
    push = "release push" + ("" if s.remote_checked else "   (the remote was not checked)")
    if s.final:
        if s.untagged_commits and post:  # fixes after the final ship as a post release
            return f"release tag --version {post}"
        if s.untagged_commits and s.next_rc:  # ... or as the line's next patch release
            return "release tag"
        if s.unpushed or (s.tags and not s.remote_checked):
            return push
        return "nothing: the release is final"
    if s.tag_due:
        return "release tag"
    if s.unpushed or not s.remote_checked:
        return push
    return "release promote   (when the rc is approved; or release pick for more fixes)"


def read_status(ctx: ReleaseContext, *, offline: bool = False) -> Status:
    repo = ctx.repo
    branch = repo.current_branch()
    release = ctx.config.branch.parse(branch) if branch else None
    head = repo.rev("HEAD")
    notes: list[str] = []
    state = repo.worktree.in_progress()
    if state is not None:
        notes.append(f"git is in the middle of {state[0]}: {state[1]}")
    if repo.history.is_shallow():
        notes.append("shallow clone: history is cut short (git fetch --unshallow --tags)")
    dirty = repo.worktree.dirty_paths()
    if release is None:
        heads = repo.local_branches()
        found = {b: v for b in heads if (v := ctx.config.branch.parse(b)) is not None}
        branches = sorted(found, key=lambda b: found[b])
        s = Status(
            branch,
            None,
            head,
            dirty,
            [],
            None,
            None,
            release_branches=branches,
            notes=notes,
            interrupted=_interrupted(ctx, notes),
        )
        return _with_next(s, ctx)
    try:
        tags = ctx.tags(offline=offline)
    except RefusedError:
        tags = ctx.tags(remote=False)
        notes.append(f"remote {ctx.config.remote} unreachable: remote tags not checked")
    assert branch is not None  # a release branch is a branch
    line = ctx.release_line(branch, release, tags)
    current = line.current
    ours = ctx.release_tags(current, tags)
    final = next((t.name for t in ours if not t.version.is_rc), None)
    try:
        from release.flows.next_version import choose_version

        first = ctx.config.first_rc
        upcoming: str | None = ctx.tag_name(
            choose_version(current, None, tags, first_rc=first, style=line.style)
        )
    except ReleaseError:
        upcoming = None
    try:
        main: str | None = ctx.main_sha()
    except RefusedError as err:
        main = None
        notes.append(err.one_line())
    notes += ctx.notices
    done: list[DonePick] = []
    pending: list[PendingPick] = []
    held: list[PendingPick] = []
    refused: str | None = None
    from_github: list[FromGitHub] = []
    untagged, since, tag_is_due = 0, None, False
    reverts: list[MainRevert] = []
    if main is not None and head is not None:
        from release.flows.main_reverts import KeptReverts

        kept_reverts = KeptReverts(ctx, branch, head, main)  # read while picks are counted
        has_picks = (ctx.root / ctx.config.picks_file).exists()
        kept = None if has_picks else kept_picks(ctx, head, main)
        if kept is not None:  # counted for this tip and main before: nothing read again
            done = kept
        else:
            base, info = _branch_point(ctx, branch, main, head, read_presence=has_picks)
            done = picks_done(ctx, branch, main, head, base, info)
            if info is not None:
                pending, held, refused, from_github = pending_picks(ctx, info, head, notes)
        reverts = kept_reverts.due(done, notes)
    if head is not None:  # what tag reads: so status says tag exactly when tag would tag
        due = tag_due(ctx, line, ours, head)
        untagged, since, tag_is_due = len(due.untagged), due.since, due.due
        notes += [
            f"{t.name} is not in {branch}'s history (the branch was rewritten after it)"
            for t in due.off_branch
        ]
    in_progress = _in_progress(ctx, notes)
    interrupted = _interrupted(ctx, notes)
    unpushed = _unpushed(ctx, line, head, notes) if ctx.remote_checked else []
    s = Status(
        branch,
        str(current),
        head,
        dirty,
        [StatusTag(t.name, t.commit, t.local, t.remote) for t in ours],
        upcoming,
        final,
        done,
        pending,
        in_progress,
        ctx.remote_checked,
        untagged,
        [],
        _images(ctx, [t for t in ours if t.local], notes),
        notes,
        unpushed=unpushed,
        interrupted=interrupted,
        picks_held=held,
        picks_refused=refused,
        tagged_since=since.name if since is not None else None,
        tag_due=tag_is_due,
        pick_prs=read_pick_prs(ctx, branch, head, notes) if head and not offline else [],
        from_github=from_github,
        reverts_pending=reverts,
    )
    from release.flows.next_version import version_to_ask

    return _with_next(s, ctx, version_to_ask(current, tags, line.style))


def _unpushed(
    ctx: ReleaseContext, line: ReleaseLine, head: str | None, notes: list[str]
) -> list[str]:
    """What ``push`` would send, from the remote's refs as just read: the branch when the
    remote lacks commits of it, and the line's tags here that the remote lacks."""
    out = []
    there = ctx.remote_heads.get(line.branch)
    if head is not None and there != head:
        if there is None or ctx.repo.is_ancestor(there, head):
            out.append(line.branch)
        else:
            notes.append(
                f"{ctx.config.remote}/{line.branch} has commits that are not here "
                f"(git fetch {ctx.config.remote}, then merge)"
            )
    return out + [t.name for t in line.tags if t.local and not t.remote]


def _branch_point(
    ctx: ReleaseContext, branch: str, main: str, head: str, *, read_presence: bool
) -> tuple[str, ReleaseBranch | None]:
    """Where ``branch`` left main, and (``read_presence``: for a picks file) what of main
    is already on it; without one, only the merge-base is read (one git process, none of
    the backport evidence loaded)."""
    if read_presence:
        from release.flows.branch import ReleaseBranch

        info = ReleaseBranch(ctx, branch, main, head, remember=True)
        return info.base, info
    base = ctx.repo.merge_base(f"refs/heads/{branch}", main)
    if base is None:  # what ReleaseBranch says
        raise RefusedError(f"{branch} shares no history with {ctx.config.main_branch}")
    return base, None


def _images(ctx: ReleaseContext, tags: list[TagInfo], notes: list[str]) -> ImagesState | None:
    """Per variant of the matrix: built, smoked and snapshotted (or omitted), from the
    newest tag's published manifest, else from the parts written here. A damaged note is
    said, as every command that reads it says it, and none of its rows is shown."""
    matrix = ctx.config.matrix
    if matrix is None or not tags:
        return None
    from release.core.manifest import ManifestError, missing, variant_rules, variant_summary
    from release.flows.manifest_store import published_manifest

    tag = tags[-1]
    rules = variant_rules(matrix)
    try:
        found = published_manifest(ctx.repo, tag.name, tag.commit)
        if found:
            gaps = missing(found.manifest, rules)
            source, entries = "published", found.manifest.variants
        else:
            merged, source = _parts_manifest(ctx, tag, rules)
            gaps, entries = missing(merged, rules), (merged.variants if merged else {})
    except (ConfigError, ManifestError, UsageError) as err:
        notes.append(err.one_line())
        return None
    return ImagesState(
        tag.name,
        source,
        {r.id: variant_summary(entries.get(r.id)) for r in rules},
        gaps,
    )


def _parts_manifest(
    ctx: ReleaseContext, tag: TagInfo, rules: list[VariantRule]
) -> tuple[Manifest | None, str]:
    """What the parts written here make of ``tag``'s manifest before it is published (None:
    no part yet), and where it was read from."""
    from release.core.manifest import merged
    from release.flows.manifest_store import parts_root, read_parts

    root = parts_root(ctx.repo.git_dir)
    parts = read_parts([root], tag.version.pep440()) if root.is_dir() else []
    if not parts:
        return None, "none yet"
    return merged(parts, rules, partial=True), "local parts"


def _in_progress(ctx: ReleaseContext, notes: list[str]) -> PickInProgress | None:
    try:
        journal = read_journal(ctx.repo.git_dir)
    except RefusedError as err:
        notes.append(err.one_line())
        return None
    if journal is None:
        return None
    return PickInProgress(
        journal.status.value, journal.branch, len(journal.queue), journal.conflict
    )


def _interrupted(ctx: ReleaseContext, notes: list[str]) -> tuple[str, str] | None:
    try:
        return interrupted(ctx.repo)
    except RefusedError as err:  # a damaged journal: said, and status goes on
        notes.append(err.one_line())
        return None


def _with_next(s: Status, ctx: ReleaseContext, post: str | None = None) -> Status:
    command = _next_command(s, ctx.config.picks_file, post)
    remote = ctx.config.remote
    # push refuses where there is no remote to push to: that is said instead (its URL is
    # read for the PR links already)
    push = command.startswith("release push") and not s.remote_checked
    if push and ctx.remote_url is None:
        command = f"git remote add {remote} URL   (nothing to push to; then release push)"
    return replace(s, next_command=command)

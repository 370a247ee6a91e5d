"""``tag`` (the next rc, or a post release) and ``promote`` (the final, on the last rc's commit).

Both write the notes into the annotated tag's message and into CHANGELOG.md. ``tag``
commits the changelog before tagging, so the rc's tree carries its own section;
``promote`` tags the last rc's commit unchanged and then commits the changelog, with
that release's rc sections folded into one final section (each change listed once).
A failure at any step resets the branch to where it was.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Callable
from dataclasses import replace

from release.core import changelog as changelog_mod
from release.core.notes import Notes, render_markdown
from release.core.plan import Plan, Step, StepKind, short
from release.core.plan_steps import ChangelogCommit, TagCreation
from release.core.version_files import VersionEdit, file_version, set_version
from release.core.versions import PatchStyle, ReleaseVersion, parse_version
from release.errors import RefusedError, UsageError
from release.flows.context import ReleaseContext, TagInfo
from release.flows.history import notes_for_range
from release.flows.next_version import choose_version, same_version_tag
from release.flows.notes_range import NotesRange, range_for_version
from release.flows.tag_apply import ImagesFor, NewTag, Promotion, TagPlanInfo, run_journaled
from release.flows.tag_due import tag_due

__all__ = ["promote", "tag"]


def release_date() -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = _dt.datetime.fromtimestamp(int(epoch), _dt.UTC) if epoch else _dt.datetime.now(_dt.UTC)
    return moment.date().isoformat()


def _changelog(
    ctx: ReleaseContext, label: str, body: str, replaces: tuple[str, ...] = ()
) -> str | None:
    if not ctx.config.changelog:
        return None
    found = ctx.tree_text(ctx.config.changelog, "changelog")  # CRLF kept; a BOM put back
    if found is not None and not ctx.repo.worktree.is_tracked(ctx.config.changelog):
        raise RefusedError(
            f"{ctx.config.changelog} is not committed (an untracked or ignored draft); "
            "commit it, or move it away, first"
        )
    log = changelog_mod.Changelog.parse(found.text if found else changelog_mod.new_changelog())
    log.upsert(label, release_date(), body, replaces=replaces)
    after = found.restore(log.render()) if found else log.render()
    return None if found is not None and after == found.restore(found.text) else after


def _message(name: str, notes: Notes, repo_url: str, rng: NotesRange) -> str:
    # the range ends at the tag itself: "HEAD" would mean nothing to a later reader
    changes = NotesRange(rng.since, name).describe()
    body = render_markdown(notes, repo_url=repo_url, heading_level=3)
    return f"{name}\n\nChanges {changes}:\n\n{body}"


def _commit_name(request: NewTag) -> str:
    return "the release commit" if request.versions else "the changelog commit"


def _plan(
    command: str,
    request: NewTag,
    *,
    changelog_first: bool,
    notes: Notes,
    info: TagPlanInfo,
) -> Plan[TagPlanInfo]:
    tag_step = Step(
        StepKind.CREATE_TAG,
        f"create {'signed' if request.sign else 'annotated'} tag {request.name} at "
        f"{_commit_name(request) if changelog_first and request.commits else short(request.target)}",
        TagCreation(request.name, request.target, request.sign),
    )
    steps = [tag_step]
    if request.commits:
        edits: list[str] = []
        if request.changelog_text is not None:
            edits.append(f"update {info.changelog} with [{request.changelog_label}]")
        edits += [f"set {path} to {file_version(request.version)}" for path, _ in request.versions]
        log_step = Step(
            StepKind.COMMIT_CHANGELOG,
            f"{edits[0]} and commit it" if len(edits) == 1 else f"{', '.join(edits)}; commit them",
            ChangelogCommit(
                info.changelog if request.changelog_text is not None else None,
                request.changelog_label,
                tuple(path for path, _ in request.versions),
            ),
        )
        steps = [log_step, tag_step] if changelog_first else [tag_step, log_step]
    if request.images is not None:
        steps += request.images.steps
    return Plan(
        command,
        f"{command} {request.name} ({len(notes.entries)} changes in its notes)",
        tuple(steps),
        replace(info, version=str(request.version), tag=request.name, message=request.message),
    )


def _unpromoted(ctx: ReleaseContext, final: TagInfo, ours: list[TagInfo]) -> str:
    """What a made final still lacks: its images, where none are recorded for it and an rc
    on its commit has them (a promote stopped by an older release, or one whose image side
    was refused)."""
    from release.adapters.git_notes import read_note

    if ctx.config.matrix is None or not final.local:
        return ""
    rcs = [t for t in ours if t.version.is_rc and t.commit == final.commit and t.local]
    if read_note(ctx.repo, final.name, final.commit) or not any(
        read_note(ctx.repo, t.name, t.commit) for t in rcs
    ):
        return ""
    return (
        f"; its images are not recorded as promoted: in a checkout of {final.name}, run "
        f"release images.promote --tag {final.name}"
    )


def _version_edits(ctx: ReleaseContext, version: ReleaseVersion) -> list[tuple[VersionEdit, str]]:
    """The configured version files set to ``version`` (each with the file's new text),
    those that say it already left out; a file that is missing or not committed is refused
    (what the tag is made on must be a commit's)."""
    out = []
    for rel in ctx.config.version_files:
        if (ctx.root / rel).is_symlink():
            raise RefusedError(
                f"version file {rel} is a symlink; name the file itself in version-files "
                "(nothing changed)"
            )
        found = ctx.tree_text(rel, "version file")
        if found is None or not ctx.repo.worktree.is_tracked(rel):
            raise RefusedError(
                f"version file {rel} (version-files in [tool.release]) is not committed here; "
                "commit it, or take it out of version-files (nothing changed)"
            )
        edit = set_version(rel, found.text, version)
        if edit is not None:
            out.append((edit, found.restore(edit.after)))
    return out


def _require_remote(ctx: ReleaseContext, offline: bool) -> None:
    """The next version must account for the remote's tags: a remote that is configured but
    missing is an error, as it is for push."""
    remote = ctx.config.remote
    if not offline and not ctx.repo.remotes.has(remote):
        raise RefusedError(
            f"no remote named {remote!r} to read tags from; add it (git remote add {remote} URL), "
            "set remote in [tool.release], or pass --offline to use local tags only"
        )


def tag(
    ctx: ReleaseContext,
    version: str | None = None,
    *,
    sign: bool = False,
    offline: bool = False,
    dry_run: bool = False,
    say: Callable[[str], None] = print,
) -> Plan[TagPlanInfo]:
    requested = (
        parse_version(version, first_rc=ctx.config.first_rc) if version is not None else None
    )

    def build() -> tuple[Plan[TagPlanInfo], NewTag | None]:
        ctx.require_settled()
        branch, named = ctx.current_release()
        ctx.require_full_history("tag")
        ctx.require_clean()
        _require_remote(ctx, offline)
        if ctx.config.github.protected and not offline:  # picks by PR: none may be open
            from release.flows.pick_status import refuse_open_pick_prs

            refuse_open_pick_prs(ctx, branch)
        tags = ctx.tags(offline=offline)
        ctx.require_same_reading(branch)
        line = ctx.release_line(branch, named, tags)
        made = same_version_tag(ctx.tag_name(requested), requested, tags) if requested else None
        if made is not None:
            raise RefusedError(f"{requested} is tagged already, as {made.name}; not tagged again")
        chosen = choose_version(
            line.current, requested, tags, first_rc=ctx.config.first_rc, style=line.style
        )
        name = ctx.tag_name(chosen)
        if any(t.name == name for t in tags):
            raise RefusedError(f"tag {name} already exists")
        other = same_version_tag(name, chosen, tags)
        if other is not None:
            raise RefusedError(f"{chosen} is tagged already, as {other.name}; not tagged again")
        head = ctx.repo.head()
        due = tag_due(ctx, line, ctx.release_tags(line.current, tags), head)
        if not due.due and due.since is not None:
            summary = f"nothing to tag: {branch} has nothing new since {due.since.name}"
            return Plan("tag", summary, (), TagPlanInfo(branch=branch)), None
        edits = _version_edits(ctx, chosen)
        rng = range_for_version(ctx, chosen, tags, "HEAD")
        notes = notes_for_range(ctx, rng)
        label = chosen.spelled(ctx.config.version_scheme)
        body = render_markdown(notes, repo_url=ctx.repo_url, heading_level=3)
        request = NewTag(
            chosen,
            name,
            head,
            _message(name, notes, ctx.repo_url, rng),
            label,
            _changelog(ctx, label, body),
            sign,
            versions=tuple((e.path, text) for e, text in edits),
        )
        info = TagPlanInfo(
            branch=branch,
            since=rng.since,
            changelog=ctx.config.changelog,
            remote_checked=ctx.remote_checked,
            version_diff=tuple(row for e, _ in edits for row in e.diff()),
        )
        return _plan("tag", request, changelog_first=True, notes=notes, info=info), request

    return run_journaled(ctx, "tag", build, dry_run=dry_run, say=say)


def promote(
    ctx: ReleaseContext,
    version: str | None = None,
    *,
    sign: bool = False,
    offline: bool = False,
    dry_run: bool = False,
    say: Callable[[str], None] = print,
    images: ImagesFor | None = None,
) -> Plan[TagPlanInfo]:
    """The final on the last rc's commit, its changelog, and (``images``) the rc's images
    given the final's tags: one transaction, whose image side is checked before anything
    changes (:mod:`release.flows.tag_apply`)."""
    requested = (
        parse_version(version, first_rc=ctx.config.first_rc) if version is not None else None
    )

    def build() -> tuple[Plan[TagPlanInfo], NewTag]:
        ctx.require_settled()
        branch, named = ctx.current_release()
        if requested is not None and (
            not requested.is_final
            or (requested.major, requested.minor) != (named.major, named.minor)
        ):
            raise UsageError(f"promote makes the final {named} on {branch}; {requested} is not it")
        ctx.require_full_history("promote")
        ctx.require_clean()
        _require_remote(ctx, offline)
        tags = ctx.tags(offline=offline)
        ctx.require_same_reading(branch)
        line = ctx.release_line(branch, named, tags)
        base = line.current
        if requested is not None and requested.base != base.base:
            raise UsageError(f"promote makes the final {base} on {branch}; {requested} is not it")
        final = base.base
        name = ctx.tag_name(final)
        ours = ctx.release_tags(base, tags)
        made = next((t for t in ours if not t.version.is_rc), None)
        if made is not None:
            after = {
                PatchStyle.PATCH: "; the next on this line is a patch release (release tag)",
                PatchStyle.FOUR_PART: "; the next is a four-part release (release tag)",
            }.get(line.style, "")
            raise RefusedError(
                f"{final} is already released ({name} exists){after}{_unpromoted(ctx, made, ours)}"
            )
        rcs = [t for t in ours if t.version.is_rc]
        if not rcs:
            raise RefusedError(f"no rc of {final} to promote; tag one first (release tag)")
        last = rcs[-1]
        if not last.local or ctx.repo.rev(last.commit) is None:
            raise RefusedError(f"{last.name} exists only on the remote; git fetch --tags first")
        if not ctx.repo.is_ancestor(last.commit, "HEAD"):
            raise RefusedError(
                f"{last.name} is not on {branch}; the final goes on the last rc's commit"
            )
        unreleased = ctx.untagged_commits(last.commit)
        if unreleased:
            raise RefusedError(
                f"{len(unreleased)} commit(s) on {branch} after {last.name} are in no rc "
                f"(e.g. {short(unreleased[0])}); tag the next rc first"
            )
        rng = range_for_version(ctx, final, tags, last.name, view="final")
        notes = notes_for_range(ctx, rng)
        label = final.spelled(ctx.config.version_scheme)
        rc_labels = tuple(t.version.spelled(ctx.config.version_scheme) for t in rcs)
        body = render_markdown(notes, repo_url=ctx.repo_url, heading_level=3)
        promotion = Promotion(name, str(final), last.name, last.commit)
        request = NewTag(
            final,
            name,
            last.commit,
            _message(name, notes, ctx.repo_url, rng),
            label,
            _changelog(ctx, label, body, replaces=rc_labels),
            sign,
            promotion,
            images(promotion) if images is not None else None,  # refuses before any change
        )
        info = TagPlanInfo(
            branch=branch, from_rc=last.name, since=rng.since, changelog=ctx.config.changelog
        )
        return _plan("promote", request, changelog_first=False, notes=notes, info=info), request

    return run_journaled(ctx, "promote", build, dry_run=dry_run, say=say, images=images)

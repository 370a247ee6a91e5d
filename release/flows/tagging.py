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
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from release.adapters.lock import repo_lock
from release.core import changelog as changelog_mod
from release.core.commits import CHANGELOG_TRAILER
from release.core.notes import Notes, render_markdown
from release.core.plan import Plan, Step, short
from release.core.versions import ReleaseVersion, next_rc, parse_version
from release.errors import RefusedError, ReleaseError, UsageError
from release.flows.context import ReleaseContext, TagInfo
from release.flows.history import NotesRange, notes_for_range, range_for_version

__all__ = ["TagRequest", "choose_version", "promote", "tag"]


@dataclass(frozen=True)
class TagRequest:
    version: ReleaseVersion
    name: str
    target: str
    message: str
    changelog_label: str | None
    changelog_text: str | None  # the new CHANGELOG.md, or None when unchanged/disabled
    sign: bool


def release_date() -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = _dt.datetime.fromtimestamp(int(epoch), _dt.UTC) if epoch else _dt.datetime.now(_dt.UTC)
    return moment.date().isoformat()


def choose_version(
    base: ReleaseVersion, requested: ReleaseVersion | None, tags: list[TagInfo]
) -> ReleaseVersion:
    """The rc or post version to tag now. Pure; refuses with what would be valid."""
    ours = [t.version for t in tags if t.version.base == base.base]
    if requested is None:
        return next_rc(base, ours)
    if requested.base != base.base:
        raise UsageError(f"{requested} is not a version of the {base} release branch")
    if requested.is_final:
        raise UsageError(f"{requested} is a final release; finals are made with promote")
    if requested.is_post and not any(v.is_final for v in ours):
        raise RefusedError(f"{requested} needs the final {base} first (run promote)")
    latest = max(ours, default=None)
    if latest is not None and requested <= latest:
        valid = next_rc(base, ours) if not any(not v.is_rc for v in ours) else None
        hint = (
            f"; next valid: {valid}"
            if valid
            else f"; next valid: {base}.post{(latest.post or 0) + 1}"
        )
        raise RefusedError(
            f"{requested} is not greater than the latest tag of this release, {latest}{hint}"
        )
    return requested


def _changelog(
    ctx: ReleaseContext, label: str, body: str, replaces: tuple[str, ...] = ()
) -> str | None:
    if not ctx.config.changelog:
        return None
    path = ctx.root / ctx.config.changelog
    before = path.read_bytes().decode("utf-8") if path.exists() else None  # CRLF kept
    log = changelog_mod.Changelog.parse(
        before if before is not None else changelog_mod.new_changelog()
    )
    log.upsert(label, release_date(), body, replaces=replaces)
    after = log.render()
    return None if after == before else after


def _message(name: str, notes: Notes, repo_url: str, rng: NotesRange) -> str:
    # the range ends at the tag itself: "HEAD" would mean nothing to a later reader
    changes = NotesRange(rng.since, name).describe()
    body = render_markdown(notes, repo_url=repo_url, heading_level=3)
    return f"{name}\n\nChanges {changes}:\n\n{body}"


def _plan(
    command: str,
    request: TagRequest,
    *,
    changelog_first: bool,
    notes: Notes,
    extra: Mapping[str, object],
) -> Plan:
    tag_step = Step(
        "create-tag",
        f"create {'signed' if request.sign else 'annotated'} tag {request.name} at "
        f"{'the changelog commit' if changelog_first and request.changelog_text else short(request.target)}",
        {"tag": request.name, "target": request.target, "sign": request.sign},
    )
    steps = [tag_step]
    if request.changelog_text is not None:
        log_step = Step(
            "commit-changelog",
            f"update {extra['changelog']} with [{request.changelog_label}] and commit it",
            {"path": extra["changelog"], "label": request.changelog_label},
        )
        steps = [log_step, tag_step] if changelog_first else [tag_step, log_step]
    return Plan(
        command,
        f"{command} {request.name} ({len(notes.entries)} changes in its notes)",
        tuple(steps),
        {"version": str(request.version), "tag": request.name, "message": request.message, **extra},
    )


def _execute(
    ctx: ReleaseContext, plan: Plan, request: TagRequest, say: Callable[[str], None]
) -> None:
    repo = ctx.repo
    orig = repo.head()
    target = request.target
    tagged = False
    try:
        for step in plan.steps:
            if step.action == "commit-changelog":
                path = ctx.root / ctx.config.changelog
                assert request.changelog_text is not None
                path.write_text(request.changelog_text, encoding="utf-8")
                repo.add(ctx.config.changelog)
                repo.commit(
                    f"Update {ctx.config.changelog} for {request.name}\n\n"
                    f"{CHANGELOG_TRAILER}: {request.name}\n",
                    cleanup="strip",
                )
                if not tagged:  # tag: the rc goes on the changelog commit
                    target = repo.head()
            elif step.action == "create-tag":
                tagged = True
                repo.create_tag(request.name, target, request.message, sign=request.sign)
    except ReleaseError:
        if repo.rev(f"refs/tags/{request.name}"):  # it did not exist before: refused otherwise
            repo.delete_tag(request.name)
        repo.reset_hard(orig)
        say(f"nothing changed: the branch is back at {short(orig)}")
        raise
    if repo.rev(f"refs/tags/{request.name}") != target:
        raise RefusedError(f"tag {request.name} does not point at {short(target)} as planned")


def _plan_and_run(
    ctx: ReleaseContext,
    command: str,
    build: Callable[[], tuple[Plan, TagRequest]],
    *,
    dry_run: bool,
    say: Callable[[str], None],
) -> Plan:
    """Plan outside the lock for --dry-run; plan again under the lock, then act."""
    if dry_run:
        return build()[0]
    with repo_lock(ctx.repo.git_dir, command, notify=say):
        plan, request = build()
        _execute(ctx, plan, request, say)
    return plan


def tag(
    ctx: ReleaseContext,
    version: str | None = None,
    *,
    sign: bool = False,
    offline: bool = False,
    dry_run: bool = False,
    say: Callable[[str], None] = print,
) -> Plan:
    requested = parse_version(version) if version else None

    def build() -> tuple[Plan, TagRequest]:
        branch, base = ctx.current_release()
        ctx.require_clean()
        tags = ctx.tags(offline=offline)
        chosen = choose_version(base, requested, tags)
        name = ctx.tag_name(chosen)
        if any(t.name == name for t in tags):
            raise RefusedError(f"tag {name} already exists")
        head = ctx.repo.head()
        rng = range_for_version(ctx, chosen, tags, "HEAD")
        notes = notes_for_range(ctx, rng)
        label = chosen.spelled(ctx.config.version_scheme)
        body = render_markdown(notes, repo_url=ctx.repo_url, heading_level=3)
        request = TagRequest(
            chosen,
            name,
            head,
            _message(name, notes, ctx.repo_url, rng),
            label,
            _changelog(ctx, label, body),
            sign,
        )
        extra = {
            "branch": branch,
            "since": rng.since,
            "changelog": ctx.config.changelog,
            "remote_checked": ctx.remote_checked,
        }
        return _plan("tag", request, changelog_first=True, notes=notes, extra=extra), request

    return _plan_and_run(ctx, "tag", build, dry_run=dry_run, say=say)


def promote(
    ctx: ReleaseContext,
    version: str | None = None,
    *,
    sign: bool = False,
    offline: bool = False,
    dry_run: bool = False,
    say: Callable[[str], None] = print,
) -> Plan:
    requested = parse_version(version) if version else None

    def build() -> tuple[Plan, TagRequest]:
        branch, base = ctx.current_release()
        if requested is not None and (requested.base != base.base or not requested.is_final):
            raise UsageError(f"promote makes the final {base} on {branch}; {requested} is not it")
        ctx.require_clean()
        tags = ctx.tags(offline=offline)
        final = base.base
        name = ctx.tag_name(final)
        ours = ctx.release_tags(base, tags)
        if any(not t.version.is_rc for t in ours):
            raise RefusedError(f"{final} is already released ({name} exists)")
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
        after = ctx.repo.log(
            f"{last.commit}..HEAD", fmt="%H%x1f%(trailers:key=" + CHANGELOG_TRAILER + ",valueonly)"
        )
        unreleased = [
            line.split("\x1f")[0]
            for line in after.splitlines()
            if line and not line.split("\x1f", 1)[1].strip()
        ]
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
        request = TagRequest(
            final,
            name,
            last.commit,
            _message(name, notes, ctx.repo_url, rng),
            label,
            _changelog(ctx, label, body, replaces=rc_labels),
            sign,
        )
        extra = {
            "branch": branch,
            "from_rc": last.name,
            "since": rng.since,
            "changelog": ctx.config.changelog,
        }
        return _plan("promote", request, changelog_first=False, notes=notes, extra=extra), request

    return _plan_and_run(ctx, "promote", build, dry_run=dry_run, say=say)

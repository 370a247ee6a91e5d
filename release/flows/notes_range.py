"""Which range a version's notes cover: since the previous rc of its release, else the
previous final (and what ``--since`` omitted means for a commit, a tag or a branch).
Choosing a range reads tags and refs only, so ``release notes`` knows its range (and
whether its output is kept already) before any commit is read or parsed."""

from __future__ import annotations

from dataclasses import dataclass

from release.core.versions import ReleaseVersion
from release.errors import UsageError
from release.flows.context import ReleaseContext, TagInfo

__all__ = ["NotesRange", "default_range", "given_range", "range_for_version"]


@dataclass(frozen=True)
class NotesRange:
    since: str | None  # a ref; None = all history
    until: str
    exclude_from: str | None = None  # picks already shipped from this ref's branch are not new

    def describe(self) -> str:
        return f"{self.since or '(start)'}..{self.until}"


def _tag_at(tags: list[TagInfo], sha: str) -> TagInfo | None:
    at = [t for t in tags if t.commit == sha and t.local]
    return max(at, key=lambda t: t.version) if at else None


def range_for_version(
    ctx: ReleaseContext, version: ReleaseVersion, tags: list[TagInfo], until: str, view: str = "rc"
) -> NotesRange:
    """Range of a version's notes: since the previous rc of its release, else the previous final."""
    previous_final = ctx.previous_final(version, tags)
    fallback = NotesRange(
        previous_final.name if previous_final else None,
        until,
        exclude_from=previous_final.name if previous_final else None,
    )
    if view == "final" or not version.is_rc:
        if version.is_post:
            earlier = [
                t
                for t in tags
                if t.version.base == version.base and t.version < version and not t.version.is_rc
            ]
            if earlier:
                return NotesRange(earlier[-1].name, until)
        return fallback
    earlier_rcs = [
        t for t in tags if t.version.base == version.base and t.version < version and t.local
    ]
    if earlier_rcs:
        return NotesRange(earlier_rcs[-1].name, until)
    return fallback


def given_range(ctx: ReleaseContext, since: str, until: str) -> NotesRange:
    """``--since`` given: that range. When it names a final's (or a post release's) tag,
    what that release shipped as picks from its own branch is not new, as when
    ``--since`` is omitted and the range starts at the previous final."""
    name = since.removeprefix("refs/tags/")
    version = ctx.config.tag.parse_any(name)  # the name first: no git read for a sha
    final = version is not None and not version.is_rc
    shipped = name if final and ctx.repo.rev(f"refs/tags/{name}") is not None else None
    return NotesRange(since, until, exclude_from=shipped)


def default_range(ctx: ReleaseContext, until: str, view: str = "rc") -> NotesRange:
    """``--since`` omitted: the previous rc or final before ``until``."""
    sha = ctx.repo.rev(until)
    if sha is None:
        raise UsageError(f"--until {until!r} is not a commit here")
    tags = ctx.tags(remote=False)
    # --until v0.1.0rc2 means that rc even when the final shares its commit
    named = next((t for t in tags if t.local and until in (t.name, f"refs/tags/{t.name}")), None)
    tagged = named or _tag_at(tags, sha)
    if tagged is not None:
        return range_for_version(ctx, tagged.version, tags, until, view)
    branch = ctx.repo.current_branch()
    release = ctx.config.branch.parse(branch) if branch and until == "HEAD" else None
    if release is None:
        merged = ctx.repo.tags_merged_into(sha)
        reachable = [t for t in tags if t.local and t.name in merged]
        if not reachable:
            return NotesRange(None, until)
        return NotesRange(reachable[-1].name, until)
    assert branch is not None  # a release was read from its name
    # the release under way on the branch: its newest tag's (a line's patch release)
    line = ctx.release_line(branch, release, [t for t in tags if t.local])
    ours = [t for t in line.tags if t.version.base == line.current]
    if view == "rc" and ours:
        return NotesRange(ours[-1].name, until)
    finals = [t for t in ours if not t.version.is_rc]
    if finals:  # the release is out: what follows is a post or patch release, since its final
        return NotesRange(finals[-1].name, until)
    previous = ctx.previous_final(line.current, tags)
    return NotesRange(
        previous.name if previous else None, until, previous.name if previous else None
    )

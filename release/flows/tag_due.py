"""Whether ``tag`` has anything to tag on a release branch, and since which tag: read once,
the same way, for ``tag`` itself and for ``status`` (its "untagged" count and its next
command), so the two cannot disagree.

A commit is untagged when no tag of the release under way, nor of the branch's line, has
it in its history (one ``git log`` leaves them all out, however many). So a branch
rewritten past an rc (the rc's commit no longer in the branch's history) has untagged
commits from the rewrite on, and an rc tagged after the final (a tag that is newer by
position, not by version) leaves none. Reads only.
"""

from __future__ import annotations

from dataclasses import dataclass

from release.flows.context import ReleaseContext, ReleaseLine, TagInfo

__all__ = ["TagDue", "tag_due"]


@dataclass(frozen=True)
class TagDue:
    """What the branch holds that no tag has: ``since``, the tag they come after (None:
    no tag of the release is here, so the first one is due); ``off_branch``, the
    release's tags here whose commit the branch no longer has (it was rewritten)."""

    since: TagInfo | None
    untagged: tuple[str, ...]
    off_branch: tuple[TagInfo, ...] = ()

    @property
    def due(self) -> bool:
        """``tag`` would make a tag now: none is here, commits are in none, or the newest
        tag of the release is off the branch (a final goes on the last rc's commit, so
        the branch as it is needs an rc of its own)."""
        return self.since is None or bool(self.untagged) or self.newest_off_branch

    @property
    def newest_off_branch(self) -> bool:
        return bool(self.off_branch) and self.off_branch[-1] == self.since


def tag_due(ctx: ReleaseContext, line: ReleaseLine, ours: list[TagInfo], head: str) -> TagDue:
    """:class:`TagDue` of the branch at ``head`` (checked out), from the line's tags in its
    history and ``ours``, every tag of the release under way."""
    on_branch = [t for t in line.tags if t.local]
    there = {t.name for t in line.tags}
    off = tuple(t for t in ours if t.local and t.name not in there)
    marks = list(dict.fromkeys(t.commit for t in (*on_branch, *off)))
    if not marks:
        return TagDue(None, ())
    at_head = [t for t in on_branch if t.commit == head]
    # a tag at the tip has every commit of the branch: nothing to ask git
    untagged = () if at_head else tuple(ctx.untagged_commits(marks[0], besides=marks[1:]))
    newest = max((*on_branch, *off), key=lambda t: t.version)
    since = newest if newest in off else (at_head or on_branch)[-1]
    return TagDue(since, untagged, off)

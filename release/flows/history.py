"""Notes for a range of history (chosen by :mod:`release.flows.notes_range`): read its
commits, build notes.

The range is read with one streamed ``git log`` (its records are parsed while git is
still writing the rest), or through the commit cache (:mod:`release.adapters.git_range`).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import replace

from release.adapters.git_range import RangeCommits
from release.adapters.git_reads import cherry_marked
from release.core.commits import Commit, Person, is_revert, parse_person
from release.core.notes import Notes, build_notes, cancel_reverts
from release.core.people import People
from release.errors import GitError, UsageError
from release.flows.context import ReleaseContext
from release.flows.notes_range import NotesRange

__all__ = ["notes_for_range"]


def _branch_shipped(
    ctx: ReleaseContext, ref: str, base: str | None
) -> tuple[set[str], set[str], set[int]]:
    """What ``ref``'s release shipped from its own branch: the main commits it picked (by
    ``-x`` line), those it picked and then reverted (they never shipped there: new here),
    and the PR numbers its standing commits carry (an adapted copy has no ``-x`` line and
    another patch, but its ``(#N)``, or a chain ``(#N) (#M)``, says which change it is).
    ``base``: the merge-base of ``ref`` and the range's end (None: none)."""
    from release.core.backports import Message  # only a range after a final needs it

    if base is None:
        return set(), set(), set()
    history, repo = ctx.repo.history, ctx.repo_identity
    commits = history.log_commits(since=base, until=ref, aliases={}, repo=repo)[::-1]
    shipped, cancelled = cancel_reverts(commits)
    gone = set(cancelled)
    reverted = {c.identity for c in commits if c.sha in gone and c.picked_from}
    prs = {
        n
        for c in shipped
        if not is_revert(c.subject, c.body)
        for n in (c.pr, *Message.of(c, repo).refs)
        if n is not None
    }
    return {c.identity for c in shipped if c.picked_from}, reverted, prs


def _shipped(ctx: ReleaseContext, rng: NotesRange) -> tuple[set[str], set[int]]:
    """What the previous final already shipped: its picks by ``-x`` line, and the range's
    commits whose patch its branch carries (backports made without ``-x``), less what it
    picked and reverted; and the PR numbers of its branch's commits."""
    assert rng.exclude_from is not None
    base = ctx.repo.merge_base(rng.exclude_from, rng.until)
    if base is not None and base == ctx.repo.rev(rng.exclude_from):
        # The final is in the range's history: its branch has no commit the range lacks,
        # so nothing it shipped (by -x line, PR number or patch) is left out, and neither
        # its log nor the range's patch ids (git cherry: the cost of a long range) are read.
        return set(), set()
    return _shipped_from_branch(ctx, rng, base)


def _shipped_from_branch(
    ctx: ReleaseContext, rng: NotesRange, base: str | None
) -> tuple[set[str], set[int]]:
    """:func:`_shipped` read from the final's branch (``base``: its merge-base with the
    range's end)."""
    assert rng.exclude_from is not None
    shipped, reverted, prs = _branch_shipped(ctx, rng.exclude_from, base)
    if rng.since is not None:
        same_patch = cherry_marked(
            ctx.repo.history.start_cherry(rng.exclude_from, rng.until, rng.since).out()
        )
        shipped |= same_patch - reverted
    return shipped, prs


@contextlib.contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Parsing a long log makes tens of thousands of objects and no reference cycles; the
    cycle collector would only walk every object of the process again and again. They are
    frozen before it is turned on again: else its next collection, of the youngest
    generation, where they all still are, walks every one. (Frozen objects are still freed
    when no longer used.)"""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()
            gc.enable()


def _check_refs(ctx: ReleaseContext, refs: list[str]) -> None:
    for ref in refs:
        if ctx.repo.rev(ref) is None:
            raise UsageError(f"{ref!r} is not a commit or tag here")


def notes_for_range(
    ctx: ReleaseContext,
    rng: NotesRange,
    *,
    cached: bool = False,
    mailmap: str | None = None,
    since_commit: str | None = None,
) -> Notes:
    """Notes of ``rng``. ``cached``: read the range through the commit cache (what
    ``release notes`` does; see :mod:`release.adapters.git_range`): the notes are the
    same either way. ``mailmap``: the mailmap's fingerprint, and ``since_commit``: the
    commit the range starts after, when read already."""
    ctx.require_full_history("notes")
    refs = [ref for ref in (rng.since, rng.until) if ref is not None]
    if any(not ref or ref.startswith("-") for ref in refs):
        _check_refs(ctx, refs)
    # The log fails unless both ends name commits, which is what checking them first
    # would ask, so they are checked only when it fails.
    aliases = ctx.config.alias_map()
    since = rng.since or None
    with (
        _no_cycle_collection(),
        contextlib.closing(
            RangeCommits(
                ctx.repo,
                aliases,
                identity=ctx.repo_identity,
                since=since,
                until=rng.until,
                cached=cached,
                mailmap=mailmap,
                since_commit=since_commit,
            )
        ) as reading,
    ):
        exclude, shipped_prs = _shipped(ctx, rng) if rng.exclude_from else (set(), set())
        try:
            commits = reading.commits()
        except GitError:
            _check_refs(ctx, refs)
            raise
        return build_notes(
            commits,
            category_order=list(ctx.config.categories),
            since=rng.since,
            until=rng.until,
            exclude_identities=exclude,
            exclude_prs=shipped_prs,
            people=_people(
                ctx, commits, reading.people_before() if since else None, reading.mailmap
            ),
            aliases=aliases,
        )


def _people(
    ctx: ReleaseContext, commits: list[Commit], before: list[Person] | None, mailmap: bool | None
) -> People:
    """How the range's people are credited: the config's bots and name merging, co-authors
    through .mailmap (``mailmap``: whether there is one, when already known), and (with a
    start) who had changes before it (``before``: each person once)."""
    people = People(ctx.config.bots, ctx.config.merge_by_name)
    earlier = before or []
    if ctx.repo.history.has_mailmap() if mailmap is None else mailmap:
        contacts = [f"{p.name} <{p.email}>" for c in commits for p in c.co_authors]
        contacts += [f"{p.name} <{p.email}>" for p in earlier]
        mapped = {k: parse_person(v) for k, v in ctx.repo.history.check_mailmap(contacts).items()}
        people = replace(people, mailmap=mapped)
    if before is not None:
        known = {k for p in earlier if (m := people.canonical(p)) for k in people.keys(m)}
        people = replace(people, known=frozenset(known))
    return people

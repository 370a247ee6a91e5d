"""Reverts on main of what the release branch carries: what a release watches main for
after the cut ("we monitor the main branch for any reverts and apply these reverts to a
release branch", vLLM's release process).

A revert on main that the branch does not have (main's commits since the branch point,
read as ``main`` without the branch's history: the same commits, and fewer where the branch
merged main since) is *due* on the branch when

- it stands: no later revert on main undid it. A revert of a revert cancels it (the net
  effect is what main has): ``Revert "X"`` then ``Reapply "X"`` leaves nothing to pick,
  and a third revert of X is due again;
- it is not on the branch yet: no pick of it, by the branch's pick evidence (its ``-x``
  line, its PR, its patch: :mod:`release.flows.branch_picks`);
- what it reverts is carried by the branch: a commit in the branch's history (on main
  before the cut), or a main commit the branch picked (the same evidence).

What a revert reverts is read as the notes read it: among main's reverts by
:func:`release.core.notes.revert_targets` (a revert of a revert), else the commit git's
``This reverts commit <sha>.`` names, else the PR its quoted title or GitHub's ``Reverts
org/repo#N`` names (found on main since the cut, else before it). A revert that names
neither is not listed: nothing says what it undid. Reads only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from release.adapters.git_log import parse_log, parse_subjects
from release.adapters.git_process import GitRead
from release.core.commits import Commit
from release.core.notes import revert_targets
from release.errors import ReleaseError
from release.flows.branch_picks import BranchPick
from release.flows.context import ReleaseContext
from release.flows.landed import commits_by_pr

__all__ = ["KeptReverts", "MainRevert", "due_reverts", "reverts_to_pick", "standing_reverts"]

BEFORE_CUT = "before the cut"


def short(sha: str) -> str:
    """A commit as plans show it (:func:`release.core.plan.short`, whose module loads json,
    which a text status never needs)."""
    return sha[:10]


@dataclass(frozen=True)
class MainRevert:
    """A revert on main the branch should take: what it reverts, and how the branch
    carries that (``before the cut``, or ``picked as <branch commit>``)."""

    sha: str
    subject: str
    reverts: str  # the reverted commit, as its revert names it (a full sha where known)
    reverts_subject: str
    carried: str

    @property
    def command(self) -> str:
        return f"release pick {short(self.sha)}"

    def row(self) -> tuple[str, str, str, str, str]:
        """The five fields, as the picks cache keeps them."""
        return (self.sha, self.subject, self.reverts, self.reverts_subject, self.carried)


def standing_reverts(reverts: Sequence[Commit], undid: Mapping[str, str]) -> list[Commit]:
    """Of ``reverts`` (newest first, as git lists them), those no later standing revert
    undid, oldest first. ``undid``: revert -> the one of ``reverts`` it reverts. Pure."""
    gone: set[str] = set()
    standing: list[Commit] = []
    for commit in reverts:  # newest first: a revert's fate is known before its target's
        if commit.sha in gone:
            continue
        standing.append(commit)
        if commit.sha in undid:
            gone.add(undid[commit.sha])
    return standing[::-1]


def _copy_of(picked: Mapping[str, str], sha: str) -> str | None:
    """The branch commit that carries main commit ``sha`` (a full or abbreviated sha)."""
    if sha in picked:
        return picked[sha]
    return next((b for m, b in picked.items() if m.startswith(sha) or sha.startswith(m)), None)


def due_reverts(
    ctx: ReleaseContext,
    branch: str,
    main: str,
    picks: Iterable[BranchPick],
    reading: Reads | None = None,
) -> list[MainRevert]:
    """The reverts on main due on ``branch`` (module docstring), in main's order, one per
    commit they revert (a second revert of it is picked empty). ``picks``: the branch's
    picks, as status counts them; ``reading``: :func:`start_reads`, when the caller started
    them already."""
    ref = f"refs/heads/{branch}"
    mains, own = reading or start_reads(ctx, branch, main)
    found = _reverts(ctx, mains)
    if not found:
        return []
    picked = {p.picked_from: p.sha for p in picks}
    taken = _Taken(_reverts(ctx, own), picked)
    by_sha = {c.sha: c for c in found}
    undid = revert_targets(list(reversed(found)))
    due: dict[str, MainRevert] = {}
    named: dict[str, list[str]] = {}  # revert -> the shas it names, none of them picked
    by_pr: dict[str, int] = {}  # revert -> the PR it names, where it names no sha
    for c in standing_reverts(found, undid):
        if _copy_of(picked, c.sha) or taken.covers(c, undid.get(c.sha)):
            continue  # on the branch already: picked, or the branch reverted it itself
        quoted = c.reverts_subject or ""
        target = undid.get(c.sha)
        if target is not None:  # a revert of a revert since the cut
            copy = _copy_of(picked, target)
            if copy:
                due[c.sha] = MainRevert(
                    c.sha, c.subject, target, by_sha[target].subject, f"picked as {short(copy)}"
                )
            continue
        shas = _named(c)
        for sha in shas:
            copy = _copy_of(picked, sha)
            if copy:
                due[c.sha] = MainRevert(c.sha, c.subject, sha, quoted, f"picked as {short(copy)}")
                break
        else:
            if shas:
                named[c.sha] = list(shas)
            elif c.reverts_pr is not None:
                by_pr[c.sha] = c.reverts_pr
    due.update(_before_cut(ctx, ref, {s: by_sha[s] for s in named}, named))
    if by_pr:
        due.update(_by_pr(ctx, ref, main, {s: by_sha[s] for s in by_pr}, by_pr, picked))
    listed: dict[str, MainRevert] = {}
    for c in reversed(found):
        if c.sha in due:
            listed.setdefault(due[c.sha].reverts, due[c.sha])
    return list(listed.values())


Reads = tuple[GitRead, GitRead]


def start_reads(ctx: ReleaseContext, branch: str, main: str) -> Reads:
    """Main's reverts since the cut and the branch's own, started side by side."""
    ref, history = f"refs/heads/{branch}", ctx.repo.history
    return history.start_reverts(since=ref, until=main), history.start_reverts(
        since=main, until=ref
    )


def _reverts(ctx: ReleaseContext, reading: GitRead) -> list[Commit]:
    """The reverts of a read of :meth:`~release.adapters.git_reads.History.start_reverts`
    (git's grep also lets through commits that only mention a revert), newest first."""
    commits = parse_log(reading.out(), {}, repo=ctx.repo_identity)
    return [c for c in commits if c.reverts_subject is not None or c.reverts_sha]


class _Taken:
    """What the branch reverted itself since the cut (a port of main's revert without
    ``-x``, or its own revert of a pick): a main revert of the same commit is not due."""

    def __init__(self, reverts: Sequence[Commit], picked: Mapping[str, str]) -> None:
        self.shas = {sha for c in reverts for sha in _named(c)}
        self.prs = {c.reverts_pr for c in reverts if c.reverts_pr is not None}
        self.picked = picked

    def covers(self, revert: Commit, target: str | None) -> bool:
        """Whether the branch reverted what ``revert`` reverts (``target``: the revert on
        main it reverts, if it is one)."""
        if revert.reverts_pr is not None and revert.reverts_pr in self.prs:
            return True
        for sha in (target,) if target else _named(revert):
            copy = _copy_of(self.picked, sha)
            if any(_alike(sha, n) or (copy and _alike(copy, n)) for n in self.shas):
                return True
        return False


def _named(revert: Commit) -> tuple[str, ...]:
    return revert.reverts_shas or ((revert.reverts_sha,) if revert.reverts_sha else ())


def _alike(a: str, b: str) -> bool:
    """Two shas of one commit (either may be abbreviated)."""
    return a.startswith(b) or b.startswith(a)


def _before_cut(
    ctx: ReleaseContext, ref: str, reverts: Mapping[str, Commit], named: Mapping[str, list[str]]
) -> dict[str, MainRevert]:
    """The reverts whose named commit is in the branch's history (before the cut): every
    name resolved by one git process, and their ancestry walked by one more."""
    repo = ctx.repo
    names = list(dict.fromkeys(n for shas in named.values() for n in shas))
    full = dict(zip(names, repo.revs(names), strict=True))
    known = sorted({f for f in full.values() if f is not None})
    outside = repo.history.outside(known, ref)
    out: dict[str, MainRevert] = {}
    for sha, shas in named.items():
        carried = [full[n] for n in shas if full[n] is not None and full[n] not in outside]
        if carried:
            c = reverts[sha]
            out[sha] = MainRevert(
                sha, c.subject, str(carried[0]), c.reverts_subject or "", BEFORE_CUT
            )
    return out


def _by_pr(
    ctx: ReleaseContext,
    ref: str,
    main: str,
    reverts: Mapping[str, Commit],
    prs: Mapping[str, int],
    picked: Mapping[str, str],
) -> dict[str, MainRevert]:
    """The reverts that name their target by PR number only: the main commit that landed
    it since the cut (carried when picked), else before the cut (carried). Both histories
    are searched side by side, by git, for those numbers alone."""
    wanted = set(prs.values())
    since = ctx.repo.history.start_subjects(main, wanted, since=ref)
    before = ctx.repo.history.start_subjects(ref, wanted)
    identity = ctx.repo_identity
    after_cut = commits_by_pr(parse_subjects(since.out()), wanted, None, identity)
    before_cut = commits_by_pr(parse_subjects(before.out()), wanted, None, identity)
    out: dict[str, MainRevert] = {}
    for sha, number in prs.items():
        c = reverts[sha]
        landed = [s for s in after_cut.get(number, []) if s not in reverts]
        if landed:
            copy = _copy_of(picked, landed[0])
            how = f"picked as {short(copy)}" if copy else None
            target = landed[0]
        else:
            earlier = before_cut.get(number, [])
            how, target = (BEFORE_CUT, earlier[0]) if earlier else (None, "")
        if how is not None:
            out[sha] = MainRevert(sha, c.subject, target, c.reverts_subject or "", how)
    return out


def reverts_to_pick(ctx: ReleaseContext, *, remember: bool) -> tuple[str, list[MainRevert]]:
    """The release branch checked out, and the reverts due on it, by the pick evidence
    ``pick`` reads (:func:`release.flows.branch_picks.picks_on_branch`). ``remember``: keep
    what was read of the commits' changes in the patch cache (a dry run)."""
    from release.flows.branch import ReleaseBranch
    from release.flows.branch_picks import picks_on_branch

    branch, _ = ctx.current_release()
    main = ctx.main_sha()
    info = ReleaseBranch(ctx, branch, main, ctx.repo.rev("HEAD"), remember=remember)
    picks = picks_on_branch(info)
    info.changes.save()
    return branch, due_reverts(ctx, branch, main, picks)


class KeptReverts:
    """:func:`due_reverts` for ``status``, kept in the picks cache by (branch tip, main), as
    the picks are: asked again, neither history is read. Where none is kept, main's reverts
    are read from the start, while the picks are counted."""

    def __init__(self, ctx: ReleaseContext, branch: str, head: str, main: str) -> None:
        from release.adapters.picks_cache import read_reverts
        from release.flows.branch_picks import picks_key

        self.ctx, self.branch, self.head, self.main = ctx, branch, head, main
        self.key = picks_key(ctx.repo_identity)
        self.kept = read_reverts(ctx.repo, self.key, head, main)
        self.reading = None if self.kept is not None else start_reads(ctx, branch, main)

    def due(self, picks: Iterable[BranchPick], notes: list[str]) -> list[MainRevert]:
        """The reverts due, given the branch's picks; a read that fails is said in
        ``notes``, and status goes on."""
        from release.adapters.picks_cache import keep_reverts

        if self.kept is not None:
            return [MainRevert(*row) for row in self.kept]  # type: ignore[arg-type]
        ctx = self.ctx
        try:
            found = due_reverts(ctx, self.branch, self.main, picks, self.reading)
        except ReleaseError as err:
            notes.append(f"reverts on {ctx.config.main_branch} not read: {err.one_line()}")
            return []
        keep_reverts(ctx.repo, self.key, self.head, self.main, [r.row() for r in found])
        return found

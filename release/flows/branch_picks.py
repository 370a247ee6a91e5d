"""What the release branch holds of main, commit by commit (``status``'s picks).

A commit on the branch since it left main is a pick when its ``-x`` line names a main
commit, when a main commit since the branch point landed the same PR of this repository
(a pick made without ``-x`` keeps the "(#N)" of its subject, or ghstack's ``Pull Request
resolved`` line: :mod:`release.core.pull_requests` says when either is this
repository's), or when a main commit since the branch point has the same patch (``git patch-id``,
what ``git cherry`` compares). A pick the branch has reverted since, its revert, and the
commits ``tag`` and ``promote`` make are not counted. Reads only.
"""

from __future__ import annotations

import functools
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from release.adapters.cache_file import digest_of
from release.adapters.picks_cache import keep_picks, read_picks
from release.core.plan_steps import PickData
from release.errors import GitError, ReleaseError
from release.flows.context import ReleaseContext

# What counting picks takes is loaded where it is counted: a status whose picks are kept
# for this tip and main (:func:`kept_picks`) loads none of it.
if TYPE_CHECKING:
    from collections.abc import Sequence

    from release.core.github import PullRequest
    from release.core.json_text import JSONValue
    from release.core.pr_picks import NotPickable, PrQuery
    from release.core.pull_requests import RepoIdentity
    from release.flows.branch import ReleaseBranch

__all__ = [
    "BranchPick",
    "FromGitHub",
    "PendingPick",
    "kept_picks",
    "pending_picks",
    "picks_done",
    "picks_key",
    "picks_on_branch",
]


@dataclass(frozen=True)
class BranchPick:
    """A commit on the branch, the main commit it carries, and how that is known."""

    sha: str
    picked_from: str
    subject: str
    reason: str | None
    how: str = "-x"  # "-x", "PR #N" or "same patch"


@dataclass(frozen=True)
class PendingPick:
    """A commit the picks file asks for that is not on the branch yet (``likely``: why it
    may be there already, for a hold)."""

    sha: str
    ref: str
    subject: str
    reason: str | None
    likely: str | None
    via: str | None = None  # the milestone or label that listed it

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "sha": self.sha,
            "ref": self.ref,
            "subject": self.subject,
            "reason": self.reason,
            "likely": self.likely,
            "via": self.via,
        }


def picks_done(
    ctx: ReleaseContext,
    branch: str,
    main: str,
    head: str,
    base: str,
    info: ReleaseBranch | None,
) -> list[BranchPick]:
    """The branch's picks since ``base``, oldest first: by their ``-x`` lines alone while
    every commit there has one (or is a changelog commit); else by what the branch holds
    (:func:`picks_on_branch`: PR numbers, patch ids), which is kept for
    :func:`kept_picks`."""
    from release.core.commits import CHANGELOG_TRAILER, pick_fields

    if info is None:
        messages = ctx.repo.history.messages(since=base, until="HEAD")
        marked = f"{CHANGELOG_TRAILER}:"
        if all(pick_fields(m.body)[0] or marked in m.body for m in messages):
            done = []
            for message in reversed(messages):
                picked_from, reason = pick_fields(message.body)
                if picked_from:
                    done.append(BranchPick(message.sha, picked_from[-1], message.subject, reason))
            # kept too: on a long branch reading every message again is most of a status
            keep_picks(
                ctx.repo, picks_key(ctx.repo_identity), head, main, [astuple(p) for p in done]
            )
            return done
        from release.flows.branch import ReleaseBranch

        info = ReleaseBranch(ctx, branch, main, head, remember=True, base=base)
    done = picks_on_branch(info)
    info.changes.save()
    keep_picks(ctx.repo, picks_key(ctx.repo_identity), head, main, [astuple(p) for p in done])
    return done


def kept_picks(ctx: ReleaseContext, head: str, main: str) -> list[BranchPick] | None:
    """The picks :func:`picks_done` counted for this branch tip and main, if kept: neither
    history is read again (:mod:`release.adapters.picks_cache`)."""
    found = read_picks(ctx.repo, picks_key(ctx.repo_identity), head, main)
    return None if found is None else [BranchPick(*p) for p in found]


# the code that counts picks: what is kept is keyed by its source, read without importing it
_COUNTED_BY = (
    "release.flows.branch_picks",
    "release.flows.branch",
    "release.flows.candidates",
    "release.flows.landed",
    "release.flows.main_reverts",
    "release.core.commits",
    "release.core.notes",
    "release.core.pull_requests",
    "release.core.backports",
    "release.adapters.git_log",
    "release.adapters.git_reads",
)


@functools.cache
def picks_key(repo: RepoIdentity | None) -> str:
    """The key kept picks are read and written under: a digest of :data:`_COUNTED_BY` and
    of the repository whose PRs count (another ``repo-url`` counts other picks by PR)."""
    package = Path(__file__).parent.parent  # the modules' files, found without importing
    sources = []
    for name in _COUNTED_BY:
        path = package.joinpath(*name.split(".")[1:]).with_suffix(".py")
        sources.append(path.read_bytes() if path.is_file() else name.encode())
    return digest_of(1, (), *sources, (repo.key if repo is not None else "").encode())


@dataclass(frozen=True)
class FromGitHub:
    """A milestone or label the picks file names (``source``, as
    :meth:`release.core.pr_picks.PrQuery.describe` says it): how many of its PRs are
    pending, those that are not pickable, or why GitHub could not be read (``unread``)."""

    source: str
    pending: int = 0
    not_pickable: tuple[NotPickable, ...] = ()
    unread: str | None = None

    def to_dict(self) -> dict[str, JSONValue]:
        refused: list[JSONValue] = [
            {"pr": n.number, "title": n.title, "why": n.why, "url": n.url}
            for n in self.not_pickable
        ]
        return {
            "source": self.source,
            "pending": self.pending,
            "not_pickable": refused,
            "unread": self.unread,
        }


def pending_picks(
    ctx: ReleaseContext, info: ReleaseBranch, head: str, notes: list[str]
) -> tuple[list[PendingPick], list[PendingPick], str | None, list[FromGitHub]]:
    """What the picks file asks for, as ``pick --file`` plans it (the same plan): the
    commits it would pick, those it would hold as likely there already, why it would
    refuse (None: it would not), and the milestones and labels it names. GitHub is asked
    only where the file names one; where it cannot be, that is said and the rest shown."""
    from release.core.plan import StepKind
    from release.flows.candidates import resolve_candidates
    from release.flows.pick_github import github_repo, list_pull_requests, pr_requests
    from release.flows.pick_plan import PickState, parse_picks, plan_pick

    sources: list[FromGitHub] = []
    try:
        picks = ctx.tree_text(ctx.config.picks_file, "picks file")
        ask = parse_picks("", picks.text if picks else "")
        requests = list(ask.own(github_repo(ctx)).requests if ask.links else ask.requests)
        listed: Sequence[tuple[PrQuery, Sequence[PullRequest]]] = []
        try:
            listed = list_pull_requests(ctx, ask.queries)
        except ReleaseError as err:
            named = ", ".join(q.describe() for q in ask.queries)
            sources.append(FromGitHub(named, unread=err.one_line()))
        from_prs, not_pickable = pr_requests(ctx, listed, info)
        requests += from_prs
        if not requests and not not_pickable:
            return [], [], None, sources
        candidates = resolve_candidates(ctx, requests, info)
        state = PickState(
            info.branch,
            head,
            tuple(candidates),
            ctx.config.feature_categories,
            not_pickable=tuple(not_pickable),
        )
        steps = plan_pick(state).steps
    except (ReleaseError, GitError) as err:
        said = f"{ctx.config.picks_file}: {err.one_line()}"
        notes.append(said)
        return [], [], said, sources
    by_sha = {c.sha: c for c in candidates}
    out: dict[StepKind, list[PendingPick]] = {StepKind.CHERRY_PICK: [], StepKind.HOLD: []}
    for step in steps:
        if step.action in out:
            c = by_sha[step.data_of(PickData).sha]
            out[step.action].append(
                PendingPick(
                    c.sha, c.request.ref, c.subject, c.request.reason, c.likely, c.request.via
                )
            )
    for query in [q.describe() for q in ask.queries] if listed else []:
        pending = sum(1 for p in out[StepKind.CHERRY_PICK] if p.via == query)
        left = tuple(n for n in not_pickable if n.via == query)
        sources.append(FromGitHub(query, pending, left))
    return out[StepKind.CHERRY_PICK], out[StepKind.HOLD], None, sources


def picks_on_branch(info: ReleaseBranch) -> list[BranchPick]:
    """The branch's picks since it left main, oldest first. The reads it may need (the
    branch's commits, main's since the branch point, their subjects) run side by side."""
    from release.adapters.git_log import parse_subjects
    from release.flows.landed import commits_by_pr

    # main's commits since the branch point with their subjects, all of them (fewer than
    # git's grep of many numbers reads; bodies only of those with no number, for ghstack's
    # line), read while the branch's commits are
    reading = info.ctx.repo.history.start_subjects(info.main, since=info.base)
    undone = info.undone
    own = [
        c
        for c in info.commits
        if c.changelog_for is None and c.sha not in undone and c.sha not in undone.values()
    ]
    found: dict[str, BranchPick] = {}
    rest = []
    for c in own:
        named = [sha for sha in c.picked_from if sha]
        if named:
            found[c.sha] = BranchPick(c.sha, named[-1], c.subject, c.pick_reason, "-x")
        else:
            rest.append(c)
    wanted = {c.pr for c in rest if c.pr is not None}
    subjects = parse_subjects(reading.out())  # collected whatever is wanted: git has ended
    since_base = [sha for sha, _ in reversed(subjects)]  # main's, oldest first
    if wanted:

        def bodies(shas: list[str]) -> dict[str, str]:
            return {sha: about.body for sha, about in info.about(shas).items()}

        by_pr = commits_by_pr(subjects, wanted, bodies, info.ctx.repo_identity)
        for c in rest:
            landed = by_pr.get(c.pr or 0, [])
            if landed:
                found[c.sha] = BranchPick(c.sha, landed[0], c.subject, None, f"PR #{c.pr}")
    subjects_of = {c.sha: c.subject for c in rest if c.sha not in found}
    if subjects_of and since_base:
        for sha, main_sha in _same_patch(info, list(subjects_of), since_base).items():
            found[sha] = BranchPick(sha, main_sha, subjects_of[sha], None, "same patch")
    return [found[c.sha] for c in reversed(own) if c.sha in found]


def _same_patch(info: ReleaseBranch, ours: list[str], main: list[str]) -> dict[str, str]:
    """Branch commit -> a main commit with the same patch id. Only the main commits ``git
    cherry`` marks as having their patch on the branch can be one (its answer is kept in
    the patch cache, and for a branch that moved only its new commits are compared), and
    of those only the ones changing the very files a branch commit changes: those alone
    are diffed."""
    on_branch = info.patch_equivalent
    marked = [sha for sha in main if sha in on_branch]
    if not marked:
        return {}
    files = info.files_of([*ours, *marked])
    # a commit that moves only a submodule has no files here (they do not count), but a
    # patch id all the same: the empty set is compared too, as ReleaseBranch compares it
    alike = {files[sha] for sha in ours}
    suspects = [sha for sha in marked if files[sha] in alike]
    if not suspects:
        return {}
    theirs = {files[sha] for sha in suspects}
    ours = [sha for sha in ours if files[sha] in theirs]
    ids = info.ctx.repo.history.patch_ids([*ours, *suspects])
    by_id: dict[str, str] = {}
    for sha in suspects:  # oldest first: the first main commit with the patch wins
        if sha in ids:
            by_id.setdefault(ids[sha], sha)
    return {sha: by_id[ids[sha]] for sha in ours if sha in ids and ids[sha] in by_id}

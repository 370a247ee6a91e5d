"""Picks from GitHub: the PRs a milestone or a label lists, read with ``gh``
(:class:`release.adapters.github.Gh`), and the commits on main they landed as
(:func:`release.core.pr_picks.map_pull_requests` decides, on what git says here).

GitHub is asked first and only: nothing in the repository changes before its answer is
in, so a failure (``gh`` missing, not logged in, rate limited, a network down) leaves
everything as it was. Reading the answer changes nothing either.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from release.core.pr_picks import NotPickable, PrQuery, map_pull_requests, wanting_subjects
from release.errors import UsageError
from release.flows.context import ReleaseContext
from release.flows.pick_plan import RequestedPick

if TYPE_CHECKING:
    from release.core.github import GitHubRepo, PullRequest
    from release.flows.branch import ReleaseBranch

__all__ = ["Listed", "github_repo", "list_pull_requests", "pr_requests"]

Listed = Sequence[tuple[PrQuery, Sequence["PullRequest"]]]


def github_repo(ctx: ReleaseContext) -> GitHubRepo | None:
    """Where this repository lives on GitHub (:func:`release.adapters.github.repo_for`):
    ``[tool.release.github] repo``, ``repo-url``, else the remote's URL."""
    from release.adapters.github import repo_for

    return repo_for(ctx.config, ctx.remote_url)


def list_pull_requests(ctx: ReleaseContext, queries: Sequence[PrQuery]) -> Listed:
    """Each query's PRs, every state (an open or closed one is shown as not pickable)."""
    if not queries:
        return []
    from release.adapters.github import Gh

    repo = github_repo(ctx)
    if repo is None:
        raise UsageError(
            f"{queries[0].describe()}: where this repository lives on GitHub is not known "
            '(set [tool.release.github] repo = "OWNER/REPO")'
        )
    gh = Gh(repo)
    return [
        (
            query,
            gh.prs(state="all", search=f'milestone:"{query.name}"')
            if query.kind == "milestone"
            else gh.prs(state="all", label=query.name),
        )
        for query in queries
    ]


def _on_main(ctx: ReleaseContext, info: ReleaseBranch, oids: list[str]) -> dict[str, int]:
    """Of ``oids``, those on main (since the branch point, or before it), with their parent
    count."""
    order = info.main_order
    known = [oid for oid, found in zip(oids, ctx.repo.revs(oids), strict=True) if found == oid]
    there = [oid for oid in known if oid in order or ctx.repo.is_ancestor(oid, info.main)]
    about = info.about(there)
    return {oid: len(about[oid].parents) for oid in there if oid in about}


def pr_requests(
    ctx: ReleaseContext, listed: Listed, info: ReleaseBranch
) -> tuple[list[RequestedPick], list[NotPickable]]:
    """The listed PRs as pick requests of their commits on main, and those not pickable."""
    if not listed:
        return [], []
    from release.adapters.git_log import parse_subjects
    from release.flows.landed import commits_by_pr

    prs = [pr for _, found in listed for pr in found]
    oids = sorted({pr.merge_commit for pr in prs if pr.state == "MERGED" and pr.merge_commit})
    on_main = _on_main(ctx, info, [oid for oid in oids if _full_sha(oid)])
    wanted = wanting_subjects(prs, on_main)
    by_subject: dict[int, list[str]] = {}
    if wanted:
        log = ctx.repo.history.start_subjects(info.main, wanted)
        by_subject = commits_by_pr(
            parse_subjects(log.out()),
            wanted,
            lambda shas: {sha: found.body for sha, found in info.about(shas).items()},
            ctx.repo_identity,
        )
    picks, refused = map_pull_requests(
        listed, main_branch=ctx.config.main_branch, on_main=on_main, by_subject=by_subject
    )
    requests = [RequestedPick(p.sha, p.reason, pr=p.number, via=p.via) for p in picks]
    return requests, refused


def _full_sha(oid: str) -> bool:
    """GitHub's answer is untrusted: only a full hex sha is asked of git."""
    return len(oid) == 40 and all(ch in "0123456789abcdef" for ch in oid)

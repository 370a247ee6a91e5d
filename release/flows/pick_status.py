"""Pick pull requests as ``status`` and ``tag`` see them, where the release branch is
protected (the PR route, :mod:`release.flows.pick_route`).

- An open PR of a pick branch (``release-picks/<release>/...``) into the release branch
  is pending: its picks, read from the pick branch here, are pending picks, each counted
  once (a pick the picks file asks for and an open PR carries is one pending pick).
- A merged PR's picks are on the release branch once it is pulled, and then counted as
  done by the branch's own evidence (their ``-x`` lines), never by the PR; until then,
  status says to pull.
- ``tag`` refuses while such a PR is open: the rc would lack what it brings.

GitHub is asked through ``gh``; where it cannot be (not logged in, no network), status
says so in a note and goes on; tag refuses, saying why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from release.core.json_text import JSONValue
from release.core.pick_pr import PickedCommit, pick_branch_scope
from release.core.terminal_text import escaped
from release.errors import RefusedError, ReleaseError
from release.flows.context import ReleaseContext

__all__ = [
    "PickPr",
    "picks_next",
    "pr_only_picks",
    "read_pick_prs",
    "refuse_open_pick_prs",
    "waiting_on",
]


class HasSha(Protocol):
    @property
    def sha(self) -> str: ...


@dataclass(frozen=True)
class PickPr:
    """A pick branch's PR into the release branch: its picks (from the branch here; none
    where the branch is not here) and, once merged, whether the branch here has it."""

    number: int
    url: str
    state: str  # OPEN or MERGED
    head: str
    picks: tuple[PickedCommit, ...]
    here: bool = False

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "number": self.number,
            "url": self.url,
            "state": self.state,
            "head": self.head,
            "picks": [p.sha for p in self.picks],
            "here": self.here,
        }


def pr_only_picks(
    prs: Sequence[PickPr], pending: Iterable[HasSha]
) -> list[tuple[PickedCommit, PickPr]]:
    """The picks open PRs carry that ``pending`` (the picks file's) does not name: pending
    too, counted once."""
    named = {p.sha for p in pending}
    return [(c, pr) for pr in prs if pr.state == "OPEN" for c in pr.picks if c.sha not in named]


def waiting_on(prs: Sequence[PickPr], pending: Iterable[HasSha]) -> list[str]:
    """The open pick PRs' URLs, where every pending pick is in one of them (nothing to do
    here but merge them); else none."""
    carried = {c.sha for pr in prs if pr.state == "OPEN" for c in pr.picks}
    urls = [pr.url for pr in prs if pr.state == "OPEN"]
    return urls if urls and all(p.sha in carried for p in pending) else []


def picks_next(prs: Sequence[PickPr], pending: Iterable[HasSha], picks_file: str) -> str:
    """What status proposes for pending picks: merging the open pick PRs where they carry
    them all, else picking the picks file."""
    if waiting := waiting_on(prs, pending):
        return f"merge the pick pull requests ({', '.join(waiting)}), then git pull"
    return f"release pick --file {picks_file}"


def read_pick_prs(ctx: ReleaseContext, release: str, head: str, notes: list[str]) -> list[PickPr]:
    """The open and merged PRs of this release's pick branches, where it is protected (none
    elsewhere: GitHub is not asked); what stops GitHub from being asked goes in ``notes``."""
    if not ctx.config.github.protected:
        return []
    from release.flows.pick_prs import gh_client, pick_branches

    scope = pick_branch_scope(release)
    try:
        found = [
            p
            for p in gh_client(ctx).prs(state="all", base=release)
            if p.head.startswith(scope) and p.base == release and p.state in ("OPEN", "MERGED")
        ]
        branches = {b.name: b for b in pick_branches(ctx, release, head)} if found else {}
    except ReleaseError as err:
        notes.append(f"pick pull requests not read: {err.one_line()}")
        return []
    out = []
    for pr in sorted(found, key=lambda p: p.number):
        branch = branches.get(pr.head)
        merge = pr.merge_commit
        here = bool(merge and ctx.repo.rev(merge) and ctx.repo.is_ancestor(merge, head))
        if pr.state == "MERGED" and not here:
            notes.append(
                f"pick PR #{pr.number} is merged on GitHub but not in {release} here: "
                f"git pull {ctx.config.remote} {release}"
            )
        out.append(
            PickPr(
                pr.number, escaped(pr.url), pr.state, pr.head, branch.picks if branch else (), here
            )
        )
    return out


def refuse_open_pick_prs(ctx: ReleaseContext, release: str) -> None:
    """Refuse to tag while a pick PR into ``release`` is open."""
    from release.flows.pick_prs import gh_client

    scope = pick_branch_scope(release)
    try:
        prs = gh_client(ctx).prs(state="open", base=release)
    except ReleaseError as err:
        raise RefusedError(
            f"cannot tell whether pick pull requests into {release} are open: {err.one_line()}"
        ) from None
    open_prs = sorted(
        (p for p in prs if p.head.startswith(scope) and p.base == release), key=lambda p: p.number
    )
    if open_prs:
        named = ", ".join(f"#{p.number} {escaped(p.url)}" for p in open_prs)
        raise RefusedError(
            f"pick pull requests into {release} are open: {named}; merge or close them, "
            f"git pull {ctx.config.remote} {release}, then tag"
        )

"""Pick branches and their pull requests: what the PR route reads of them (here, on the
remote, on GitHub), and how a pick branch is delivered: pushed, then its PR opened unless
GitHub has one for that branch already (open, merged or closed: never a second).

Every ``gh`` line comes from :mod:`release.core.gh_commands`; ``--dry-run`` shows those
lines exactly as they would be sent, the PR's body written out below them.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from release.core.pick_pr import PickedCommit, pick_branch_scope, pick_pr_body, pick_pr_title
from release.core.plan import Step, StepKind, short
from release.core.plan_steps import PullRequestData, RefData
from release.core.say import Say
from release.core.terminal_text import escaped
from release.errors import GitError, RefusedError
from release.flows.context import ReleaseContext
from release.flows.pick_journal import QueuedPick

if TYPE_CHECKING:
    from release.adapters.github import Gh
    from release.core.github import PullRequest

__all__ = [
    "BODY_FILE",
    "PickBranch",
    "deliver",
    "delivery_steps",
    "gh_client",
    "pick_branches",
]

BODY_FILE = "<body.md>"  # what --dry-run shows for the body's file: its text follows
_NOT_A_PICK = "-"  # an original for a commit with no -x line: matches no main commit


@dataclass(frozen=True)
class PickBranch:
    """A local pick branch of the release: its tip, the main commits it carries (its own
    commits' ``-x`` originals, oldest first) and whether the remote has it."""

    name: str
    tip: str
    picks: tuple[PickedCommit, ...]
    remote_tip: str | None

    @property
    def originals(self) -> tuple[str, ...]:
        return tuple(p.sha for p in self.picks)

    @property
    def pushed(self) -> bool:
        return self.remote_tip is not None


def pick_branches(ctx: ReleaseContext, release: str, release_tip: str) -> list[PickBranch]:
    """The pick branches of ``release`` (``release-picks/<release>/...``) here or on the
    remote, each with what it carries beyond ``release_tip`` (a remote one whose commits
    are not here carries what no pick matches) and the remote's tip of each."""
    scope = pick_branch_scope(release)
    remote = ctx.config.remote
    try:
        there = ctx.repo.remotes.refs(remote, f"refs/heads/{scope}*")
    except GitError as err:
        raise RefusedError(
            f"{err.message}; nothing was changed, retry when it is reachable"
        ) from None
    local = [b for b in ctx.repo.local_branches() if b.startswith(scope)]
    remote_only = [r.removeprefix("refs/heads/") for r in there]
    out = []
    for name in sorted({*local, *remote_only}):
        record = there.get(f"refs/heads/{name}")
        tip = ctx.repo.rev(f"refs/heads/{name}") if name in local else None
        tip = tip or (ctx.repo.rev(record.sha) if record else None)
        picks = _picks(ctx, release_tip, tip) if tip else (PickedCommit(_NOT_A_PICK, ""),)
        out.append(PickBranch(name, tip or "", picks, record.sha if record else None))
    return out


def _picks(ctx: ReleaseContext, since: str, tip: str) -> tuple[PickedCommit, ...]:
    """The main commits the commits after ``since`` up to ``tip`` were picked from, oldest
    first; a commit with no ``-x`` line is one no main commit matches."""
    commits = ctx.repo.history.log_commits(since=since, until=tip, aliases={}, repo=None)
    return tuple(
        PickedCommit(c.picked_from[-1] if c.picked_from else _NOT_A_PICK, c.subject, c.pick_reason)
        for c in reversed(commits)
    )


def gh_client(ctx: ReleaseContext) -> Gh:
    from release.adapters.github import Gh, repo_for

    found = repo_for(ctx.config, ctx.remote_url)
    if found is None:
        raise RefusedError(
            "picks go by pull request (protected = true), but where the repository lives on "
            'GitHub is not known: set repo = "OWNER/REPO" under [tool.release.github]'
        )
    return Gh(found, env=os.environ)


def _rc(ctx: ReleaseContext, release: str) -> str:
    """The rc these picks are for (the next tag), as a PR title names it."""
    from release.errors import ReleaseError
    from release.flows.next_version import choose_version

    named = ctx.config.branch.parse(release)
    if named is None:
        return release
    tags = ctx.tags(remote=False)
    line = ctx.release_line(release, named, tags, head=f"refs/heads/{release}")
    try:
        version = choose_version(
            line.current, None, tags, first_rc=ctx.config.first_rc, style=line.style
        )
    except ReleaseError:
        return release
    return ctx.tag_name(version)


def _texts(
    ctx: ReleaseContext, release: str, picks: Sequence[PickedCommit], milestone: str | None
) -> tuple[str, str]:
    title = pick_pr_title(picks, _rc(ctx, release))
    body = pick_pr_body(picks, release_branch=release, repo_url=ctx.repo_url, milestone=milestone)
    return title, body


def _carried(ctx: ReleaseContext, release: str, name: str) -> tuple[PickedCommit, ...]:
    tip = ctx.repo.rev(f"refs/heads/{release}") or ""
    mine = [b for b in pick_branches(ctx, release, tip) if b.name == name]
    return mine[0].picks if mine else ()


def delivery_steps(
    ctx: ReleaseContext,
    release: str,
    names: Sequence[str],
    queue: Sequence[QueuedPick] = (),
    milestone: str | None = None,
    *,
    exact: bool,
) -> list[Step]:
    """The plan's steps that deliver each pick branch of ``names``: its push and its PR.
    ``exact`` (``--dry-run``): with the ``gh`` lines as they would be sent and the PR's
    body; ``queue``: the picks still to make, onto the last of ``names``."""
    steps: list[Step] = []
    for index, name in enumerate(names):
        steps.append(
            Step(
                StepKind.PUSH_REF,
                f"push {name} to {ctx.config.remote} (unless it is there)",
                RefData(f"refs/heads/{name}"),
            )
        )
        what = f"open a pull request of {name} into {release} (unless GitHub has one)"
        data = PullRequestData(name, release)
        if exact:
            picks = _carried(ctx, release, name)
            if index == len(names) - 1:
                picks += tuple(PickedCommit(q.sha, q.subject, q.reason) for q in queue)
            title, body = _texts(ctx, release, picks, milestone)
            what += ":\n     " + "\n     ".join(_gh_lines(ctx, release, name, title, milestone))
            what += f"\n     where {BODY_FILE} holds:"
            what += "".join(f"\n       {line}".rstrip(" ") for line in body.splitlines())
            data = PullRequestData(name, release, title, body)
        steps.append(Step(StepKind.OPEN_PULL_REQUEST, what, data))
    return steps


def _gh_lines(
    ctx: ReleaseContext, release: str, name: str, title: str, milestone: str | None
) -> list[str]:
    """``gh pr list`` (is there one?) and ``gh pr create``, as they would be sent."""
    from release.adapters.github import repo_for
    from release.core import gh_commands

    repo = repo_for(ctx.config, ctx.remote_url)
    if repo is None:
        return ["(where the repository lives on GitHub is not known: set repo under "
                "[tool.release.github])"]  # fmt: skip
    listed = gh_commands.pr_list(repo, state="all", head=name)
    made = gh_commands.pr_create(
        repo, base=release, head=name, title=title, body_file=BODY_FILE,
        labels=(ctx.config.github.pick_label,), milestone=milestone,
    )  # fmt: skip
    return [f"gh {shlex.join(listed)}", f"gh {shlex.join(made)}"]


def _push(ctx: ReleaseContext, name: str, say: Say) -> None:
    remote = ctx.config.remote
    there = ctx.repo.remotes.refs(remote, f"refs/heads/{name}").get(f"refs/heads/{name}")
    tip = ctx.repo.rev(f"refs/heads/{name}")
    if tip is None:  # on the remote only: nothing here to push
        return
    if there is not None and (there.sha == tip or not ctx.repo.is_ancestor(there.sha, tip)):
        if there.sha != tip:
            say(
                f"{name} on {remote} has commits that are not here ({short(there.sha)}): left as it is"
            )
        return
    result = ctx.repo.remotes.push_atomic(remote, [f"refs/heads/{name}:refs/heads/{name}"])
    if not result.ok:
        from release.adapters.process import last_line

        raise GitError(
            f"push of {name} to {remote} failed: {escaped(last_line(result.stderr, 'no answer'))}; "
            "the picks are on it here, re-run release pick to push it and open its pull request"
        )
    say(f"pushed {name} to {remote}")


def _existing(gh: Gh, release: str, name: str) -> PullRequest | None:
    """GitHub's PR of ``name`` into ``release``: an open one first, else a merged one,
    else a closed one; None where there is none."""
    found = [p for p in gh.prs(state="all", head=name) if p.head == name and p.base == release]
    order = {"OPEN": 0, "MERGED": 1, "CLOSED": 2}
    return min(found, key=lambda p: order.get(p.state, 3)) if found else None


def deliver(
    ctx: ReleaseContext,
    release: str,
    names: Sequence[str],
    *,
    milestone: str | None = None,
    say: Say = print,
) -> list[str]:
    """Push each pick branch and make sure it has its PR: one per branch, never two."""
    if not names:
        return []
    from release.adapters.github import PullRequestExists

    gh = gh_client(ctx)
    label = ctx.config.github.pick_label
    report = []
    for name in names:
        _push(ctx, name, say)
        pr = _existing(gh, release, name)
        if pr is not None:
            what = {"OPEN": "open", "MERGED": "merged"}.get(
                pr.state,
                "closed without merging; not opened again (reopen it on GitHub, or delete "
                f"{name} here and on {ctx.config.remote} to pick anew)",
            )
            report.append(f"pull request #{pr.number} of {name} is {what}: {escaped(pr.url)}")
            continue
        title, body = _texts(ctx, release, _carried(ctx, release, name), milestone)
        try:
            url = gh.create_pr(
                base=release, head=name, title=title, body=body, labels=(label,),
                milestone=milestone,
            )  # fmt: skip
        except PullRequestExists as err:  # opened since it was looked up: that one it is
            report.append(f"pull request of {name} is open: {escaped(err.url)}")
            continue
        report.append(f"opened a pull request of {name} into {release}: {escaped(url)}")
    return report

"""The PR route's pure parts: pick branch names, which branch a run's picks go onto
(:func:`release.flows.pick_route.choose_route`), the PR's title and body, and telling a
protected-branch refusal from any other."""

from __future__ import annotations

import pytest

from release.core.pick_pr import (
    PickedCommit,
    pick_branch_names,
    pick_branch_scope,
    pick_pr_body,
    pick_pr_title,
    protected_refusal,
)
from release.errors import RefusedError
from release.flows.pick_journal import QueuedPick
from release.flows.pick_prs import PickBranch
from release.flows.pick_route import choose_route

RELEASE = "releases/v0.3.0"
TIP = "f" * 40
A, B, C = ("a" * 40, "b" * 40, "c" * 40)
QUEUE = (QueuedPick(A, "[Bugfix] A (#1)"), QueuedPick(B, "[Bugfix] B (#2)"), QueuedPick(C, "C"))


def _branch(name: str, *originals: str, pushed: bool) -> PickBranch:
    picks = tuple(PickedCommit(sha, f"subject of {sha[:1]}") for sha in originals)
    return PickBranch(name, "e" * 40, picks, "e" * 40 if pushed else None)


def test_pick_branch_names_come_from_the_release_and_the_first_pick() -> None:
    names = pick_branch_names(RELEASE, A)
    assert [next(names) for _ in range(3)] == [
        "release-picks/v0.3.0/aaaaaaaaaa",
        "release-picks/v0.3.0/aaaaaaaaaa-2",
        "release-picks/v0.3.0/aaaaaaaaaa-3",
    ]
    assert pick_branch_scope("release/0.18.0") == "release-picks/0.18.0/"


def test_no_pick_branch_yet_makes_one_at_the_release_tip() -> None:
    route = choose_route(RELEASE, TIP, QUEUE, [])
    assert (route.branch, route.new, route.base) == ("release-picks/v0.3.0/aaaaaaaaaa", True, TIP)
    assert route.queue == QUEUE
    assert route.delivered == ("release-picks/v0.3.0/aaaaaaaaaa",)


def test_a_local_branch_stopped_part_way_goes_on_from_where_it_stopped() -> None:
    stopped = _branch("release-picks/v0.3.0/aaaaaaaaaa", A, pushed=False)
    route = choose_route(RELEASE, TIP, QUEUE, [stopped])
    assert (route.branch, route.new, route.base) == (stopped.name, False, stopped.tip)
    assert route.queue == QUEUE[1:]


def test_a_name_holding_other_picks_is_never_reused() -> None:
    other = _branch("release-picks/v0.3.0/aaaaaaaaaa", A, C, pushed=False)  # not a prefix
    route = choose_route(RELEASE, TIP, QUEUE, [other])
    assert route.branch == "release-picks/v0.3.0/aaaaaaaaaa-2" and route.new
    assert route.queue == QUEUE


def test_a_pushed_branch_carries_its_picks_and_only_its_pr_is_made_sure_of() -> None:
    pushed = _branch("release-picks/v0.3.0/aaaaaaaaaa", A, B, C, pushed=True)
    route = choose_route(RELEASE, TIP, QUEUE, [pushed])
    assert route.branch is None and route.queue == ()
    assert route.delivered == (pushed.name,)

    part = _branch("release-picks/v0.3.0/aaaaaaaaaa", A, pushed=True)
    more = choose_route(RELEASE, TIP, QUEUE, [part])  # the rest: a branch of their own
    assert more.branch == "release-picks/v0.3.0/bbbbbbbbbb" and more.queue == QUEUE[1:]
    assert more.delivered == (part.name, more.branch)


def test_every_name_taken_is_refused() -> None:
    taken = [_branch(n, C, pushed=False) for n in pick_branch_names(RELEASE, A)]
    with pytest.raises(RefusedError, match="every pick branch name"):
        choose_route(RELEASE, TIP, QUEUE, taken)


def test_title_is_the_one_picks_subject_or_a_count_for_the_rc() -> None:
    one = [PickedCommit(A, "[Bugfix] Fix the batch limit (#108)")]
    assert pick_pr_title(one, "v0.3.0rc2") == "[Bugfix] Fix the batch limit (#108)"
    two = [*one, PickedCommit(B, "[CI] Pin the runner (#109)")]
    assert pick_pr_title(two, "v0.3.0rc2") == "Picks for v0.3.0rc2: 2 commits"
    assert pick_pr_title([PickedCommit(A, "evil\x1b[2Jtitle")], "rc") == "evil\\x1b[2Jtitle"


def test_body_names_each_original_sha_its_pr_link_reason_and_the_milestone() -> None:
    picks = [
        PickedCommit(A, "[Bugfix] Fix the batch limit (#108)", "regression"),
        PickedCommit(B, "No PR number here"),
    ]
    body = pick_pr_body(
        picks,
        release_branch=RELEASE,
        repo_url="https://github.com/acme/engine",
        milestone="v0.3.0",
    )
    assert body.splitlines() == [
        f"Cherry-picks onto `{RELEASE}`, each with `git cherry-pick -x`:",
        "",
        f"- [Bugfix] Fix the batch limit (#108) (from `{A}`, "
        "https://github.com/acme/engine/pull/108); reason: regression",
        f"- No PR number here (from `{B}`)",
        "",
        "Milestone: v0.3.0",
    ]
    bare = pick_pr_body(picks[:1], release_branch=RELEASE, repo_url="")
    assert "(from `" + A + "`, #108)" in bare and "Milestone" not in bare


def test_only_githubs_protected_branch_refusal_reads_as_one() -> None:
    said = (
        "remote: error: GH006: Protected branch update failed for refs/heads/releases/v0.3.0.\n"
        "remote: error: Changes must be made through a pull request.\n"
        " ! [remote rejected] releases/v0.3.0 -> releases/v0.3.0 (pre-receive hook declined)\n"
    )
    assert protected_refusal(said) == (
        "GH006: Protected branch update failed for refs/heads/releases/v0.3.0."
    )
    assert protected_refusal("remote: v0.1.0rc1 is frozen by policy\n") is None
    assert protected_refusal("error: failed to push some refs\n") is None

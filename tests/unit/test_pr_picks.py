"""Picks from GitHub, the pure parts: PR addresses and ``milestone:``/``label:`` lines
parsed, a listed PR mapped to its commit on main (or said not pickable, and why), and the
plan that shows both. Records are built here as ``gh --json`` answers them; the titles,
numbers and oids are vllm-project/vllm-gaudi's (its main, ``git log``)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from release.core.github import GitHubRepo, PullRequest
from release.core.plan import StepKind
from release.core.plan_steps import NotPickableData, PickData
from release.core.pr_picks import (
    NotPickable,
    PrQuery,
    map_pull_requests,
    query_name,
    wanting_subjects,
)
from release.errors import UsageError
from release.flows.branch_picks import FromGitHub, PendingPick
from release.flows.pick_plan import (
    Candidate,
    PickState,
    RequestedPick,
    parse_picks,
    parse_requests,
    plan_pick,
)
from release.flows.status import Status
from release.flows.status_lines import render_status

GAUDI = GitHubRepo("github.com", "vllm-project", "vllm-gaudi")
# vllm-gaudi's main: squash commits, each subject ending with its PR
C1745 = "c459da1bcc5bf6a89cdf193fb03276a1f9af1d94"
C1744 = "43f5f1fd2088ebb3a65e3798e41d2a70681cfb1f"
C1747 = "0ec2271a2683bd45b4f4b38188bf875d33c1fb6e"
T1745 = "Fix decode-block clamp misdetecting hybrid/SWA models (regression from #1700) (#1745)"
T1744 = "[Bugfix][HPU] Add opt-in env to run MM warmup outside PT_COMPILE_ONLY_MODE (#1744)"
MILESTONE = PrQuery("milestone", "v0.11.1")


def pr(
    number: int, title: str, state: str = "MERGED", merge: str | None = None, **more
) -> PullRequest:
    fields = {
        "number": number,
        "title": title,
        "state": state,
        "merge_commit": merge,
        "base": "main",
        "head": f"topic-{number}",
        "head_oid": "1" * 40,
        "labels": (),
        "milestone": "v0.11.1",
        "url": GAUDI.pr_url(number),
        "author": "adobrzyn",
        "merged_at": "2026-11-30T10:00:00Z" if state == "MERGED" else None,
    }
    return PullRequest(**{**fields, **more})


def refusal(call, *args, **kwargs) -> str:
    with pytest.raises(UsageError) as caught:
        call(*args, **kwargs)
    return caught.value.message


# -- parsing -------------------------------------------------------------------------


def test_a_pr_address_is_its_number_and_remembers_its_repository() -> None:
    ask = parse_picks(f"{GAUDI.pr_url(1745)} {GAUDI.pr_url(1744)}/files", reason="regression").own(
        GAUDI
    )
    assert [(r.ref, r.reason, r.link) for r in ask.requests] == [
        ("#1745", "regression", GAUDI),
        ("#1744", "regression", GAUDI),
    ]
    assert ask.requests[0].asked == GAUDI.pr_url(1745)


def test_a_pr_address_in_a_picks_file_keeps_its_reason_and_comment() -> None:
    text = f"{GAUDI.pr_url(1745)} critical # the clamp\n#1744\n"
    ask = parse_picks("", text)
    assert [(r.ref, r.reason) for r in ask.requests] == [("#1745", "critical"), ("#1744", None)]


def test_another_repositorys_pr_address_is_refused_naming_both() -> None:
    ask = parse_picks("https://github.com/pytorch/ao/pull/3396")
    assert refusal(ask.own, GAUDI) == (
        "https://github.com/pytorch/ao/pull/3396 is a pull request of pytorch/ao, "
        "not of this repository (vllm-project/vllm-gaudi)"
    )


def test_another_hosts_pr_address_is_another_repository() -> None:
    ask = parse_picks("https://ghe.example.com/vllm-project/vllm-gaudi/pull/1745")
    assert "not of this repository (vllm-project/vllm-gaudi)" in refusal(ask.own, GAUDI)


def test_a_pr_address_is_this_repositorys_in_any_case() -> None:
    ask = parse_picks("https://GitHub.com/VLLM-Project/vLLM-Gaudi/pull/1745")
    assert [r.ref for r in ask.own(GAUDI).requests] == ["#1745"]


def test_a_pr_address_where_the_repository_is_unknown_is_refused() -> None:
    message = refusal(parse_requests, GAUDI.pr_url(1745))
    assert "where this repository lives on GitHub is not known" in message
    assert "[tool.release.github] repo" in message


def test_an_address_that_is_no_pr_is_neither_sha_nor_pr() -> None:
    message = refusal(parse_picks, "https://github.com/vllm-project/vllm-gaudi/issues/1745")
    assert message.endswith("is neither a commit sha, a #PR number nor a pull request's address")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("milestone: v0.11.1\n", [PrQuery("milestone", "v0.11.1")], id="milestone"),
        pytest.param("milestone:v0.11.1\n", [PrQuery("milestone", "v0.11.1")], id="no-space"),
        pytest.param(
            "label: cherry-pick regression # ok\n",
            [PrQuery("label", "cherry-pick", "regression")],
            id="label-with-reason-and-comment",
        ),
        pytest.param(
            'milestone: "v0.11.1 picks"\tcritical\n',
            [PrQuery("milestone", "v0.11.1 picks", "critical")],
            id="quoted-name-with-spaces",
        ),
        pytest.param(
            "milestone: v0.11.1\nmilestone: v0.11.1\n",
            [PrQuery("milestone", "v0.11.1")],
            id="the-same-line-twice-is-one",
        ),
    ],
)
def test_picks_file_query_lines(text: str, expected: list[PrQuery]) -> None:
    ask = parse_picks("", text)
    assert list(ask.queries) == expected
    assert ask.requests == ()


def test_query_lines_and_commits_mix_and_options_add_to_them() -> None:
    text = "abc1234 docs\nmilestone: v0.11.1\n# milestone: v0.11.0 (a comment)\n#1744\n"
    ask = parse_picks("", text, "regression", milestones=["v0.11.2"], labels=["cherry pick"])
    assert [(r.ref, r.reason) for r in ask.requests] == [
        ("abc1234", "docs"),
        ("#1744", "regression"),
    ]
    assert list(ask.queries) == [
        PrQuery("milestone", "v0.11.2", "regression"),
        PrQuery("label", "cherry pick", "regression"),
        PrQuery("milestone", "v0.11.1", "regression"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "milestone: v0.11 picks now\n",
            "picks file line 1: expected 'milestone: NAME [reason]' (a name with spaces in "
            "double quotes), got 'milestone: v0.11 picks now'",
            id="three-words",
        ),
        pytest.param(
            "label:\n",
            "picks file line 1: expected 'label: NAME [reason]' (a name with spaces in double "
            "quotes), got 'label:'",
            id="no-name",
        ),
        pytest.param(
            'label: "a"b\n',
            "picks file line 1: expected 'label: NAME [reason]' (a name with spaces in double "
            "quotes), got 'label: \"a\"b'",
            id="quote-then-text",
        ),
        pytest.param(
            'milestone: v0"11\n',
            "picks file line 1: the milestone name 'v0\"11' has a double quote (\")",
            id="a-quote-in-the-name",
        ),
        pytest.param(
            "milestone: v0.11.1 urgent\n",
            "picks file line 1: reason 'urgent' is not one of regression, critical, "
            "fix-new-feature, docs, release-only",
            id="bad-reason",
        ),
        pytest.param(
            "milestones: v0.11.1\n",
            "picks file line 1: 'milestones:' is neither 'milestone:' nor 'label:'",
            id="misspelt-keyword",
        ),
    ],
)
def test_picks_file_query_lines_refused(text: str, message: str) -> None:
    assert refusal(parse_picks, "", text) == message


@pytest.mark.parametrize(
    ("name", "problem"),
    [("", "is empty"), ("  ", "is empty"), ('v"1', "has a double quote"), ("v\x1b[2J", "control")],
)
def test_a_milestone_option_is_checked_as_a_line_is(name: str, problem: str) -> None:
    assert problem in refusal(parse_picks, "", milestones=[name])
    assert problem in refusal(query_name, "label", name, "--label")


def test_parse_requests_refuses_a_milestone_it_cannot_ask_for() -> None:
    assert "names no commit" in refusal(parse_requests, "", "milestone: v0.11.1\n")


# -- mapping PRs to main's commits ------------------------------------------------------


def test_a_squash_merged_pr_is_its_merge_commit_on_main() -> None:
    picks, refused = map_pull_requests(
        [(MILESTONE, [pr(1745, T1745, merge=C1745)])],
        main_branch="main",
        on_main={C1745: 1},
        by_subject={},
    )
    assert [(p.number, p.sha, p.via) for p in picks] == [(1745, C1745, 'milestone "v0.11.1"')]
    assert refused == []


def test_a_pr_whose_merge_commit_is_not_here_is_found_by_its_subject() -> None:
    listed = [(MILESTONE, [pr(1744, T1744, merge="9" * 40)])]
    assert wanting_subjects(listed[0][1], {}) == {1744}
    picks, refused = map_pull_requests(
        listed, main_branch="main", on_main={}, by_subject={1744: [C1744]}
    )
    assert [(p.number, p.sha) for p in picks] == [(1744, C1744)] and refused == []


def test_prs_that_cannot_be_picked_say_why_and_do_not_stop_the_others() -> None:
    merge = "7" * 40
    listed = [
        (
            MILESTONE,
            [
                pr(1745, T1745, merge=C1745),
                pr(1750, "Add FP8 KV cache", state="OPEN"),
                pr(1751, "Try a new bucketing", state="CLOSED"),
                pr(1752, "Backport the clamp", merge="8" * 40, base="releases/v0.11.0"),
                pr(1753, "Merge the docs branch", merge=merge),
                pr(1754, "Landed elsewhere", merge="6" * 40),
                pr(1755, "Landed twice (#1755)", merge="5" * 40),
            ],
        )
    ]
    picks, refused = map_pull_requests(
        listed,
        main_branch="main",
        on_main={C1745: 1, merge: 2},
        by_subject={1755: [C1744, C1747]},
    )
    assert [p.number for p in picks] == [1745]
    assert {n.number: n.why for n in refused} == {
        1750: "open: not merged yet",
        1751: "closed without being merged",
        1752: "merged into releases/v0.11.0, not main",
        1753: "merged with a merge commit (7777777777); pick the commits it merged by sha",
        1754: "merged, but its merge commit 6666666666 is not on main and no commit there "
        "ends with (#1754) (fetch main?)",
        1755: "2 commits on main end with (#1755); pick the one meant by sha",
    }
    assert all(n.via == 'milestone "v0.11.1"' and n.url == GAUDI.pr_url(n.number) for n in refused)


def test_a_pr_two_queries_list_is_taken_once_as_the_first_lists_it() -> None:
    label = PrQuery("label", "cherry-pick", "critical")
    one = pr(1745, T1745, merge=C1745)
    picks, _ = map_pull_requests(
        [(label, [one]), (MILESTONE, [one, pr(1744, T1744, merge=C1744)])],
        main_branch="main",
        on_main={C1745: 1, C1744: 1},
        by_subject={},
    )
    assert [(p.number, p.via, p.reason) for p in picks] == [
        (1745, 'label "cherry-pick"', "critical"),
        (1744, 'milestone "v0.11.1"', None),
    ]


def test_a_merge_commit_on_main_falls_back_to_its_subject() -> None:
    merge = "7" * 40
    listed = [(MILESTONE, [pr(1745, T1745, merge=merge)])]
    assert wanting_subjects(listed[0][1], {merge: 2}) == {1745}
    picks, refused = map_pull_requests(
        listed, main_branch="main", on_main={merge: 2}, by_subject={1745: [C1745]}
    )
    assert [p.sha for p in picks] == [C1745] and refused == []


# -- the plan -------------------------------------------------------------------------


def _state(candidates: tuple[Candidate, ...], refused: tuple[NotPickable, ...]) -> PickState:
    return PickState("releases/v0.11.1", "f" * 40, candidates, ("Features",), not_pickable=refused)


def test_the_plan_lists_what_is_not_pickable_after_the_picks() -> None:
    request = RequestedPick(C1745, pr=1745, via='milestone "v0.11.1"')
    candidate = Candidate(request, C1745, T1745, "Bugfix", 3)
    refused = NotPickable(
        1750, "Add FP8 KV cache\x1b[2J", "open: not merged yet", request.via or ""
    )
    plan = plan_pick(_state((candidate,), (refused,)))
    assert [s.action for s in plan.steps] == [StepKind.CHERRY_PICK, StepKind.NOT_PICKABLE]
    assert plan.steps[0].detail.endswith('(milestone "v0.11.1")')
    assert plan.steps[0].data_of(PickData).pr == 1745
    assert plan.steps[1].detail == (
        'not pickable #1750 Add FP8 KV cache\\x1b[2J (open: not merged yet; milestone "v0.11.1")'
    )
    assert plan.steps[1].data_of(NotPickableData).why == "open: not merged yet"
    assert plan.summary.endswith("1 to pick, 0 already there, 1 not pickable")
    assert not StepKind.NOT_PICKABLE.acts


def test_a_plan_of_only_unpickable_prs_is_a_plan_and_nothing_at_all_is_refused() -> None:
    refused = NotPickable(1750, "Add FP8 KV cache", "open: not merged yet", "label")
    plan = plan_pick(_state((), (refused,)))
    assert [s.action for s in plan.steps] == [StepKind.NOT_PICKABLE]
    assert "nothing to pick" in refusal(plan_pick, replace(_state((), ()), not_pickable=()))


# -- status's lines -------------------------------------------------------------------


def _status(**more) -> Status:
    return Status("releases/v0.11.1", "0.11.1", "f" * 40, [], [], "v0.11.1rc1", None, **more)


def test_status_shows_a_milestones_count_and_what_is_not_pickable() -> None:
    via = 'milestone "v0.11.1"'
    pending = PendingPick(C1745, C1745, T1745, None, None, via)
    refused = NotPickable(1750, "Add FP8 KV cache", "open: not merged yet", via)
    lines = render_status(
        _status(picks_pending=[pending], from_github=[FromGitHub(via, 1, (refused,))])
    )
    assert f'  pending  {C1745[:10]} {T1745} (milestone "v0.11.1")' in lines
    at = lines.index('milestone "v0.11.1": 1 pending, 1 not pickable')
    assert lines[at + 1] == (
        '  not pickable  #1750 Add FP8 KV cache (open: not merged yet; milestone "v0.11.1")'
    )


def test_status_says_in_one_line_that_a_milestone_could_not_be_read() -> None:
    unread = FromGitHub('milestone "v0.11.1"', unread="gh pr list: not logged in\x1b[2J")
    lines = render_status(_status(from_github=[unread]))
    said = [line for line in lines if "could not be read" in line]
    assert said == [
        'milestone "v0.11.1": could not be read from GitHub: gh pr list: not logged in\\x1b[2J'
    ]

"""Picks from GitHub end to end: ``release pick URL``, ``--milestone``, ``--label``, a
picks file's ``milestone:`` line and ``status``, run as a user runs them, against the
recording ``gh`` stand-in (:mod:`tests.github_support`) first on PATH.

The repository is the sample engine cut at 0.1.0 (main moved on with squash commits
``... (#107)`` to ``(#111)``; its ``repo-url`` is https://github.com/example/tinyengine).
Its PRs are added to the stand-in as ``gh --json`` answers them; a real PR's answer
(tests/fixtures/github/) stands for a PR that landed elsewhere. A fault GitHub gives
(not logged in, rate limit, 404, no network) leaves the repository exactly as it was.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from release.sample import SampleEngine
from tests.conftest import repo_state, run_cli
from tests.github_support import REPO, URL, GhStandIn, milestone_prs


def env_of(standin: GhStandIn) -> dict[str, str]:
    return standin.env(os.environ)


def picked(engine: SampleEngine) -> list[str]:
    """The branch's new commits' ``-x`` sources, oldest first."""
    text = engine.repo.out("log", "--reverse", "--format=%b", "main..HEAD")
    return [
        line.rsplit(" ", 1)[1].rstrip(")") for line in text.splitlines() if "cherry picked" in line
    ]


# -- a PR's address --------------------------------------------------------------------


def test_a_pr_address_is_picked_as_its_number(
    cut_engine: SampleEngine, gh_standin: GhStandIn
) -> None:
    result = run_cli(cut_engine.root, "pick", f"{URL}/pull/109", env=env_of(gh_standin))
    assert result.code == 0, result.output
    assert f"picked {cut_engine.shas[109][:10]}" in result.stdout
    assert cut_engine.shas[109] in cut_engine.repo.out("log", "-1", "--format=%b")
    assert gh_standin.calls() == []  # an address needs no GitHub


def test_another_repositorys_pr_address_is_refused_naming_both(
    cut_engine: SampleEngine, gh_standin: GhStandIn
) -> None:
    before = repo_state(cut_engine.root)
    other = "https://github.com/vllm-project/vllm-gaudi/pull/1745"
    result = run_cli(cut_engine.root, "pick", other, "#109", env=env_of(gh_standin))
    assert result.code == 2, result.output
    assert result.stderr.strip() == (
        f"error: {other} is a pull request of vllm-project/vllm-gaudi, not of this repository "
        f"({REPO})"
    )
    assert repo_state(cut_engine.root) == before


def test_a_pr_address_in_the_picks_file(cut_engine: SampleEngine, gh_standin: GhStandIn) -> None:
    picks = cut_engine.root / "picks.txt"
    picks.write_text(f"{URL}/pull/109/files regression  # the port\n")
    result = run_cli(cut_engine.root, "pick", "--file", "picks.txt", "--dry-run", "--json")
    assert result.code == 0, result.output
    steps = json.loads(result.stdout)["steps"]
    assert [(s["action"], s["sha"], s["reason"]) for s in steps] == [
        ("cherry-pick", cut_engine.shas[109], "regression")
    ]


# -- a milestone, a label ----------------------------------------------------------------


def test_a_milestones_merged_prs_are_planned_and_the_rest_said_not_pickable(
    cut_engine: SampleEngine, gh_standin: GhStandIn
) -> None:
    milestone_prs(cut_engine, gh_standin)
    before = repo_state(cut_engine.root)
    env = env_of(gh_standin)
    result = run_cli(
        cut_engine.root, "pick", "--milestone", "v0.1.1", "--dry-run", "--json", env=env
    )
    assert result.code == 0, result.output
    steps = json.loads(result.stdout)["steps"]
    assert [(s["action"], s.get("sha", s.get("pr"))) for s in steps] == [
        ("skip", cut_engine.shas[106]),
        ("cherry-pick", cut_engine.shas[109]),
        ("cherry-pick", cut_engine.shas[111]),
        ("not-pickable", 113),
        ("not-pickable", 114),
        ("not-pickable", 115),
    ]
    why = {s["pr"]: s["why"] for s in steps if s["action"] == "not-pickable"}
    assert why[113] == "open: not merged yet"
    assert why[114] == "closed without being merged"
    assert why[115] == "merged into releases/v0.0.9, not main"
    assert repo_state(cut_engine.root) == before  # a dry run
    assert gh_standin.calls()[0][:2] == ["pr", "list"]
    assert '--search=milestone:"v0.1.1"' in gh_standin.calls()[0]

    done = run_cli(
        cut_engine.root, "pick", "--milestone", "v0.1.1", "--reason", "regression", env=env
    )
    assert done.code == 0, done.output
    assert picked(cut_engine) == [cut_engine.shas[109], cut_engine.shas[111]]
    assert "not pickable #113 [Perf] Faster batching (open: not merged yet" in done.stdout
    assert "Cherry-pick-reason: regression" in cut_engine.repo.out("log", "-1", "--format=%b")


def test_a_pr_merged_in_another_repository_is_not_on_main(
    cut_engine: SampleEngine, gh_standin: GhStandIn
) -> None:
    """vllm-gaudi's #1745 as GitHub answers it, listed here: its squash commit is not in
    this repository and no commit here ends with (#1745)."""
    fixture = gh_standin.load_pr_fixture("vllm-project+vllm-gaudi-pr-1745", REPO)
    gh_standin.add_pr(REPO, {**fixture, "labels": [{"name": "cherry-pick"}]})
    result = run_cli(
        cut_engine.root, "pick", "--label", "cherry-pick", "--json", env=env_of(gh_standin)
    )
    assert result.code == 0, result.output
    [step] = json.loads(result.stdout)["steps"]
    assert (step["action"], step["pr"], step["url"]) == ("not-pickable", 1745, fixture["url"])
    assert step["why"] == (
        "merged, but its merge commit c459da1bcc is not on main and no commit there ends "
        "with (#1745) (fetch main?)"
    )
    assert cut_engine.repo.out("rev-list", "main..HEAD") == ""  # nothing picked


def test_a_label_picks_its_merged_prs(cut_engine: SampleEngine, gh_standin: GhStandIn) -> None:
    milestone_prs(cut_engine, gh_standin)
    result = run_cli(
        cut_engine.root, "pick", "--label", "cherry-pick", "--dry-run", env=env_of(gh_standin)
    )
    assert result.code == 0, result.output
    assert "1 to pick, 0 already there, 1 not pickable" in result.stdout
    assert "--label=cherry-pick" in gh_standin.calls()[0]


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("not-logged-in", "gh auth login"),
        ("rate-limit", "rate limit"),
        ("network", "cannot reach"),
        ("404", "not found, or not visible to gh's login"),
    ],
)
def test_a_github_fault_leaves_the_repository_as_it_was(
    cut_engine: SampleEngine, gh_standin: GhStandIn, kind: str, said: str
) -> None:
    milestone_prs(cut_engine, gh_standin)
    gh_standin.fault("pr list", kind)
    before = repo_state(cut_engine.root)
    result = run_cli(cut_engine.root, "pick", "--milestone", "v0.1.1", env=env_of(gh_standin))
    assert result.code == 1, result.output
    assert result.stderr.startswith("error: ") and len(result.stderr.strip().splitlines()) == 1
    assert said in result.stderr
    assert repo_state(cut_engine.root) == before
    again = run_cli(cut_engine.root, "pick", "--milestone", "v0.1.1", env=env_of(gh_standin))
    assert again.code == 0, again.output  # the fault was once: the re-run picks
    assert picked(cut_engine) == [cut_engine.shas[109], cut_engine.shas[111]]


# -- status ---------------------------------------------------------------------------


def _picks_file(engine: SampleEngine, text: str) -> None:
    Path(engine.root / "release-picks.txt").write_text(text)


def test_status_shows_the_milestones_pending_picks(
    cut_engine: SampleEngine, gh_standin: GhStandIn
) -> None:
    milestone_prs(cut_engine, gh_standin)
    _picks_file(cut_engine, "milestone: v0.1.1\n")
    result = run_cli(cut_engine.root, "status", "--offline", env=env_of(gh_standin))
    assert result.code == 0, result.output
    lines = result.stdout.splitlines()
    assert 'milestone "v0.1.1": 2 pending, 3 not pickable' in lines
    assert any(line.startswith(f"  pending  {cut_engine.shas[109][:10]}") for line in lines)
    assert any("not pickable  #114" in line for line in lines)
    data = json.loads(
        run_cli(cut_engine.root, "status", "--offline", "--json", env=env_of(gh_standin)).stdout
    )
    source = data["picks_from_github"][0]
    assert (source["source"], source["pending"], source["unread"]) == (
        'milestone "v0.1.1"',
        2,
        None,
    )
    assert [p["via"] for p in data["picks_pending"]] == ['milestone "v0.1.1"'] * 2


@pytest.mark.parametrize("kind", ["not-logged-in", "network", "rate-limit"])
def test_status_says_in_one_line_when_github_cannot_be_read(
    cut_engine: SampleEngine, gh_standin: GhStandIn, kind: str
) -> None:
    milestone_prs(cut_engine, gh_standin)
    _picks_file(cut_engine, f"milestone: v0.1.1\n{cut_engine.shas[109][:12]}\n")
    gh_standin.fault("pr list", kind)
    result = run_cli(cut_engine.root, "status", "--offline", env=env_of(gh_standin))
    assert result.code == 0, result.output
    unread = [line for line in result.stdout.splitlines() if "could not be read" in line]
    assert len(unread) == 1 and unread[0].startswith('milestone "v0.1.1": could not be read')
    assert "picks:    0 done, 1 pending" in result.stdout  # the rest as always
    gh_standin.fault("pr list", kind)
    _picks_file(cut_engine, "milestone: v0.1.1\n")  # nothing else pending: tag is not next
    said = run_cli(cut_engine.root, "status", "--offline", env=env_of(gh_standin)).stdout
    assert "next:     release pick --file release-picks.txt   (once GitHub can be read)" in said


def test_status_without_gh_at_all_still_answers(cut_engine: SampleEngine, tmp_path: Path) -> None:
    _picks_file(cut_engine, "milestone: v0.1.1\n")
    empty = tmp_path / "no-gh"
    empty.mkdir()
    env = {"PATH": f"{empty}:{os.path.dirname(os.path.realpath('/usr/bin/git'))}"}
    result = run_cli(cut_engine.root, "status", "--offline", env=env)
    assert result.code == 0, result.output
    assert "could not be read from GitHub" in result.stdout and "gh" in result.stdout


def test_status_asks_github_nothing_when_the_picks_file_names_no_milestone(
    cut_engine: SampleEngine, gh_standin: GhStandIn
) -> None:
    _picks_file(cut_engine, "#109\n")
    result = run_cli(cut_engine.root, "status", "--offline", env=env_of(gh_standin))
    assert result.code == 0, result.output
    assert "pending" in result.stdout
    assert gh_standin.calls() == []


def test_pick_help_says_what_it_takes(cut_engine: SampleEngine) -> None:
    text = run_cli(cut_engine.root, "pick", "--help").stdout
    for said in (
        "--milestone NAME",
        "--label NAME",
        "https://HOST/ORG/REPO/pull/N",
        "milestone: NAME",
    ):
        assert said in text, text


def test_reverts_with_none_found_still_pick_the_milestone(
    cut_engine: SampleEngine, gh_standin: GhStandIn
) -> None:
    """``--reverts`` that finds none stops early only when nothing else was asked."""
    milestone_prs(cut_engine, gh_standin)
    result = run_cli(
        cut_engine.root,
        "pick",
        "--reverts",
        "--milestone",
        "v0.1.1",
        "--dry-run",
        env=env_of(gh_standin),
    )
    assert result.code == 0, result.output
    assert f"cherry-pick -x {cut_engine.shas[109][:10]}" in result.stdout
    assert "3 not pickable" in result.stdout

"""The GitHub adapter against the recording stand-in for gh: pull requests viewed, listed
and created, releases viewed, created, edited and uploaded to, each fault kind failing as
gh fails, and the stand-in refusing what it does not know."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from release.adapters.github import Gh, PullRequestExists
from release.core import gh_commands
from release.core.github import PR_FIELDS, GitHubRepo
from release.errors import GitHubError
from tests.conftest import GIT_ENV
from tests.github_support import FIXTURES, MERGED_PR, RELEASE, GhStandIn

GAUDI = GitHubRepo("github.com", "vllm-project", "vllm-gaudi")
SPEC = GAUDI.spec
GHE = GitHubRepo("ghe.example.com", "org", "engine")


def gh(standin: GhStandIn, repo: GitHubRepo = GAUDI) -> Gh:
    return Gh(repo, env=standin.env(os.environ))


def a_pr(number: int, **fields: Any) -> dict[str, Any]:
    return {
        **MERGED_PR,
        "number": number,
        "url": GAUDI.pr_url(number),
        "headRefName": f"dev/{number}",
        **fields,
    }


# -- pull requests ------------------------------------------------------------------------


def test_a_pr_is_viewed_with_the_fields_read(gh_standin: GhStandIn) -> None:
    gh_standin.add_pr(SPEC, a_pr(1745))
    pr = gh(gh_standin).pr(1745)
    assert pr is not None and (pr.number, pr.merge_commit, pr.milestone) == (
        1745,
        "a" * 40,
        "v0.11.0",
    )
    assert gh_standin.calls() == [gh_commands.pr_view(GAUDI, 1745)]


def test_a_pr_that_is_not_there_is_none(gh_standin: GhStandIn) -> None:
    assert gh(gh_standin).pr(9) is None
    assert gh_standin.calls() == [gh_commands.pr_view(GAUDI, 9)]


def test_prs_are_listed_by_state_milestone_label_head_and_base(gh_standin: GhStandIn) -> None:
    gh_standin.add_pr(SPEC, a_pr(1, title="Fix the scheduler"))
    gh_standin.add_pr(SPEC, a_pr(2, milestone={"title": "v0.12.0"}, labels=[]))
    gh_standin.add_pr(SPEC, a_pr(3, state="OPEN", mergeCommit=None, mergedAt=None))
    gh_standin.add_pr(SPEC, a_pr(4, state="CLOSED", mergeCommit=None, baseRefName="releases/v1"))
    client = gh(gh_standin)

    def numbers(**query: Any) -> list[int]:
        return [pr.number for pr in client.prs(**query)]

    assert numbers(state="all") == [4, 3, 2, 1]
    assert numbers(state="merged") == [2, 1]
    assert numbers(state="closed") == [4, 2, 1]
    assert numbers(state="open") == [3]
    assert numbers(state="merged", search=gh_commands.milestone_search("v0.11.0")) == [1]
    assert numbers(state="all", search="scheduler") == [1]
    assert numbers(state="all", label="bug") == [4, 3, 1]
    assert numbers(state="all", head="dev/3") == [3]
    assert numbers(state="all", base="releases/v1") == [4]
    assert gh_standin.calls()[1] == gh_commands.pr_list(GAUDI, state="merged")


def test_a_pr_is_created_with_its_body_through_a_file_removed_after(
    gh_standin: GhStandIn,
) -> None:
    url = gh(gh_standin).create_pr(
        base="releases/v0.11.0", head="pick/1745", title="[Cherry-pick] Fix (#1745)",
        body="Picks #1745.\n\n--web is text here\n", labels=("cherry-pick",), milestone="v0.11.0",
    )  # fmt: skip
    assert url == GAUDI.pr_url(1)
    (pr,) = gh_standin.prs(SPEC)
    assert (pr["state"], pr["baseRefName"], pr["headRefName"], pr["title"]) == (
        "OPEN", "releases/v0.11.0", "pick/1745", "[Cherry-pick] Fix (#1745)",
    )  # fmt: skip
    assert pr["labels"] == [{"name": "cherry-pick"}] and pr["milestone"]["title"] == "v0.11.0"
    (call,) = gh_standin.sent()
    assert call["files"]["--body-file"] == "Picks #1745.\n\n--web is text here\n"
    body_file = next(a for a in call["argv"] if a.startswith("--body-file=")).split("=", 1)[1]
    assert not Path(body_file).exists() and not Path(body_file).parent.exists()


def test_a_second_pr_of_the_same_branches_is_refused_with_the_first_ones_url(
    gh_standin: GhStandIn,
) -> None:
    client = gh(gh_standin)
    first = client.create_pr(base="releases/v1", head="pick/1", title="t", body="b")
    with pytest.raises(PullRequestExists) as caught:
        client.create_pr(base="releases/v1", head="pick/1", title="t", body="b")
    assert caught.value.url == first and len(gh_standin.prs(SPEC)) == 1
    gh_standin.set_pr_state(SPEC, 1, "MERGED", "c" * 40)
    assert client.create_pr(base="releases/v1", head="pick/1", title="t", body="b") == GAUDI.pr_url(
        2
    )
    merged = client.pr(1)
    assert merged is not None and (merged.state, merged.merge_commit) == ("MERGED", "c" * 40)


def git(*args: str, cwd: Path | None = None) -> str:
    env = {**os.environ, **GIT_ENV}
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return proc.stdout.strip()


def test_a_pr_of_a_branch_not_pushed_is_refused_as_github_refuses_it(
    gh_standin: GhStandIn, tmp_path: Path
) -> None:
    remote, work = tmp_path / "remote.git", tmp_path / "work"
    git("init", "-q", "--bare", "-b", "main", str(remote))
    git("init", "-q", "-b", "main", str(work))
    git("commit", "-q", "--allow-empty", "-m", "first", cwd=work)
    git("push", "-q", str(remote), "main:main", "main:releases/v1", cwd=work)
    gh_standin.link_remote(SPEC, remote)
    client = gh(gh_standin)
    with pytest.raises(GitHubError, match="Head sha can't be blank"):
        client.create_pr(base="releases/v1", head="pick/1", title="t", body="b")
    assert gh_standin.prs(SPEC) == []
    git("commit", "-q", "--allow-empty", "-m", "the pick", cwd=work)
    git("push", "-q", str(remote), "main:pick/1", cwd=work)
    client.create_pr(base="releases/v1", head="pick/1", title="t", body="b")
    assert gh_standin.prs(SPEC)[0]["headRefOid"] == git("rev-parse", "HEAD", cwd=work)


# -- releases ---------------------------------------------------------------------------------


def test_a_release_is_created_viewed_edited_and_uploaded_to(
    gh_standin: GhStandIn, tmp_path: Path
) -> None:
    page, manifest = tmp_path / "rc.html", tmp_path / "manifest.json"
    page.write_text("<p>rc</p>\n", encoding="utf-8")
    manifest.write_text('{"v": 1}\n', encoding="utf-8")
    client = gh(gh_standin, GHE)
    assert client.release("v0.11.0rc1") is None
    client.create_release(
        "v0.11.0rc1", title="v0.11.0rc1", notes="## Fixes\n", prerelease=True, latest=False,
        files=(page, manifest),
    )  # fmt: skip
    made = client.release("v0.11.0rc1")
    assert made is not None and made.is_prerelease and made.assets == ("rc.html", "manifest.json")
    assert (
        made.body == "## Fixes\n"
        and made.url == "https://ghe.example.com/org/engine/releases/tag/v0.11.0rc1"
    )
    client.edit_release("v0.11.0rc1", title="v0.11.0rc1", notes="## Fixes\n- one\n",
                        prerelease=False, latest=True)  # fmt: skip
    manifest.write_text('{"v": 2}\n', encoding="utf-8")
    client.upload("v0.11.0rc1", [manifest])
    (release,) = gh_standin.releases(GHE.spec)
    assert (release["body"], release["isPrerelease"], release["isLatest"]) == (
        "## Fixes\n- one\n",
        False,
        True,
    )
    assert [a["name"] for a in release["assets"]] == ["rc.html", "manifest.json"]
    assert gh_standin.asset(GHE.spec, "v0.11.0rc1", "manifest.json") == b'{"v": 2}\n'
    assert [call[:2] for call in gh_standin.calls()] == [
        ["release", "view"], ["release", "create"], ["release", "view"], ["release", "edit"],
        ["release", "upload"],
    ]  # fmt: skip
    assert all(
        call[call.index("--repo") + 1] == "ghe.example.com/org/engine"
        for call in gh_standin.calls()
    )


def test_a_release_made_twice_or_edited_before_it_is_made_is_refused(
    gh_standin: GhStandIn,
) -> None:
    gh_standin.add_release(SPEC, RELEASE)
    client = gh(gh_standin)
    with pytest.raises(GitHubError, match=r"has a release v0\.11\.0rc1 already: edit it instead"):
        client.create_release("v0.11.0rc1", title="t", notes="n", prerelease=True, latest=False)
    with pytest.raises(GitHubError, match="has no release v9"):
        client.edit_release("v9", title="t", notes="n", prerelease=False, latest=True)
    assert len(gh_standin.releases(SPEC)) == 1


# -- faults -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("not-logged-in", "gh is not logged in to github.com: run `gh auth login` or set GH_TOKEN"),
        ("rate-limit", "GitHub's API rate limit: try again later"),
        ("network", "cannot reach api.github.com: check the network"),
        ("404", "not found, or not visible to gh's login"),
    ],
)
def test_each_fault_fails_as_gh_fails_and_changes_nothing(
    gh_standin: GhStandIn, kind: str, expected: str
) -> None:
    gh_standin.fault("pr create", kind, times=2)
    client = gh(gh_standin)
    for _ in range(2):
        with pytest.raises(GitHubError) as caught:
            client.create_pr(base="releases/v1", head="pick/1", title="t", body="b")
        assert expected in caught.value.one_line()
    assert gh_standin.prs(SPEC) == []
    assert client.create_pr(base="releases/v1", head="pick/1", title="t", body="b")
    assert len(gh_standin.calls()) == 3


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda g: g.pr(5), None),
        (lambda g: g.release("v1"), None),
        (lambda g: g.upload("v1", [Path(__file__)]), "has no release v1"),
    ],
)
def test_a_404_on_a_pr_or_a_release_is_gh_s_own(
    gh_standin: GhStandIn, call: Any, expected: str | None
) -> None:
    gh_standin.add_pr(SPEC, a_pr(5))
    gh_standin.add_release(SPEC, {**RELEASE, "tagName": "v1"})
    gh_standin.fault(SPEC, "404")
    if expected is None:
        assert call(gh(gh_standin)) is None
    else:
        with pytest.raises(GitHubError, match=expected):
            call(gh(gh_standin))


def test_a_fault_on_an_enterprise_host_names_that_host(gh_standin: GhStandIn) -> None:
    gh_standin.fault("release view", "network")
    with pytest.raises(GitHubError, match=r"cannot reach ghe\.example\.com"):
        gh(gh_standin, GHE).release("v1")
    gh_standin.fault("release view", "not-logged-in")
    with pytest.raises(GitHubError, match=r"gh auth login --hostname ghe\.example\.com"):
        gh(gh_standin, GHE).release("v1")


@pytest.mark.parametrize(
    "argv",
    [
        ["pr", "view", "1", "--repo", SPEC, "--json", "number", "--web"],
        ["pr", "view", "1", "--repo", SPEC],
        ["pr", "merge", "1", "--repo", SPEC],
        ["pr", "list", "--repo", SPEC, "--search", "author:someone", "--json", "number"],
        ["pr", "create", "--repo", SPEC, "--title", "t"],
        ["release", "delete", "v1", "--repo", SPEC],
        ["pr", "list", "--json", "number"],
    ],
)
def test_the_standin_refuses_what_it_does_not_know(gh_standin: GhStandIn, argv: list[str]) -> None:
    proc = subprocess.run(
        [gh_standin.executable, *argv], env=gh_standin.env(os.environ), capture_output=True,
        text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 1 and proc.stderr.startswith("gh stand-in: unsupported: ")
    assert gh_standin.calls() == [argv]


def test_the_standin_prints_only_the_fields_asked_for(gh_standin: GhStandIn) -> None:
    gh_standin.add_pr(SPEC, a_pr(7))
    proc = subprocess.run(
        ["gh", "pr", "view", "7", "-R", SPEC, "--json", "number,state"],
        env=gh_standin.env(os.environ), capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert proc.stdout == '{"number":7,"state":"MERGED"}\n'
    proc = subprocess.run(
        ["gh", "pr", "view", "7", "-R", SPEC, "--json", "isLatest"],
        env=gh_standin.env(os.environ), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert (proc.returncode, proc.stderr) == (1, "Unknown JSON field: isLatest\n")


def test_a_release_refused_by_a_fault_is_not_made_and_a_rerun_makes_it(
    gh_standin: GhStandIn, tmp_path: Path
) -> None:
    notes = tmp_path / "manifest.json"
    notes.write_text("{}\n", encoding="utf-8")
    gh_standin.fault("release create v0.11.0", "rate-limit")
    client = gh(gh_standin)
    with pytest.raises(GitHubError, match="rate limit"):
        client.create_release("v0.11.0", title="v0.11.0", notes="n", prerelease=False, latest=True,
                              files=[notes])  # fmt: skip
    assert gh_standin.releases(SPEC) == []
    client.create_release("v0.11.0", title="v0.11.0", notes="n", prerelease=False, latest=True,
                          files=[notes])  # fmt: skip
    (release,) = gh_standin.releases(SPEC)
    assert (release["isLatest"], release["isPrerelease"], release["assets"][0]["name"]) == (
        True, False, "manifest.json",
    )  # fmt: skip


# -- the fixtures of real PRs ---------------------------------------------------------------

FIXTURE_NAMES = sorted(path.stem for path in FIXTURES.glob("*.json"))


def test_there_are_fixtures_and_the_readme_names_each() -> None:
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    assert FIXTURE_NAMES and all(f"`{name}.json`" in readme for name in FIXTURE_NAMES)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_a_fixture_is_a_real_pr_as_gh_prints_it(gh_standin: GhStandIn, name: str) -> None:
    owner_repo, number = name.rsplit("-pr-", 1)
    repo = GitHubRepo("github.com", *owner_repo.split("+", 1))
    pr_json = gh_standin.load_pr_fixture(name)
    assert set(pr_json) == set(PR_FIELDS)
    pr = gh(gh_standin, repo).pr(int(number))
    assert pr is not None and pr.url == repo.pr_url(int(number))
    assert pr.merged and pr.merge_commit and pr.head_oid and pr.merged_at and pr.author
    assert gh(gh_standin, repo).prs(state="merged", head=pr.head) == [pr]


def test_a_fixture_can_stand_for_another_repository(gh_standin: GhStandIn) -> None:
    gh_standin.load_pr_fixture("vllm-project+vllm-gaudi-pr-1745", GHE.spec)
    pr = gh(gh_standin, GHE).pr(1745)
    assert pr is not None and pr.title.startswith("Fix decode-block clamp")

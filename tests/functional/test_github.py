"""GitHub's foundation: repositories named by URLs and specs, PR links, the records read from
``gh --json`` (every field checked), the command lines built for gh, the ``[tool.release.github]``
table, and how each failure of gh becomes one line saying what to do, with no token in it.

The error mapping runs a program at the subprocess boundary that answers as gh does (the
texts recorded from gh 2.23 in the adapter's tests below), and the real gh where it is
installed (it reaches no GitHub here: a network failure)."""

from __future__ import annotations

import copy
import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from release.adapters.github import Gh, PullRequestExists, repo_for
from release.core import gh_commands
from release.core.config import config_from_mapping
from release.core.github import (
    PR_FIELDS,
    RELEASE_FIELDS,
    GitHubRepo,
    parse_repo_spec,
    pr_link,
    pull_request_of,
    release_of,
    repo_of_url,
)
from release.errors import ConfigError, GitHubError, ReleaseError
from tests.github_support import MERGED_PR, RELEASE

GAUDI = GitHubRepo("github.com", "vllm-project", "vllm-gaudi")
GHE = GitHubRepo("ghe.example.com", "org", "engine")
TOKEN = "ghp_" + "T0kenOfTheTests" * 3  # GitHub's token shape, so the pattern knows it too
PLAIN_TOKEN = "plain-secret-of-the-tests-42"  # a value only the environment names

# -- repositories ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/vllm-project/vllm-gaudi", GAUDI),
        ("https://github.com/vllm-project/vllm-gaudi.git", GAUDI),
        ("https://github.com/vllm-project/vllm-gaudi/", GAUDI),
        ("http://GitHub.com/vllm-project/vllm-gaudi.git/", GAUDI),
        ("https://x-access-token:abc@github.com/vllm-project/vllm-gaudi.git", GAUDI),
        ("git@github.com:vllm-project/vllm-gaudi.git", GAUDI),
        ("git@github.com:vllm-project/vllm-gaudi", GAUDI),
        ("ssh://git@github.com/vllm-project/vllm-gaudi.git", GAUDI),
        ("ssh://git@github.com:22/vllm-project/vllm-gaudi", GAUDI),
        ("git://github.com/vllm-project/vllm-gaudi", GAUDI),
        ("https://ghe.example.com/org/engine.git", GHE),
        ("git@ghe.example.com:org/engine.git", GHE),
        (
            "https://ghe.example.com:8443/org/engine",
            GitHubRepo("ghe.example.com:8443", "org", "engine"),
        ),
        ("https://github.com/pytorch/ao", GitHubRepo("github.com", "pytorch", "ao")),
    ],
)
def test_a_remote_or_web_url_names_its_repository(url: str, expected: GitHubRepo) -> None:
    assert repo_of_url(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "/srv/git/engine.git",
        "../remote.git",
        "remote.git",
        "file:///srv/org/engine.git",
        "C:/org/engine",
        "https://github.com/vllm-project",
        "https://gitlab.example.com/group/sub/engine",
        "https://github.com/vllm-project/vllm-gaudi/pull/1745",
        "ftp://github.com/org/engine",
        "https://github.com/-org/engine",
        "https://github.com/org/..",
        "https://github.com/org/engine?ref=x",
        "git@github.com:org/engine\n--upload-pack=x",
        "https://github.com/org/en gine",
        "",
    ],
)
def test_a_local_path_or_anything_else_names_none(url: str) -> None:
    assert repo_of_url(url) is None


def test_a_repository_spells_its_spec_slug_and_urls() -> None:
    assert (GAUDI.spec, GAUDI.slug, GAUDI.url) == (
        "vllm-project/vllm-gaudi",
        "vllm-project/vllm-gaudi",
        "https://github.com/vllm-project/vllm-gaudi",
    )
    assert GAUDI.pr_url(1745) == "https://github.com/vllm-project/vllm-gaudi/pull/1745"
    assert (GHE.spec, GHE.url) == (
        "ghe.example.com/org/engine",
        "https://ghe.example.com/org/engine",
    )
    assert GAUDI.same(GitHubRepo("github.com", "VLLM-Project", "vLLM-Gaudi"))
    assert not GAUDI.same(GitHubRepo("ghe.example.com", "vllm-project", "vllm-gaudi"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("vllm-project/vllm-gaudi", GAUDI),
        ("github.com/vllm-project/vllm-gaudi", GAUDI),
        ("ghe.example.com/org/engine", GHE),
        ("ghe.example.com/org/engine.git", GHE),
    ],
)
def test_a_spec_names_a_repository(text: str, expected: GitHubRepo) -> None:
    assert parse_repo_spec(text, "[tool.release.github] repo") == expected


@pytest.mark.parametrize(
    "text",
    [
        "vllm-gaudi",
        "a/b/c/d",
        "--repo=evil/x",
        "-o/r",
        "o/r; rm -rf ~",
        "o/r\n",
        "o/r\x1b[2J",
        "../o/r",
        "o/..",
        "https://github.com/o/r",
        "o/r/",
        "",
    ],
)
def test_a_spec_that_is_not_one_is_refused_naming_where(text: str) -> None:
    with pytest.raises(ConfigError, match=r"^\[tool.release.github\] repo: ") as caught:
        parse_repo_spec(text, "[tool.release.github] repo")
    assert "\n" not in caught.value.one_line() and "\x1b" not in caught.value.one_line()


def test_a_repository_of_other_shapes_cannot_be_made() -> None:
    with pytest.raises(GitHubError):
        GitHubRepo("github.com", "--upload-pack=x", "r")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://github.com/vllm-project/vllm-gaudi/pull/1745", (GAUDI, 1745)),
        ("  https://github.com/vllm-project/vllm-gaudi/pull/1745/  ", (GAUDI, 1745)),
        ("https://github.com/vllm-project/vllm-gaudi/pull/1745/files", (GAUDI, 1745)),
        ("https://github.com/vllm-project/vllm-gaudi/pull/1745/commits", (GAUDI, 1745)),
        ("https://github.com/vllm-project/vllm-gaudi/pull/1745/commits/0123abc", (GAUDI, 1745)),
        ("https://github.com/vllm-project/vllm-gaudi/pull/1745#issuecomment-1", (GAUDI, 1745)),
        ("https://ghe.example.com/org/engine/pull/7?w=1", (GHE, 7)),
    ],
)
def test_a_pr_link_names_its_repository_and_number(
    text: str, expected: tuple[GitHubRepo, int]
) -> None:
    assert pr_link(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "#1745",
        "1745",
        "https://github.com/vllm-project/vllm-gaudi/issues/1745",
        "https://github.com/vllm-project/vllm-gaudi/pull/0",
        "https://github.com/vllm-project/vllm-gaudi/pull/17x",
        "https://github.com/vllm-project/vllm-gaudi/pull/1745/files extra",
        "https://github.com/vllm-project/pull/1745",
        "ftp://github.com/vllm-project/vllm-gaudi/pull/1745",
        "https://github.com/vllm-project/vllm-gaudi/pull/1745\n--force",
    ],
)
def test_anything_else_is_no_pr_link(text: str) -> None:
    assert pr_link(text) is None


# -- records ----------------------------------------------------------------------------


def test_a_merged_pr_is_read_into_its_record() -> None:
    pr = pull_request_of(MERGED_PR)
    assert (pr.number, pr.state, pr.merged, pr.merge_commit, pr.base, pr.head) == (
        1745, "MERGED", True, "a" * 40, "main", "dev/fix-latest",
    )  # fmt: skip
    assert (pr.head_oid, pr.labels, pr.milestone, pr.author, pr.merged_at) == (
        "b" * 40, ("bug",), "v0.11.0", "someone", "2025-09-01T10:00:00Z",
    )  # fmt: skip


def test_an_open_pr_has_no_merge_commit_milestone_or_time() -> None:
    obj = {**MERGED_PR, "state": "OPEN", "mergeCommit": None, "milestone": None}
    pr = pull_request_of({**obj, "mergedAt": "0001-01-01T00:00:00Z", "labels": []})
    assert (pr.merge_commit, pr.milestone, pr.merged_at, pr.labels, pr.merged) == (
        None, None, None, (), False,
    )  # fmt: skip
    assert pull_request_of({**obj, "mergedAt": None}).merged_at is None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda o: o.update(number="1745"), "number"),
        (lambda o: o.update(number=True), "number"),
        (lambda o: o.update(number=0), "number"),
        (lambda o: o.update(title=None), "title"),
        (lambda o: o.update(state="DRAFT"), "state"),
        (lambda o: o.update(mergeCommit={"oid": "not-a-sha"}), "mergeCommit"),
        (lambda o: o.update(mergeCommit="a" * 40), "mergeCommit"),
        (lambda o: o.update(baseRefName="--force"), "baseRefName"),
        (lambda o: o.update(headRefName="a\nb"), "headRefName"),
        (lambda o: o.update(headRefOid=12), "headRefOid"),
        (lambda o: o.update(labels=["bug"]), "labels"),
        (lambda o: o.update(labels={"name": "bug"}), "labels"),
        (lambda o: o.update(milestone="v0.11.0"), "milestone"),
        (lambda o: o.update(url="https://x\x1b[2J"), "url"),
        (lambda o: o.update(author="someone"), "author"),
        (lambda o: o.update(mergedAt=5), "mergedAt"),
        (lambda o: o.pop("mergeCommit"), "mergeCommit"),
    ],
)
def test_a_pr_with_a_wrong_field_is_refused_naming_it(change: Any, field: str) -> None:
    obj = copy.deepcopy(MERGED_PR)
    change(obj)
    with pytest.raises(GitHubError, match=field):
        pull_request_of(obj)


@pytest.mark.parametrize("answer", [None, [], "a PR", 1745])
def test_an_answer_that_is_no_object_is_refused(answer: object) -> None:
    with pytest.raises(GitHubError, match="not an object"):
        pull_request_of(answer)
    with pytest.raises(GitHubError, match="not an object"):
        release_of(answer)


def test_a_release_is_read_into_its_record() -> None:
    found = release_of(RELEASE)
    assert (found.tag, found.is_prerelease, found.is_draft, found.assets) == (
        "v0.11.0rc1", True, False, ("manifest.json",),
    )  # fmt: skip
    assert found.body == RELEASE["body"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda o: o.update(isPrerelease="true"), "isPrerelease"),
        (lambda o: o.update(isDraft=None), "isDraft"),
        (lambda o: o.update(assets=[{"size": 1}]), "assets"),
        (lambda o: o.update(tagName="v1\nv2"), "tagName"),
        (lambda o: o.update(body=["x"]), "body"),
        (lambda o: o.pop("url"), "url"),
    ],
)
def test_a_release_with_a_wrong_field_is_refused_naming_it(change: Any, field: str) -> None:
    obj = copy.deepcopy(RELEASE)
    change(obj)
    with pytest.raises(GitHubError, match=field):
        release_of(obj)


def test_the_fields_read_are_the_ones_asked_for() -> None:
    assert set(MERGED_PR) == set(PR_FIELDS) and set(RELEASE) == set(RELEASE_FIELDS)


# -- command lines ----------------------------------------------------------------------


def test_command_lines_name_the_repository_and_the_fields() -> None:
    assert gh_commands.pr_view(GAUDI, 1745) == [
        "pr", "view", "1745", "--repo", "vllm-project/vllm-gaudi", "--json", ",".join(PR_FIELDS),
    ]  # fmt: skip
    listed = gh_commands.pr_list(GHE, state="merged", search='milestone:"v1"', label="bug")
    assert listed[:3] == ["pr", "list", "--repo"] and listed[3] == "ghe.example.com/org/engine"
    assert {"--state=merged", "--limit=1000", '--search=milestone:"v1"', "--label=bug"} <= set(
        listed
    )
    upload = gh_commands.release_upload(GAUDI, "v1.0.0", ["/tmp/a.json"])
    assert upload[-1] == "--clobber" and upload[2:4] == ["v1.0.0", "/tmp/a.json"]
    created = gh_commands.release_create(
        GAUDI, "v1.0.0rc1", title="v1.0.0rc1", notes_file="/n.md", prerelease=True, latest=False
    )
    assert {"--prerelease=true", "--latest=false", "--verify-tag", "--notes-file=/n.md"} <= set(
        created
    )


def test_a_free_text_value_stays_in_its_flags_argument() -> None:
    argv = gh_commands.pr_create(
        GAUDI, base="releases/v1", head="pick/1", title="--web", body_file="/b.md",
        labels=("cherry-pick",), milestone="-m x",
    )  # fmt: skip
    assert "--title=--web" in argv and "--milestone=-m x" in argv and "--web" not in argv
    assert "--label=cherry-pick" in argv


@pytest.mark.parametrize(
    "build",
    [
        lambda: gh_commands.release_view(GAUDI, "--web"),
        lambda: gh_commands.release_upload(GAUDI, "v1", ["-rf"]),
        lambda: gh_commands.release_upload(GAUDI, "v1", ["/tmp/a.json#label"]),
        lambda: gh_commands.release_upload(GAUDI, "v1", []),
        lambda: gh_commands.pr_list(GAUDI, state="draft"),
        lambda: gh_commands.pr_list(GAUDI, state="open", label="a,b"),
        lambda: gh_commands.pr_list(GAUDI, state="open", head="x\ny"),
        lambda: gh_commands.pr_view(GAUDI, 0),
        lambda: gh_commands.milestone_search('v1" is:open'),
        lambda: gh_commands.release_edit(
            GAUDI, "v1", title="a\x1b[2J", notes_file="/n", prerelease=False, latest=True
        ),
    ],
)
def test_a_value_gh_would_read_otherwise_is_refused(build: Any) -> None:
    with pytest.raises(GitHubError):
        build()


def test_every_builder_is_listed_for_the_help_check() -> None:
    public = {name for name in gh_commands.__all__ if name.startswith(("pr_", "release_"))}
    assert {name for name, _ in gh_commands.ALL_BUILDERS} == public
    assert gh_commands.milestone_search("v0.11.0") == 'milestone:"v0.11.0"'


# -- configuration ----------------------------------------------------------------------


def test_the_github_table_defaults_and_values() -> None:
    assert config_from_mapping({}).github.repo is None
    defaults = config_from_mapping({}).github
    assert (defaults.protected, defaults.pick_label, defaults.release) == (
        False,
        "cherry-pick",
        True,
    )
    table = {"repo": "ghe.example.com/org/engine", "protected": True, "pick-label": "backport",
             "release": False}  # fmt: skip
    github = config_from_mapping({"github": table}).github
    assert (github.repo, github.protected, github.pick_label, github.release) == (
        GHE, True, "backport", False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"repo": "engine"}, r"github\] repo: expected"),
        ({"repo": 5}, r"github\] repo: expected"),
        ({"protected": "yes"}, r"github\] protected: expected true or false"),
        ({"release": 1}, r"github\] release: expected true or false"),
        ({"pick-label": "a,b"}, r"github\] pick-label"),
        ({"pick-label": ""}, r"github\] pick-label"),
        ({"pick-label": "x" * 51}, r"github\] pick-label"),
        ({"repos": "o/r"}, r"github\].*'repos'.*did you mean 'repo'"),
        ("o/r", r"github\]: expected a table"),
        ({"repo": "${{ github.repository }}"}, r"\$\{\{"),
    ],
)
def test_a_wrong_github_table_is_refused_naming_the_key(table: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        config_from_mapping({"github": table})


@pytest.mark.parametrize(
    ("table", "remote", "expected"),
    [
        ({"github": {"repo": "ghe.example.com/org/engine"}, "repo-url": "https://github.com/a/b"},
         "git@github.com:c/d.git", GHE),
        ({"repo-url": "https://github.com/vllm-project/vllm-gaudi"}, "/srv/remote.git", GAUDI),
        ({"repo-url": "https://git.example.com/a/b/c"}, "git@ghe.example.com:org/engine.git", GHE),
        ({}, "ssh://git@github.com/vllm-project/vllm-gaudi.git", GAUDI),
        ({}, "/srv/remote.git", None),
        ({}, None, None),
    ],
)  # fmt: skip
def test_the_repository_is_found_from_config_then_repo_url_then_the_remote(
    table: dict[str, Any], remote: str | None, expected: GitHubRepo | None
) -> None:
    assert repo_for(config_from_mapping(table), remote) == expected


# -- failures of gh ----------------------------------------------------------------------

NOT_LOGGED_IN = (
    "To get started with GitHub CLI, please run:  gh auth login\n"
    "Alternatively, populate the GH_TOKEN environment variable with a GitHub API "
    "authentication token.\n"
)
NO_NETWORK = (
    "error connecting to api.github.com\ncheck your internet connection or "
    "https://githubstatus.com\n"
)
NO_PR = (
    "GraphQL: Could not resolve to a PullRequest with the number of 9. (repository.pullRequest)\n"
)


def answering(tmp_path: Path, *, stderr: str = "", stdout: str = "", code: int = 0) -> str:
    """A program that answers every call as gh would here (and says the token it was
    given, as a careless or hostile program might): its path."""
    path = tmp_path / "gh"
    path.write_text(
        f"#!{sys.executable}\nimport os, sys\n"
        f"sys.stdout.write({stdout!r})\n"
        f"sys.stderr.write({stderr!r} + os.environ.get('GH_TOKEN', '') + ' '"
        " + os.environ.get('GITHUB_TOKEN', '') + '\\n')\n"
        f"sys.exit({code})\n",
        encoding="utf-8",
    )
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def failure(gh: Gh, call: Any) -> str:
    with pytest.raises(GitHubError) as caught:
        call(gh)
    return caught.value.one_line()


@pytest.mark.parametrize(
    ("stderr", "code", "expected"),
    [
        (NOT_LOGGED_IN, 4, "run `gh auth login` or set GH_TOKEN"),
        (NO_NETWORK, 1, "cannot reach api.github.com: check the network"),
        ("GraphQL: API rate limit exceeded\n", 1, "GitHub's API rate limit: try again later"),
        ("API rate limit exceeded for 203.0.113.9.\n", 1, "GitHub's API rate limit: try again later"),
        ("GraphQL: Could not resolve to a Repository with the name 'o/r'. (repository)\n", 1,
         "not found, or not visible to gh's login"),
        ("something new\x1b[2J\n", 2, "gh pr list failed (exit 2): something new\\x1b[2J"),
    ],
)  # fmt: skip
def test_each_failure_of_gh_is_one_line_saying_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stderr: str, code: int, expected: str
) -> None:
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_TOKEN", PLAIN_TOKEN)
    gh = Gh(GAUDI, executable=answering(tmp_path, stderr=stderr, code=code))
    message = failure(gh, lambda g: g.prs(state="open"))
    assert expected in message
    assert TOKEN not in message and PLAIN_TOKEN not in message and "\x1b" not in message


def test_a_token_given_to_gh_alone_is_never_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    program = answering(tmp_path, stderr="failed: ", code=1)
    gh = Gh(GHE, env={"GITHUB_TOKEN": PLAIN_TOKEN + "-env"}, executable=program)
    message = failure(gh, lambda g: g.release("v1.0.0"))
    assert "failed" in message and PLAIN_TOKEN not in message


def test_a_404_is_none_where_it_means_none(tmp_path: Path) -> None:
    assert Gh(GAUDI, executable=answering(tmp_path, stderr=NO_PR, code=1)).pr(9) is None
    assert (
        Gh(GAUDI, executable=answering(tmp_path, stderr="release not found", code=1)).release("v9")
        is None
    )


def test_an_existing_pr_is_said_with_its_url(tmp_path: Path) -> None:
    url = "https://github.com/vllm-project/vllm-gaudi/pull/12"
    said = f'a pull request for branch "pick/1" into branch "releases/v1" already exists:\n{url}\n'
    gh = Gh(GAUDI, executable=answering(tmp_path, stderr=said, code=1))
    with pytest.raises(PullRequestExists) as caught:
        gh.create_pr(base="releases/v1", head="pick/1", title="t", body="b")
    assert caught.value.url == url and caught.value.exit_code == 1


def test_an_answer_that_is_not_json_or_not_a_pr_is_refused(tmp_path: Path) -> None:
    gh = Gh(GAUDI, executable=answering(tmp_path, stdout="<html>"))
    assert "not JSON" in failure(gh, lambda g: g.pr(1))
    gh = Gh(GAUDI, executable=answering(tmp_path, stdout='{"number": "1"}'))
    assert "lacks" in failure(gh, lambda g: g.pr(1))
    gh = Gh(GAUDI, executable=answering(tmp_path, stdout="{}"))
    assert "not a list" in failure(gh, lambda g: g.prs(state="all"))


def test_gh_missing_says_to_install_it(tmp_path: Path) -> None:
    message = failure(Gh(GAUDI, executable=str(tmp_path / "no-gh")), lambda g: g.pr(1))
    assert "install GitHub's CLI, gh" in message and "gh auth login" in message


def test_a_github_error_is_a_release_error_of_exit_1() -> None:
    assert issubclass(GitHubError, ReleaseError) and GitHubError("x").exit_code == 1


REAL_GH = shutil.which("gh", path="/usr/bin") or shutil.which("gh")


@pytest.mark.skipif(REAL_GH is None, reason="gh (GitHub's CLI) is not installed")
def test_the_real_gh_unreached_fails_in_one_line_without_the_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a token and no network, the real gh fails to connect: one line, no token."""
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    monkeypatch.setenv("GH_CONFIG_DIR", os.path.join(os.environ["HOME"], ".config", "gh"))
    assert REAL_GH is not None
    message = failure(Gh(GAUDI, executable=REAL_GH), lambda g: g.pr(1745))
    assert message.startswith("cannot reach api.github.com") and TOKEN not in message
    monkeypatch.delenv("GH_TOKEN")
    message = failure(Gh(GAUDI, executable=REAL_GH), lambda g: g.release("v0.11.0"))
    assert "run `gh auth login` or set GH_TOKEN" in message

"""Which PR a commit names, and whether it is this repository's
(:mod:`release.core.pull_requests`): a ``Pull Request resolved:`` line of another
repository, or one of two, names none; without this repository's URL none does; a URL
is this repository's as GitHub compares them."""

from __future__ import annotations

import pytest

from release.core.commits import make_commit
from release.core.pull_requests import RepoIdentity, passed_over, resolved_pr

SHA = "a" * 40
URL = "https://github.com/example/tinyengine"
THIS = RepoIdentity.of(URL)


def landed(*urls: str) -> str:
    """A ghstack commit's body that names ``urls`` landed, one line each."""
    lines = "".join(f"Pull Request resolved: {url}\n" for url in urls)
    return f"Summary: Keep the order.\n\n{lines}ghstack-source-id: 5a1f0e2\n"


def pr_of(subject: str, body: str, repo: RepoIdentity | None) -> int | None:
    return make_commit(SHA, "A", "a@example.com", subject, body, {}, repo=repo).pr


@pytest.mark.parametrize(
    "configured",
    [
        URL,
        "http://GitHub.com/Example/TinyEngine",
        f"{URL}.git",
        f"{URL}/",
        f"{URL}.git/",
        "https://someone@github.com/example/tinyengine",
    ],
)
@pytest.mark.parametrize(
    "named",
    [
        f"{URL}/pull/5",
        "http://github.com/Example/TinyEngine/pull/5",
        "https://GITHUB.COM/example/tinyengine.git/pull/5",
    ],
)
def test_this_repository_is_named_however_its_url_is_spelt(configured: str, named: str) -> None:
    repo = RepoIdentity.of(configured)
    assert repo is not None
    assert resolved_pr(landed(named), repo) == 5
    assert pr_of("[BugFix] Keep the order", landed(named), repo) == 5


@pytest.mark.parametrize(
    "other",
    [
        "https://github.com/evil/other",
        "https://github.com/example/tinyengine-fork",
        "https://github.com/examples/tinyengine",
        "https://gitlab.com/example/tinyengine",
        "https://github.com.evil.example/example/tinyengine",
        "https://github.com:8443/example/tinyengine",
    ],
)
def test_another_repositorys_landing_line_names_no_pr(other: str) -> None:
    body = landed(f"{other}/pull/203")
    assert resolved_pr(body, THIS) is None
    assert pr_of("[BugFix] Keep the order", body, THIS) is None
    why = passed_over(None, body, 203, THIS)
    assert why is not None and f"{other}/pull/203" in why and "another repository's" in why
    # the very same body, naming this repository, names its PR: only the repository differs
    ours = body.replace(other, URL)
    assert resolved_pr(ours, THIS) == 203 and passed_over(None, ours, 203, THIS) is None


@pytest.mark.parametrize(
    "url",
    [
        "",
        "/srv/git/engine.git",
        "file:///srv/git/engine.git",
        "git@github.com:example/tinyengine.git",
        "ssh://git@github.com/example/tinyengine",
        "https://github.com/",
        "https://github.com:notaport/example/tinyengine",
    ],
)
def test_what_is_no_web_url_of_a_repository_gives_no_identity(url: str) -> None:
    assert RepoIdentity.of(url) is None


def test_without_this_repositorys_url_no_landing_line_names_a_pr() -> None:
    body = landed(f"{URL}/pull/5")
    assert resolved_pr(body, THIS) == 5
    assert resolved_pr(body, None) is None
    assert make_commit(SHA, "A", "a@example.com", "[BugFix] Keep it", body, {}).pr is None
    why = passed_over(None, body, 5, None)
    assert why is not None and "unknown" in why and "set repo-url in [tool.release]" in why
    # a subject's (#N) is still this repository's: GitHub wrote it, not the body's author
    assert pr_of("[BugFix] Keep it (#7)", landed("https://github.com/evil/other/pull/7"), None) == 7


def test_two_landing_lines_name_no_pr() -> None:
    first, second = f"{URL}/pull/201", f"{URL}/pull/202"
    body = landed(first, second)
    assert resolved_pr(landed(first), THIS) == 201 and resolved_pr(landed(second), THIS) == 202
    assert resolved_pr(body, THIS) is None
    assert pr_of("[Misc] A stack of two", body, THIS) is None
    why = passed_over(None, body, 202, THIS)
    assert why is not None and "2 'Pull Request resolved:' lines" in why
    # a landing line that names no PR URL is a second landing line all the same
    assert (
        resolved_pr(landed(first, "https://github.com/example/tinyengine/issues/5"), THIS) is None
    )
    # a subject's own number still wins over the body's lines
    assert pr_of("[Misc] A stack of two (#201)", body, THIS) == 201


def test_a_subject_number_that_came_from_another_repository_is_not_this_ones() -> None:
    """pytorch/data's e53afb72: a change exported from pytorch/pytorch keeps its subject's
    (#72209) and its landing line; #72209 is pytorch/pytorch's PR."""
    subject = "Fix OOM when traverse IterDataPipe due to pickling (#72209)"
    body = "Summary:\nPull Request resolved: https://github.com/pytorch/pytorch/pull/72209\n"
    data = RepoIdentity.of("https://github.com/pytorch/data")
    pytorch = RepoIdentity.of("https://github.com/pytorch/pytorch")
    assert pr_of(subject, body, data) is None
    assert pr_of(subject, body, pytorch) == 72209  # in pytorch/pytorch it is its own
    assert pr_of(subject.replace("72209", "72210"), body, data) == 72210  # not the body's
    assert pr_of(subject, body, None) == 72209  # whose it is cannot be told: the subject's
    why = passed_over(72209, body, 72209, data)
    assert why is not None and "pytorch/pytorch/pull/72209, another repository's PR" in why


def test_a_body_names_no_pr_but_at_a_lines_start_in_a_pr_url() -> None:
    for body in (
        "Pull Request resolved: https://github.com/example/tinyengine/pull/1234567890",
        "Pull Request resolved: https://github.com/example/tinyengine/issues/5",
        "See Pull Request resolved: https://github.com/example/tinyengine/pull/5",
        "Differential Revision: D123",
    ):
        assert resolved_pr(body, THIS) is None, body


def test_a_url_shown_from_a_body_has_its_control_characters_escaped() -> None:
    body = landed("https://git\x1b[2Khub.com/example/tinyengine/pull/5")
    why = passed_over(None, body, 5, THIS)
    assert why is not None and "\x1b" not in why and "\\x1b[2Khub.com" in why

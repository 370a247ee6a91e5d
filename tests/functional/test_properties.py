"""Every parser, fed whatever text hypothesis makes: it answers, or raises one of the
project's own errors (a one-line message and an exit code), never anything else; and what
it reads back, it writes back the same."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from release.adapters.git_log import parse_log
from release.core import versions
from release.core.changelog import Changelog
from release.core.commits import make_commit, pick_fields, pr_number
from release.core.config import Config, config_from_mapping
from release.core.messages import ends_with_trailer_block, with_pick_line
from release.core.versions import ReleaseVersion, TagTemplate, parse_version, ref_format_problem
from release.errors import ReleaseError
from release.flows.pick_plan import parse_requests

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALIASES = Config().alias_map()

# Text that looks like what these parsers see, mixed with anything at all.
PIECES = st.sampled_from(
    ["v", "0", "31", ".", "rc", "-rc.", "post", "+", "-", "#", "(#", ")", "[", "]", "Bugfix",
     "Revert \"", "\"", "\n", "\r\n", " ", ":", "Co-authored-by: ", "<a@b>", "## [", "] - ",
     "(cherry picked from commit ", "a" * 40, "9" * 50, "\u0661", "\ufeff", "\x00", "é", "\t"]
)  # fmt: skip
TEXT = st.one_of(st.text(), st.lists(PIECES, max_size=30).map("".join))


def only_ours(call: Callable[[], Any]) -> Any:
    """``call()``'s answer, None when it raised one of the project's errors; anything else
    it raises fails the test."""
    try:
        return call()
    except ReleaseError:
        return None


@FAST
@given(TEXT)
def test_versions_parse_or_say_why(text: str) -> None:
    version = only_ours(lambda: parse_version(text))
    if version is not None:
        assert parse_version(version.pep440()) == version
        assert parse_version(version.semver()) == version
        assert parse_version("v" + version.pep440()) == version


@FAST
@given(
    st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6),
    st.one_of(st.none(), st.integers(1, 10**6)),
)  # fmt: skip
def test_every_release_version_round_trips(
    major: int, minor: int, patch: int, rc: int | None
) -> None:
    version = ReleaseVersion(major, minor, patch, rc=rc)
    for spelling in (version.pep440(), version.semver(), version.image_tag()):
        assert parse_version(spelling) == version


# Version-shaped text: the canonical spellings read without packaging, and their near misses.
VERSION_PIECES = st.sampled_from(
    ["0", "1", "00", "01", "12", "9" * 20, ".", "rc", "RC", ".post", "post", "-", "+", "a", "dev",
     "v", " ", "\u0661"]
)  # fmt: skip
VERSIONISH = st.lists(VERSION_PIECES, max_size=12).map("".join)
RELEASE_VERSIONS = st.builds(
    ReleaseVersion, st.integers(0, 30), st.integers(0, 30), st.integers(0, 30),
    rc=st.one_of(st.none(), st.integers(0, 12)),
    post=st.one_of(st.none(), st.integers(0, 12)),
    fix=st.one_of(st.none(), st.integers(0, 3)),
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.one_of(VERSIONISH, TEXT), st.sampled_from([0, 1]))
@example("0.31.0", 1)
@example("v0.31.0rc1", 1)
@example("0.31.0rc0", 1)
@example("0.31.0rc0", 0)
@example("0.12.0.1", 1)
@example("0.12.0.0", 1)
@example("0.31.0.post2", 1)
@example("0.31.0rc1.post1", 0)
@example("01.02.03", 1)
def test_versions_read_without_packaging_are_read_as_packaging_reads_them(
    text: str, first_rc: int
) -> None:
    raw = text.strip()
    body = raw[1:] if raw[:1] in "vV" else raw
    if not raw or len(raw) > 64 or not ("0" <= body[:1] <= "9"):
        return  # refused before either reading
    answer = only_ours(lambda: parse_version(text, first_rc=first_rc))
    assert answer == only_ours(lambda: versions._parsed(text, body, first_rc))


@settings(max_examples=400, deadline=None)
@given(RELEASE_VERSIONS, RELEASE_VERSIONS)
def test_versions_order_as_packaging_orders_them(a: ReleaseVersion, b: ReleaseVersion) -> None:
    assert (a < b) == (a.packaging() < b.packaging())
    assert (a.order_key() == b.order_key()) == (a.packaging() == b.packaging())


@FAST
@given(TEXT, st.sampled_from(["v{version}", "releases/v{version}", "release/{major}.{minor}"]))
def test_tag_and_branch_names_parse_or_are_not_ours(name: str, template: str) -> None:
    for scheme in ("pep440", "semver"):
        tags = TagTemplate(template, "tag", scheme)
        found = tags.parse(name)
        if found is not None:
            assert tags.render(found) == name
        tags.parse_any(name)
    ref_format_problem(name)


@FAST
@given(TEXT, TEXT, TEXT)
def test_commits_parse_whatever_their_subject_and_body(subject: str, body: str, name: str) -> None:
    commit = make_commit("a" * 40, name, "x@example.com", subject, body, ALIASES)
    assert commit.pr is None or 0 < commit.pr < 10**9
    found = pr_number(subject)
    assert found is None or 0 < found[0] < 10**9
    picked, reason = pick_fields(body)
    assert all(len(sha) >= 7 for sha in picked)
    assert reason is None or reason.strip()
    assert isinstance(commit.category, str) and commit.title is not None


@FAST
@given(st.lists(st.tuples(TEXT, TEXT), max_size=5))
def test_a_log_parses_whatever_its_records_hold(records: list[tuple[str, str]]) -> None:
    text = "".join(
        f"{'b' * 40}\x1fName\x1fn@example.com\x1f{s.replace(chr(0x1E), '')}\x1f{b.replace(chr(0x1E), '')}\x1e"
        for s, b in records
    )
    commits = list(parse_log(text, ALIASES, repo=None))
    assert len(commits) <= len(records)


@FAST
@given(TEXT)
def test_the_pick_line_goes_where_git_puts_it(message: str) -> None:
    ends_with_trailer_block(message)
    out = with_pick_line(message, "c" * 40)
    assert out.endswith(f"(cherry picked from commit {'c' * 40})\n")
    assert out.startswith(message)


@FAST
@given(TEXT, st.one_of(st.none(), TEXT), st.sampled_from([None, "regression", "bogus"]))
def test_pick_requests_parse_or_say_why(
    commits: str, file_text: str | None, reason: str | None
) -> None:
    requests = only_ours(lambda: parse_requests(commits, file_text, reason))
    for request in requests or ():
        assert request.ref.startswith("#") or len(request.ref) >= 4


@FAST
@given(TEXT)
def test_a_changelog_reads_back_byte_for_byte(text: str) -> None:
    assert Changelog.parse(text).render() == text


# A section body as notes are: "### Category" headings and "- entry" lines.
LINE = TEXT.map(lambda s: s.replace("\r", " ").replace("\n", " "))
BODY = st.lists(st.tuples(st.sampled_from(["- ", "### "]), LINE), max_size=6).map(
    lambda lines: "\n".join(lead + rest for lead, rest in lines)
)


@FAST
@given(TEXT, st.sampled_from(["0.1.0rc1", "0.1.0", "Unreleased"]), BODY)
def test_writing_a_section_twice_changes_nothing(text: str, label: str, body: str) -> None:
    once = Changelog.parse(text)
    once.upsert(label, "2026-11-20", body)
    twice = Changelog.parse(once.render())
    twice.upsert(label, "2026-12-01", body)
    assert twice.render() == once.render()


KEYS = st.sampled_from(
    ["main-branch", "remote", "branch", "tag", "version-scheme", "changelog", "repo-url",
     "picks-file", "categories", "feature-categories", "images", "mainbranch"]
)  # fmt: skip
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=6,
)


@FAST
@given(st.dictionaries(KEYS, VALUES, max_size=4))
def test_any_config_table_loads_or_names_the_key(table: dict[str, Any]) -> None:
    only_ours(lambda: config_from_mapping(table))

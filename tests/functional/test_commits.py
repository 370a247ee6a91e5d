"""Commit subjects and bodies as the release flow reads them."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys

import pytest

from release.adapters.git_log import LOG_FORMAT, LOGGED_FIELDS, parse_log, parse_records
from release.core.commits import (
    FIELDS,
    Commit,
    Person,
    assemble_commit,
    make_commit,
    parse_subject,
)
from release.core.config import Config, config_from_mapping
from release.core.messages import with_pick_line

ALIASES = Config().alias_map()
SHA_A = "a" * 40
SHA_B = "b" * 40


@pytest.mark.parametrize(
    "prefix",
    ["[Bugfix]", "[BugFix]", "[bugfix]", "[Fix]", "[BUGFIX]", "[Bug Fix]", "[bug-fix]", "[Hotfix]"],
)
def test_bugfix_spellings_share_one_category(prefix: str) -> None:
    subject = f"{prefix} Handle an empty request list (#106)"
    category, title, pr, raw = parse_subject(subject, ALIASES)
    assert category == "Bug Fixes"
    assert title == "Handle an empty request list"
    assert pr == 106
    assert raw == (prefix[1:-1],)


@pytest.mark.parametrize(
    ("subject", "category"),
    [
        ("[Feature] Add priority scheduling", "Features"),
        ("[Model] Add a model", "Features"),
        ("[Perf] Faster", "Performance"),
        ("[V1] Engine change", "Core"),
        ("[Kernel] A kernel", "Kernels"),
        ("[ROCm] AMD", "Hardware"),
        ("[CI/Build] Pin tools", "CI/Build"),
        ("[CI Fix] Flaky test", "CI/Build"),
        ("[Doc] Describe", "Documentation"),
        ("[Docs] Describe", "Documentation"),
        ("[Chore] Tidy", "Misc"),
    ],
)
def test_default_categories(subject: str, category: str) -> None:
    assert parse_subject(subject, ALIASES)[0] == category


@pytest.mark.parametrize(
    "subject",
    [
        "[main] [Bugfix] Fix the limit (#12)",
        "[main][Bugfix] Fix the limit (#12)",
        "[v0.23.0][Bugfix] Fix the limit (#12)",
        "[0.31.0rc1] [Bugfix] Fix the limit (#12)",
        "[1/N][Bugfix] Fix the limit (#12)",
        "[2/3] [Bugfix] Fix the limit (#12)",
        "[ 1 / n ][Bugfix] Fix the limit (#12)",
        "[release/v0.31.0][Bugfix] Fix the limit (#12)",
        "[WIP][Bugfix] Fix the limit (#12)",
    ],
)
def test_noise_prefixes_are_ignored(subject: str) -> None:
    category, title, pr, raw = parse_subject(subject, ALIASES)
    assert (category, title, pr) == ("Bug Fixes", "Fix the limit", 12)
    assert len(raw) == 2


def test_noise_alone_is_other() -> None:
    assert parse_subject("[main] Bump version (#5)", ALIASES)[:3] == ("Other", "Bump version", 5)


@pytest.mark.parametrize(
    ("subject", "category"),
    [
        ("[Bugfix][V1] Handle an empty request list", "Bug Fixes"),
        ("[V1][Bugfix] Handle an empty request list", "Core"),
        ("[Misc][Bugfix] x", "Misc"),
        ("[Unknown][Perf] x", "Performance"),  # unknown prefixes do not win
        ("[main][CI/Build] Pin the build tools", "CI/Build"),
    ],
)
def test_first_known_prefix_wins(subject: str, category: str) -> None:
    assert parse_subject(subject, ALIASES)[0] == category


@pytest.mark.parametrize(
    ("subject", "title"),
    [
        ("Fix a typo", "Fix a typo"),
        ("[Unknown] Something", "Something"),
        ("[Experimental] Try a thing (#7)", "Try a thing"),
        ("Fix [Doc] inside a subject", "Fix [Doc] inside a subject"),  # only leading prefixes
    ],
)
def test_unknown_is_other(subject: str, title: str) -> None:
    category, parsed_title, _, _ = parse_subject(subject, ALIASES)
    assert category == "Other"
    assert parsed_title == title


@pytest.mark.parametrize(
    ("subject", "pr", "title"),
    [
        ("[Doc] Describe batching (#103)", 103, "Describe batching"),
        ("[Doc] Describe batching (#103)  ", 103, "Describe batching"),
        ("[Doc] Describe (#12) batching", None, "Describe (#12) batching"),  # only at the end
        ("[Doc] Describe batching #103", None, "Describe batching #103"),
        ("[Doc] Describe batching", None, "Describe batching"),
        ("[Doc] See (#1) and (#2)", 2, "See (#1) and"),
    ],
)
def test_pr_number_at_end(subject: str, pr: int | None, title: str) -> None:
    _, parsed_title, parsed_pr, _ = parse_subject(subject, ALIASES)
    assert parsed_pr == pr
    assert parsed_title == title


def test_subject_that_is_only_a_prefix_keeps_its_text() -> None:
    assert parse_subject("[Bugfix]", ALIASES)[1] == "[Bugfix]"


@pytest.mark.parametrize(
    ("subject", "category"),
    [
        ("[FIX_FOR_VLLM_LATEST] tokenizer fix for #31285 (#764)", "Bug Fixes"),
        ("[FIX_FOR_VLLM_CUSTOM=14617c2b6c] Register the INC config (#1739)", "Bug Fixes"),
        ("[FIX_FOR_VLLM_CUSTOM=d28d86e8a3] (#1279)", "Bug Fixes"),
        ("[HOURLY FIX] For upstream PR-24548 changes (#166)", "Bug Fixes"),
        ("[Fix Hourly] install UCX from source (#289)", "Bug Fixes"),
        ("[Upstream fix] Fix after #22711 (#102)", "Bug Fixes"),
        ("[Security] Remove structurally dead code (#490)", "Bug Fixes"),
        ("[GITHUB ACTION] Always run same job to same node (#450)", "CI/Build"),
        ("[ACTION] PR Dashboard (#703)", "CI/Build"),
        ("[SKIP CI][DP] disable DP test due hourly fail (#339)", "CI/Build"),
        ("[OWNER=alice] Something (#1)", "Other"),  # a name with a value: only a known name
    ],
)
def test_prefixes_of_vllm_family_histories(subject: str, category: str) -> None:
    assert parse_subject(subject, ALIASES)[0] == category


def test_a_name_with_a_value_is_noise_without_its_spelling() -> None:
    aliases = config_from_mapping({"categories": {"Perf": ["Perf"]}}).alias_map()
    subject = "[FIX_FOR_VLLM_CUSTOM=14617c2b6c][Perf] Faster decode (#1)"
    assert parse_subject(subject, aliases)[:2] == ("Perf", "Faster decode")


def test_custom_categories() -> None:
    aliases = config_from_mapping({"categories": {"Fixes": ["Bugfix", "Fix"]}}).alias_map()
    assert parse_subject("[BugFix] x", aliases)[0] == "Fixes"
    assert parse_subject("[Perf] x", aliases)[0] == "Other"


# -- whole commits ------------------------------------------------------------


def commit(
    subject: str,
    body: str = "",
    sha: str = SHA_A,
    author: tuple[str, str] = ("Alice Chen", "alice@example.com"),
) -> Commit:
    return make_commit(sha, author[0], author[1], subject, body, ALIASES)


def test_plain_commit() -> None:
    c = commit("[BugFix] Fix off-by-one in the batch limit (#108)")
    assert c.category == "Bug Fixes"
    assert c.title == "Fix off-by-one in the batch limit"
    assert c.pr == 108
    assert c.author == Person("Alice Chen", "alice@example.com")
    assert c.identity == SHA_A
    assert c.picked_from == ()
    assert c.pick_reason is None
    assert c.reverts_subject is None and c.reverts_sha is None
    assert c.credited == (c.author,)


def test_revert_with_its_own_pr() -> None:
    c = commit(
        'Revert "[Kernel] Add fused add kernel stub (#104)" (#105)',
        f"This reverts commit {SHA_B}.",
    )
    assert c.reverts_subject == "[Kernel] Add fused add kernel stub (#104)"
    assert c.reverts_sha == SHA_B
    assert c.category == "Kernels"  # listed under what it reverts
    assert c.title == 'Revert "Add fused add kernel stub"'
    assert c.pr == 105  # its own PR, not the reverted one


def test_revert_without_its_own_pr() -> None:
    c = commit('Revert "[Bugfix] Fix the limit (#12)"', "This reverts commit abcdef1.")
    assert c.reverts_subject == "[Bugfix] Fix the limit (#12)"
    assert c.reverts_sha == "abcdef1"
    assert c.category == "Bug Fixes"
    assert c.title == 'Revert "Fix the limit"'
    assert c.pr is None


def test_revert_of_what_no_category_names_is_read_as_a_revert() -> None:
    c = commit('Revert "Mamba prefix caching" (#1077)', f"This reverts commit {SHA_B}.")
    assert (c.category, c.title, c.pr) == ("Misc", 'Revert "Mamba prefix caching"', 1077)


def test_revert_of_a_revert() -> None:
    c = commit('Revert "Revert "[Bugfix] Fix the limit (#12)""')
    assert c.reverts_subject == 'Revert "[Bugfix] Fix the limit (#12)"'


@pytest.mark.parametrize(
    ("subject", "reverted", "own"),
    [
        # tpu-inference a11fb951a3: the subject goes on after the closing quote
        (
            '[releases/v0.26.0] Revert "[Batch RPA] remove block_size override (#3223)" '
            "\u2014 fixes smem compile OOM in 7 nightly perf jobs (#3270)",
            "[Batch RPA] remove block_size override (#3223)",
            3270,
        ),
        ('Revert "Fix the limit" - it broke the nightly build (#7)', "Fix the limit", 7),
        ('Revert "Fix the limit (#12)" because of the nightly (#13)', "Fix the limit (#12)", 13),
        # a quote inside the reverted title is not a closing one
        ('Revert "Use "x" for the limit (#12)" (#13)', 'Use "x" for the limit (#12)', 13),
        ('Revert "Use "fast" mode…', 'Use "fast" mode…', None),
        (
            'Revert "Revert "Fix the limit (#12)" (#13)" (#14)',
            'Revert "Fix the limit (#12)" (#13)',
            14,
        ),
    ],
)
def test_a_revert_subject_that_goes_on_after_the_quote(
    subject: str, reverted: str, own: int | None
) -> None:
    c = commit(subject)
    assert (c.reverts_subject, c.pr) == (reverted, own)


def test_not_a_revert() -> None:
    c = commit("[Misc] Revert the rename by hand (#9)")
    assert c.reverts_subject is None
    assert c.category == "Misc"


def test_words_are_not_read_for_picks() -> None:
    """What a subject's words say is for notes; pick sees only what a prefix says."""
    assert parse_subject("Sleep mode support (#584)", ALIASES)[0] == "Other"
    assert commit("Sleep mode support (#584)").category == "Features"


def test_co_authors_credited_once() -> None:
    body = (
        "Longer description.\n\n"
        "Co-authored-by: Eve Park <eve@example.com>\n"
        "co-authored-by: Eve P. <EVE@example.com>\n"  # same person, another spelling
        "Co-authored-by: Alice Chen <alice@example.com>\n"  # the author again
        "Co-authored-by: Dan Ivanov <dan@example.com>\n"
        "Signed-off-by: Bob Okafor <bob@example.com>\n"
    )
    c = commit("[Fix] x (#1)", body, author=("Bob Okafor", "bob@example.com"))
    assert [p.name for p in c.co_authors] == ["Eve Park", "Eve P.", "Alice Chen", "Dan Ivanov"]
    assert [p.name for p in c.credited] == ["Bob Okafor", "Eve Park", "Alice Chen", "Dan Ivanov"]


def test_co_author_without_an_email() -> None:
    c = commit("[Fix] x", "Co-authored-by: Someone")
    assert c.co_authors == (Person("Someone", ""),)


def test_pick_trailers() -> None:
    body = (
        "Signed-off-by: Alice Chen <alice@example.com>\n"
        f"(cherry picked from commit {SHA_B})\n"
        "Cherry-pick-reason: regression\n"
    )
    c = commit("[BugFix] Fix off-by-one (#108)", body)
    assert c.picked_from == (SHA_B,)
    assert c.identity == SHA_B  # the same change as the main commit
    assert c.pick_reason == "regression"


def test_pick_reason_trailer_is_case_insensitive() -> None:
    assert commit("x", "cherry-pick-reason: critical").pick_reason == "critical"


def test_picked_twice_names_both_sources() -> None:
    body = f"(cherry picked from commit {SHA_A})\n(cherry picked from commit {SHA_B})"
    c = commit("[Fix] x", body, sha="c" * 40)
    assert c.picked_from == (SHA_A, SHA_B)
    assert c.identity == SHA_B


def test_changelog_trailer() -> None:
    c = commit("Update CHANGELOG.md for v0.1.0rc1", "Release-changelog: v0.1.0rc1")
    assert c.changelog_for == "v0.1.0rc1"


def test_parse_log() -> None:
    records = [
        (
            SHA_A,
            "Alice Chen",
            "alice@example.com",
            "[Fix] One (#1)",
            f"Co-authored-by: Eve Park <eve@example.com>\n\n(cherry picked from commit {SHA_B})\n",
        ),
        (SHA_B, "Bob Okafor", "bob@example.com", "[Doc] Two (#2)", ""),
    ]
    text = "".join("\n" + "\x1f".join(r) + "\x1e" for r in records)
    commits = list(parse_log(text, ALIASES, repo=None))
    assert [c.sha for c in commits] == [SHA_A, SHA_B]
    assert commits[0].co_authors == (Person("Eve Park", "eve@example.com"),)
    assert commits[0].picked_from == (SHA_B,)
    assert commits[0].body.endswith(")")  # surrounding newlines trimmed
    assert commits[1].category == "Documentation"
    assert LOG_FORMAT.count("%x1f") == 4 and LOG_FORMAT.endswith("%x1e")


def test_parse_log_of_a_real_repository(engine) -> None:
    text = engine.repo.history.log("main", fmt=LOG_FORMAT)
    commits = list(parse_log(text, ALIASES, repo=None))
    by_pr = {c.pr: c for c in commits}
    assert sorted(by_pr) == [101, 102, 103, 104, 105, 106]
    assert by_pr[102].credited == (
        Person("Bob Okafor", "bob@example.com"),
        Person("Carol Diaz", "carol@example.com"),
    )
    assert by_pr[105].reverts_sha == engine.shas[104]
    assert by_pr[105].reverts_subject == "[Kernel] Add fused add kernel stub (#104)"
    assert by_pr[106].category == "Bug Fixes"
    assert all(c.sha == engine.shas[c.pr] for c in commits)


def test_parse_records_as_a_stream_delivers_them() -> None:
    text = "\n" + "\x1f".join((SHA_A, "Alice Chen", "a@x", "[Doc] One (#1)", "")) + "\x1e\n"
    assert [c.pr for c in parse_records(text.split("\x1e"), ALIASES, repo=None)] == [1]


def test_trailer_values_as_a_whole_body_scan_reads_them() -> None:
    body = "Key:\nCo-authored-by: Hidden <h@x>\n\nCo-authored-by: Eve Park <eve@x>  \n"
    # the first co-author line is the value of "Key:", as a scan of the whole body reads it
    assert commit("x", body).co_authors == (Person("Eve Park", "eve@x"),)


# -- the -x line, where git cherry-pick -x puts it -----------------------------------

PICK = f"(cherry picked from commit {SHA_B})\n"


@pytest.mark.parametrize(
    ("message", "joined"),
    [
        ("Fix x\n", "\n"),  # a title only
        ("Fix x\n\nBody text.\n", "\n"),
        ("Fix x\n\nSigned-off-by: A <a@x>\n", ""),  # below the trailer block
        ("Fix x\n\nBody\n\nKey: value\nOther: v\n", ""),
        ("Fix x\n\n(cherry picked from commit abcdef1)\n", ""),  # picked twice
        ("Fix x\n\nKey: v\n  continued\n", ""),
        ("Fix x\n\nBody\nKey: value\n", "\n"),  # mixed paragraph, no git-made line
        ("Fix x\n\nfoo\nbar\nbaz\nSigned-off-by: A <a@x>\n", ""),  # a quarter are trailers
        ("Fix x\n\nfoo\nbar\nbaz\nqux\nSigned-off-by: A <a@x>\n", "\n"),  # fewer
        ("Fix x\n\nKey: v", ""),  # no final newline
    ],
)
def test_pick_line_goes_where_git_puts_it(message: str, joined: str) -> None:
    text = message if message.endswith("\n") else message + "\n"
    assert with_pick_line(message, SHA_B) == text + joined + PICK


def test_parsed_commits_are_whole_commits() -> None:
    c = commit(
        'Revert "[Fix] Retry (#1)" (#2)',
        f"Co-authored-by: Eve Park <eve@x>\nCherry-pick-reason: regression\n"
        f"(cherry picked from commit {SHA_B})\nThis reverts commit {SHA_A}.",
    )
    fields = {f.name: getattr(c, f.name) for f in dataclasses.fields(Commit)}
    assert vars(c) == fields  # every field set, nothing else
    made = Commit(**fields)
    assert c == made and hash(c) == hash(made) and repr(c) == repr(made)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.title = "changed"  # type: ignore[misc]


def test_a_person_hashes_as_its_fields_and_travels_between_processes() -> None:
    person = Person("Ada Lovelace", "ada@example.com")
    assert hash(person) == hash(("Ada Lovelace", "ada@example.com")) == hash(person)
    assert {person: 1}[Person("Ada Lovelace", "ada@example.com")] == 1
    assert Person("Ada Lovelace", "ADA@example.com") != person
    # another process hashes strings otherwise: its copy hashes as its own fields do
    code = (
        "import pickle, sys\n"
        "person = pickle.loads(sys.stdin.buffer.read())\n"
        "print(hash(person) == hash((person.name, person.email)), person.key)"
    )
    other = subprocess.run(
        [sys.executable, "-c", code],
        input=pickle.dumps(person),
        capture_output=True,
        check=True,
        env={"PYTHONHASHSEED": "1234"},
    )
    assert other.stdout.decode().split() == ["True", "ada@example.com"]


def test_the_quick_letter_test_never_changes_which_category_a_typo_is_read_as() -> None:
    """near_category skips spellings whose letters are too far apart for the edit limit;
    on hundreds of made-up typos of the default spellings it answers as comparing every
    spelling by edit distance does."""
    import random
    import string

    from release.core import categories

    aliases = Config().alias_map()

    def by_distance_alone(prefix: str) -> str | None:
        key = categories.prefix_key(prefix)
        if len(key) < 4 or categories._NOISE.match(prefix):
            return None
        limit = 2 if len(key) >= 9 else 1
        found = {c for s, c in aliases.items() if categories._within(key, s, limit)}
        return found.pop() if len(found) == 1 else None

    rnd = random.Random(7)
    spellings = sorted(aliases)
    answered = set()
    for _ in range(800):
        word = list(rnd.choice(spellings))
        for _ in range(rnd.randint(0, 3)):  # inserts, deletes, substitutions, swaps
            at, letter, op = (
                rnd.randrange(len(word)),
                rnd.choice(string.ascii_lowercase),
                rnd.randint(0, 3),
            )
            if op == 0:
                word.insert(at, letter)
            elif op == 1 and len(word) > 1:
                del word[at]
            elif op == 2:
                word[at] = letter
            elif at + 1 < len(word):
                word[at], word[at + 1] = word[at + 1], word[at]
        typo = "".join(word)
        expected = by_distance_alone(typo)
        assert categories.near_category(typo, aliases) == expected, typo
        answered.add(expected)
    assert len(answered) > 5  # typos of many categories were read, and some not at all
    assert None in answered


def test_a_lazy_pattern_compiles_at_its_first_use_and_answers_as_re_does() -> None:
    import re

    from release.core.patterns import lazy_pattern

    lazy = lazy_pattern(r"^(?P<word>[a-z]+)(\d)?", re.IGNORECASE)
    assert "match" not in vars(lazy)  # nothing compiled yet
    eager = re.compile(r"^(?P<word>[a-z]+)(\d)?", re.IGNORECASE)
    for text in ("Abc1", "abc", "1abc", ""):
        got, want = lazy.match(text), eager.match(text)
        assert (got and got.groups()) == (want and want.groups()), text
    assert "match" in vars(lazy) and lazy.pattern == eager.pattern
    assert lazy.sub("x", "Abc1 def") == eager.sub("x", "Abc1 def")
    assert lazy.findall("ab2") == eager.findall("ab2")
    broken = lazy_pattern(r"(unclosed")
    with pytest.raises(re.error):
        broken.search("x")


def test_commit_is_declared_once() -> None:
    """The fast constructor, the cache's records and the log's format follow Commit's own
    fields: a commit made either way is the same, and a field too many or too few is
    refused rather than shifted into the next."""
    values = (
        SHA_A, Person("Ann", "ann@example.com"), "[Bugfix] x (#7)", "body", "Bug Fixes",
        "x", 7, (Person("Eve", "eve@example.com"),), (SHA_B,), "needed", "y", SHA_B,
        "v1", ("Bugfix",),
    )  # fmt: skip
    assert tuple(f.name for f in dataclasses.fields(Commit)) == FIELDS
    assert assemble_commit(*values) == Commit(*values)  # type: ignore[arg-type]
    assert repr(assemble_commit(*values)) == repr(Commit(*values))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        assemble_commit(*values[:-1])
    with pytest.raises(ValueError):
        assemble_commit(*values, "one more")
    assert set(LOGGED_FIELDS) <= set(FIELDS)

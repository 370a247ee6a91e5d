"""Release notes: built from commit lists and from a real rc cycle; golden renderings."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from release.core.commits import Commit, Person, make_commit
from release.core.config import Config
from release.core.notes import Entry, build_notes, render_json, render_markdown
from release.core.people import People
from tests._golden import Cycle, assert_golden, run_cycle

ALIASES = Config().alias_map()
ORDER = list(Config().categories)
URL = "https://github.com/example/tinyengine"
ALICE = ("Alice Chen", "alice@example.com")
BOB = ("Bob Okafor", "bob@example.com")
EVE = ("Eve Park", "eve@example.com")


def sha(n: int) -> str:
    return f"{n:040x}"


def c(n: int, subject: str, body: str = "", author: tuple[str, str] = ALICE) -> Commit:
    return make_commit(sha(n), author[0], author[1], subject, body, ALIASES)


def notes_of(*oldest_first: Commit, exclude: tuple[str, ...] = ()):
    """Notes of commits given oldest first (git log lists them newest first)."""
    return build_notes(
        list(reversed(oldest_first)),
        category_order=ORDER,
        since="v0.0.9",
        until="HEAD",
        exclude_identities=exclude,
    )


def titles(notes) -> list[str]:
    return [e.title for e in notes.entries]


# -- built from commit lists ---------------------------------------------------


def test_entries_are_whole_entries() -> None:
    [entry] = notes_of(c(1, "[Fix] x (#1)", f"(cherry picked from commit {sha(9)})")).entries
    fields = {f.name: getattr(entry, f.name) for f in dataclasses.fields(Entry)}
    assert vars(entry) == fields  # every field set, nothing else
    made = Entry(**fields)
    assert entry == made and hash(entry) == hash(made) and repr(entry) == repr(made)
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.title = "changed"  # type: ignore[misc]


def test_grouped_by_canonical_category_in_config_order() -> None:
    notes = notes_of(
        c(1, "[Doc] Describe batching (#1)"),
        c(2, "[bugfix] Fix --port (#2)"),
        c(3, "Tidy up"),
        c(4, "[Feature] Priority scheduling (#4)"),
        c(5, "[BugFix] Fix the limit (#5)"),
        c(6, "[Fix] Return 400 (#6)"),
        c(7, "[Perf] Faster batching (#7)"),
    )
    assert [name for name, _ in notes.sections] == [
        "Features",
        "Bug Fixes",
        "Performance",
        "Documentation",
        "Other",
    ]
    bug_fixes = dict(notes.sections)["Bug Fixes"]
    # oldest first within a section
    assert [e.title for e in bug_fixes] == ["Fix --port", "Fix the limit", "Return 400"]


def test_categories_outside_the_order_come_before_other() -> None:
    notes = build_notes(
        [c(1, "Loose end"), c(2, "[Zeta] z"), c(3, "[Doc] d")],
        category_order=["Documentation"],
        since=None,
        until="HEAD",
    )
    assert [name for name, _ in notes.sections] == ["Documentation", "Other"]


def test_pr_links() -> None:
    notes = notes_of(c(1, "[Fix] Return 400 (#112)"), c(2, "[Fix] No PR here"))
    markdown = render_markdown(notes, repo_url=URL)
    assert f"- Return 400 ([#112]({URL}/pull/112)) by Alice Chen" in markdown
    assert "- No PR here by Alice Chen" in markdown
    assert "- Return 400 (#112) by Alice Chen" in render_markdown(notes)  # no URL: plain number


def test_author_and_co_authors_credited_once_each() -> None:
    notes = notes_of(
        c(
            1,
            "[Fix] One (#1)",
            "Co-authored-by: Eve Park <eve@example.com>\n"
            "Co-authored-by: Eve Park <EVE@example.com>\n"
            "Co-authored-by: Bob Okafor <bob@example.com>",
            author=BOB,
        ),
        c(2, "[Fix] Two (#2)", "Co-authored-by: Bob Okafor <bob@example.com>", author=EVE),
        c(3, "[Doc] Three (#3)", author=ALICE),
    )
    assert [[p.name for p in e.credits] for e in notes.entries] == [
        ["Bob Okafor", "Eve Park"],
        ["Eve Park", "Bob Okafor"],
        ["Alice Chen"],
    ]
    assert [p.name for p in notes.contributors] == ["Alice Chen", "Bob Okafor", "Eve Park"]
    markdown = render_markdown(notes)
    assert "- One (#1) by Bob Okafor, Eve Park\n" in markdown
    assert markdown.endswith("## Contributors\n\nAlice Chen, Bob Okafor, Eve Park\n")


def test_revert_pair_cancelled_by_sha() -> None:
    notes = notes_of(
        c(1, "[Kernel] Add fused add kernel stub (#104)"),
        c(
            2,
            'Revert "[Kernel] Add fused add kernel stub (#104)" (#105)',
            f"This reverts commit {sha(1)}.",
        ),
        c(3, "[Fix] Keep me (#106)"),
    )
    assert titles(notes) == ["Keep me"]
    assert set(notes.cancelled) == {sha(1), sha(2)}


def test_revert_pair_cancelled_by_subject() -> None:
    notes = notes_of(
        c(1, "[Kernel] Add a stub (#104)"),
        c(2, 'Revert "[Kernel] Add a stub (#104)"'),
    )
    assert notes.is_empty()
    assert render_markdown(notes) == "No changes.\n"


def test_revert_by_abbreviated_sha() -> None:
    revert = c(2, 'Revert "something else"', f"This reverts commit {sha(1)[:12]}.")
    notes = notes_of(c(1, "[Fix] x (#1)"), revert)
    assert notes.is_empty()


def test_revert_cancels_only_one_of_two_identical_subjects() -> None:
    notes = notes_of(
        c(1, "[Fix] Retry (#1)"),
        c(2, "[Fix] Retry (#1)"),
        c(3, 'Revert "[Fix] Retry (#1)"'),
    )
    assert titles(notes) == ["Retry"]
    assert notes.entries[0].sha == sha(1)  # the later one was reverted


def test_revert_of_a_revert_brings_the_change_back() -> None:
    notes = notes_of(
        c(1, "[Fix] Retry (#1)"),
        c(2, 'Revert "[Fix] Retry (#1)"', f"This reverts commit {sha(1)}."),
        c(3, 'Revert "Revert "[Fix] Retry (#1)""', f"This reverts commit {sha(2)}."),
    )
    [entry] = notes.entries  # the reland stays, listed once
    assert entry.sha == sha(3) and "Retry" in entry.title
    assert set(notes.cancelled) == {sha(1), sha(2)}


def test_revert_of_something_outside_the_range_stays_listed() -> None:
    notes = notes_of(
        c(
            2,
            'Revert "[Bugfix] Fix the limit (#108)" (#120)',
            f"This reverts commit {sha(99)}.",
            author=EVE,
        ),
    )
    assert [(e.category, e.title, e.pr) for e in notes.entries] == [
        ("Bug Fixes", 'Revert "Fix the limit"', 120),
    ]
    assert notes.cancelled == ()


def test_revert_of_a_pick_cancels_with_the_pick() -> None:
    pick = c(2, "[Fix] x (#7)", f"(cherry picked from commit {sha(7)})")
    revert = c(3, 'Revert "[Fix] x (#7)"', f"This reverts commit {sha(2)}.")
    assert notes_of(pick, revert).is_empty()


def test_revert_on_the_branch_of_a_main_commit_cancels_its_pick() -> None:
    # a revert cherry-picked from main names the main commit, the pick names it too
    pick = c(2, "[Fix] x (#7)", f"(cherry picked from commit {sha(7)})")
    revert = c(
        3,
        'Revert "[Fix] x (#7)" (#9)',
        f"This reverts commit {sha(7)}.\n\n(cherry picked from commit {sha(9)})",
    )
    assert notes_of(pick, revert).is_empty()


def test_same_change_picked_twice_is_listed_once() -> None:
    main_fix = sha(108)
    first = c(
        1,
        "[BugFix] Fix the limit (#108)",
        f"(cherry picked from commit {main_fix})\nCherry-pick-reason: regression",
    )
    again = c(2, "[BugFix] Fix the limit (#108)", f"(cherry picked from commit {main_fix})")
    notes = notes_of(first, again)
    assert titles(notes) == ["Fix the limit"]
    assert notes.entries[0].sha == sha(1)
    assert notes.entries[0].pick_reason == "regression"
    assert notes.entries[0].picked_from == main_fix


def test_backport_with_a_new_pr_number_is_listed_once() -> None:
    main_fix = c(108, "[BugFix] Fix the limit (#108)")
    backport = c(
        1, "[BugFix] Fix the limit (backport) (#130)", f"(cherry picked from commit {sha(108)})"
    )
    notes = notes_of(main_fix, backport)  # e.g. the final notes of the next release
    assert titles(notes) == ["Fix the limit"]
    assert notes.entries[0].pr == 108


def test_picks_of_one_pr_listed_once() -> None:
    first = c(1, "[Fix] Part one (#50)", f"(cherry picked from commit {sha(501)})")
    second = c(2, "[Fix] Part two (#50)", f"(cherry picked from commit {sha(502)})")
    assert titles(notes_of(first, second)) == ["Part one"]


def test_shipped_identities_are_excluded() -> None:
    fix = c(108, "[BugFix] Fix the limit (#108)")
    feature = c(110, "[Feature] Priority scheduling (#110)")
    notes = notes_of(fix, feature, exclude=(sha(108),))
    assert titles(notes) == ["Priority scheduling"]


def test_changelog_commits_are_not_changes() -> None:
    notes = notes_of(
        c(1, "Update CHANGELOG.md for v0.1.0rc1", "Release-changelog: v0.1.0rc1"),
        c(2, "[Fix] Real (#2)"),
    )
    assert titles(notes) == ["Real"]


def test_pick_reason_shown() -> None:
    body = f"(cherry picked from commit {sha(9)})\nCherry-pick-reason: critical"
    notes = notes_of(c(1, "[Fix] x (#1)", body))
    assert render_markdown(notes).startswith(
        "## Bug Fixes\n\n- x (#1) by Alice Chen [picked: critical]\n"
    )


def test_heading_level() -> None:
    notes = notes_of(c(1, "[Fix] x (#1)"))
    assert render_markdown(notes, heading_level=3).startswith("### Bug Fixes\n")
    assert "\n### Contributors\n" in render_markdown(notes, heading_level=3)


def test_render_json() -> None:
    notes = notes_of(
        c(
            1,
            "[Fix] x (#1)",
            "Co-authored-by: Eve Park <eve@example.com>\n"
            f"(cherry picked from commit {sha(9)})\n"
            "Cherry-pick-reason: regression",
        ),
        c(2, "[Kernel] k (#2)"),
        c(3, 'Revert "[Kernel] k (#2)"', f"This reverts commit {sha(2)}."),
        c(4, "Loose end"),
    )
    data = json.loads(render_json(notes, repo_url=URL))
    assert data == {
        "since": "v0.0.9",
        "until": "HEAD",
        "sections": [
            {
                "category": "Bug Fixes",
                "entries": [
                    {
                        "title": "x",
                        "sha": sha(1),
                        "pr": 1,
                        "pr_url": f"{URL}/pull/1",
                        "credits": [
                            {"name": "Alice Chen", "email": "alice@example.com"},
                            {"name": "Eve Park", "email": "eve@example.com"},
                        ],
                        "pick_reason": "regression",
                        "picked_from": sha(9),
                    }
                ],
            },
            {
                "category": "Other",
                "entries": [
                    {
                        "title": "Loose end",
                        "sha": sha(4),
                        "pr": None,
                        "pr_url": None,
                        "credits": [{"name": "Alice Chen", "email": "alice@example.com"}],
                        "pick_reason": None,
                        "picked_from": None,
                    }
                ],
            },
        ],
        "contributors": [
            {"name": "Alice Chen", "email": "alice@example.com"},
            {"name": "Eve Park", "email": "eve@example.com"},
        ],
        "new_contributors": [],
        "cancelled_reverts": [sha(2), sha(3)],
        "guessed_categories": [],
    }
    assert json.loads(render_json(notes))["sections"][0]["entries"][0]["pr_url"] is None


# -- a real rc cycle -------------------------------------------------------------


def test_rc1_notes_golden(cycle: Cycle, cli) -> None:
    result = cli(cycle.root, "notes", "--until", "v0.1.0rc1")
    assert result.code == 0, result.output
    assert_golden("notes_rc1.md", result.stdout)


def test_rc2_notes_since_previous_rc_golden(cycle: Cycle, cli) -> None:
    result = cli(cycle.root, "notes", "--until", "v0.1.0rc2")
    assert result.code == 0, result.output
    assert_golden("notes_rc2.md", result.stdout)
    # the revert of the rc1 pick is listed: what it reverts is outside rc1..rc2
    assert '- Revert "Pin the build tools" by Eve Park' in result.stdout
    assert "#109" not in result.stdout  # shipped in rc1
    explicit = cli(cycle.root, "notes", "--since", "v0.1.0rc1", "--until", "v0.1.0rc2")
    assert result.stdout == explicit.stdout


def test_final_notes_golden(cycle: Cycle, cli) -> None:
    result = cli(cycle.root, "notes", "--view", "final", "--until", "v0.1.0")
    assert result.code == 0, result.output
    assert_golden("notes_final.md", result.stdout)
    text = result.stdout
    for pr in (101, 102, 103, 106, 109, 112):
        assert text.count(f"[#{pr}]") == 1
    for gone in (104, 105, 111):  # revert pairs cancel out
        assert f"#{gone}" not in text
    assert "Revert" not in text
    assert "#110" not in text and "#107" not in text and "#108" not in text  # never picked


def test_final_notes_json_golden(cycle: Cycle, cli) -> None:
    result = cli(cycle.root, "notes", "--view", "final", "--until", "v0.1.0", "--format", "json")
    assert result.code == 0, result.output
    assert_golden("notes_final.json", cycle.without_shas(result.stdout))
    data = json.loads(result.stdout)
    assert data["since"] is None and data["until"] == "v0.1.0"
    assert {cycle.shas["pick_111"], cycle.shas["revert_111"]} <= set(data["cancelled_reverts"])
    entries = {e["pr"]: e for s in data["sections"] for e in s["entries"]}
    assert entries[109]["picked_from"] == cycle.engine.shas[109]
    assert entries[109]["pick_reason"] == "regression"
    assert entries[112]["pick_reason"] == "critical"
    assert entries[112]["pr_url"] == f"{URL}/pull/112"
    assert [p["name"] for p in entries[109]["credits"]] == ["Bob Okafor", "Eve Park"]


def test_the_cycle_is_reproducible(cycle: Cycle, tmp_path: Path) -> None:
    again = run_cycle(tmp_path)
    assert again.shas == cycle.shas
    assert again.changelog == cycle.changelog
    assert again.tag_messages == cycle.tag_messages


def test_tag_message_keeps_the_category_headings(cycle: Cycle) -> None:
    message = cycle.tag_messages["v0.1.0rc1"]
    assert_golden("tag_v0.1.0rc1.txt", message)
    assert "\n### Bug Fixes\n" in message and "\n### Contributors\n" in message
    assert cycle.tag_messages["v0.1.0"].startswith(
        "v0.1.0\n\nChanges (start)..v0.1.0:\n\n### Bug Fixes\n"
    )


def test_views_since_previous_rc_and_since_last_final(cycle: Cycle, cli) -> None:
    rc_view = cli(cycle.root, "notes", "--until", "v0.1.0rc2")
    final_view = cli(cycle.root, "notes", "--until", "v0.1.0rc2", "--view", "final")
    final = cli(cycle.root, "notes", "--until", "v0.1.0", "--view", "final")
    assert rc_view.stdout != final_view.stdout
    assert final_view.stdout == final.stdout  # the final is the last rc's commit
    # on the branch after promote (its changelog commit follows the final): the release
    # is out, so either view is since the final, what a post release would bring
    assert cli(cycle.root, "notes").stdout == "No changes.\n"
    assert cli(cycle.root, "notes", "--view", "final").stdout == "No changes.\n"
    assert cli(cycle.root, "notes", "--view", "final", "--until", "v0.1.0").stdout == final.stdout


def test_notes_to_a_file(cycle: Cycle, cli, tmp_path: Path) -> None:
    out = tmp_path / "notes.json"
    result = cli(cycle.root, "notes", "--until", "v0.1.0rc2", "--format", "json", "--out", str(out))
    assert result.code == 0 and result.stdout == ""
    assert json.loads(out.read_text(encoding="utf-8"))["since"] == "v0.1.0rc1"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--format", "html"), "--format 'html': use md or json"),
        (("--view", "all"), "--view 'all': use rc or final"),
        (("--until", "v9.9.9"), "--until 'v9.9.9' is not a commit here"),
        (("--since", "nope"), "'nope' is not a commit or tag here"),
    ],
)
def test_notes_usage_errors(cycle: Cycle, cli, args: tuple[str, ...], message: str) -> None:
    result = cli(cycle.root, "notes", *args)
    assert result.code == 2
    assert result.stderr.strip() == f"error: {message}"


def test_next_release_leaves_out_what_the_last_final_shipped(
    cycle: Cycle, cli, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(cycle.root, copy)
    assert cli(copy, "cut", "0.2.0", "--at", "main").code == 0
    result = cli(copy, "notes", "--view", "final")
    assert result.code == 0, result.output
    text = result.stdout
    for pr in (107, 108, 110):
        assert f"[#{pr}]" in text
    for shipped in (109, 112):  # picked into 0.1.0
        assert f"#{shipped}" not in text
    assert "[#111]" in text  # its pick was reverted on 0.1.0: new in 0.2.0
    # the same range asked for by name: what 0.1.0 shipped is left out all the same
    given = cli(copy, "notes", "--since", "v0.1.0", "--view", "final")
    assert given.code == 0, given.output
    assert given.stdout == text
    # from an rc, nothing is left out: it is the range asked for
    rc = cli(copy, "notes", "--since", "v0.1.0rc1", "--until", "main")
    assert "[#109]" in rc.stdout


# -- reverts in the forms real histories have ------------------------------------------

GITHUB_REVERTS = {
    # GitHub's button: the title without its PR number, the original's PR in the body
    "github-body": ('Revert "[Bugfix] Fix the batch limit" (#9001)', "Reverts vllm-project/vllm#1"),
    "github-short-body": ('Revert "Fix the batch limit" (#9001)', "Reverts #1"),
    "category-before-revert": ('[Misc] Revert "[Bugfix] Fix the batch limit (#1)"', ""),
    "noise-and-category": (
        '[main][Bugfix] Revert "Fix the batch limit" (#9001)',
        "Reverts org/r#1",
    ),
    "title-cut-short": ('Revert "[Bugfix] Fix the batch li…', ""),
    "unclosed-quote": ('Revert "[Bugfix] Fix the batch limit', ""),
    "by-title-only": ('Revert "Fix the batch limit"', ""),
    # a revert bot's (vllm-ascend #14287): the reverted PR after the quote, then its own
    "bot-numbers-after-quote": (
        '[Revert] Revert "[Bugfix] Fix the batch limit" (#1) (#9001)',
        "Revert of PR #1 (merged onto `main`).\n\nOriginal PR: #1\n",
    ),
}


@pytest.mark.parametrize("subject_body", list(GITHUB_REVERTS.values()), ids=list(GITHUB_REVERTS))
def test_a_revert_in_any_real_form_cancels_its_target(subject_body: tuple[str, str]) -> None:
    subject, body = subject_body
    notes = notes_of(
        c(1, "[Bugfix] Fix the batch limit (#1)"),
        c(2, "[Core] Something else (#2)"),
        c(3, subject, body),
    )
    assert titles(notes) == ["Something else"]
    assert set(notes.cancelled) == {sha(1), sha(3)}


def test_a_revert_found_by_pr_number_wins_over_a_same_title() -> None:
    notes = notes_of(
        c(1, "[Bugfix] Retry (#1)"),
        c(2, "[Bugfix] Retry (#2)"),
        c(3, 'Revert "Retry" (#3)', "Reverts org/engine#1"),
    )
    assert [e.pr for e in notes.entries] == [2]


def test_the_first_of_two_numbers_after_the_quote_is_the_reverted_pr() -> None:
    notes = notes_of(
        c(1, "[CI] Add a nightly test (#1)"),
        c(2, "[CI] Add a nightly test (#2)"),  # relanded under the same title
        c(3, '[Revert] Revert "[CI] Add a nightly test" (#1) (#3)'),
    )
    assert [e.pr for e in notes.entries] == [2]
    assert set(notes.cancelled) == {sha(1), sha(3)}
    # one number after the quote is the revert's own
    alone = notes_of(c(1, "[CI] Add a nightly test (#1)"), c(3, 'Revert "Add a nightly test" (#3)'))
    assert alone.entries == () and set(alone.cancelled) == {sha(1), sha(3)}


def test_reapply_is_a_revert_of_the_revert() -> None:
    notes = notes_of(
        c(1, "[Bugfix] Retry (#1)"),
        c(2, 'Revert "[Bugfix] Retry (#1)"', f"This reverts commit {sha(1)}."),
        c(3, 'Reapply "[Bugfix] Retry (#1)"', f"This reverts commit {sha(2)}."),
    )
    [entry] = notes.entries
    assert entry.sha == sha(3) and entry.title == 'Reapply "Retry"'


# -- people: mailmap, bots, one per name, new contributors ------------------------------


def test_bots_are_not_credited_and_one_name_is_one_person() -> None:
    notes = notes_of(
        c(1, "[Fix] One (#1)", "Co-authored-by: dependabot[bot] <49699333+dependabot[bot]@users.noreply.github.com>\n"
          "Co-authored-by: Copilot <copilot@github.com>\nCo-authored-by: Eve Park <eve@work.example>"),
        c(2, "[Fix] Two (#2)", author=("github-actions[bot]", "actions@github.com")),
        c(3, "[Fix] Three (#3)", "Co-authored-by: Eve  park <eve@home.example>", author=EVE),
    )  # fmt: skip
    assert [[p.name for p in e.credits] for e in notes.entries] == [
        ["Alice Chen", "Eve Park"],
        [],
        ["Eve Park"],
    ]
    assert [p.name for p in notes.contributors] == ["Alice Chen", "Eve Park"]


def test_merging_by_name_can_be_turned_off() -> None:
    notes = build_notes(
        [
            c(2, "[Fix] Two (#2)", author=("Eve Park", "eve@home.example")),
            c(1, "[Fix] One (#1)", author=EVE),
        ],
        category_order=ORDER,
        since=None,
        until="HEAD",
        people=People(merge_by_name=False),
    )
    assert [p.email for p in notes.contributors] == ["eve@example.com", "eve@home.example"]


def test_a_co_author_without_an_email_is_credited_by_name() -> None:
    notes = notes_of(c(1, "[Fix] One (#1)", "Co-authored-by: Grace Hopper"))
    assert [p.name for p in notes.entries[0].credits] == ["Alice Chen", "Grace Hopper"]
    assert "by Alice Chen, Grace Hopper\n" in render_markdown(notes)


def test_new_contributors_are_those_with_no_change_before() -> None:
    known = People().keys(Person(*ALICE))
    notes = build_notes(
        [c(2, "[Fix] Two (#7)", author=EVE), c(1, "[Fix] One (#6)")],
        category_order=ORDER,
        since="v0.1.0",
        until="HEAD",
        people=People(known=frozenset(known)),
    )
    assert [(p.name, pr) for p, pr in notes.new_contributors] == [("Eve Park", 7)]
    text = render_markdown(notes, repo_url="https://github.com/org/engine")
    assert text.endswith(
        "## New Contributors\n\n- Eve Park made their first contribution in "
        "[#7](https://github.com/org/engine/pull/7)\n"
    )


# -- categories as real subjects spell them ---------------------------------------------

REAL_SUBJECTS = [
    ("[BufFix] Fix the port (#1)", "Bug Fixes", "Fix the port"),
    ("[Perfomance] Faster sampling (#2)", "Performance", "Faster sampling"),
    ("[CI]: Pin the tools (#3)", "CI/Build", "Pin the tools"),
    ("[310P] Support the 310P (#4)", "Hardware", "Support the 310P"),
    ("[v0.13.0][cherry-pick] [Bugfix] A backport (#5)", "Bug Fixes", "A backport"),
    ("[Test] Add a test (#6)", "Tests", "Add a test"),
    ("[UT] Cover the scheduler (#7)", "Tests", "Cover the scheduler"),
    ("[E2E] Run the model (#8)", "Tests", "Run the model"),
    ("[Lint] Format (#9)", "CI/Build", "Format"),
    ("[Nightly] Fix the nightly (#10)", "CI/Build", "Fix the nightly"),
    ("[Refactor] Split the worker (#11)", "Misc", "Split the worker"),
    ("[Kernel] A kernel (#12)", "Kernels", "A kernel"),
    ("[Model] Add a model (#13)", "Features", "Add a model"),
    ("[Perf] Faster (#14)", "Performance", "Faster"),
    ("[Xyzzy] Unknown (#15)", "Other", "Unknown"),
]


@pytest.mark.parametrize(("subject", "category", "title"), REAL_SUBJECTS)
def test_categories_from_real_subjects(subject: str, category: str, title: str) -> None:
    [entry] = notes_of(c(1, subject)).entries
    assert (entry.category, entry.title) == (category, title)


def test_a_typo_is_read_and_reported() -> None:
    notes = build_notes(
        [c(2, "[Perfomance] Faster (#2)"), c(1, "[BufFix] Fix (#1)"), c(3, "[Fix] Sure (#3)")],
        category_order=ORDER,
        since=None,
        until="HEAD",
        aliases=ALIASES,
    )
    assert notes.guessed == (("BufFix", "Bug Fixes"), ("Perfomance", "Performance"))


def test_a_name_with_a_value_is_not_reported_as_a_typo() -> None:
    notes = build_notes(
        [c(1, "[FIX_FOR_VLLM_CUSTOM=14617c2b6c] Register the INC config (#1)")],
        category_order=ORDER,
        since=None,
        until="HEAD",
        aliases=ALIASES,
    )
    assert (notes.entries[0].category, notes.guessed) == ("Bug Fixes", ())


@pytest.mark.parametrize("prefix", ["Fox", "Bu", "Build2x", "Feat-Fix"])
def test_no_guess_when_unsure(prefix: str) -> None:
    [entry] = notes_of(c(1, f"[{prefix}] Something (#1)")).entries
    assert entry.category == "Other"


WORDS = [
    ("fix: handle an empty batch (#1)", "Bug Fixes"),
    ("ci(gaudi): pin the runner (#2)", "CI/Build"),
    ("docs: explain buckets (#3)", "Documentation"),
    ("Fix the batch limit (#4)", "Bug Fixes"),
    ("Add gsm8k test to full_tests (#5)", "Tests"),
    ("Add Unified Attention docs (#6)", "Documentation"),
    ("Add support for Qwen3 (#7)", "Features"),
    ("README update for the executor backend (#8)", "Documentation"),
    ("{GITHUB ACTION} remove DCO block (#9)", "CI/Build"),
    ("Optimize the sampler (#10)", "Performance"),
    ("Remove a dead filter (#11)", "Misc"),
    ("[GAUDISW-247226] Cap the decode buckets (#12)", "Misc"),
    ("qwen35 compact mode (#13)", "Other"),  # words that say no kind of change
    # a "topic:" or "topic -" label, then the words after it
    ("DP: Fix for torch.compile (#14)", "Bug Fixes"),
    ("Bug fix: hpu mrope (#15)", "Bug Fixes"),
    ("Monkeypatch - Add conditional registration for HpuOvis model (#16)", "Features"),
    ("Port of: Fix _mamba_block_aligned_split signature mismatch (#17)", "Bug Fixes"),
    ("Port: [v0.24.0] Fix decode throughput regression (#57)", "Bug Fixes"),
    ("[GAUDISW-245785] - Fix measurement config file generation (#18)", "Bug Fixes"),
    # a leading verb in any of its forms, or after an adverb
    ("Removing external links from the main page (#19)", "Misc"),
    ("Enabled structured output (#20)", "Features"),
    ("Optimizing visible block number for Hybrid kv_cache (#21)", "Performance"),
    ("Automatically adjust VLLM_DECODE_BLOCK_BUCKET_MIN if it exceeds max_blocks (#22)", "Misc"),
    ("Clamp decode block buckets to physical KV cache size (#23)", "Misc"),
    ("Separate conv1d for Granite 4.0 (#24)", "Misc"),
    ("Enhance process management for online model swap (#42)", "Features"),
    ("Adapt Online defragmenter for torch compile (#43)", "Misc"),
    ("Drop removed calculate_kv_scales runtime path in OOT attention (#44)", "Misc"),
    ("Increase timeout from default 6h to 12h (#45)", "Misc"),
    ("Decrease the default max_num_seqs for Granite (#46)", "Misc"),
    ("reset hybrid block_size to 128 for tool calling (#47)", "Misc"),
    ("Reenabling llama4 models (#48)", "Misc"),
    ("Re-enable prefix caching for Granite (#49)", "Misc"),
    ("Modified the defaults of the linear bucketing (#50)", "Misc"),
    # dependency versions are CI/Build
    ("Bump actions/checkout from 4.2.2 to 7.0.1 (#25)", "CI/Build"),
    ("ray: pin ray to <2.49.0 (#26)", "CI/Build"),
    ("Update numba requirement from >=0.58.0 to >=0.66.0 (#27)", "CI/Build"),
    ("Upgrade transformers>= 4.56.0, <5 (#51)", "CI/Build"),
    # what it is about: images and GitHub Actions are CI/Build
    ("Install torchaudio in CD Dockerfiles (#28)", "CI/Build"),
    ("rhel docker fix to main (#29)", "CI/Build"),
    ("Cancel stale pre-commit GHA jobs (#30)", "CI/Build"),
    # a word anywhere that names the kind of change
    ("Interleaved sliding window fix (#31)", "Bug Fixes"),
    ("Server doesnt crash when request is canceled (#32)", "Bug Fixes"),
    ("Uniproc executor segfault workaround (#33)", "Bug Fixes"),
    ("Force CPU loading for INC quantization to prevent OOM (#52)", "Bug Fixes"),
    ("WA shared bias in UA (#53)", "Bug Fixes"),
    ("qwen35 initial enablement (#34)", "Features"),
    ("Sleep mode support (#35)", "Features"),
    ("HPUCompressedTensorsW8A8Int8_BF16Fallback impl (#36)", "Features"),
    ("GPT OSS Integration Code (#54)", "Features"),
    ("Gemma3 Multimodal optimization (#37)", "Performance"),
    ("v0 cleanup (#38)", "Misc"),
    ("Track MoERunner shared-experts refactor (#55)", "Misc"),
    ("PR-1054 revert (#56)", "Misc"),
    ("Pipeline parallelism updates (#39)", "Misc"),
    ("Cherry pick from v0.24.0 to main (#40)", "Misc"),
    ("Cherrypick #1207: Granite4.0h fallback bucket padding fix (#41)", "Bug Fixes"),  # fix first
]


@pytest.mark.parametrize(("subject", "category"), WORDS)
def test_a_subject_without_a_prefix_is_read_by_its_words(subject: str, category: str) -> None:
    [entry] = notes_of(c(1, subject)).entries
    assert entry.category == category


def test_a_revert_of_two_commits_cancels_both_and_itself() -> None:
    """pytorch's and git's own shape: one revert, a "This reverts commit X." per commit."""
    notes = notes_of(
        c(1, "[Kernel] Add the fused op (#201)"),
        c(2, "[Kernel] Use the fused op in attention (#202)"),
        c(3, "[Fix] Keep me (#203)"),
        c(
            4,
            'Revert "[Kernel] Add the fused op (#201)" and its use (#204)',
            f"This reverts commit {sha(2)}.\n\nThis reverts commit {sha(1)}.\n",
        ),
    )
    assert titles(notes) == ["Keep me"]
    assert set(notes.cancelled) == {sha(1), sha(2), sha(4)}


def test_a_revert_of_two_commits_with_one_outside_the_range_stays() -> None:
    notes = notes_of(
        c(2, "[Kernel] Use the fused op in attention (#202)"),
        c(
            4,
            'Revert "[Kernel] Use the fused op in attention (#202)" (#204)',
            f"This reverts commit {sha(2)}.\nThis reverts commit {sha(1)}.\n",
        ),
    )
    # #202 and its revert's part cancel; the revert stays for what shipped before
    assert set(notes.cancelled) == {sha(2)}
    assert [e.sha for e in notes.entries] == [sha(4)]


def test_a_bracketed_revert_cancels_what_it_quotes() -> None:
    notes = notes_of(
        c(1, "[Kernel] Add a stub (#104)"),
        c(2, '[Revert] "[Kernel] Add a stub (#104)" (#105)'),
        c(3, "[Fix] Keep me (#106)"),
    )
    assert titles(notes) == ["Keep me"]
    assert set(notes.cancelled) == {sha(1), sha(2)}
    reland = c(4, '[Reapply] "[Kernel] Add a stub (#104)"')
    assert reland.reverts_subject == 'Revert "[Kernel] Add a stub (#104)"'


def test_co_authors_without_an_email_are_credited_only_as_plain_names() -> None:
    body = (
        "Co-authored-by: **@mallory**\n"
        "Co-authored-by: [Eve](https://example.com/eve)\n"
        "Co-authored-by: Zoë O'Neil\n"
        "Co-authored-by: Bob Okafor <bob@example.com>\n"
    )
    commit = c(1, "[Fix] One (#1)", body)
    assert [(p.name, p.email) for p in commit.co_authors] == [
        ("Zoë O'Neil", ""),
        ("Bob Okafor", "bob@example.com"),
    ]
    assert "mallory" not in render_markdown(notes_of(commit, c(2, "[Fix] Two (#2)", body)))


def test_pytorch_bots_and_coding_agents_are_not_credited() -> None:
    bots = [
        ("Facebook Community Bot", "facebook-github-bot@users.noreply.github.com"),
        ("PyTorch MergeBot", "pytorchmergebot@users.noreply.github.com"),
        ("Claude", "noreply@anthropic.com"),
        ("Cursor Agent", "cursoragent@cursor.com"),
    ]
    commits = [c(n, f"[Fix] Change {n} (#{n})", author=who) for n, who in enumerate(bots, 1)]
    commits.append(c(9, "[Fix] Keep me (#9)", author=("Ana Talbot", "talbot@example.com")))
    notes = notes_of(*commits)
    assert [p.name for p in notes.contributors] == ["Ana Talbot"]


def test_a_pr_an_earlier_release_shipped_is_left_out_but_not_its_revert() -> None:
    """An adapted copy on the previous final's branch carried (#5): main's #5 shipped."""
    commits = [
        c(1, "[Bugfix] Fix the limit (#5)"),
        c(2, "[Bugfix] Fix the loader (#6)"),
        c(3, 'Revert "[Bugfix] Fix the loader (#6)" (#8)'),  # cancels #6 in the range
        c(4, 'Revert "[Bugfix] Fix the limit (#5)" (#7)'),
        c(5, "[Core] Something new (#9)"),
    ]
    built = build_notes(
        list(reversed(commits)), category_order=ORDER, since="v0.1.0", until="HEAD",
        exclude_prs=[5],
    )  # fmt: skip
    assert titles(built) == ['Revert "Fix the limit"', "Something new"]
    assert titles(notes_of(*commits)) == ["Something new"]  # nothing shipped: #5 cancels
    # shipped as a pick (by main commit): its revert here is news as well
    assert titles(notes_of(*commits, exclude=(sha(1),))) == [
        'Revert "Fix the limit"',
        "Something new",
    ]

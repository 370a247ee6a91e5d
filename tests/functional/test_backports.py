"""Backports that carry no ``-x`` and no longer have main's patch: found by PR numbers,
titles and changed lines, held back from a pick unless ``--repick`` names them; copies
the branch reverted are picked again. Subjects are the shapes met on real vLLM-family
release branches (vllm-project/vllm-gaudi)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from release.core import backports
from release.core.backports import Message, by_lines, by_message, normalized_title, similarity
from release.core.commits import make_commit
from release.core.pull_requests import RepoIdentity
from release.sample import RESOLVED_SCHEDULER_108, SampleEngine
from tests.backport_support import git, moved_file_backport
from tests.conftest import CliResult, run_cli

# -- pure: what a port's message says -----------------------------------------------


@pytest.mark.parametrize(
    ("subject", "title"),
    [
        (
            "Fix grammar bitmask corruption in mixed batches (#1200)",
            "fix grammar bitmask corruption in mixed batches",
        ),
        (
            "[Cherry-pick] SDL secure error handling fixes (#1246)",
            "sdl secure error handling fixes",
        ),
        ("[v0.13.0][cherry-pick] Fix the KV cache size (#4410)", "fix the kv cache size"),
        (
            "Port #1247: Fix of Qwen Out of HOST memory (OOM), #1085 (#1256)",
            "fix of qwen out of host memory oom",
        ),
        (
            "Fix of Qwen Out of HOST memory (OOM), #1085 (#1247)",
            "fix of qwen out of host memory oom",
        ),
        (
            "Cherrypick #1207: Granite4.0h fallback bucket padding fix (#1233)",
            "granite4 0h fallback bucket padding fix",
        ),
        (
            "Load and Dequant MxFP4 Weights (cherry-pick to releases/v0.17.1) (#1251)",
            "load and dequant mxfp4 weights",
        ),
        (
            "Cherry-pick to v0.19.0 Set Docker auto calc PT_HPU_LAZY_MODE=0 as default (#1397)",
            "set docker auto calc pt hpu lazy mode 0 as default",
        ),
        ("Port of: Update lora tests #1488 (#1489)", "update lora tests"),
        (
            "Fix -u flag requiring argument in calibrate_model.sh (#1121) (#1167)",
            "fix u flag requiring argument in calibrate model sh",
        ),
        (
            "Coverity fix including security, null-like values, duplicates and typ… (#1163)",
            "coverity fix including security null like values duplicates and typ…",
        ),
        ("Mamba prefix caching support for v0.19.0 (#1330)", "mamba prefix caching support"),
    ],
)
def test_normalized_title_strips_what_a_port_adds(subject: str, title: str) -> None:
    assert normalized_title(subject) == title


@pytest.mark.parametrize(
    ("subject", "body", "refs"),
    [
        ("Fix -u flag requiring argument (#1121) (#1167)", "", {1121}),
        ("Port #1247: Fix of Qwen OOM, #1085 (#1256)", "", {1247, 1085}),
        ("Partly port of #1222. MoE activation type mismatch (#1271)", "", {1222}),
        ("Partly port of 1436, Fix MultiModelEngineClient", "", {1436}),
        ("Cherry-pick from PR#1258 (#1367)", "", {1258}),
        ("Port of: Detach shared MoE gate (vLLM #41184) #1566", "", {1566}),
        ("Fix decode bucket generation (#1504)", "Backport of #1485 to releases/v0.21.0.", {1485}),
        (
            "Optimize selective_state_update (#1295)",
            "Cherry-picked from #1210 and #1244 with adaptations.",
            {1210, 1244},
        ),
        # a number in an ordinary subject names a bug, not what the commit carries
        ("Fix decode bucket filter issues from #1122 (#1447)", "", set()),
        ("Fix for MoE refactor #35178 (#1442)", "", set()),
    ],
)
def test_the_pr_numbers_a_port_names(subject: str, body: str, refs: set[int]) -> None:
    assert Message("0" * 40, subject, body).refs == refs


URL = "https://github.com/example/tinyengine"  # the sample engine's repo-url
THIS = RepoIdentity.of(URL)
EVIL = "https://github.com/evil/other"


@pytest.mark.parametrize(
    ("subject", "body", "repo", "refs"),
    [
        (f"Cherry-pick of {URL}/pull/12: Fix x", "", THIS, {12}),
        (f"Cherry-pick of {EVIL}/pull/12: Fix x", "", THIS, set()),
        (f"Cherry-pick of {URL}/pull/12: Fix x", "", None, set()),  # whose, unknown
        (
            "Fix x (#130)",
            "Backport of https://GitHub.com/Example/TinyEngine/pull/12 and #13",
            THIS,
            {12, 13},
        ),
        ("Fix x (#130)", f"Backport of {EVIL}/pull/12 and #13", THIS, {13}),
        ("Fix x (#130)", f"Backport of {URL}/pull/12 and #13", None, {13}),
        # the digits of a URL are no PR numbers
        (
            "Fix x (#130)",
            "Backport of https://github.com/or9/re7/pull/12",
            RepoIdentity.of("https://github.com/or9/re7"),
            {12},
        ),
    ],
)
def test_a_pr_url_a_port_names_is_a_number_only_of_this_repository(
    subject: str, body: str, repo: RepoIdentity | None, refs: set[int]
) -> None:
    assert Message("0" * 40, subject, body, repo).refs == refs


def _m(sha: str, subject: str, body: str = "") -> Message:
    return Message(sha * 40, subject, body)


def test_evidence_by_pr_number_both_ways_then_by_title() -> None:
    main = [
        _m("a", "Fix of Qwen Out of HOST memory (OOM) (#1247)"),
        _m("b", "fix: HPU-specific fixes for KV-offload (#1264) (#1401)"),  # forward-ported
        _m("c", "Fix grammar bitmask corruption in mixed batches (#1200)"),
        _m("d", "Add priority scheduling (#1300)"),
    ]
    branch = [
        _m("1", "Port #1247: Fix the host OOM (#1256)"),
        _m("2", "fix: HPU-specific fixes for KV-offload (#1264)"),
        _m("3", "[Cherry-pick] Fix grammar bitmask corruption in mixed batches (#1199)"),
    ]
    found = by_message(main, branch)
    assert {sha[0]: (e.branch[0], e.kind) for sha, e in found.items()} == {
        "a": ("1", "pr"),
        "b": ("2", "pr"),
        "c": ("3", "title"),
    }
    assert "#1247 named by 'Port #1247: Fix the host OOM (#1256)'" in found["a" * 40].detail


def test_a_title_that_says_little_or_names_two_main_commits_is_no_evidence() -> None:
    main = [
        _m("a", "Fix typo (#10)"),
        _m("b", "Temporary nixl test cases disablement (#1135)"),
        _m("c", "Temporary nixl test cases disablement (#1139)"),
    ]
    branch = [
        _m("1", "[Cherry-pick] Fix typo (#20)"),
        _m("2", "Temporary nixl test cases disablement (#1140)"),
    ]
    assert by_message(main, branch) == {}


def test_changed_lines_match_across_a_move_and_a_changed_context() -> None:
    main = backports.changed_lines(
        "--- a/pkg/server.py\n+++ b/pkg/server.py\n@@ -1,2 +1,6 @@\n"
        " import sys\n+def empty(prompt):\n+    if not prompt:\n+        return 400\n"
        "+    return None\n-    return 200\n"
    )
    branch = backports.changed_lines(
        "--- a/pkg/api/server.py\n+++ b/pkg/api/server.py\n@@ -9,2 +9,6 @@\n"
        " import os\n+def empty(prompt):\n+    if not  prompt:\n+        return 400\n"
        "+    return None\n+\n+# adapted for the branch\n"
    )
    assert similarity(main, branch) == pytest.approx(4 / 5)
    assert by_lines({"m": main}, {"b": branch})["m"].kind == "lines"
    # a handful of common lines says nothing; nor does a tiny shared import
    assert similarity(Counter({"+import os": 1, "+x = 1": 1}), Counter({"+import os": 1})) == 0
    assert by_lines({"m": main}, {"b": Counter({"+def empty(prompt):": 1})}) == {}


def test_changed_lines_are_trimmed_counted_and_headers_left_out() -> None:
    patch = (
        "--- a/x.py\n+++ b/x.py\n@@ -1 +1,9 @@\n"
        "+\tvalue  =\t1   \r\n"  # tabs, a run of spaces, trailing spaces and CR
        "+value = 1\n"
        "+    value = 1\n"
        "+  }\n+\n+   \n"  # brackets and blank lines say nothing
        "-old()\n"
        "+++ a line that reads as a header is left out, as before\n"
        "++x\n"
        "-\u00e9t\u00e9 = 2\n"
    )
    assert backports.changed_lines(patch) == Counter(
        {"+value = 1": 3, "-old()": 1, "++x": 1, "-\u00e9t\u00e9 = 2": 1}
    )


def _c(sha: str, subject: str, body: str = ""):
    return make_commit(sha * 40, "A", "a@example.com", subject, body, {})


def test_a_revert_that_stands_undoes_its_target_and_a_reverted_revert_does_not() -> None:
    branch = [  # newest first
        _c("5", 'Revert "Revert "Fix three (#3)""', f"This reverts commit {'4' * 40}."),
        _c("4", 'Revert "Fix three (#3)"', f"This reverts commit {'3' * 40}."),
        _c("3", "Fix three (#3)"),
        _c("2", 'Revert "Fix one" (#9)', "Reverts org/repo#1"),
        _c("1", "Fix one (#1)"),
    ]
    assert backports.undone(branch) == {"1" * 40: "2" * 40, "4" * 40: "5" * 40}


# -- on a real repository: the plan holds likely backports, re-picks reverted copies ----


def release(engine: SampleEngine, *args: str, code: int = 0) -> CliResult:
    result = run_cli(engine.root, *args)
    assert result.code == code, result.output
    return result


def plan(engine: SampleEngine, *args: str) -> list[tuple[str, str, str | None]]:
    data = json.loads(release(engine, "pick", *args, "--dry-run", "--json").stdout)
    return [
        (s["action"], s["sha"], s["data"].get("why") if "data" in s else s.get("why"))
        for s in data["steps"]
    ]


def _backport_108(engine: SampleEngine, subject: str) -> str:
    """#108 adapted to the branch by hand (it conflicts there: #107 is not picked), with
    no -x line: git cherry cannot see it."""
    (engine.root / "tinyengine" / "scheduler.py").write_text(RESOLVED_SCHEDULER_108)
    git(engine, "commit", "--quiet", "-am", subject)
    return git(engine, "rev-parse", "HEAD")


@pytest.mark.parametrize(
    ("subject", "evidence"),
    [
        ("[v0.1.0][cherry-pick] Fix off-by-one in the batch limit (#108) (#120)", "#108 named by"),
        ("Port of #108: batch limit boundary (#120)", "#108 named by"),
        ("[Cherry-pick] Fix off-by-one in the batch limit (#121)", "same title as"),
    ],
)
def test_an_adapted_backport_is_held_with_its_evidence(
    cut_engine_copy: SampleEngine, subject: str, evidence: str
) -> None:
    engine = cut_engine_copy
    copy = _backport_108(engine, subject)
    assert git(engine, "cherry", "HEAD", "main").count("+ ") == 5  # patch identity misses it
    steps = plan(engine, "#108", "#109")
    assert [(a, sha) for a, sha, _ in steps] == [
        ("hold", engine.shas[108]),
        ("cherry-pick", engine.shas[109]),
    ]
    why = steps[0][2]
    assert why.startswith(f"likely already backported as {copy[:12]} (")
    assert evidence in why
    text = release(engine, "pick", "#108", "#109", "--dry-run").stdout
    assert "1 to pick, 0 already there, 1 held as likely already backported" in text
    assert f"--repick {engine.shas[108][:10]} picks it anyway" in text


@pytest.mark.parametrize(("url", "held"), [(URL, True), (EVIL, False)])
def test_a_backport_naming_a_pr_by_url_holds_it_only_when_the_url_is_this_repositorys(
    cut_engine_copy: SampleEngine, url: str, held: bool
) -> None:
    engine = cut_engine_copy
    (engine.root / "tinyengine" / "scheduler.py").write_text(RESOLVED_SCHEDULER_108)
    body = f"Backport of {url}/pull/108"
    git(engine, "commit", "--quiet", "-am", "Keep the batch limit exact", "-m", body)
    copy = git(engine, "rev-parse", "HEAD")
    ((action, sha, why),) = plan(engine, "#108")
    assert sha == engine.shas[108]
    assert (action, why) == (
        (
            "hold",
            f"likely already backported as {copy[:12]} (#108 named by 'Keep the batch limit exact')",
        )
        if held
        else ("cherry-pick", None)
    )


def test_pick_leaves_a_held_commit_alone_and_repick_takes_it(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    _backport_108(engine, "[v0.1.0][cherry-pick] Fix off-by-one in the batch limit (#108) (#120)")
    before = git(engine, "rev-parse", "HEAD")
    result = release(engine, "pick", "#108 #109")
    assert f"held {engine.shas[108][:10]} " in result.stdout
    assert git(engine, "rev-list", "--count", f"{before}..HEAD") == "1"
    assert f"(cherry picked from commit {engine.shas[109]})" in git(
        engine, "log", "-1", "--format=%B"
    )
    # --repick alone names the commit to take anyway; the plan says why it was held
    steps = json.loads(release(engine, "pick", "--repick", "#108", "--dry-run", "--json").stdout)[
        "steps"
    ]
    assert [(s["action"], s["sha"]) for s in steps] == [("cherry-pick", engine.shas[108])]
    assert "asked by --repick although likely already backported" in steps[0]["detail"]


def test_a_backport_into_a_moved_file_is_found_by_its_changed_lines(
    cut_engine_copy: SampleEngine,
) -> None:
    engine = cut_engine_copy
    fix, copy = moved_file_backport(engine)
    steps = plan(engine, fix)
    assert steps[0][:2] == ("hold", fix)
    assert steps[0][2].startswith(f"likely already backported as {copy[:12]} (")
    assert "% of its changed lines" in steps[0][2]


def test_unrelated_branch_work_holds_nothing(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    scheduler = engine.root / "tinyengine" / "scheduler.py"
    scheduler.write_text(scheduler.read_text() + "\n\ndef idle():\n    return []\n")
    git(engine, "commit", "--quiet", "-am", "[Bugfix] Off-by-one in the idle path (#140)")
    assert [a for a, _, _ in plan(engine, "#108", "#109", "#111")] == ["cherry-pick"] * 3


@pytest.mark.parametrize("with_x", [True, False])
def test_a_copy_the_branch_reverted_is_picked_again(
    cut_engine_copy: SampleEngine, with_x: bool
) -> None:
    engine = cut_engine_copy
    git(engine, "cherry-pick", *(["-x"] if with_x else []), engine.shas[109])
    copy = git(engine, "rev-parse", "HEAD")
    git(engine, "revert", "--no-edit", "HEAD")
    revert = git(engine, "rev-parse", "HEAD")
    text = release(engine, "pick", "#109", "--dry-run").stdout
    assert "1 to pick, 0 already there" in text
    assert f"(picked again: it was on the branch as {copy[:10]}, reverted by {revert[:10]})" in text
    release(engine, "pick", "#109")
    assert git(engine, "show", "HEAD:tinyengine/server.py") == git(
        engine, "show", f"{engine.shas[109]}:tinyengine/server.py"
    )
    # once picked again it is there, and a second run skips it
    assert [a for a, _, _ in plan(engine, "#109")] == ["skip"]


@pytest.mark.parametrize(
    "subject",
    [
        # GitHub's revert button, with the revert's own PR number (vLLM's form)
        'Revert "[bugfix] Fix --port parsing when the value is missing (#109)" (#130)',
        # a revert bot's: the reverted PR after the quote, then its own
        '[Revert] Revert "[bugfix] Fix --port parsing when the value is missing" (#109) (#130)',
        # the word as a bracketed prefix (PyTorch-family)
        '[Revert] "[bugfix] Fix --port parsing when the value is missing (#109)"',
    ],
)
def test_a_revert_on_the_branch_is_never_a_holds_evidence(
    cut_engine_copy: SampleEngine, subject: str
) -> None:
    """A revert that names a PR says the change is gone, not that it is there: the pick
    is not held "likely already picked" on the revert's word."""
    engine = cut_engine_copy
    git(engine, "cherry-pick", engine.shas[109])
    copy = git(engine, "rev-parse", "HEAD")
    git(engine, "revert", "--no-edit", "HEAD")
    git(engine, "commit", "--quiet", "--amend", "-m", f"{subject}\n\nThis reverts commit {copy}.")
    ((action, sha, why),) = plan(engine, "#109")
    assert (action, sha) == ("cherry-pick", engine.shas[109]), why
    assert "likely" not in (why or "")


def test_a_reverted_revert_leaves_the_copy_on_the_branch(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    git(engine, "cherry-pick", "-x", engine.shas[109])
    git(engine, "revert", "--no-edit", "HEAD")
    git(engine, "revert", "--no-edit", "HEAD")
    assert plan(engine, "#109") == [
        ("skip", engine.shas[109], "already on the branch (cherry-picked)")
    ]


def test_a_squash_on_main_of_two_branch_commits_is_found_by_their_lines_together() -> None:
    first = Counter({f"+warm up resolution {n}": 1 for n in range(10)})
    second = Counter({f"+warm up item count {n}": 1 for n in range(10)})
    squash = first + second + Counter({"+# docs": 1})
    assert by_lines({"m": squash}, {"a": first}) == {}  # half of it alone is not enough
    found = by_lines({"m": squash}, {"a": first, "b": second})["m"]
    assert (found.branch, found.kind) == ("a", "lines")
    assert found.detail == "95% of its changed lines, with b"
    # a branch commit mostly about something else does not join in
    other = second + Counter({f"+unrelated {n}": 1 for n in range(30)})
    assert by_lines({"m": squash}, {"a": first, "b": other}) == {}

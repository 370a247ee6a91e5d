"""Untrusted text cannot forge the tool's output: control characters are escaped, in the
field (a check name, a subject, a log line is one line whatever it holds) and at the last
pass before the terminal. The issue's attack, rendered through the real renderers: a
check name holding a newline, a forged ``reproduce v0.1.0rc1: match`` and ANSI sequences
(cursor up, erase the line). No engine, no git: crafted values."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from release.core.manifest_records import VariantEntry
from release.core.plan_steps import PickData
from release.core.terminal_text import escaped
from release.core.verdict import compare_variant, dict_changes, table
from release.errors import RefusedError
from release.flows.pick_journal import Conflict
from release.flows.pick_plan import Candidate, PickState, RequestedPick, plan_pick
from release.flows.status import (
    DonePick,
    ImagesState,
    PendingPick,
    PickInProgress,
    Status,
    StatusTag,
)
from release.flows.status_lines import render_status
from release.images.build import BuildResult, BuildStatus
from release.images.heartbeat import last_log_line
from release.images.reproduce import Reproduction
from release.images.roundtrip import RoundTrip
from release.images.smoke_checks import CheckResult, CheckStatus, SmokeReport
from release.images.snapshot import SnapshotReport, diff_states
from release.images.source import listing
from tests.manifest_support import entry, sha
from tests.terminal_support import CURSOR, FORGED, SHOWN, controls

HOSTILE = f"version{CURSOR}\n{FORGED}"
# for the last pass, which keeps newlines: the forged line drawn over the one before
OVERWRITE = f"version{CURSOR}\r{FORGED}"
OVERWRITE_SHOWN = f"version\\x1b[1A\\x1b[2K\\r{FORGED}"
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_not_forged(lines: list[str], shown: str = SHOWN) -> None:
    """No raw control character, no line of its own that is the forged one (or begins
    with it), and the hostile text shown, escaped."""
    text = "\n".join(lines)
    assert controls(text, but="\n") == [], text
    assert not [line for line in text.split("\n") if line.lstrip().startswith(FORGED)], text
    assert shown in text


# -- the function --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\x1b[2Kb", "a\\x1b[2Kb"),
        ("one\ntwo", "one\\ntwo"),
        ("back\rover", "back\\rover"),
        ("col\tumn", "col\\tumn"),
        ("nul\x00bell\x07", "nul\\x00bell\\x07"),
        ("del\x7f", "del\\x7f"),
        ("csi\x9b2J next\x85line", "csi\\x9b2J next\\x85line"),
        ("admin\u202e\u2066txt.exe\u2069", "admin\\u202e\\u2066txt.exe\\u2069"),
        ("\u200f\u200e\u061c", "\\u200f\\u200e\\u061c"),
        ("line\u2028para\u2029", "line\\u2028para\\u2029"),
    ],
)
def test_each_control_is_shown_as_a_visible_escape(raw: str, shown: str) -> None:
    assert escaped(raw) == shown


@pytest.mark.parametrize(
    "text",
    [
        "Fix --port parsing (#109)",
        "Zoë Müller, François, Łukasz, Ñuñez",
        "修复调度器 バッチ 배치",
        "emoji 🚀 and a family 👨\u200d👩\u200d👧 (joined by U+200D)",
        "العربية עברית",
        "0\\.31 and C:\\path and a written-out \\x1b",
        "",
    ],
)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert escaped(text) == text
    assert escaped(text, keep_newlines=True) == text


def test_keep_newlines_keeps_the_newline_and_only_it() -> None:
    assert escaped(f"a\n{CURSOR}b\r\n", keep_newlines=True) == "a\n\\x1b[1A\\x1b[2Kb\\r\n"


HOSTILE_PIECES = st.sampled_from(
    ["\x1b[", "1A", "2K", "\n", "\r", "\t", "\x00", "\x7f", "\x85", "\x9b", "\u202e",
     "\u2066", "\u2069", "\u200f", "\u061c", "\u2028", "\u200d", "é", "漢", "🚀", "\\", "x1b"]
)  # fmt: skip
TEXT = st.one_of(st.text(), st.lists(HOSTILE_PIECES, max_size=30).map("".join))


@FAST
@given(TEXT)
def test_escaped_text_holds_no_control_and_escaping_again_changes_nothing(text: str) -> None:
    once = escaped(text)
    assert controls(once) == []
    assert escaped(once) == once
    lines = escaped(text, keep_newlines=True)
    assert controls(lines, but="\n") == []
    assert lines.split("\n") == [escaped(line) for line in text.split("\n")]


@FAST
@given(st.text(st.characters(blacklist_categories=["Cc", "Cs"])))
def test_text_without_controls_is_returned_as_it_is(text: str) -> None:
    if controls(text):  # a bidi control or a separator: escaped, tested above
        return
    assert escaped(text) == text


# -- the renderers, fed the attack -----------------------------------------------------


def test_a_check_name_cannot_forge_the_verdict_of_reproduce() -> None:
    recorded, rebuilt = entry(sha("1")), entry(sha("2"))
    rebuilt["smoke"]["checks"].append({"name": HOSTILE, "status": "passed", "reason": ""})
    rebuilt["build"]["inventory"]["python_packages"] = {HOSTILE: f"1.0{CURSOR}"}
    rebuilt["build"]["base"] = {**recorded["build"]["base"], "ref": HOSTILE}
    rebuilt["build"]["base"]["content_digest"] = sha("5")
    outcome = Reproduction(f"v0.1.0rc1{CURSOR}")
    outcome.verdicts[f"cu130{CURSOR}"] = compare_variant(
        VariantEntry.of(recorded), VariantEntry.of(rebuilt)
    )
    lines = [*table(outcome.verdicts), outcome.summary()]
    assert_not_forged(lines)
    assert f"+ {SHOWN} passed" in [line.strip() for line in lines]
    assert lines[-1] == (
        "reproduce v0.1.0rc1\\x1b[1A\\x1b[2K: DRIFT in cu130\\x1b[1A\\x1b[2K (against the manifest)"
    )
    assert dict_changes({}, {HOSTILE: HOSTILE}) == [f"+ {SHOWN} {SHOWN}"]


def test_smoke_lines_show_the_check_and_its_container_as_one_line_each() -> None:
    result = CheckResult(HOSTILE, CheckStatus.FAILED, 1.5, HOSTILE, (HOSTILE, f"\r{FORGED}"))
    report = SmokeReport("cu130", "example/tinyengine:v0.1.0rc1", sha("1"), False, (result,))
    lines = report.lines()
    assert_not_forged(lines)
    assert f"  failed    {SHOWN} (1.5s) - {SHOWN}" in lines
    assert f"            | \\r{FORGED}" in lines


def test_snapshot_lines_show_what_the_runtime_and_the_probe_said_escaped() -> None:
    state = {"libraries": {}, "python": {"packages": {}}, "cuda": {"version.json": HOSTILE}}
    state["driver"] = HOSTILE
    trip = RoundTrip(False, HOSTILE, log=(HOSTILE,))
    diff = diff_states({"os": {"name": "debian"}}, {"os": {"name": HOSTILE, HOSTILE: "1"}})
    record = {"image": "example/tinyengine:v0.1.0rc1", "state": state}
    report = SnapshotReport("cu130", record, Path("/s/cu130.json"), trip, Path("/s/a.json"), diff)
    lines = report.lines()
    assert_not_forged(lines)
    assert f"    changed os.name: debian -> {SHOWN}" in lines
    assert f"    added   os.{SHOWN} = 1" in lines


def test_a_failed_build_shows_its_error_and_log_tail_one_line_each(tmp_path: Path) -> None:
    result = BuildResult("cu130", BuildStatus.FAILED, error=HOSTILE, log_tail=(HOSTILE,))
    assert_not_forged([result.line(), *result.tail_lines()])
    log = tmp_path / "build-cu130.log"
    log.write_text(f"#14 building\n#15 {CURSOR}{FORGED}\x1b[31m\n", encoding="utf-8")
    assert last_log_line(log) == f"#15 \\x1b[1A\\x1b[2K{FORGED}\\x1b[31m"
    assert listing(("ok.py", HOSTILE)) == f"ok.py, {SHOWN}"  # what a dirty build lists


def test_status_shows_names_subjects_reasons_paths_and_the_manifest_escaped() -> None:
    row = {"built": "yes (111111111111)", "smoked": "passed", "snapshot": f"omitted ({HOSTILE})"}
    s = Status(
        branch=f"releases/v0.1.0{CURSOR}",
        release="0.1.0",
        head="a" * 40,
        dirty=[HOSTILE],
        tags=[StatusTag(HOSTILE, "a" * 40, local=True, remote=True)],
        next_rc="v0.1.0rc2",
        final=None,
        picks_done=[DonePick("a" * 40, "b" * 40, HOSTILE, HOSTILE)],
        picks_pending=[PendingPick("c" * 40, "#1", HOSTILE, None, likely=HOSTILE)],
        pick_in_progress=PickInProgress(
            "conflict", "releases/v0.1.0", 1, Conflict("d" * 40, HOSTILE, (HOSTILE,))
        ),
        remote_checked=True,
        images=ImagesState(HOSTILE, "published", {"cu128": row}, []),
        notes=[HOSTILE],
        next_command="release push",
    )
    lines = render_status(s)
    assert_not_forged(lines)
    assert f"  cu128  built yes (111111111111), smoke passed, snapshot omitted ({SHOWN})" in lines


def test_a_pick_plan_shows_subjects_and_evidence_escaped_and_keeps_them_in_its_data() -> None:
    def candidate(digit: int, **changes: object) -> Candidate:
        fields = {"sha": str(digit) * 40, "subject": HOSTILE, "category": "Bug Fixes"}
        return Candidate(RequestedPick(f"#{digit}"), position=digit, **{**fields, **changes})

    state = PickState(
        "releases/v0.1.0",
        "f" * 40,
        (candidate(1), candidate(2, likely=HOSTILE), candidate(3, skip="already on the branch")),
        ("Features",),
    )
    plan = plan_pick(state)
    assert_not_forged(plan.lines())
    assert {s.data_of(PickData).subject for s in plan.steps} == {HOSTILE}
    feature = (candidate(4, category="Features"),)
    feature_state = PickState("releases/v0.1.0", "f" * 40, feature, ("Features",))
    with pytest.raises(RefusedError) as refused:
        plan_pick(feature_state)
    assert SHOWN in refused.value.one_line()


# -- the last pass: the console, nox, the rehearsal's terminal, the command echo ------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("stream", [io.StringIO, _Terminal], ids=["piped", "terminal"])
def test_the_console_escapes_what_a_line_holds_but_its_newlines(stream: type) -> None:
    from release.cli.console import say

    out = stream()
    say(f"picked abc {OVERWRITE}\nnext: release tag", stream=out)
    said = out.getvalue()  # on a terminal, with rich's own colour for "picked"
    assert "\x1b[1A" not in said and "\x1b[2K" not in said and "\r" not in said
    assert f"picked abc {OVERWRITE_SHOWN}" in said
    assert said.count("\n") == 2 and "next: release tag" in said.split("\n")[1]


def test_an_error_is_one_line_whatever_its_message_and_hint_quote(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from release.cli.console import error

    err = RefusedError(f"refused {HOSTILE}", hint=f"try\n{FORGED}")
    assert "\n" not in err.one_line()
    error(err.one_line())
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and controls(said, but="\n") == []
    assert said.startswith("error: refused version\\x1b[1A\\x1b[2K")


def test_nox_sessions_log_and_fail_with_controls_escaped(monkeypatch: pytest.MonkeyPatch) -> None:
    from release.cli import nox_sessions
    from release.commands import images
    from release.commands.outcome import Run

    class Session:
        def __init__(self) -> None:
            self.posargs: list[str] = []
            self.said: list[str] = []

        def log(self, line: str) -> None:
            self.said.append(line)

        def error(self, line: str) -> None:
            self.said.append(line)

    def action(request: object, run: Run) -> None:
        run.say(f"smoke({request.variant}): {OVERWRITE}")  # type: ignore[attr-defined]
        raise RefusedError(HOSTILE)

    # the session makes the request from the command's declaration, as the console script
    action.__annotations__ = {"request": images.SmokeRequest, "run": Run, "return": None}
    monkeypatch.setattr(images, "smoke", action)
    session = Session()
    nox_sessions._run(session, Path("."), "smoke", "cu130")
    assert session.said == [
        f"smoke(cu130): {OVERWRITE_SHOWN}",
        f"version\\x1b[1A\\x1b[2K {FORGED}",  # one line: the message's newline a space
    ]


def test_the_rehearsals_terminal_escapes_what_it_shows(tmp_path: Path) -> None:
    from release.sample.rehearse_terminal import Terminal

    said: list[str] = []
    terminal = Terminal(said.append, tmp_path)
    terminal.say(f"    {OVERWRITE}")
    terminal.check(OVERWRITE, False, OVERWRITE)
    assert_not_forged(said, OVERWRITE_SHOWN)


def test_the_command_echo_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from release.adapters.process import echo

    monkeypatch.setenv("RELEASE_ECHO", "1")
    echo(["git", "tag", "-m", f"v0.1.0rc1\n\n{HOSTILE}", "v0.1.0rc1"])
    said = capsys.readouterr().err
    assert said == f"+ git tag -m v0.1.0rc1\\n\\n{SHOWN} v0.1.0rc1\n"


def test_rich_progress_reads_no_markup_from_a_build_step() -> None:
    from rich.console import Console

    from release.images.progress import Progress

    out = _Terminal()
    console = Console(file=out, force_terminal=True, width=200)
    with Progress(["cu130"], print, console=console) as progress:
        progress.update("cu130", f"FAILED: [/] [bold]{escaped(HOSTILE)}[/bold]", final=True)
    assert "[bold]" in out.getvalue() and "[/]" in out.getvalue()

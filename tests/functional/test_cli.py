"""The command line as people use it: one declaration per command, nothing inert, a
suggestion for a near miss, help both ways, one short-flag map, JSON documents (errors
included) with a schema key, and the same output through ``inv release.*``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from release.cli.completion import complete, script
from release.commands.declare import SHORT
from release.commands.registry import COMMANDS, PICK_REASONS
from release.core import config
from release.sample import SampleEngine
from tests.conftest import CliResult, repo_state
from tests.conftest import run_cli as run_cli_anywhere

ROOT = Path(__file__).resolve().parents[2]


def run_cli(cwd: Path, *args: str, env: dict[str, str] | None = None) -> CliResult:
    """The console script's own tests: ``release`` as its own process, always."""
    return run_cli_anywhere(cwd, *args, env=env, process=True)


@pytest.mark.parametrize(
    ("args", "suggested"),
    [
        (["stauts"], "did you mean status?"),
        (["images.biuld"], "did you mean images.build"),
        (["tag", "--dryrun"], "did you mean --dry-run?"),
        (["notes", "--formt", "md"], "did you mean --format"),
        (["--main-brnch", "x", "status"], "did you mean --main-branch?"),
        (["pick", "--reason", "regresion", "abc"], "did you mean regression?"),
    ],
)
def test_a_near_miss_is_exit_2_with_a_suggestion(
    tmp_path: Path, args: list[str], suggested: str
) -> None:
    result = run_cli(tmp_path, *args)
    assert result.code == 2, result.output
    assert result.stdout == "" and suggested in result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1


def test_an_abbreviated_flag_is_refused_and_tags_nothing(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    before = repo_state(engine.root)
    for args in (["--dry", "tag"], ["tag", "--dry"], ["tag", "--dry-ru"], ["-R", "push"]):
        result = run_cli(engine.root, *args)
        assert result.code == 2, (args, result.output)
        assert "tagged" not in result.output and "pushed" not in result.output
    assert repo_state(engine.root) == before
    dry = run_cli(engine.root, "tag", "-n")  # the short spelling is one of the map's
    assert dry.code == 0 and dry.stdout.startswith("dry run, nothing changed"), dry.output
    assert repo_state(engine.root) == before


@pytest.mark.parametrize("name", [c.name for c in COMMANDS])
def test_help_both_ways_is_the_same(tmp_path: Path, name: str) -> None:
    before = run_cli(tmp_path, "--help", name)
    after = run_cli(tmp_path, name, "--help")
    assert before.code == after.code == 0, before.output + after.output
    assert before.stdout == after.stdout and before.stdout.startswith(f"usage: release {name}")


def test_every_summary_is_one_sentence() -> None:
    for command in COMMANDS:
        text = command.summary
        assert text[0].isupper() and text.endswith("."), command.name
        assert ". " not in text.rstrip("."), command.name  # one sentence
        assert len(text) <= 120, command.name  # one line in --list


def test_the_list_shows_every_task_with_its_whole_summary(tmp_path: Path) -> None:
    listing = run_cli(tmp_path, "--list")
    assert listing.code == 0
    for command in COMMANDS:
        assert re.search(
            rf"^  {re.escape(command.name)} +{re.escape(command.summary)}$", listing.stdout, re.M
        ), command.name


def test_a_short_flag_means_one_long_option_everywhere() -> None:
    meanings: dict[str, set[str]] = {}
    for command in COMMANDS:
        for option in command.options:
            if option.short:
                meanings.setdefault(option.short, set()).add(option.name)
    assert all(len(names) == 1 for names in meanings.values()), meanings
    assert len(set(SHORT.values())) == len(SHORT)  # and no letter is given twice
    assert meanings["o"] == {"out"} and meanings["v"] == {"variant"}


def test_a_shared_option_is_declared_the_same_way_in_every_command() -> None:
    kinds: dict[str, set[str]] = {}
    for command in COMMANDS:
        for option in command.options:
            kinds.setdefault(option.name, set()).add(option.kind)
    assert {name: k for name, k in kinds.items() if len(k) > 1} == {}


def test_the_reasons_offered_are_the_configs() -> None:
    assert PICK_REASONS == config.PICK_REASONS


def test_every_command_offers_json(tmp_path: Path) -> None:
    for command in COMMANDS:
        assert any(o.name == "json" for o in command.options), command.name


def test_a_document_carries_its_schema_and_an_error_is_a_document_too(
    cut_engine_copy: SampleEngine,
) -> None:
    engine = cut_engine_copy
    status = run_cli(engine.root, "status", "--json")
    assert status.code == 0
    assert json.loads(status.stdout)["schema"] == "release/status/v1"
    bad = run_cli(engine.root, "cut", "not-a-version", "--json")
    assert bad.code == 2, bad.output
    document = json.loads(bad.stdout)
    assert document["schema"] == "release/error/v1" and document["exit_code"] == 2
    assert document["command"] == "cut"
    assert bad.stderr == f"error: {document['error']}\n"


def _inv(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "invoke", "-r", str(ROOT), *args],
        cwd=cwd,
        env={**os.environ, "RELEASE_REPO": str(cwd)},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_invoke_and_the_console_script_print_the_same(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    for args in (["status"], ["status", "--json"], ["tag", "--dry-run"]):
        ours = run_cli(engine.root, *args)
        theirs = _inv(engine.root, f"release.{args[0]}", *args[1:])
        assert ours.code == theirs.returncode == 0, theirs.stderr
        assert ours.stdout == theirs.stdout
    failed = _inv(engine.root, "release.cut", "not-a-version")
    assert failed.returncode == 2 and failed.stderr.startswith("error: ")


def test_invoke_takes_several_commits_and_repeated_options(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    ours = run_cli(engine.root, "pick", engine.shas[109], "#111", "--dry-run")
    theirs = _inv(engine.root, "release.pick", f"{engine.shas[109]} #111", "--dry-run")
    assert ours.code == theirs.returncode == 0, theirs.stderr
    assert ours.stdout == theirs.stdout and "2 to pick" in ours.stdout
    # an option before the commits: they are still read as the commits
    after = _inv(
        engine.root, "release.pick", "--dry-run", "--reason", "regression", engine.shas[109]
    )
    assert after.returncode == 0 and "1 to pick" in after.stdout, after.stderr


def test_under_invoke_a_positional_that_may_be_left_out_is(cut_engine_copy: SampleEngine) -> None:
    """invoke has no optional positionals: pick's commits are not asked for once one of their
    stand-ins is given; github-release's tag, which nothing stands in for, is an option."""
    engine = cut_engine_copy
    for ours, theirs in (
        (["pick", "--continue"], ["release.pick", "--continue"]),
        (["pick", "--abort", "--json"], ["release.pick", "--json", "--abort"]),
        (["github-release", "--dry-run"], ["release.github-release", "--dry-run"]),
        (["github-release", "v9.9.9", "--dry-run"], ["release.github-release", "--dry-run", "--tag", "v9.9.9"]),
        (["manifest", "show", "v9.9.9"], ["release.manifest", "--action", "show", "--tag", "v9.9.9"]),
    ):  # fmt: skip
        said, got = run_cli(engine.root, *ours), _inv(engine.root, *theirs)
        assert (said.code, said.stdout, said.stderr) == (got.returncode, got.stdout, got.stderr)
        assert said.code != 0 and said.stderr.startswith("error: ")  # the command's own answer
    missing = _inv(engine.root, "release.pick", "--dry-run")
    assert (
        missing.returncode == 1
        and "did not receive required positional arguments: 'commits'" in (missing.stderr)
    )
    assert "No idea what 'v1' is" in _inv(engine.root, "release.github-release", "v1").stderr


def test_completion_offers_tasks_flags_and_choices(tmp_path: Path) -> None:
    assert "status" in complete(["st"]) and "images.build" in complete(["images."])
    assert complete(["pick", "--reason", ""]) == list(PICK_REASONS)
    assert complete(["pick", "--reason", "re"]) == ["regression", "release-only"]
    assert complete(["notes", "--view", ""]) == ["rc", "final"]
    assert complete(["notes", "--format=j"]) == ["--format=json"]
    assert "--dry-run" in complete(["tag", "--d"])
    assert complete(["tag", "--version", ""]) == []  # a free value: nothing offered
    for shell in ("bash", "zsh"):
        result = run_cli(tmp_path, "--completion", shell)
        assert result.code == 0 and result.stdout == script(shell)
        assert "release __complete" in result.stdout


def test_completion_offers_the_variants_of_the_repository_here() -> None:
    result = run_cli(ROOT, "__complete", "images.build", "--variant", "cu1")
    assert result.code == 0
    offered = result.stdout.split()
    assert offered and all(v.startswith("cu1") for v in offered)
    assert "cu130" in offered  # this repository's matrix is the sample engine's


def test_the_main_branch_is_a_value_for_the_run(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    said = run_cli(engine.root, "--main-branch", "no/such/branch..", "status")
    assert said.code == 2 and "is not a branch name" in said.stderr
    env = run_cli(engine.root, "status", env={"RELEASE_MAIN_BRANCH": "no/such/branch.."})
    assert env.code == 2 and "is not a branch name" in env.stderr

"""``inv release.*`` as a user runs it (invoke's own ``inv``, this repository's tasks.py, the
engine named by ``RELEASE_REPO``): invoke's core flags and settings that shape
``Context.run`` do nothing for these tasks, so a task given any is refused (exit 2, one
line, nothing run, every ref as it was); the rest of ``inv --help`` works; and the same
spellings given to the ``release`` console script are refused too."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from release.commands.registry import COMMANDS
from release.sample import SampleEngine
from tests.conftest import repo_state, run_cli

ROOT = Path(__file__).resolve().parents[2]
INV = Path(sys.executable).with_name("inv")  # invoke's console script, beside this Python
SECRET = "hunter2-sudo-secret"

# Every option `inv --help` lists, by what it does for these tasks.
WORKS = {
    "help", "version", "list", "list-depth", "list-format", "complete",
    "print-completion-script", "collection", "search-root", "debug", "no-dedupe",
    "write-pyc", "config",
}  # fmt: skip
REFUSED = {
    "dry", "echo", "warn-only", "hide", "pty", "command-timeout", "prompt-for-sudo-password",
}  # fmt: skip


def inv(
    cwd: Path, engine: Path | None, *args: str, env: dict[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """``RELEASE_REPO=ENGINE inv ARGS`` in ``cwd``, with no terminal (a prompt reads stdin)
    and no INVOKE_* variable but those given."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("INVOKE_")}
    if engine is not None:
        base["RELEASE_REPO"] = str(engine)
    return subprocess.run(
        [str(INV), *args],
        cwd=cwd,
        env={**base, **(env or {})},
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        start_new_session=True,
    )


def _state(engine: SampleEngine) -> tuple[dict[str, object], str]:
    """The engine's repository byte for byte, and its remote's refs."""
    return repo_state(engine.root), engine.repo.out("ls-remote", str(engine.remote))


def _help_options() -> set[str]:
    shown = inv(ROOT, None, "--help")
    assert shown.returncode == 0, shown.stderr
    specs = re.findall(r"^  (-\S.*?)\s{3,}", shown.stdout, re.M)
    return {name for spec in specs for name in re.findall(r"--([\w-]+)", spec)}


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    said: str  # what the one line names
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # written first; {home}, {tmp} filled
    stdin: str = ""
    tagged: bool = False  # the engine has an rc tagged, not pushed (for push)


DRY = "run:\n  dry: true\n"
REFUSED_CASES = {
    "--dry": Case(("--dry", "release.tag"), "--dry/-R (run.dry)"),
    "-R push": Case(("-R", "release.push"), "--dry/-R (run.dry)", tagged=True),
    "--dry after the task": Case(("release.tag", "--dry"), "--dry/-R (run.dry)"),
    "-R with --dry-run": Case(("-R", "release.tag", "--dry-run"), "--dry/-R (run.dry)"),
    "--echo": Case(("--echo", "release.tag"), "--echo/-e (run.echo)"),
    "-e": Case(("-e", "release.push"), "--echo/-e (run.echo)", tagged=True),
    "--warn-only": Case(("--warn-only", "release.tag"), "--warn-only/-w (run.warn)"),
    "-w": Case(("-w", "release.push"), "--warn-only/-w (run.warn)", tagged=True),
    "--hide": Case(("--hide", "both", "release.tag"), "--hide (run.hide)"),
    "--pty": Case(("--pty", "release.tag"), "--pty/-p (run.pty)"),
    "-p": Case(("-p", "release.push"), "--pty/-p (run.pty)", tagged=True),
    "--command-timeout": Case(
        ("--command-timeout", "5", "release.tag"), "--command-timeout/-T (timeouts.command)"
    ),
    "-T": Case(("-T", "5", "release.push"), "--command-timeout/-T (timeouts.command)", tagged=True),
    "--prompt-for-sudo-password": Case(
        ("--prompt-for-sudo-password", "release.tag"),
        "--prompt-for-sudo-password (sudo.password)",
        stdin=SECRET + "\n",
    ),
    "two flags": Case(
        ("-R", "-e", "release.tag"), "--dry/-R (run.dry) and --echo/-e (run.echo) do"
    ),
    "words after --": Case(("release.tag", "--", "git", "tag", "x"), "what follows -- does"),
    "-f FILE": Case(
        ("-f", "{tmp}/dry.yaml", "release.tag"),
        "run.dry in {tmp}/dry.yaml",
        files={"{tmp}/dry.yaml": DRY},
    ),
    "-f FILE, any run key": Case(
        ("--config", "{tmp}/shell.yaml", "release.push"),
        "run.shell in {tmp}/shell.yaml and sudo.user in {tmp}/shell.yaml do",
        files={"{tmp}/shell.yaml": "run:\n  shell: /bin/sh\nsudo:\n  user: root\n"},
        tagged=True,
    ),
    "INVOKE_RUNTIME_CONFIG": Case(
        ("release.tag",),
        "run.dry in {tmp}/dry.yaml",
        env={"INVOKE_RUNTIME_CONFIG": "{tmp}/dry.yaml"},
        files={"{tmp}/dry.yaml": DRY},
    ),
    "INVOKE_RUN_DRY": Case(
        ("release.tag",), "INVOKE_RUN_DRY (run.dry)", env={"INVOKE_RUN_DRY": "1"}
    ),
    "INVOKE_RUN_WARN": Case(
        ("release.push",), "INVOKE_RUN_WARN (run.warn)", env={"INVOKE_RUN_WARN": "1"}, tagged=True
    ),
    "INVOKE_TIMEOUTS_COMMAND": Case(
        ("release.tag",),
        "INVOKE_TIMEOUTS_COMMAND (timeouts.command)",
        env={"INVOKE_TIMEOUTS_COMMAND": "9"},
    ),
    "~/.invoke.yaml": Case(
        ("release.tag",), "run.dry in {home}/.invoke.yaml", files={"{home}/.invoke.yaml": DRY}
    ),
    "invoke.yaml beside tasks.py": Case(
        ("-r", "{tmp}/tasks", "release.tag"),
        "run.echo in {tmp}/tasks/invoke.yaml",
        files={
            "{tmp}/tasks/tasks.py": "from invoke import Collection\n"
            "from release.cli.tasks import ns as release\n\nns = Collection(release)\n",
            "{tmp}/tasks/invoke.yaml": "run:\n  echo: true\n",
        },
    ),
}


def _fill(text: str, tmp: Path) -> str:
    return text.format(home=os.environ["HOME"], tmp=tmp)


@pytest.mark.parametrize("name", sorted(REFUSED_CASES))
def test_what_invoke_would_ignore_is_refused_and_changes_nothing(
    name: str, cut_engine_copy: SampleEngine, tmp_path: Path
) -> None:
    case, engine = REFUSED_CASES[name], cut_engine_copy
    if case.tagged:
        assert run_cli(engine.root, "tag").code == 0
    for path, text in case.files.items():
        Path(_fill(path, tmp_path)).parent.mkdir(parents=True, exist_ok=True)
        Path(_fill(path, tmp_path)).write_text(text, encoding="utf-8")
    env = {k: _fill(v, tmp_path) for k, v in case.env.items()}
    before = _state(engine)
    args = [_fill(a, tmp_path) for a in case.args]
    result = inv(ROOT, engine.root, *args, env=env, stdin=case.stdin)
    assert result.returncode == 2, (name, result.stdout, result.stderr)
    assert result.stdout == ""
    line = result.stderr.splitlines()[-1]
    assert line.startswith("error: ") and _fill(case.said, tmp_path) in line, result.stderr
    assert "nothing was run" in line
    if not case.stdin:  # else invoke's prompt is on stderr before it
        assert result.stderr.count("\n") == 1, result.stderr
    assert SECRET not in result.stderr
    assert _state(engine) == before


def test_without_them_the_same_tasks_tag_and_push(cut_engine_copy: SampleEngine) -> None:
    """The refused runs above would have changed the repositories: the control."""
    engine = cut_engine_copy
    before = _state(engine)
    tagged = inv(ROOT, engine.root, "release.tag")
    assert tagged.returncode == 0 and "tagged v0.1.0rc1" in tagged.stdout, tagged.stderr
    assert _state(engine)[0] != before[0]
    local = _state(engine)
    pushed = inv(ROOT, engine.root, "release.push")
    assert pushed.returncode == 0, pushed.stderr
    assert "refs/tags/v0.1.0rc1" in _state(engine)[1] and _state(engine)[1] != local[1]


def test_a_dry_run_is_the_tasks_own_and_says_so(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    before = _state(engine)
    refused = inv(ROOT, engine.root, "--dry", "release.tag")
    assert "(a dry run: release.tag --dry-run)" in refused.stderr
    dry = inv(ROOT, engine.root, "release.tag", "--dry-run")
    assert dry.returncode == 0 and dry.stdout.startswith("dry run, nothing changed"), dry.stderr
    assert _state(engine) == before
    status = inv(ROOT, engine.root, "-R", "release.status")  # no --dry-run to point to
    assert status.returncode == 2 and "a dry run" not in status.stderr


OK_CONFIG = "tasks:\n  dedupe: false\n"
# the tasks at the top of the namespace: every command but the images.* collection's
TOP_TASKS = len([c for c in COMMANDS if "." not in c.name])
ACCEPTED = {
    "--help": (("--help",), "Core options:"),
    "-h TASK": (("-h", "release.tag"), "--dry-run"),
    "--version": (("--version",), "Invoke "),
    "--list": (("--list",), "release.images.build"),
    "-l NAMESPACE": (("-l", "release.images"), ".build"),
    "--list-depth": (("--list-depth", "1", "-l"), f"release [{TOP_TASKS} tasks, 1 collections]"),
    "--list-format": (("--list-format", "json", "-l"), '"name": "release"'),
    "--complete": (("--complete", "--", "inv", "release.t"), "release.tag"),
    "--print-completion-script": (("--print-completion-script", "bash"), "complete -F"),
    "--collection": (("--collection", "tasks", "release.status"), "next rc:  v0.1.0rc1"),
    "--search-root": (("--search-root", str(ROOT), "release.status"), "next rc:  v0.1.0rc1"),
    "--debug": (("--debug", "release.status"), "next rc:  v0.1.0rc1"),
    "--no-dedupe": (("--no-dedupe", "release.status", "release.status"), "next rc:  v0.1.0rc1"),
    "--write-pyc": (("--write-pyc", "release.status"), "next rc:  v0.1.0rc1"),
    "--config": (("--config", "{tmp}/ok.yaml", "release.status", "release.status"), "next rc"),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_the_rest_of_inv_help_works_here(
    name: str, cut_engine_copy: SampleEngine, tmp_path: Path
) -> None:
    args, shown = ACCEPTED[name]
    (tmp_path / "ok.yaml").write_text(OK_CONFIG, encoding="utf-8")
    engine = cut_engine_copy.root
    cwd = engine if name == "--search-root" else ROOT  # from the engine: -r finds tasks.py
    result = inv(cwd, engine, *(_fill(a, tmp_path) for a in args))
    assert result.returncode == 0, (name, result.stderr)
    assert shown in result.stdout and "error:" not in result.stderr
    if name in ("--no-dedupe", "--config"):  # both ask for a task named twice to run twice
        assert result.stdout.count("next rc:") == 2


def test_every_option_inv_help_offers_works_here_or_is_refused() -> None:
    offered = _help_options()
    assert offered == WORKS | REFUSED, (offered - WORKS - REFUSED, WORKS | REFUSED - offered)
    assert {n.split()[0].lstrip("-") for n in ACCEPTED} & offered == WORKS
    refused_long = {a.lstrip("-") for c in REFUSED_CASES.values() for a in c.args}
    assert refused_long >= REFUSED
    # the short spellings of the refused ones are tried too
    shorts = {a for c in REFUSED_CASES.values() for a in c.args if re.fullmatch(r"-[A-Za-z]", a)}
    assert shorts >= {"-R", "-e", "-w", "-p", "-T"}


def test_the_manual_says_what_each_option_of_inv_help_does_here() -> None:
    """The manual's page on invoke (docs/how-to/invoke.md) names every option of
    ``inv --help``, each with what it does for these tasks."""
    section = (ROOT / "docs" / "how-to" / "invoke.md").read_text(encoding="utf-8")
    assert section.startswith("# Through invoke")
    missing = {name for name in _help_options() if f"`--{name}" not in section}
    assert not missing, missing


def test_debug_shows_the_traceback_as_release_debug_does(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    plain = inv(ROOT, engine.root, "release.cut", "not-a-version")
    assert plain.returncode == 2 and plain.stderr.startswith("error: not a version")
    assert "Traceback" not in plain.stderr
    debug = inv(ROOT, engine.root, "-d", "release.cut", "not-a-version")
    assert debug.returncode != 0 and "Traceback" in debug.stderr
    assert "release.errors.VersionError: not a version" in debug.stderr


RELEASE_SPELLINGS = {
    "tag": [
        ["--dry", "tag"], ["--echo", "tag"], ["-e", "tag"], ["--warn-only", "tag"],
        ["--hide", "both", "tag"], ["--pty", "tag"], ["-p", "tag"],
        ["--command-timeout", "5", "tag"], ["--prompt-for-sudo-password", "tag"],
        ["-f", "x.yaml", "tag"], ["tag", "-R"], ["tag", "--echo"], ["tag", "--", "x"],
    ],
    "push": [["-R", "push"], ["-w", "push"], ["-T", "5", "push"], ["push", "-w"]],
}  # fmt: skip


def test_the_same_spellings_are_refused_by_release(cut_engine_copy: SampleEngine) -> None:
    """The console script offers none of invoke's flags: each is an unknown option."""
    engine = cut_engine_copy
    for command, spellings in RELEASE_SPELLINGS.items():
        before = _state(engine)
        for args in spellings:
            result = run_cli(engine.root, *args)
            assert result.code == 2, (args, result.output)
            assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
            assert _state(engine) == before, args
        assert run_cli(engine.root, command).code == 0  # the control: without them, it acts
        assert _state(engine) != before

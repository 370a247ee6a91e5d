"""The console script: ``release --version``, ``--help`` and ``--list`` answer from the
declarations alone (no invoke, no git, no floor below the commands); ``release notes``
loads only what the notes use."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from release import __version__
from release.sample import SampleEngine

from .conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_the_console_script_starts_at_the_launcher() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["release"] == "release.cli.launch:main"


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_is_the_name_and_version(flag: str) -> None:
    ours = run_cli(ROOT, flag)
    assert (ours.code, ours.stdout, ours.stderr) == (0, f"release {__version__}\n", "")


_FLOORS = ("invoke", "git", "release.flows", "release.images", "release.adapters", "rich")


@pytest.mark.parametrize("args", [["--version"], ["-V"], ["--help"], ["--list"], ["tag", "--help"]])
def test_answers_from_the_declarations_load_nothing_below_them(args: list[str]) -> None:
    found = _python(
        f"import sys; sys.argv = ['release', *{args!r}]\n"
        "from release.cli.launch import main\n"
        "try:\n    main()\nexcept SystemExit as stop:\n    assert not stop.code, stop.code\n"
        f"print(sorted({{m for m in sys.modules if m.startswith({_FLOORS!r})}}))"
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[-1] == "[]"
    assert len(found.stdout.splitlines()) > 1  # it printed its answer first


def test_a_global_option_after_the_version_is_not_read() -> None:
    both = run_cli(ROOT, "--version", "--list")
    assert (both.code, both.stdout) == (0, f"release {__version__}\n")
    bad = run_cli(ROOT, "--no-such-option")
    assert bad.code == 2 and bad.stderr.startswith("error: unknown option --no-such-option")


def test_notes_load_only_what_notes_use(cut_engine_copy: SampleEngine) -> None:
    found = _python(
        "import sys; sys.argv = ['release', 'notes', '--since', 'main~3', '--until', 'main']\n"
        "from release.cli.launch import main\n"
        "try:\n    main()\nexcept SystemExit as stop:\n    assert not stop.code, stop.code\n"
        "print(sorted(m for m in sys.modules if m.startswith(('release', 'rich', 'platformdirs'))))",
        cwd=cut_engine_copy.root,
    )
    assert found.returncode == 0, found.stderr
    loaded = ast.literal_eval(found.stdout.splitlines()[-1])
    assert (
        "release.adapters.git_range" in loaded or "release.flows.range_commits" in loaded
    )  # the notes ran
    unneeded = ("release.flows.pick", "release.images", "release.sample", "rich", "platformdirs")
    assert [m for m in loaded if m.startswith(unneeded)] == []
    assert "release.core.plan" not in loaded and "release.adapters.state" not in loaded

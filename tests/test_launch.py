"""The console script's first step: ``release --version`` answers without loading invoke or
GitPython, in invoke's words; any other command line goes on to invoke; ``release notes``
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
def test_version_is_what_invoke_prints(flag: str) -> None:
    ours = run_cli(ROOT, flag)
    invoke = _python(
        f"import sys; sys.argv = ['release', {flag!r}]\n"
        "from release.cli.program import main\nmain()"
    )
    assert (ours.code, ours.stdout, ours.stderr) == (0, f"release {__version__}\n", "")
    assert (invoke.returncode, invoke.stdout, invoke.stderr) == (0, ours.stdout, "")


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_loads_neither_invoke_nor_gitpython(flag: str) -> None:
    found = _python(
        f"import sys; sys.argv = ['release', {flag!r}]\n"
        "from release.cli.launch import main\nmain()\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'invoke', 'git'}))"
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines() == [f"release {__version__}", "[]"]


def test_other_command_lines_go_to_invoke() -> None:
    listing = run_cli(ROOT, "--list")
    assert listing.code == 0 and "notes" in listing.stdout
    both = run_cli(ROOT, "--version", "--list")  # invoke's own handling of --version
    assert (both.code, both.stdout) == (0, f"release {__version__}\n")
    bad = run_cli(ROOT, "--no-such-option")
    assert bad.code == 2 and bad.stderr.startswith("error: ")


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
    assert "release.flows.range_commits" in loaded  # the notes ran
    unneeded = ("release.flows.pick", "release.images", "release.sample", "rich", "platformdirs")
    assert [m for m in loaded if m.startswith(unneeded)] == []
    assert "release.core.plan" not in loaded and "release.adapters.state" not in loaded

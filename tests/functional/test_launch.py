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
from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]


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


# What a short command has no use for: the JSON it writes only under --json, packaging
# (versions spelt as the tool writes them are read without it), hashlib (its import loads
# OpenSSL; the caches' keys are blake2b's), what a process in its own group needs, and the
# modules of the other commands.
_UNUSED = (
    "hashlib",
    "json",
    "packaging",
    "release.adapters.leftovers",
    "release.core.project_meta",
    "release.flows.pick",
    "release.images",
)


def _project(root: Path) -> Path:
    """A project as the bench's: a pyproject with [tool.release], a tag on main, a
    release branch with a fix picked onto it."""

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)

    root.mkdir()
    git("init", "-q", "-b", "main")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "engine"\ndynamic = ["version"]\n\n[tool.release]\n'
        'main-branch = "main"\nrepo-url = "https://github.com/example-org/engine"\n'
    )
    git("add", "-A")
    git("commit", "-q", "-m", "[Core] The engine (#1)")
    git("tag", "v0.30.0")
    git("switch", "-q", "-c", "releases/v0.31.0")
    git("switch", "-q", "main")
    (root / "fix.txt").write_text("fixed\n")
    git("add", "-A")
    git("commit", "-q", "-m", "[Bugfix] A fix (#2)")
    git("switch", "-q", "releases/v0.31.0")
    git("cherry-pick", "-x", "main")
    return root


@pytest.mark.parametrize(
    "args", [["status", "--offline"], ["notes", "--since", "v0.30.0", "--until", "v0.30.0"]]
)
def test_status_and_notes_of_no_commits_load_nothing_they_do_not_use(
    tmp_path: Path, args: list[str]
) -> None:
    found = _python(
        f"import sys; sys.argv = ['release', *{args!r}]\n"
        "from release.cli.launch import main\n"
        "try:\n    main()\nexcept SystemExit as stop:\n    assert not stop.code, stop.code\n"
        "print(sorted(sys.modules))",
        cwd=_project(tmp_path / "engine"),
    )
    assert found.returncode == 0, found.stderr
    loaded = ast.literal_eval(found.stdout.splitlines()[-1])
    assert "release.flows.context" in loaded  # the command ran
    unneeded = [m for m in loaded if m in _UNUSED or m.startswith(tuple(f"{u}." for u in _UNUSED))]
    assert unneeded == [], unneeded

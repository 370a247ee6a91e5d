"""The console script's first step: ``release --version`` answers without loading invoke or
GitPython, in invoke's words; any other command line goes on to invoke; ``release notes``
loads only what the notes use."""

from __future__ import annotations

import ast
import os
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
    assert "release.adapters.git_range" in loaded  # the notes ran
    unneeded = ("release.flows.pick", "release.images", "release.sample", "rich", "platformdirs")
    assert [m for m in loaded if m.startswith(unneeded)] == []
    assert "release.core.plan" not in loaded and "release.adapters.state" not in loaded


_LOADED = (
    "print(sorted(m for m in ('unittest.mock', 'importlib.metadata', 'asyncio')"
    " if m in sys.modules))"
)


def test_a_command_line_loads_no_module_invoke_only_imports() -> None:
    found = _python(
        "import sys; sys.argv = ['release', '--list']\n"
        "from release.cli.launch import main\n"
        "try:\n    main()\nexcept SystemExit as stop:\n    assert not stop.code, stop.code\n"
        f"{_LOADED}\n"
        "print(type(sys.modules['invoke.vendor.yaml']).__name__)"
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[-2:] == ["[]", "_LazyModule"]


def _lean(imports: str, then: str) -> list[str]:
    """The lines ``then`` prints after ``imports`` ran inside :func:`lean_invoke`."""
    found = _python(
        "import sys\nfrom release.cli.lean_import import lean_invoke\nwith lean_invoke():\n"
        + "".join(f"    {line}\n" for line in imports.splitlines())
        + then
    )
    assert found.returncode == 0, found.stderr
    return found.stdout.splitlines()


def test_invoke_imported_lean_is_whole() -> None:
    """What the stand-ins left out comes back, real, where anything asks for it."""
    printed = _lean(
        "import invoke",
        f"{_LOADED}\n"
        "import importlib.metadata\n"
        "print(invoke.__version__ == importlib.metadata.version('invoke'))\n"
        "from invoke import MockContext, Result\n"
        "ctx = MockContext(run={'true': Result('made by a real Mock')})\n"
        "print(ctx.run('true').stdout, type(ctx.run).__module__)\n"
        "from invoke.util import yaml\n"
        "print(yaml.safe_load('run: {echo: true}'))\n"
        "print(sys.modules['importlib.metadata'].__file__.endswith('__init__.py'))",
    )
    assert printed == [
        "[]",
        "True",
        "made by a real Mock unittest.mock",
        "{'run': {'echo': True}}",
        "True",
    ]


def test_a_stand_in_hands_over_what_it_does_not_have() -> None:
    printed = _lean(
        "from importlib.metadata import PackageNotFoundError, version\n"
        "from unittest.mock import sentinel\n"
        "stand_in = version",
        "print(PackageNotFoundError.__module__, sentinel.__class__.__module__)\n"
        "try:\n    stand_in('no-such-distribution-here')\n"
        "except PackageNotFoundError as missing:\n    print('missing', missing)\n",
    )
    assert printed == [
        "importlib.metadata unittest.mock",
        "missing No package metadata was found for no-such-distribution-here",
    ]


def test_modules_already_imported_are_left_alone() -> None:
    found = _python(
        "import sys, unittest.mock, importlib.metadata\n"
        "before = sys.modules['unittest.mock'], sys.modules['importlib.metadata']\n"
        "from release.cli.lean_import import lean_invoke\n"
        "with lean_invoke():\n    import invoke\n"
        "print(before == (sys.modules['unittest.mock'], sys.modules['importlib.metadata']))\n"
        "print(invoke.context.Mock is unittest.mock.Mock)"
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines() == ["True", "True"]


def test_a_yaml_config_file_is_still_read(tmp_path: Path) -> None:
    (tmp_path / ".invoke.yaml").write_text("run: [\n", encoding="utf-8")
    broken = subprocess.run(
        [sys.executable, "-m", "release", "--list"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert broken.returncode != 0 and "/.invoke.yaml" in broken.stderr

"""nox sessions: tests, fast, lint, typecheck, bench, rehearse, docs, and the image matrix
(see README).

The image sessions (build(<id>), smoke(<id>), snapshot(<id>)) come from this repository's
[tool.release.images], which points at the bundled sample engine.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from benchmarks.steps import bench_steps  # noqa: E402
from release.cli.nox_sessions import image_sessions  # noqa: E402

image_sessions(ROOT)

nox.needs_version = ">=2024.4.15"
nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True


@nox.session(default=False)
def rehearse(session: nox.Session) -> None:
    """The whole rc cycle on the bundled sample engine, in a sandbox (the main job)."""
    session.install("-e", ".")
    session.run("release", "rehearse", *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite (pytest); image tests are required when RELEASE_REQUIRE_DOCKER=1.

    On two workers (pytest-xdist), each test file on one of them, so a file's module
    fixtures (a built rc, a registry) are made once. No test changes what another on the
    engine uses (each keeps to names of its own), so none has to run alone. The longest
    files are handed out first (tests/conftest.py, LONGEST_FIRST), so both workers end
    together. The bench extras too: a test runs the benchmarks' quick form, git-cliff's and commitizen's
    figures included."""
    session.install("-e", ".[test,bench]")
    session.run(
        "pytest", "-n", "2", "--dist", "loadfile", "--no-loadscope-reorder", *session.posargs
    )


@nox.session(default=False)
def fast(session: nox.Session) -> None:
    """The inner loop: every test that needs no Docker Engine and is not marked slow, on
    two workers (pytest-xdist); posargs go to pytest. A passing test's temporary directory
    is removed as it ends (a failing test's is kept), not a whole earlier run's at the end;
    the test modules' bytecode is kept for the next run, whatever PYTHONDONTWRITEBYTECODE
    says outside."""
    session.install("-e", ".[test]")
    session.run(
        "pytest", "-m", "not images and not slow", "-n", "2", "--durations=10",
        "-o", "tmp_path_retention_policy=failed", *session.posargs,
        env={
            "DOCKER_HOST": "unix:///nonexistent.sock",  # nothing here may reach an engine
            "PYTHONDONTWRITEBYTECODE": "",  # each worker would rewrite every test module
        },
    )


@nox.session(default=False)
def docs(session: nox.Session) -> None:
    """The manual: mkdocs build --strict into site/ (a broken link or anchor fails it).

    The reference pages are made from the code during the build (docs/gen_reference.py,
    an mkdocs hook) and kept in the built site only; nothing is fetched from the network."""
    session.install("-e", ".[docs]")
    session.run(
        "mkdocs", "build", "--strict", "--site-dir", "site", *session.posargs,
        env={"NO_MKDOCS_2_WARNING": "1"},
    )


@nox.session(default=False)
def lint(session: nox.Session) -> None:
    """ruff over the package, tests and benchmarks."""
    session.install("ruff")
    session.run("ruff", "check", "release", "tests", "benchmarks", "docs", "noxfile.py", "tasks.py")


@nox.session(default=False)
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the package and the benchmarks ([tool.mypy] files in pyproject)."""
    session.install("-e", ".", "mypy")
    session.run("mypy")


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Speed figures, each as a ratio against the raw tool (git, docker) measured in the same run.

    Posargs go to benchmarks/run.py (--quick, --reps N, --json); the image figures follow
    (skipped, with the reason, where no Docker Engine answers), then the publishing figures
    (where docker-registry and skopeo are installed), then the figures on real histories
    (each skipped, with the reason, where no clone is named or found). The steps are
    benchmarks/steps.py's; with --quick each takes its quick form (tests/images/test_bench.py runs
    that).
    """
    session.install("-e", ".[bench]")
    for step in bench_steps(session.posargs):
        session.run("python", *step)

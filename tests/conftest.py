"""Shared fixtures: real repositories with a bare remote, the CLI as a user runs it,
and a byte-for-byte snapshot of a repository's state."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from release.adapters.git import GitRepo
from release.sample import AFTER_CUT, SampleEngine, make_sample_engine

if TYPE_CHECKING:
    from tests.index_support import PackageIndex

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Maintainer",
    "GIT_AUTHOR_EMAIL": "maintainer@example.com",
    "GIT_COMMITTER_NAME": "Test Maintainer",
    "GIT_COMMITTER_EMAIL": "maintainer@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture(autouse=True)
def _isolated_git(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No user or system git config leaks into a test (signing, hooks, editors)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("RELEASE_DEBUG", raising=False)
    monkeypatch.delenv("RELEASE_REPO", raising=False)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_cli(
    cwd: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> CliResult:
    """Run ``release ARGS`` in ``cwd`` as a separate process, exactly as a user would."""
    proc = subprocess.run(
        [sys.executable, "-m", "release", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def run_on_terminal(
    cwd: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> CliResult:
    """``release ARGS`` with stdout on a terminal: a pseudo-terminal of 120 columns, its
    output read as written (raw: no newline translation), stderr a pipe."""
    import fcntl
    import pty
    import struct
    import termios
    import tty

    leader, follower = pty.openpty()
    tty.setraw(follower)
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    child = subprocess.Popen(
        [sys.executable, "-m", "release", *args],
        cwd=cwd,
        env={**os.environ, "TERM": "xterm-256color", **(env or {})},
        stdout=follower,
        stderr=subprocess.PIPE,
    )
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other end closed: the command is done
            break
        if not chunk:
            break
        out += chunk
    os.close(leader)
    stderr = child.stderr.read() if child.stderr else b""
    code = child.wait(timeout=timeout)
    return CliResult(code, out.decode(errors="replace"), stderr.decode(errors="replace"))


def run_nox(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``nox ARGS`` in ``cwd`` as a separate process, exactly as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "nox", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def engine(tmp_path: Path) -> SampleEngine:
    """The sample engine: main with history up to the cut point, pushed to a bare remote."""
    return make_sample_engine(tmp_path)


@pytest.fixture
def cut_engine(engine: SampleEngine) -> SampleEngine:
    """The sample engine cut at 0.1.0, main moved on (#107-#111), on the release branch."""
    engine.repo.run("branch", "releases/v0.1.0", "main")
    for change in AFTER_CUT:
        engine.commit(change)
    engine.repo.run("push", "--quiet", "origin", "main", "releases/v0.1.0")
    engine.repo.run("switch", "--quiet", "releases/v0.1.0")
    return engine


def repo_state(root: Path) -> dict[str, object]:
    """Every ref, HEAD, the index, the work tree and .git/release/, byte for byte."""
    repo = GitRepo(root)
    git_dir = repo.git_dir
    state: dict[str, object] = {
        "refs": repo.out("for-each-ref", "--format=%(refname) %(objectname)"),
        "head": (git_dir / "HEAD").read_text(),
        "index": hashlib.sha256((git_dir / "index").read_bytes()).hexdigest()
        if (git_dir / "index").exists()
        else None,
    }
    tree: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if ".git" in path.relative_to(root).parts or not path.is_file():
            continue
        tree[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    state["worktree"] = tree
    release_dir = git_dir / "release"
    state["release_dir"] = (
        {
            str(p.relative_to(release_dir)): p.read_bytes()
            for p in sorted(release_dir.rglob("*"))
            if p.is_file()
        }
        if release_dir.exists()
        else None
    )
    for name in ("CHERRY_PICK_HEAD", "sequencer", "index.lock", "MERGE_HEAD"):
        state[name] = (git_dir / name).exists()
    return state


@pytest.fixture
def snapshot():
    return repo_state


@pytest.fixture(scope="session")
def local_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PackageIndex]:
    """A package index on loopback serving this tool's wheel, its dependencies and decoys
    of its name (:mod:`tests.index_support`), once per session (per worker)."""
    from tests.index_support import package_index

    with package_index(tmp_path_factory.mktemp("index")) as index:
        yield index


# Image tests: the `docker` fixture (skips saying why, or fails when RELEASE_REQUIRE_DOCKER=1).
from tests.docker_support import docker  # noqa: E402, F401

_CUT_TEMPLATE: list[tuple[Path, dict[int, str]]] = []


@pytest.fixture
def cut_engine_copy(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> SampleEngine:
    """The same state as ``cut_engine``, built once per session and copied (much faster)."""
    if not _CUT_TEMPLATE:
        base = tmp_path_factory.mktemp("cut-engine-template")
        template = make_sample_engine(base)
        template.repo.run("branch", "releases/v0.1.0", "main")
        for change in AFTER_CUT:
            template.commit(change)
        template.repo.run("push", "--quiet", "origin", "main", "releases/v0.1.0")
        template.repo.run("switch", "--quiet", "releases/v0.1.0")
        _CUT_TEMPLATE.append((base, dict(template.shas)))
    import shutil

    base, shas = _CUT_TEMPLATE[0]
    copy = tmp_path / "copy"
    shutil.copytree(base, copy, symlinks=True)
    repo = GitRepo(copy / "engine")
    repo.run("remote", "set-url", "origin", str(copy / "remote.git"))
    repo.run("status", "--porcelain")  # refresh the copied index's stat data
    return SampleEngine(copy / "engine", copy / "remote.git", repo, dict(shas))

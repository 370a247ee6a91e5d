"""Shared fixtures: real repositories with a bare remote, the CLI as a user runs it (in
this process, or as a process of its own), and a byte-for-byte snapshot of a repository's
state."""

from __future__ import annotations

import compileall
import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

import pytest

import release
from release import sample
from release.adapters.git import GitRepo
from release.sample import AFTER_CUT, SampleEngine, make_sample_engine
from tests.signing_support import Key, make_key

if TYPE_CHECKING:
    from tests.index_support import PackageIndex

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Maintainer",
    "GIT_AUTHOR_EMAIL": "maintainer@example.com",
    "GIT_COMMITTER_NAME": "Test Maintainer",
    "GIT_COMMITTER_EMAIL": "maintainer@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def pytest_configure(config: pytest.Config) -> None:
    """The package compiled once, as an install compiles it: each ``release`` a test runs
    as a separate process then loads its modules' bytecode. Where none is written (with
    PYTHONDONTWRITEBYTECODE set, or a checkout newer than its bytecode) each run would
    compile the hundred-odd modules it imports again, about half of its time. The bundled
    engine is left as it is (its files are copied into repositories and images)."""
    if hasattr(config, "workerinput"):
        return  # a worker: the controller compiled it before starting it
    package = Path(release.__file__).parent
    engine_files = re.compile(re.escape(str(package / "sample" / "engine")))
    compileall.compile_dir(package, quiet=1, rx=engine_files)


# The files that take longest (their image tests: minutes each on the CI's two cores),
# longest first. ``nox -s tests`` gives each file to one of two workers as a worker runs
# out of work (--dist loadfile, in this order: --no-loadscope-reorder); a long file begun
# last would leave the other worker idle until it ends.
LONGEST_FIRST = (
    "test_rehearse.py",
    "test_ci_pipelines.py",
    "test_bench.py",
    "test_reproduce.py",
    "test_publish_from.py",
    "test_publish.py",
    "test_image_content.py",
    "test_attest.py",
    "test_promote_transaction.py",
    "test_promote_registry.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first (:data:`LONGEST_FIRST`), the others after them as they
    were collected; each file's tests keep their order."""
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture(autouse=True)
def _isolated_git(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No user or system git config leaks into a test (signing, hooks, editors); a module
    marked ``no_git`` (nothing in it runs git) goes without the temporary HOME."""
    if request.node.get_closest_marker("no_git") is not None:
        return
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("RELEASE_DEBUG", raising=False)
    monkeypatch.delenv("RELEASE_REPO", raising=False)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)


@pytest.fixture
def no_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests say where they want CI and the repository cache's setting; the runner's
    own do not leak in (``pytestmark = pytest.mark.usefixtures("no_ci")``)."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("RELEASE_REPO_CACHE", raising=False)


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


# RELEASE_TEST_CLI=process runs every ``release`` a test starts as its own process
CLI_IN_PROCESS = os.environ.get("RELEASE_TEST_CLI", "") != "process"
_cli_in_process = [CLI_IN_PROCESS]  # this test's: an image test's runs are processes


@pytest.fixture(autouse=True)
def _cli_runs(request: pytest.FixtureRequest) -> Iterator[None]:
    """An image test runs ``release`` as its own process (Docker's builds, containers and
    stops are the process's to handle); any other in this one, unless it asks."""
    _cli_in_process[0] = CLI_IN_PROCESS and request.node.get_closest_marker("images") is None
    yield
    _cli_in_process[0] = CLI_IN_PROCESS


def run_cli(
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    process: bool = False,
) -> CliResult:
    """Run ``release ARGS`` in ``cwd`` as a user would. In this process by default, as the
    console script runs it (its exit code, what it writes to stdout and stderr at the file
    descriptors, so the output of a program it starts is in it too, in order; the working
    directory and the environment for the run only); ``process``: as a separate process
    (what a test of the process itself needs: its start-up, signals, a timeout)."""
    if process or not _cli_in_process[0]:
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
    return _in_process(cwd, list(args), env or {})


def _in_process(cwd: Path, args: list[str], env: dict[str, str]) -> CliResult:
    import io
    import tempfile

    from release.cli.program import Refused, run

    saved_env, saved_cwd, saved_tmp = dict(os.environ), os.getcwd(), tempfile.tempdir
    streams = sys.stdout, sys.stderr
    for stream in streams:
        stream.flush()
    fds = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        sys.stdout = io.TextIOWrapper(
            io.FileIO(1, "w", closefd=False), encoding="utf-8", write_through=True
        )
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False),
            encoding="utf-8",
            errors="backslashreplace",
            write_through=True,
        )
        try:
            os.environ.update(env)
            tempfile.tempdir = None  # read from TMPDIR again, as a new process would
            os.chdir(cwd)
            try:
                code = run(args)
            except Refused as refused:  # as the console script says it
                from release.cli.console import error

                error(f"{refused} (see {refused.usage})" if refused.usage else str(refused))
                code = 2
            except SystemExit as done:
                code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            sys.stdout, sys.stderr = streams
            os.dup2(fds[0], 1)
            os.dup2(fds[1], 2)
            for fd in fds:
                os.close(fd)
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)
            tempfile.tempdir = saved_tmp
        texts = []
        for file in (out, err):
            file.seek(0)
            text = file.read().decode("utf-8", errors="replace")
            texts.append(text.replace("\r\n", "\n").replace("\r", "\n"))  # as text=True reads
    return CliResult(code, texts[0], texts[1])


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
def engine(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> SampleEngine:
    """The sample engine: main with history up to the cut point, pushed to a bare remote."""
    return copied_engine("engine", make_sample_engine, tmp_path, tmp_path_factory)


def cut(engine: SampleEngine) -> SampleEngine:
    """``engine`` cut at 0.1.0, main moved on (#107-#111), on the release branch."""
    engine.repo.run("branch", "releases/v0.1.0", "main")
    for change in AFTER_CUT:
        engine.commit(change)
    engine.repo.run("push", "--quiet", "origin", "main", "releases/v0.1.0")
    engine.repo.run("switch", "--quiet", "releases/v0.1.0")
    return engine


@pytest.fixture
def cut_engine(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> SampleEngine:
    """The sample engine cut at 0.1.0, main moved on (#107-#111), on the release branch."""
    return copied_engine(
        "cut-engine", lambda root: cut(make_sample_engine(root)), tmp_path, tmp_path_factory
    )


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


@pytest.fixture
def cut_engine_copy(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> SampleEngine:
    """The same state as ``cut_engine``, at ``tmp_path / "copy"``."""
    return copied_engine(
        "cut-engine", lambda root: cut(make_sample_engine(root)), tmp_path / "copy",
        tmp_path_factory,
    )  # fmt: skip


# -- repositories made once per session (per worker) and copied --------------------------
# Making the sample engine's history takes some forty git commands; a copy of the same
# directory is the same repositories (every object, ref, index and config), made in a
# fraction of that. A template is made by the first test that asks for it, in its own
# directory, and never handed out itself.


@dataclass(frozen=True)
class _Template:
    base: Path  # holds engine/ and remote.git/, as make_engine_repo lays them out
    shas: dict[int, str]
    clock: int  # the sample's commit clock after it was made
    value: object  # what the maker returned besides the engine


_TEMPLATES: dict[str, _Template] = {}

T = TypeVar("T")


def copied(
    name: str,
    make: Callable[[Path], tuple[SampleEngine, T]],
    dest: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[SampleEngine, T]:
    """What ``make(root)`` leaves under ``root`` (an engine at ``root / "engine"`` with its
    bare remote at ``root / "remote.git"``), made once as ``name`` and copied to ``dest``:
    the engine, its remote pointing at the copy, and what ``make`` returned with it. The
    sample's commit clock is set as ``make`` left it, so later commits are the same too."""
    template = _TEMPLATES.get(name)
    if template is None:
        base = tmp_path_factory.mktemp(f"template-{name}")
        made, value = make(base)
        assert made.root == base / "engine" and made.remote == base / "remote.git"
        for git_dir in (made.repo.git_dir, made.remote):
            _compact(made.repo, git_dir)
        template = _Template(base, dict(made.shas), sample._CLOCK[0], value)
        _TEMPLATES[name] = template
    shutil.copytree(template.base, dest, symlinks=True, dirs_exist_ok=True)
    config = dest / "engine" / ".git" / "config"  # origin's url set as git would set it
    text = config.read_text(encoding="utf-8")
    url = f"\turl = {template.base / 'remote.git'}\n"
    assert text.count(url) == 1, text
    config.write_text(text.replace(url, f"\turl = {dest / 'remote.git'}\n"), encoding="utf-8")
    repo = GitRepo(dest / "engine")
    repo.run("status", "--porcelain")  # refresh the copied index's stat data
    sample._CLOCK[0] = template.clock
    engine = SampleEngine(dest / "engine", dest / "remote.git", repo, dict(template.shas))
    return engine, cast(T, template.value)


def _compact(repo: GitRepo, git_dir: Path) -> None:
    """Fewer files to copy for every test: the objects in one pack, not a file each, and
    no hook samples (git runs none; tests put real hooks in the same directory)."""
    repo.run("--git-dir", str(git_dir), "repack", "-a", "-d", "-n", "-q")
    for path in (git_dir / "hooks").glob("*.sample"):
        path.unlink()


def copied_engine(
    name: str,
    make: Callable[[Path], SampleEngine],
    dest: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> SampleEngine:
    """:func:`copied` for a maker that returns only the engine."""
    engine, _ = copied(name, lambda root: (make(root), None), dest, tmp_path_factory)
    return engine


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Key]]:
    """Two throwaway OpenPGP keys, the maintainer's and another's, each in a GnuPG home of
    its own (their agents stopped at the end)."""
    if shutil.which("gpg") is None:
        pytest.skip("no gpg here (Debian package gpg)")
    root = tmp_path_factory.mktemp("keys")
    made = {who: make_key(root, who) for who in ("maintainer", "other")}
    try:
        yield made
    finally:
        for key in made.values():
            key.close()


# -- the fixtures of the support modules, each defined once there --------------------------
# Registered as plugins (imported by pytest once this module is loaded, not by it): a
# support module imports from this one, and may be imported first (a test module run on
# its own, as a process a test starts).
pytest_plugins = [
    "tests._golden",  # `cycle`: the rc cycle the golden notes and changelogs are rendered from
    # image tests: the `docker` fixture (skips saying why, or fails when
    # RELEASE_REQUIRE_DOCKER=1) and `registry`, Debian's docker-registry on 127.0.0.1, one
    # per test module
    "tests.docker_support",
    "tests.engine_support",  # `sample`: the sample engine under an image name of its own
    "tests.github_support",  # `gh_standin`: a recording stand-in for gh first on PATH
    "tests.history_support",  # `parsing_history`: a main with what parsing commits meets
    "tests.rc_page_support",  # `rc1_tagged`: the sample's rc1 with a manifest note
    # `maintainer` and `tester_clone`: reproduce against a hostile remote (the maintainer's
    # published rc1, a tester's clone of its remote)
    "tests.reproduce_support",
]

"""``cut``, ``tag``, ``promote`` and ``push`` killed with SIGKILL at git's own hooks, then run
again: the re-run must end exactly where an uninterrupted run on a twin repository ends.

Dates are pinned (author, committer, tagger, the changelog's release date), so "exactly"
means every ref and the object it points to, byte for byte: commit and tag shas, the
remote's refs, a clean work tree and nothing left under ``.git`` (no journal, no lock).
The kill lands in the hook: ``prepare-commit-msg`` (the changelog written and
staged), ``post-commit`` (committed, not yet tagged), ``reference-transaction``
``prepared`` (the ref's lock held) and ``committed`` (the ref written, the rest not done),
``post-checkout`` (the switch), and on the remote ``pre-receive`` and
``reference-transaction`` (the push half-applied).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from release.adapters.git import GitRepo
from release.adapters.lock import process_group_alive
from release.sample import SampleEngine
from tests.conftest import run_cli

pytestmark = pytest.mark.slow

PINNED = {
    "GIT_AUTHOR_DATE": "2026-11-20T12:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-11-20T12:00:00+00:00",
    "SOURCE_DATE_EPOCH": "1795176000",
}
DEADLINE = 60.0


def _hook(git_dir: Path, name: str, body: str) -> None:
    path = git_dir / "hooks" / name
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)


def _kill_once(marker: Path, guard: str = "") -> str:
    """A hook body that kills its whole process group (release, git, itself) the first
    time ``guard`` lets it through."""
    return f"{guard}[ -e '{marker}' ] && exit 0\ntouch '{marker}'\nkill -KILL 0\n"


def _ref_guard(state: str, ref: str) -> str:
    return f'[ "$1" = {state} ] || exit 0\ngrep -q " {ref}$" || exit 0\n'


@dataclass(frozen=True)
class Kill:
    id: str
    hook: str
    guard: str = ""
    remote: bool = False  # the hook runs in the remote (a bare repository)


def _run_killed(engine: SampleEngine, args: tuple[str, ...], kill: Kill, work: Path) -> int:
    git_dir = engine.remote if kill.remote else engine.repo.git_dir
    assert git_dir is not None
    marker = work / "fired"
    _hook(git_dir, kill.hook, _kill_once(marker, kill.guard))
    proc = subprocess.Popen(
        [sys.executable, "-m", "release", *args],
        cwd=engine.root,
        env={**os.environ, **PINNED},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # the hook's kill -KILL 0 must not reach the test
    )
    code = proc.wait(timeout=DEADLINE)
    deadline = time.monotonic() + DEADLINE
    while process_group_alive(proc.pid):
        assert time.monotonic() < deadline, "the killed group never ended"
        time.sleep(0.01)
    (git_dir / "hooks" / kill.hook).unlink()
    assert marker.exists(), f"the {kill.hook} hook never fired"
    return code


def _state(engine: SampleEngine) -> dict[str, object]:
    repo = engine.repo
    assert engine.remote is not None
    release_dir = repo.git_dir / "release"
    return {
        "refs": repo.out("for-each-ref", "--format=%(refname) %(objectname)"),
        "remote refs": repo.run("--git-dir", str(engine.remote), "for-each-ref").stdout,
        "HEAD": repo.current_branch(),
        "status": repo.out("status", "--porcelain", "--untracked-files=all"),
        "left under .git/release": sorted(p.name for p in release_dir.iterdir())
        if release_dir.exists()
        else [],
        "git locks": sorted(p.name for p in repo.git_dir.rglob("*.lock")),
    }


@dataclass(frozen=True)
class Scenario:
    args: tuple[str, ...]
    prepare: Callable[[SampleEngine], None]
    kills: tuple[Kill, ...]


def _nothing(engine: SampleEngine) -> None:
    return None


def _rc1(engine: SampleEngine) -> None:
    result = run_cli(engine.root, "tag", env=PINNED)
    assert result.code == 0, result.output


def _version_file(engine: SampleEngine) -> None:
    """``version.txt`` named in version-files and saying an older version: the rc's
    commit sets it, with the changelog."""
    (engine.root / "version.txt").write_text("0.0.9\n", encoding="utf-8")
    config = engine.root / "pyproject.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(
        text.replace(
            'tag = "v{version}"\n', 'tag = "v{version}"\nversion-files = ["version.txt"]\n', 1
        ),
        encoding="utf-8",
    )
    engine.repo.run("add", "version.txt", "pyproject.toml")
    engine.repo.run("commit", "--quiet", "-m", "Keep the version in version.txt", env=PINNED)


def _bump_on_main(engine: SampleEngine) -> None:
    """On main, ``version.txt`` and ``bump-main-after-cut``: the cut commits on main too."""
    _on_main(engine)
    _version_file(engine)
    config = engine.root / "pyproject.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(
        text.replace("version-files =", "bump-main-after-cut = true\nversion-files =", 1),
        encoding="utf-8",
    )
    engine.repo.run("commit", "--quiet", "-am", "Bump main after each cut", env=PINNED)


def _main_bumped(engine: SampleEngine) -> None:
    """The uninterrupted cut made its commit on main (the twin is not trivially equal)."""
    assert "Bump the version to 0.3.0" in engine.repo.out("log", "-1", "--format=%s", "main")


def _on_main(engine: SampleEngine) -> None:
    engine.repo.run("switch", "--quiet", "main")


TAG = "refs/tags/v0.1.0rc1"
FINAL = "refs/tags/v0.1.0"
BRANCH = "refs/heads/releases/v0.1.0"
NEW_BRANCH = "refs/heads/releases/v0.2.0"
MAIN = "refs/heads/main"

SCENARIOS = {
    "tag": Scenario(
        ("tag",),
        _nothing,
        (
            Kill("prepare-commit-msg", "prepare-commit-msg"),
            Kill("post-commit", "post-commit"),
            Kill("branch-ref-locked", "reference-transaction", _ref_guard("prepared", BRANCH)),
            Kill("tag-ref-locked", "reference-transaction", _ref_guard("prepared", TAG)),
            Kill("tag-ref-written", "reference-transaction", _ref_guard("committed", TAG)),
        ),
    ),
    "tag-version-file": Scenario(
        ("tag",),
        _version_file,
        (
            Kill("prepare-commit-msg", "prepare-commit-msg"),
            Kill("post-commit", "post-commit"),
            Kill("tag-ref-locked", "reference-transaction", _ref_guard("prepared", TAG)),
        ),
    ),
    "promote": Scenario(
        ("promote",),
        _rc1,
        (
            Kill("tag-ref-locked", "reference-transaction", _ref_guard("prepared", FINAL)),
            Kill("tag-ref-written", "reference-transaction", _ref_guard("committed", FINAL)),
            Kill("prepare-commit-msg", "prepare-commit-msg"),
            Kill("post-commit", "post-commit"),
        ),
    ),
    "cut": Scenario(
        ("cut", "0.2.0"),
        _on_main,
        (
            Kill("branch-ref-locked", "reference-transaction", _ref_guard("prepared", NEW_BRANCH)),
            Kill(
                "branch-ref-written", "reference-transaction", _ref_guard("committed", NEW_BRANCH)
            ),
            Kill("post-checkout", "post-checkout"),
        ),
    ),
    "cut-bump": Scenario(
        ("cut", "0.2.0"),
        _bump_on_main,
        (
            Kill(
                "branch-ref-written", "reference-transaction", _ref_guard("committed", NEW_BRANCH)
            ),
            Kill("main-ref-written", "reference-transaction", _ref_guard("committed", MAIN)),
            Kill("post-checkout", "post-checkout"),
        ),
    ),
    "push": Scenario(
        ("push",),
        _rc1,
        (
            Kill("remote-pre-receive", "pre-receive", remote=True),
            Kill(
                "remote-refs-written",
                "reference-transaction",
                '[ "$1" = committed ] || exit 0\n',
                remote=True,
            ),
        ),
    ),
}

CASES = [
    pytest.param(task, kill, id=f"{task}-{kill.id}")
    for task, scenario in SCENARIOS.items()
    for kill in scenario.kills
]

_TWINS: dict[str, dict[str, object]] = {}


def _copy(engine: SampleEngine, dest: Path) -> SampleEngine:
    shutil.copytree(engine.root.parent, dest, symlinks=True)
    repo = GitRepo(dest / "engine")
    repo.run("remote", "set-url", "origin", str(dest / "remote.git"))
    repo.run("status", "--porcelain")  # refresh the copied index's stat data
    return SampleEngine(dest / "engine", dest / "remote.git", repo, dict(engine.shas))


def _twin(task: str, engine: SampleEngine, where: Path) -> dict[str, object]:
    """The uninterrupted run, on a copy of ``engine`` as it is now (computed once)."""
    if task not in _TWINS:
        twin = _copy(engine, where / "twin")
        scenario = SCENARIOS[task]
        scenario.prepare(twin)
        result = run_cli(twin.root, *scenario.args, env=PINNED)
        assert result.code == 0, result.output
        if task == "cut-bump":
            _main_bumped(twin)
        if task == "tag-version-file":
            assert twin.repo.out("show", "v0.1.0rc1:version.txt").strip() == "0.1.0"
        _TWINS[task] = _state(twin)
    return _TWINS[task]


@pytest.mark.parametrize(("task", "kill"), CASES)
def test_a_killed_task_converges_when_run_again(
    task: str, kill: Kill, cut_engine_copy: SampleEngine, tmp_path: Path
) -> None:
    engine = cut_engine_copy
    twin = _twin(task, engine, tmp_path)
    scenario = SCENARIOS[task]
    scenario.prepare(engine)
    before = _state(engine)

    code = _run_killed(engine, scenario.args, kill, tmp_path)
    assert code == -signal.SIGKILL
    if not kill.remote:
        assert _state(engine) != before, "the kill landed before anything changed"

    again = run_cli(engine.root, *scenario.args, env=PINNED)
    assert again.code == 0, again.output
    assert "Traceback" not in again.output
    assert _state(engine) == twin

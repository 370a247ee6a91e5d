"""The repository lock: one mutating release task at a time, stale locks recovered."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from release.adapters.lock import repo_lock
from release.errors import LockedError
from release.sample import SampleEngine
from tests.conftest import repo_state, run_cli

BRANCH = "releases/v0.1.0"
DEADLINE = 30.0


def _lock_path(engine: SampleEngine) -> Path:
    return engine.repo.git_dir / "release" / "lock"


def _one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


def _tag_rc1(engine: SampleEngine) -> None:
    engine.repo.run("tag", "-a", "v0.1.0rc1", "-m", "v0.1.0rc1")


MUTATING = {
    "cut": (("cut", "0.2.0"), None),
    "pick": (("pick", "#109"), None),
    "pick-continue": (("pick", "--continue"), None),
    "pick-abort": (("pick", "--abort"), None),
    "tag": (("tag",), None),
    "promote": (("promote",), _tag_rc1),
    "push": (("push",), _tag_rc1),
}


@pytest.mark.parametrize("name", list(MUTATING))
def test_mutating_task_refused_while_the_lock_is_held(
    name: str, cut_engine_copy: SampleEngine
) -> None:
    args, setup = MUTATING[name]
    if setup is not None:
        setup(cut_engine_copy)
    remote_before = cut_engine_copy.repo.out("ls-remote", "origin")
    with repo_lock(cut_engine_copy.repo.git_dir, "held by the test"):
        cut_engine_copy.repo.run("status", "--porcelain")
        before = repo_state(cut_engine_copy.root)

        result = run_cli(cut_engine_copy.root, *args)

        line = _one_line(result.stderr)
        assert result.code == 3, result.output
        assert "another release task is running" in line
        assert "held by the test" in line  # names the holder
        assert repo_state(cut_engine_copy.root) == before
        assert json.loads(_lock_path(cut_engine_copy).read_text())["pid"] == os.getpid()
    assert cut_engine_copy.repo.out("ls-remote", "origin") == remote_before
    assert not (cut_engine_copy.repo.git_dir / "release").exists()


def test_read_only_tasks_run_while_the_lock_is_held(cut_engine_copy: SampleEngine) -> None:
    with repo_lock(cut_engine_copy.repo.git_dir, "held by the test"):
        for args in (("status",), ("pick", "#109", "--dry-run"), ("cut", "0.2.0", "--dry-run")):
            result = run_cli(cut_engine_copy.root, *args)
            assert result.code == 0, (args, result.output)


def test_the_lock_is_released_and_the_task_then_runs(cut_engine_copy: SampleEngine) -> None:
    with repo_lock(cut_engine_copy.repo.git_dir, "held by the test"):
        assert run_cli(cut_engine_copy.root, "pick", "#109").code == 3
    result = run_cli(cut_engine_copy.root, "pick", "#109")
    assert result.code == 0, result.output
    assert f"picked {cut_engine_copy.shas[109][:10]}" in result.stdout
    assert not (cut_engine_copy.repo.git_dir / "release").exists()


def test_a_running_pick_blocks_a_second_one(cut_engine_copy: SampleEngine, tmp_path: Path) -> None:
    """A pick held in a git hook: a second pick is refused; the first then finishes alone."""
    waiting, go = tmp_path / "waiting", tmp_path / "go"
    hook = cut_engine_copy.repo.git_dir / "hooks" / "post-commit"
    hook.write_text(
        "#!/bin/sh\n"
        f"touch '{waiting}'\n"
        f"i=0; while [ ! -e '{go}' ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done\n",
        encoding="utf-8",
    )
    hook.chmod(0o755)
    first = subprocess.Popen(
        [sys.executable, "-m", "release", "pick", "#109 #111"],
        cwd=cut_engine_copy.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + DEADLINE
        while not waiting.exists():
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the first pick never reached its hook"
            time.sleep(0.005)
        holder = json.loads(_lock_path(cut_engine_copy).read_text())
        assert holder["pid"] == first.pid and holder["command"] == "pick"

        second = run_cli(cut_engine_copy.root, "pick", "#108")

        line = _one_line(second.stderr)
        assert second.code == 3
        assert "another release task is running" in line and str(first.pid) in line
        go.touch()
        out, err = first.communicate(timeout=DEADLINE)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
    assert first.returncode == 0, out + err
    subjects = cut_engine_copy.repo.out("log", "--format=%s", "main..HEAD")
    assert subjects.count("(#109)") == 1 and subjects.count("(#111)") == 1
    assert "(#108)" not in subjects
    assert not (cut_engine_copy.repo.git_dir / "release").exists()


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()  # exited and reaped: its pid names no process
    return child.pid


def test_stale_lock_of_a_dead_process_is_recovered(cut_engine_copy: SampleEngine) -> None:
    pid = _dead_pid()
    path = _lock_path(cut_engine_copy)
    path.parent.mkdir()
    path.write_text(json.dumps({"pid": pid, "host": "ci-runner", "command": "pick"}))

    result = run_cli(cut_engine_copy.root, "pick", "#109")

    assert result.code == 0, result.output
    assert f"recovered a stale lock left by pick (pid {pid}, no longer running)" in result.stdout
    assert f"picked {cut_engine_copy.shas[109][:10]}" in result.stdout
    assert not path.exists()
    assert not path.parent.exists()


@pytest.mark.parametrize(
    "content", ["", "not json at all", '{"host": "x"}'], ids=["empty", "garbage", "no-pid"]
)
def test_unreadable_lock_file_does_not_block(content: str, cut_engine_copy: SampleEngine) -> None:
    """Only the flock decides; a leftover file whatever its content is taken over."""
    path = _lock_path(cut_engine_copy)
    path.parent.mkdir()
    path.write_text(content)

    result = run_cli(cut_engine_copy.root, "pick", "#109")

    assert result.code == 0, result.output
    assert not path.exists()


def test_lock_file_naming_a_live_process_without_the_flock_does_not_block(
    cut_engine_copy: SampleEngine,
) -> None:
    path = _lock_path(cut_engine_copy)
    path.parent.mkdir()
    path.write_text(json.dumps({"pid": os.getpid(), "host": "here", "command": "tag"}))

    result = run_cli(cut_engine_copy.root, "pick", "#109")

    assert result.code == 0, result.output
    assert "stale" not in result.stdout  # its pid lives: nothing to announce
    assert not path.exists()


def test_lock_excludes_under_contention(tmp_path: Path) -> None:
    """Holders come and go while others try: never two inside, never a crash.

    Each holder unlinks the lock file and may remove ``.git/release`` as it leaves, so a
    contender can open a file that is unlinked before its flock is granted.
    """
    git_dir = tmp_path / ".git"
    git_dir.mkdir()
    inside, overlaps, entries = [0], [0], [0]
    failures: list[BaseException] = []
    guard = threading.Lock()

    def worker() -> None:
        for _ in range(50):
            while True:
                try:
                    with repo_lock(git_dir, "stress"):
                        with guard:
                            inside[0] += 1
                            entries[0] += 1
                            overlaps[0] += inside[0] > 1
                        time.sleep(0.0002)
                        with guard:
                            inside[0] -= 1
                    break
                except LockedError:
                    continue
                except BaseException as err:  # a crash of the lock itself
                    failures.append(err)
                    return

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=DEADLINE)
    assert not any(t.is_alive() for t in threads)
    assert failures == []
    assert overlaps[0] == 0
    assert entries[0] == 200
    assert not (git_dir / "release").exists()

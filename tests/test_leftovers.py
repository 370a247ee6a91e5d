"""What a killed run leaves, without Docker: owners and whether they are dead, docker's
process dying with the tool, and the sweep of scratch directories and owned files.

Owners are real processes (this one, a child killed and reaped, a zombie); the sweeps run
on real directories under a temporary ``root``. The engine is a recording stand-in at the
boundary where a sweep would ask docker; the real engine's sweeps are in
tests/test_images.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from release.adapters import leftovers
from release.adapters.leftovers import (
    KEPT,
    OWNER_LABEL,
    Owner,
    dead,
    left_by_dead,
    owned_name,
    owner_of,
    record_images,
    sweep_dirs,
    this_owner,
)
from release.adapters.process import Result

linux = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
pytestmark = linux
OTHER_BOOT = "00000000-1111-2222-3333-444444444444"


def me() -> Owner:
    owner = this_owner()
    assert owner is not None
    return owner


@pytest.fixture
def ended() -> Owner:
    """The owner a child was: killed and reaped."""
    child = subprocess.Popen(["sleep", "60"])
    owner = owner_of(child.pid)
    child.kill()
    child.wait()
    assert owner is not None
    return owner


def state_of(pid: int) -> str | None:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return None


def gone(pid: int, limit: float = 5) -> bool:
    """Whether ``pid`` ends (or is a zombie) within ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while state_of(pid) not in (None, "Z", "X"):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


# -- owners --------------------------------------------------------------------------------------


def test_an_owner_reads_back_as_written() -> None:
    owner = me()
    assert owner.pid == os.getpid()
    assert Owner.parse(str(owner)) == owner
    assert owner_of(os.getpid()) == owner
    start = int((Path("/proc/self/stat").read_text().rpartition(")")[2].split())[19])
    assert owner.start == start


@pytest.mark.parametrize(
    "text",
    ["", "garbage", "1.2.3.4", f"{OTHER_BOOT}.1.2", f"{OTHER_BOOT}.1.2.3.4", f"{OTHER_BOOT}.x.2.3"],
)
def test_what_does_not_parse_is_no_owner(text: str) -> None:
    assert Owner.parse(text) is None


def test_a_live_owner_is_not_dead() -> None:
    assert not dead(me())


def test_an_ended_owner_is_dead(ended: Owner) -> None:
    assert dead(ended)


def test_a_zombie_owner_is_dead() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        owner = owner_of(child.pid)
        assert owner is not None
        os.kill(child.pid, signal.SIGKILL)
        assert gone(child.pid) and state_of(child.pid) == "Z"  # not reaped yet
        assert dead(owner)
    finally:
        child.wait()


def test_a_pid_used_again_is_another_owner() -> None:
    assert dead(replace(me(), start=me().start - 1))


def test_another_boot_or_pid_namespace_is_never_dead(ended: Owner) -> None:
    """A machine sharing the engine, or a CI job in another container of this one: its
    pids mean nothing here, so nothing of it is ever taken for dead."""
    assert not dead(replace(ended, boot=OTHER_BOOT))
    assert not dead(replace(ended, pidns=ended.pidns + 1))


def test_every_container_is_labelled_with_its_owner() -> None:
    options = leftovers.container_labels()
    assert options == [
        "--label",
        "org.release.managed=true",
        "--label",
        f"{OWNER_LABEL}={me()}",
    ]


# -- docker dies with the tool -------------------------------------------------------------------

HOLDER = """\
import sys
from concurrent.futures import ThreadPoolExecutor
from release.adapters import process
from release.errors import EngineError

def hold():  # as a build does: in a worker thread, docker in a session of its own
    process.run(["sh", "-c", f"echo $$ > {sys.argv[1]}; exec sleep 300"], error=EngineError, own_group=True)

with ThreadPoolExecutor(max_workers=1) as pool:
    pool.submit(hold).result()
"""


def wait_for_pid(path: Path, limit: float = 20) -> int:
    deadline = time.monotonic() + limit
    while not (text := path.read_text() if path.exists() else "").endswith("\n"):
        assert time.monotonic() < deadline, "the child never started"
        time.sleep(0.05)
    return int(text)


@pytest.mark.parametrize("group", [True, False], ids=["its-group", "alone"])
def test_a_process_in_a_session_of_its_own_dies_with_the_tool(tmp_path: Path, group: bool) -> None:
    """SIGKILL of the tool (its whole process group, or the process alone) leaves no child
    it started in a session of its own: the child is killed when the thread that started
    it ends."""
    script, pid_file = tmp_path / "hold.py", tmp_path / "child.pid"
    script.write_text(HOLDER, encoding="utf-8")
    tool = subprocess.Popen(
        [sys.executable, str(script), str(pid_file)],
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    child = 0
    try:
        child = wait_for_pid(pid_file)
        assert os.getsid(child) == child  # a session of its own: a group kill misses it
        (os.killpg if group else os.kill)(tool.pid, signal.SIGKILL)
        tool.wait(timeout=10)
        assert gone(child), f"sleep {child} outlived the tool"
    finally:
        if tool.poll() is None:
            os.killpg(tool.pid, signal.SIGKILL)
            tool.wait()
        if child and not gone(child, 0):
            os.kill(child, signal.SIGKILL)


# -- scratch directories and owned files ---------------------------------------------------------


def scratch_name(owner: Owner, what: str = "smoke") -> str:
    return f"release-{what}.{owner}.abc123_x"


def make_dir(root: Path, name: str, *files: str) -> Path:
    path = root / name
    path.mkdir()
    for file in files:
        (path / file).write_text("x\n", encoding="utf-8")
    return path


def test_a_scratch_dir_says_its_owner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    with leftovers.scratch("checkpoint") as path:
        assert path.parent == tmp_path
        assert path.name.startswith(f"release-checkpoint.{me()}.")
        assert oct(path.stat().st_mode & 0o777) == "0o700"
        (path / "file").write_text("x\n")
    assert not path.exists()


def test_only_a_dead_owners_own_real_dirs_are_swept(tmp_path: Path, ended: Owner) -> None:
    dead_dir = make_dir(tmp_path, scratch_name(ended), "checkpoint")
    nested = make_dir(dead_dir, "sub", "file")
    (nested / "link").symlink_to(tmp_path)  # never followed
    live = make_dir(tmp_path, scratch_name(me()), "file")
    foreign = make_dir(tmp_path, scratch_name(replace(ended, boot=OTHER_BOOT)), "file")
    kept = make_dir(tmp_path, scratch_name(ended, "reproduce"), KEPT)
    not_ours = make_dir(tmp_path, "release-smoke.not-an-owner.abc", "file")
    target = make_dir(tmp_path, "elsewhere", "precious")
    link = tmp_path / scratch_name(ended, "rootfs")
    link.symlink_to(target)
    others = make_dir(tmp_path, scratch_name(ended, "standin"), "file")
    os.chown(others, 65534, 65534)  # another user's
    assert sweep_dirs(tmp_path) == [dead_dir]
    assert not dead_dir.exists()
    for path in (live, foreign, kept, not_ours, others):
        assert (path / (KEPT if path == kept else "file")).exists(), path
    assert link.is_symlink() and (target / "precious").exists()


@dataclass
class RecordingEngine:
    """A stand-in engine: which images exist (with their labels); records what a sweep
    removes."""

    images: dict[str, dict[str, str]]
    listed: str = ""  # what ``docker ps`` answers
    removed: list[str] = field(default_factory=list)

    def run(self, args: Sequence[str], *, timeout: float | None = None, check: bool = True) -> Any:
        if args[:2] == ["image", "rm"]:
            self.removed.append(f"image {args[2]}")
            return Result(tuple(args), 0, "", "")
        assert args[0] == "ps", args
        return Result(tuple(args), 0, self.listed, "")

    def remove_container(self, name: str) -> None:
        self.removed.append(f"container {name}")

    def inspect_image(self, ref: str) -> Mapping[str, Any] | None:
        labels = self.images.get(ref)
        return None if labels is None else {"Id": ref, "Config": {"Labels": labels}}


MANAGED = {"org.release.managed": "true"}


def owned(owner: Owner) -> str:
    return f"release-owned/0123456789ab:{owner}"


def test_a_dead_runs_images_are_removed_with_its_dir(tmp_path: Path, ended: Owner) -> None:
    """Its managed images and its owned tags; not one a live run also lists, nor one that
    is not the project's; without an engine the directory waits for a run that has one."""
    dead_dir = make_dir(tmp_path, scratch_name(ended, "reproduce"))
    refs = ["org/x-reproduce:v1", "org/x-reproduce:v1-b", "user/img:1", "--rm", owned(ended)]
    record_images(dead_dir, refs)
    live = make_dir(tmp_path, scratch_name(me(), "reproduce"))
    record_images(live, ["org/x-reproduce:v1-b"])
    assert sweep_dirs(tmp_path) == []
    assert dead_dir.exists()
    engine = RecordingEngine(
        images={
            "org/x-reproduce:v1": MANAGED,
            "org/x-reproduce:v1-b": MANAGED,
            "user/img:1": {},
            owned(ended): {},
        }
    )
    assert sweep_dirs(tmp_path, engine) == [dead_dir]
    assert engine.removed == ["image org/x-reproduce:v1", f"image {owned(ended)}"]
    assert not dead_dir.exists() and live.exists()


def test_a_record_is_written_whole(tmp_path: Path) -> None:
    record_images(tmp_path, ["a:1", "b:2"])
    assert (tmp_path / leftovers.IMAGES).read_text() == "a:1\nb:2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [leftovers.IMAGES]


def test_containers_of_dead_owners_are_removed(ended: Owner) -> None:
    """Managed ones by their owner's label, container-structure-test's by the owned tag
    they were made of; never one of a live or foreign owner, nor one not managed."""
    foreign = replace(ended, boot=OTHER_BOOT)
    rows = [
        ("a", "true", str(ended), "org/x:v1"),
        ("b", "true", str(me()), "org/x:v1"),
        ("c", "true", str(foreign), "org/x:v1"),
        ("d", "true", "not-an-owner", "org/x:v1"),
        ("e", "", str(ended), "org/x:v1"),  # not managed: not ours
        ("f", "", "", owned(ended)),
        ("g", "", "", owned(me())),
        ("h", "", "", owned(foreign)),
        ("i", "", "", "sha256:0123456789ab"),
    ]
    engine = RecordingEngine(images={}, listed="".join("\t".join(r) + "\n" for r in rows))
    leftovers.sweep_containers(engine)
    assert engine.removed == ["container a", "container f"]


def test_files_named_with_a_dead_owner_are_found(tmp_path: Path, ended: Owner) -> None:
    assert owned_name("build-a") == f"build-a.{me()}"
    dead_file = tmp_path / f"build-a.{ended}.iid"
    dead_file.write_text("sha256:1\n")
    (tmp_path / f"build-a.{me()}.iid").write_text("sha256:2\n")
    (tmp_path / f"build-ab.{ended}.iid").write_text("sha256:3\n")  # another variant
    (tmp_path / f"build-a.{replace(ended, boot=OTHER_BOOT)}.iid").write_text("sha256:4\n")
    (tmp_path / "build-a.iid").write_text("sha256:5\n")
    (tmp_path / f"build-a.{replace(ended, pid=ended.pid + 1)}.iid").symlink_to(dead_file)
    assert left_by_dead(tmp_path, "build-a") == [dead_file]  # never a symlink


def test_a_process_sweeps_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(leftovers, "_done", set())
    monkeypatch.setattr(leftovers, "sweep_containers", lambda engine: calls.append("containers"))
    monkeypatch.setattr(leftovers, "sweep_dirs", lambda root, engine=None: calls.append("dirs"))
    for _ in range(3):
        leftovers.sweep(RecordingEngine(images={}))
    assert calls == ["containers", "dirs"]

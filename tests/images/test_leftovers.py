"""What a killed run leaves, without Docker: owners and whether they are dead, docker's
process dying with the tool, and the sweep of scratch directories and owned files.

Owners are real processes (this one, a child killed and reaped, a zombie); the sweeps run
on real directories under a temporary ``root``; the engine is a recording stand-in at the
boundary where a sweep would ask docker. Then, with a Docker Engine, the tool killed for
real (SIGKILL during a build and during a snapshot's dump) and the next run: what it
removes, what it must leave (a live run's, another machine's), and that it converges.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from release.adapters import leftovers
from release.adapters.engine import ContainerEngine
from release.adapters.image_info import ImageInfo
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
from tests.conftest import run_cli
from tests.docker_support import interrupt_when, managed_leftovers, purge
from tests.engine_support import Repo, processes_with, wait_until_gone
from tests.manifest_support import TAG
from tests.reproduce_support import hostile

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
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
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

    def inspect_image(self, ref: str) -> ImageInfo | None:
        labels = self.images.get(ref)
        return None if labels is None else ImageInfo(ref, labels=labels)


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


def test_a_kept_reproduce_checkout_is_never_swept(
    maintainer: Any, tester_clone: Path, tmp_path: Path
) -> None:
    """``reproduce --keep`` that stops inside its checkout keeps it, marked kept: once its
    run has ended, no sweep removes it."""
    hostile(maintainer, lambda document: document.update(image="evil/engine"))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    # its own process: the checkout is marked with the run's owner, which must have ended
    result = run_cli(
        tester_clone, "reproduce", TAG, "--keep", env={"TMPDIR": str(scratch)}, process=True
    )
    assert result.code == 7, result.output  # refused inside the checkout
    (kept,) = scratch.iterdir()
    assert f"kept the checkout at {kept / 'src'}" in result.stdout
    owner = Owner.parse(kept.name.split(".", 1)[1].rsplit(".", 1)[0])
    assert owner is not None and dead(owner)
    assert sweep_dirs(scratch) == []
    assert (kept / "src" / "pyproject.toml").is_file()


# -- with a Docker Engine: killed for real, then the next run ------------------------------------

images = pytest.mark.images
DUMP = f"12.{random.randint(100, 999)}"  # seconds the fake runtime's dump takes: this run's own
SLOW = str(random.randint(300, 599))  # seconds the slow variant's build step sleeps

RUNTIME = f"""\
#!/bin/sh
# The snapshot runtime's contract without CRIU: the checkpoint is a file; the dump takes a while.
case "$1" in
  hold) exec sleep infinity ;;
  start) shift 2; "$@" </dev/null >/tmp/server.log 2>&1 & ;;
  dump) mkdir -p "$2" && echo warm > "$2/state" && sleep {DUMP} ;;
  restore) test -f "$2/state" && {{ python3 /srv/serve.py ok </dev/null >/tmp/server.log 2>&1 & }} ;;
  *) exit 2 ;;
esac
"""

DOCKERFILE = """\
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG NONCE=0
ARG SLOW=0
COPY serve.py /srv/serve.py
COPY fake-runtime /usr/local/bin/fake-runtime
RUN chmod 755 /usr/local/bin/fake-runtime && echo "nonce ${NONCE}" > /nonce
RUN if [ "${SLOW}" != "0" ]; then echo "slow step: sleeping ${SLOW}s"; sleep "${SLOW}"; fi
"""

SNAPSHOT = """\
[tool.release.images.snapshot]
cuda = ">=12"
runtime = ["fake-runtime"]
serve = ["python3", "/srv/serve.py", "ok"]
health = "/health"
startup-timeout = 20
timeout = 90
"""


@pytest.fixture(scope="module")
def killable(docker: ContainerEngine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Repo]:
    """An engine whose variant ``a`` is built and snapshots with a dump that takes a few
    seconds, and whose variant ``slow`` builds for minutes."""
    from tests.engine_support import BASE_1291, SERVER, make_engine_repo

    variant = {"cuda": "12.9.1", "base-image": BASE_1291}
    repo = make_engine_repo(
        tmp_path_factory.mktemp("killable") / "engine",
        tmp_path_factory.mktemp("home"),
        variants=[{"id": "a", **variant}, {"id": "slow", **variant, "build-args": {"SLOW": SLOW}}],
        checks=[{"name": "says hello", "command": ["echo", "hello"], "expect-output": "hello"}],
        default="a",
        files={"docker/Dockerfile": DOCKERFILE, "serve.py": SERVER, "fake-runtime": RUNTIME},
        tables=SNAPSHOT,
    )
    try:
        built = repo.release("images.build", "--variant", "a")
        assert built.code == 0, built.output
        yield repo
    finally:
        purge(docker, repo.name, repo.head)


def image_id(docker: ContainerEngine, repo: Repo) -> str:
    found = docker.image_id(f"{repo.name}:v0.1.0")
    assert found is not None
    return found


def owners_of_containers(docker: ContainerEngine, image: str) -> dict[str, str]:
    """container id -> its owner label, of every container of ``image``."""
    listed = docker.run(
        ["ps", "--all", "--no-trunc", "--filter", f"ancestor={image}",
         "--format", f'{{{{.ID}}}} {{{{.Label "{OWNER_LABEL}"}}}}'],
        timeout=60,
    ).stdout  # fmt: skip
    return dict(line.partition(" ")[::2] for line in listed.splitlines())


def scratch_dirs(root: Path) -> list[str]:
    return sorted(path.name for path in root.iterdir() if path.name.startswith("release-"))


def comparable(repo: Repo) -> dict[str, Any]:
    """The snapshot's record and manifest part without the times, which differ run to run."""

    def without_times(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: without_times(v) for k, v in value.items() if k != "figures"}
        if isinstance(value, list):
            return [without_times(v) for v in value]
        return re.sub(r"\d+ ms", "N ms", value) if isinstance(value, str) else value

    paths = [repo.state / "snapshots/0.1.0/a.json", repo.state / "manifest/0.1.0/a.snapshot.json"]
    return {str(p): without_times(json.loads(p.read_text())) for p in paths}


def pids_with(text: str) -> list[int]:
    """Processes whose command line contains ``text``."""
    found = []
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if proc.name.isdigit() and text in (proc / "cmdline").read_bytes().replace(
                b"\0", b" "
            ).decode(errors="replace"):
                found.append(int(proc.name))
    return found


def dumping(_output: str) -> bool:
    return bool(processes_with(f"sleep {DUMP}"))


@images
def test_killed_in_the_dump_the_next_run_removes_its_container_and_dirs_and_converges(
    killable: Repo, docker: ContainerEngine, tmp_path: Path
) -> None:
    """SIGKILL of the tool's group while the runtime dumps leaves the serving container
    running and the checkpoint dir; the next snapshot run removes both, and ends as an
    uninterrupted run does."""
    env = {**killable.env, "TMPDIR": str(tmp_path)}
    image = image_id(docker, killable)
    twin = killable.release("images.snapshot", "--variant", "a", TMPDIR=str(tmp_path))
    assert twin.code == 0, twin.output
    assert "checkpoint/restore round trip: passed" in twin.stdout, twin.stdout
    uninterrupted = comparable(killable)
    assert owners_of_containers(docker, image) == {} and scratch_dirs(tmp_path) == []
    stopped = interrupt_when(
        [sys.executable, "-m", "release", "images.snapshot", "--variant", "a"],
        killable.root,
        env,
        dumping,
        sig=signal.SIGKILL,
    )
    assert stopped.code == -signal.SIGKILL, stopped.output
    left = owners_of_containers(docker, image)
    assert len(left) == 1, left  # the serving container, still running
    (owner,) = [Owner.parse(label) for label in left.values()]
    assert owner is not None and dead(owner)
    dirs = scratch_dirs(tmp_path)
    assert len(dirs) == 1 and dirs[0].startswith(f"release-checkpoint.{owner}."), dirs
    again = killable.release("images.snapshot", "--variant", "a", TMPDIR=str(tmp_path))
    assert again.code == 0, again.output
    assert owners_of_containers(docker, image) == {}
    assert scratch_dirs(tmp_path) == []
    assert comparable(killable) == uninterrupted
    assert re.sub(r"\d+ ms", "N ms", again.stdout) == re.sub(r"\d+ ms", "N ms", twin.stdout)


@images
def test_a_live_runs_container_and_dir_are_never_swept(
    killable: Repo, docker: ContainerEngine, tmp_path: Path, ended: Owner
) -> None:
    """While a snapshot run dumps, a smoke run in another process sweeps: it removes a
    dead owner's container and leaves the live run's container and checkpoint dir, and
    the live run passes."""
    from tests.engine_support import BASE_1291

    env = {**killable.env, "TMPDIR": str(tmp_path)}
    image = image_id(docker, killable)
    dead_one = docker.run(
        ["create", "--label", "org.release.managed=true", "--label", f"{OWNER_LABEL}={ended}",
         BASE_1291, "true"],
        timeout=60,
    ).stdout.strip()  # fmt: skip
    live = subprocess.Popen(
        [sys.executable, "-m", "release", "images.snapshot", "--variant", "a"],
        cwd=killable.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not dumping(""):
            assert live.poll() is None and time.monotonic() < deadline, "no dump"
            time.sleep(0.2)
        mine = owners_of_containers(docker, image)
        dirs = scratch_dirs(tmp_path)
        assert len(mine) == 1 and len(dirs) == 1, (mine, dirs)
        smoke = killable.release("images.smoke", "--variant", "a", TMPDIR=str(tmp_path))
        assert smoke.code == 0, smoke.output
        assert docker.run(["inspect", dead_one], check=False, timeout=60).status != 0
        assert dumping("")  # still in the dump: what follows was looked at while it ran
        assert owners_of_containers(docker, image) == mine
        assert scratch_dirs(tmp_path) == dirs
        out, _ = live.communicate(timeout=120)
        assert live.returncode == 0, out
        assert "checkpoint/restore round trip: passed" in out, out
    finally:
        if live.poll() is None:
            live.kill()
            live.wait()
        docker.remove_container(dead_one)


@images
def test_a_foreign_or_unreadable_owner_is_left_alone(
    killable: Repo, docker: ContainerEngine, tmp_path: Path, ended: Owner
) -> None:
    """Containers of another boot (another machine sharing the engine), with an owner
    that does not parse, or unmanaged, stay; a dead run's container, scratch dir and
    recorded image go, and a foreign run's dir stays."""
    from tests.engine_support import BASE_1291

    foreign = replace(ended, boot=OTHER_BOOT)
    made = {}
    for name, labels in {
        "dead": ["org.release.managed=true", f"{OWNER_LABEL}={ended}"],
        "foreign": ["org.release.managed=true", f"{OWNER_LABEL}={foreign}"],
        "unreadable": ["org.release.managed=true", f"{OWNER_LABEL}=pid 12"],
        "unmanaged": ["org.release.managed=no", f"{OWNER_LABEL}={ended}"],  # not the base's
    }.items():
        options = [part for label in labels for part in ("--label", label)]
        made[name] = docker.run(["create", *options, BASE_1291, "true"], timeout=60).stdout.strip()
    rebuilt = f"{killable.name}-reproduce:v0.1.0-{uuid.uuid4().hex[:6]}"
    docker.tag(image_id(docker, killable), [rebuilt])
    dead_dir = make_dir(tmp_path, scratch_name(ended, "reproduce"), "file")
    record_images(dead_dir, [rebuilt])
    foreign_dir = make_dir(tmp_path, scratch_name(foreign, "smoke"), "file")
    try:
        smoke = killable.release("images.smoke", "--variant", "a", TMPDIR=str(tmp_path))
        assert smoke.code == 0, smoke.output
        exists = {
            name: docker.run(["inspect", c], check=False, timeout=60).ok for name, c in made.items()
        }
        assert exists == {"dead": False, "foreign": True, "unreadable": True, "unmanaged": True}
        assert scratch_dirs(tmp_path) == [foreign_dir.name]
        assert docker.image_id(rebuilt) is None
        assert docker.image_id(f"{killable.name}:v0.1.0") is not None  # only its own tag went
    finally:
        for container in made.values():
            docker.remove_container(container)
        docker.remove_image(rebuilt)


@images
@pytest.mark.parametrize("group", [True, False], ids=["its-group", "alone"])
def test_killed_during_a_build_no_docker_build_is_left(
    killable: Repo, docker: ContainerEngine, group: bool
) -> None:
    """SIGKILL of the tool (with its group, or alone) while a build step runs: docker's
    client dies with it, the engine cancels the build, and no image comes of it."""
    logs = killable.state / "logs"
    log = logs / "build-slow.log"
    log.unlink(missing_ok=True)
    running = re.compile(rf"^#\d+ [\d.]+ slow step: sleeping {SLOW}s$", re.MULTILINE)
    client = f"--iidfile {logs}/build-slow."  # build-slow.OWNER.iid
    try:
        stopped = interrupt_when(
            [sys.executable, "-m", "release", "images.build", "--variant", "slow"],
            killable.root,
            killable.env,
            lambda _: log.exists() and bool(running.search(log.read_text())),
            sig=signal.SIGKILL,
            group=group,
        )
        assert stopped.code == -signal.SIGKILL, stopped.output
        assert wait_until_gone(client, 10) == []  # no docker build client left
        assert wait_until_gone(f"sleep {SLOW}", 10) == []  # the engine stopped the step
        time.sleep(2)  # a build still going would finish into an untagged image
        assert managed_leftovers(docker, killable.head)["dangling images"] == []
        assert docker.image_id(f"{killable.name}:v0.1.0-slow") is None
    finally:
        for pid in pids_with(client):  # without the fix: docker builds for minutes
            os.kill(pid, signal.SIGKILL)


@images
def test_a_build_a_killed_run_finished_but_never_tagged_is_removed_by_the_next(
    killable: Repo, docker: ContainerEngine, tmp_path: Path, ended: Owner
) -> None:
    """Images whose ids killed runs left in the logs dir: an untagged one is removed by
    the next build of the variant, a tagged one stays, and a live run's is not touched.
    An unchanged build that finds none asks the engine nothing more than before."""
    from tests.engine_support import BASE_1291

    logs = killable.state / "logs"
    warm = killable.release("images.build", "--variant", "a", RELEASE_ECHO="1")
    assert warm.code == 0 and "build(a): unchanged" in warm.stdout, warm.output
    asked = [line for line in warm.stderr.splitlines() if line.startswith("+ docker")]
    assert len(asked) == 1 and asked[0].startswith("+ docker image inspect "), asked

    def leftover(owner: Owner, nonce: str) -> tuple[Path, str]:
        (tmp_path / "Dockerfile").write_text(f"FROM {BASE_1291}\nLABEL nonce={nonce}\n")
        iid = logs / f"build-a.{owner}.iid"
        built = docker.build(
            context=tmp_path,
            dockerfile=tmp_path / "Dockerfile",
            build_args={},
            labels={"org.release.managed": "true"},
            iidfile=iid,
            platform=None,
            log=tmp_path / "build.log",
        )
        assert built.ok, (tmp_path / "build.log").read_text()
        return iid, iid.read_text().strip()

    untagged = leftover(ended, uuid.uuid4().hex)
    pinned = leftover(replace(ended, start=ended.start + 1), uuid.uuid4().hex)
    docker.tag(pinned[1], [f"{killable.name}:pinned"])
    live = leftover(me(), uuid.uuid4().hex)
    try:
        again = killable.release("images.build", "--variant", "a")
        assert again.code == 0, again.output
        assert docker.inspect_image(untagged[1]) is None
        assert docker.inspect_image(pinned[1]) is not None
        assert docker.inspect_image(live[1]) is not None
        assert [p.exists() for p in (untagged[0], pinned[0], live[0])] == [False, False, True]
    finally:
        live[0].unlink(missing_ok=True)
        for _, image in (untagged, pinned, live):
            docker.remove_image(image)


def test_a_container_is_this_runs_by_its_owner_label_or_the_tag_it_was_made_of() -> None:
    """Two runs may build the same image (one id): each removes only its own containers."""
    me = leftovers.this_owner()
    assert me is not None
    other = leftovers.Owner(me.boot, me.pidns, me.pid + 1, me.start)
    own_ref = leftovers.owned_ref("sha256:" + "a" * 64)
    assert own_ref is not None
    assert leftovers.mine(str(me), "example/engine:v1")
    assert leftovers.mine("", own_ref)  # made by container-structure-test from our tag
    assert not leftovers.mine(str(other), "example/engine:v1")
    assert not leftovers.mine("", own_ref.replace(str(me), str(other)))
    assert not leftovers.mine("", "example/engine:v1")  # no owner: not provably ours

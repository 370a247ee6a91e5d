"""What a killed run leaves behind, and how the next run removes it: the one place that
marks what a run makes outside the repository with its *owner*, and decides when an owner
is dead.

Ctrl-C and SIGTERM stop a run through its cleanup (every ``finally``); SIGKILL, the
out-of-memory killer or a crash run none of it. Invariants:

- **docker dies with the tool.** A process started with a session of its own (docker, the
  tools that talk to the engine, debootstrap) gets SIGKILL when the thread that started
  it ends (Linux ``PR_SET_PDEATHSIG``: :func:`dies_with_parent`), so a killed run, alone
  or with its process group, leaves no docker CLI running, and the engine cancels a build
  whose client is gone: it makes no image. Such a process is waited for by the thread
  that started it.
- **An owner** is one process of one boot of one machine: the kernel's boot id, the pid
  namespace, the pid and the process's start time, written ``BOOT.PIDNS.PID.START``
  (:class:`Owner`). It is *dead* only when that is provable here (:func:`dead`): the
  same boot id and pid namespace as this process, and no process with that pid, or a
  zombie, or one that started at another time (the pid was used again). Another boot id
  (a machine sharing the engine through ``DOCKER_HOST``, or this one before a reboot),
  another pid namespace (a CI job in another container of this machine), or a value that
  does not parse, is never dead: what it owns is left alone.
- **Containers.** Every container the tool makes carries ``org.release.managed=true``
  and ``org.release.owner=OWNER`` (:func:`container_labels`); container-structure-test,
  which makes its own, is given the image as a tag that names the owner,
  ``release-owned/<image>:OWNER`` (:func:`owned_ref`). Once per process, before its first
  container is made, one ``docker ps`` lists the containers, and those of dead owners are
  removed (:func:`sweep`).
- **Scratch directories** are ``$TMPDIR/release-WHAT.OWNER.RANDOM`` (:func:`scratch`,
  :func:`scratch_dir`). Once per process, when it makes its first scratch directory or
  container, dead owners' ones are removed: only real directories (a symlink is never
  followed nor removed) owned by this user, never one marked kept (:func:`keep`).
- **Images a run tags for itself alone** (``reproduce``'s rebuilds, the owned tags) are
  listed in its scratch directory before they are made (:func:`record_images`). A dead
  owner's are untagged before its directory is removed, after its containers: each only
  while it is a managed image or an owned tag, and no live owner's list names it, and
  never forced (an image a container still uses stays). Without an engine at hand such a
  directory is left for a run that has one.
- **Files named with their owner** (``STEM.OWNER``, :func:`owned_name`: a build's image
  id file) are found by :func:`left_by_dead` once their owner is dead.
- No sweep fails a run: what cannot be read, proven dead or removed stays for a later
  run.

Without ``/proc`` (not Linux) a process is no owner: nothing it makes carries one, and
it sweeps nothing.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import signal
import stat
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from release.adapters.image_info import ImageInfo
from release.errors import ReleaseError

__all__ = [
    "IMAGES",
    "KEPT",
    "MANAGED_LABEL",
    "OWNER_LABEL",
    "Engine",
    "Owner",
    "container_labels",
    "dead",
    "dies_with_parent",
    "keep",
    "left_by_dead",
    "mine",
    "owned_name",
    "owned_ref",
    "owner_of",
    "record_images",
    "scratch",
    "scratch_dir",
    "sweep",
    "sweep_containers",
    "sweep_dirs",
    "this_owner",
]

MANAGED_LABEL = "org.release.managed"  # on every container and image the tool makes
OWNER_LABEL = "org.release.owner"  # on every container: the process that made it
KEPT = ".kept"  # in a scratch directory: never swept
IMAGES = ".images"  # in a scratch directory: the image refs its run tags, one a line
_PROC = Path("/proc")
_BOOT = r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}"
# patterns as text: ``re`` compiles each on its first use (importing this costs no compile)
_OWNER = rf"(?P<boot>{_BOOT})\.(?P<ns>\d+)\.(?P<pid>\d+)\.(?P<start>\d+)"
_SCRATCH = rf"release-[a-z]+\.(?P<owner>{_BOOT}\.\d+\.\d+\.\d+)\.[^.]+"
_REF = r"[\w][\w.\-/:@]*"  # an image ref as recorded: never an option
_OWNED_REPOSITORY = "release-owned"  # tags that name their owner: OWNED/<image>:OWNER
_OWNED = rf"{_OWNED_REPOSITORY}/[0-9a-f]{{12}}:(?P<owner>{_BOOT}\.\d+\.\d+\.\d+)"
_PR_SET_PDEATHSIG = 1


# -- owners ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Owner:
    boot: str  # /proc/sys/kernel/random/boot_id
    pidns: int  # the inode of the pid namespace
    pid: int
    start: int  # clock ticks after boot, /proc/<pid>/stat field 22

    def __str__(self) -> str:
        return f"{self.boot}.{self.pidns}.{self.pid}.{self.start}"

    @classmethod
    def parse(cls, text: str) -> Owner | None:
        match = re.fullmatch(_OWNER, text.strip())
        if match is None:
            return None
        return cls(match["boot"], int(match["ns"]), int(match["pid"]), int(match["start"]))


def _stat(pid: int) -> tuple[str, int]:
    """(state, start time) of ``pid``. Raises OSError, ValueError or IndexError."""
    fields = (_PROC / str(pid) / "stat").read_text().rpartition(")")[2].split()
    return fields[0], int(fields[19])


def _owner(pid: int) -> Owner | None:
    try:
        boot = (_PROC / "sys" / "kernel" / "random" / "boot_id").read_text().strip()
        pidns = int(os.readlink(_PROC / "self" / "ns" / "pid").strip("pid:[]"))
        start = _stat(pid)[1]
    except (OSError, ValueError, IndexError):
        return None
    return Owner.parse(f"{boot}.{pidns}.{pid}.{start}")


def owner_of(pid: int) -> Owner | None:
    """Process ``pid`` of this boot and pid namespace as an owner; None where it cannot be
    read (it ended, or there is no ``/proc``)."""
    return _owner(pid)


_this = functools.lru_cache(maxsize=2)(_owner)  # by pid: a forked child is another owner


def this_owner() -> Owner | None:
    """This process as an owner; None where it cannot be told (no ``/proc``)."""
    return _this(os.getpid())


def dead(owner: Owner) -> bool:
    """Whether ``owner`` has provably ended (see the module's invariants)."""
    me = this_owner()
    if me is None or (owner.boot, owner.pidns) != (me.boot, me.pidns):
        return False
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # another user's process: its start time says whether it is the owner
    try:
        state, start = _stat(owner.pid)
    except (OSError, ValueError, IndexError):
        return False  # gone meanwhile, or hidden: not proven
    return start != owner.start or state in ("Z", "X")


def container_labels() -> list[str]:
    """``--label`` options for a container about to be made: managed, and owned by this
    process."""
    owner = this_owner()
    labels = [f"{MANAGED_LABEL}=true", *([f"{OWNER_LABEL}={owner}"] if owner else [])]
    return [option for label in labels for option in ("--label", label)]


def owned_name(stem: str) -> str:
    """``STEM.OWNER``: the name of a file that says which process it is of (``STEM`` where
    this process is no owner)."""
    owner = this_owner()
    return f"{stem}.{owner}" if owner else stem


def owned_ref(image_id: str) -> str | None:
    """A tag of ``image_id`` that names this process (None where it is no owner): what a
    tool that makes containers of its own (container-structure-test) is given, so that
    they say their owner in their image (``docker ps``'s ``.Image``)."""
    owner = this_owner()
    short = image_id.removeprefix("sha256:")[:12]
    return f"{_OWNED_REPOSITORY}/{short}:{owner}" if owner else None


def _owned_by(ref: str) -> Owner | None:
    match = re.fullmatch(_OWNED, ref)
    return Owner.parse(match["owner"]) if match else None


def mine(owner_label: str, image_ref: str) -> bool:
    """Whether a container of this owner label, made of ``image_ref``, is this process's."""
    me = this_owner()
    return me is not None and (Owner.parse(owner_label) == me or _owned_by(image_ref) == me)


def left_by_dead(directory: Path, stem: str) -> list[Path]:
    """The files ``STEM.OWNER[.SUFFIX]`` in ``directory`` (:func:`owned_name`) of dead
    owners: regular files of this user, never a symlink."""
    pattern = re.compile(rf"{re.escape(stem)}\.(?P<owner>{_BOOT}\.\d+\.\d+\.\d+)(?:\..*)?")
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    found = []
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        owner = Owner.parse(match["owner"]) if match else None
        if owner is None or not dead(owner):
            continue
        with contextlib.suppress(OSError):
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid():
                found.append(Path(entry.path))
    return found


# -- processes ---------------------------------------------------------------------------


@functools.cache
def _prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes  # here: only a run that starts docker pays for it

        return ctypes.CDLL(None, use_errno=True).prctl
    except (ImportError, OSError, AttributeError):
        return None


def dies_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the child get SIGKILL when the thread that started it
    ends (None where the kernel cannot). It runs between fork and exec and takes no lock."""
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def child() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the line above
            os.kill(os.getpid(), signal.SIGKILL)

    return child


# -- scratch directories -----------------------------------------------------------------


def scratch_dir(what: str) -> Path:
    """A new directory ``$TMPDIR/release-WHAT.OWNER.RANDOM`` (mode 0700) for the caller to
    remove; the first one a process makes removes dead owners' first."""
    import tempfile  # here, as shutil below: a process that makes no scratch needs neither

    _once("dirs", lambda: sweep_dirs(Path(tempfile.gettempdir())))
    owner = this_owner()
    return Path(tempfile.mkdtemp(prefix=f"release-{what}." + (f"{owner}." if owner else "")))


@contextlib.contextmanager
def scratch(what: str) -> Iterator[Path]:
    """:func:`scratch_dir` for the ``with`` block, removed whatever ends it."""
    import shutil

    path = scratch_dir(what)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def keep(directory: Path) -> None:
    """Mark a scratch directory kept: no sweep removes it."""
    (directory / KEPT).touch()


def record_images(directory: Path, refs: Sequence[str]) -> None:
    """List in its scratch directory the image refs a run is about to tag for itself
    alone: the sweep of a dead owner's directory untags them. Written whole or not at
    all."""
    partial = directory / f"{IMAGES}.partial"
    partial.write_text("".join(f"{ref}\n" for ref in refs), encoding="utf-8")
    os.replace(partial, directory / IMAGES)


def _recorded(directory: Path) -> list[str]:
    try:
        lines = (directory / IMAGES).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    return [line for line in lines if re.fullmatch(_REF, line)]


def _dead_dir(entry: os.DirEntry[str]) -> bool:
    """A scratch directory of a dead owner that a sweep may remove."""
    match = re.fullmatch(_SCRATCH, entry.name)
    owner = Owner.parse(match["owner"]) if match else None
    if owner is None or not dead(owner):
        return False
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    mine = stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
    return mine and not os.path.lexists(Path(entry.path) / KEPT)


def sweep_dirs(root: Path, engine: Engine | None = None) -> list[Path]:
    """Remove the scratch directories of dead owners under ``root``, the images they
    recorded first (through ``engine``; without one, such a directory is left); the
    directories removed."""
    import shutil

    try:
        entries = [entry for entry in os.scandir(root) if entry.name.startswith("release-")]
    except OSError:
        return []
    doomed = [Path(entry.path) for entry in entries if _dead_dir(entry)]
    # what the others list (live owners, kept directories) is theirs, whoever else listed it
    others = [Path(entry.path) for entry in entries if Path(entry.path) not in doomed]
    theirs: set[str] | None = None
    removed = []
    for path in doomed:
        images = _recorded(path)
        if images:
            if engine is None:
                continue
            if theirs is None:
                theirs = {ref for other in others for ref in _recorded(other)}
            _remove_images(engine, [ref for ref in images if ref not in theirs])
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


# -- the engine --------------------------------------------------------------------------


class ProcessAnswer(Protocol):
    @property
    def ok(self) -> bool: ...

    @property
    def stdout(self) -> str: ...


class Engine(Protocol):
    """What a sweep asks of :class:`~release.adapters.engine.ContainerEngine`."""

    def run(
        self, args: Sequence[str], *, timeout: float | None = None, check: bool = True
    ) -> ProcessAnswer: ...

    def remove_container(self, name: str) -> None: ...

    def inspect_image(self, ref: str) -> ImageInfo | None: ...


def _remove_images(engine: Engine, refs: Sequence[str]) -> None:
    """``docker image rm`` (not forced: one a container still uses stays) of each ref that
    is a managed image or a tag that names its owner."""
    for ref in refs:
        data = engine.inspect_image(ref)
        if data is not None and (data.labels.get(MANAGED_LABEL) == "true" or _owned_by(ref)):
            engine.run(["image", "rm", ref], check=False, timeout=60)


def sweep_containers(engine: Engine) -> None:
    """Remove the containers of dead owners (one ``docker ps``): managed ones with their
    owner's label, and those made of a tag that names their owner (:func:`owned_ref`)."""
    listed = engine.run(
        ["ps", "--all", "--no-trunc", "--format",
         f'{{{{.ID}}}}\t{{{{.Label "{MANAGED_LABEL}"}}}}\t{{{{.Label "{OWNER_LABEL}"}}}}\t{{{{.Image}}}}'],
        check=False,
        timeout=60,
    )  # fmt: skip
    for line in listed.stdout.splitlines() if listed.ok else []:
        container, managed, label, image = [*line.split("\t"), "", "", ""][:4]
        owner = Owner.parse(label) if managed == "true" else None
        owner = owner or _owned_by(image)
        if owner is not None and dead(owner):
            engine.remove_container(container)


def sweep(engine: Engine) -> None:
    """Once per process, before its first container: remove the managed containers of
    dead owners, then dead owners' scratch directories and the images they recorded."""

    import tempfile

    def both() -> None:
        sweep_containers(engine)
        sweep_dirs(Path(tempfile.gettempdir()), engine)

    _once("engine", both)


_done: set[tuple[int, str]] = set()  # (pid, what): a forked child sweeps again
_lock = threading.Lock()


def _once(what: str, work: Callable[[], object]) -> None:
    """``work`` the first time this process asks for ``what`` (others wait for it); what
    it raises is dropped: a sweep never fails a run."""
    if this_owner() is None:
        return
    with _lock:
        if (os.getpid(), what) in _done:
            return
        _done.add((os.getpid(), what))
        with contextlib.suppress(ReleaseError, OSError):
            work()

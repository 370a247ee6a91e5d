"""The repository lock under ``.git/release/``, and whether a process (group) still runs.

The lock is an ``flock`` on ``.git/release/lock`` (released by the kernel when its
holder dies) whose content names the holder; a lock file left by a dead process is
recovered and said so. Both the lock file and an emptied ``.git/release/`` are
removed on release, so a refused command leaves the directory as it found it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from release.core.json_text import parse_json
from release.errors import LockedError, RefusedError

__all__ = ["pid_alive", "process_group_alive", "repo_lock", "require_ended"]


def _running(stat: str) -> tuple[str, int] | None:
    """(state, process group) from a ``/proc/<pid>/stat`` line."""
    fields = stat.rpartition(")")[2].split()
    return (fields[0], int(fields[2])) if len(fields) > 2 else None


def _zombie(pid: int) -> bool:
    """A killed process its parent has not reaped (yet, or ever, under an init that
    does not reap orphans): it exists for ``kill(0)`` but runs nothing."""
    try:
        info = _running((Path("/proc") / str(pid) / "stat").read_text())
    except (OSError, ValueError):
        return False
    return info is not None and info[0] in ("Z", "X")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


_ATTEMPTS = 50


def _read(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 4096):
        chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace").strip()


def _open_locked(directory: Path, path: Path) -> tuple[int, str]:
    """Open and ``flock`` the lock file; returns it and what an earlier holder left in it.

    A holder unlinks the file (and may remove an empty directory) as it finishes, so the
    file opened here can be gone from ``path`` by the time its lock is granted: that
    lock guards nothing, and the open is retried on the file now at ``path``.
    """
    for _ in range(_ATTEMPTS):
        with contextlib.suppress(FileExistsError):  # removed and re-made under us
            directory.mkdir(exist_ok=True)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:  # the directory went away between mkdir and open
            continue
        except OSError as err:  # a file where the directory should be, no permission
            raise RefusedError(
                f"cannot take the lock {path} ({err.strerror}); {directory} must be a "
                "directory this tool can write: look at it, then move aside what is in the way"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(fd) or "another process"
            os.close(fd)
            raise LockedError(
                f"another release task is running in this repository ({holder}); "
                "wait for it to finish"
            ) from None
        held = os.fstat(fd)
        try:
            current = os.stat(path)
        except FileNotFoundError:
            current = None
        if current is not None and (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino):
            return fd, _read(fd)
        os.close(fd)
    raise LockedError("another release task keeps taking the lock in this repository; retry")


@contextlib.contextmanager
def repo_lock(
    git_dir: Path, command: str, *, notify: Callable[[str], object] | None = None
) -> Iterator[None]:
    """Hold the repository lock for one mutating command."""
    directory = git_dir / "release"
    path = directory / "lock"
    created_dir = not directory.exists()
    fd, previous = _open_locked(directory, path)
    try:
        if previous and notify is not None:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                info = parse_json(previous)
                if not pid_alive(int(info["pid"])):
                    notify(
                        f"recovered a stale lock left by {info.get('command')} "
                        f"(pid {info['pid']}, no longer running)"
                    )
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        import json  # (here: a command that takes no lock, status among them, never imports it)

        holder = {"pid": os.getpid(), "host": _host(), "command": command}
        os.write(fd, json.dumps(holder).encode())
        try:
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            with contextlib.suppress(OSError):  # OSError: not empty, or already removed
                if created_dir or not any(directory.iterdir()):
                    directory.rmdir()
    finally:
        os.close(fd)


def process_group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (zombies do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return True  # no procfs: assume the worst
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            info = _running((entry / "stat").read_text())
        except (OSError, ValueError):
            continue  # exited while we looked
        if info is not None and info[1] == pgid and info[0] not in ("Z", "X"):
            return True
    return False


def require_ended(pgid: int, what: str) -> None:
    """Refuse while the process group of a killed run of ours (``what``) still runs: its
    git may hold the locks a recovery would remove."""
    if pgid and pgid != os.getpgid(0) and process_group_alive(pgid):
        raise RefusedError(
            f"an interrupted {what} (process group {pgid}) may still be running git here; "
            "wait for it to end and re-run"
        )


def _host() -> str:
    """This machine's name, as ``socket.gethostname()`` says it, without importing socket
    (a few milliseconds of every command that takes the lock)."""
    uname = getattr(os, "uname", None)
    if uname is not None:
        return str(uname().nodename)
    import socket

    return socket.gethostname()

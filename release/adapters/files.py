"""Files the tool reads and writes by a path it is given: read whole, or refused in one line.

- :func:`read_text`: a text file a user names (a picks file): a missing file reads as None;
  a directory, an unreadable file or bytes that are not UTF-8 are a :class:`UsageError`
  naming the file. A byte-order mark is read past and reported, so a writer can put it back.
- :func:`read_tree_file`, :func:`read_tree_text`: a file named relative to a work tree
  (``pyproject.toml``, the changelog, the picks file, a ``.dockerignore``). Nothing read
  from a tree is followed out of it: a path whose real location is outside the root (a
  symlink in any component leading out) is refused, and so is anything but a regular file
  (a FIFO, a device, a directory, a socket) and a file over a size limit. The type is
  checked before the file is opened and again on what was opened (non-blocking), so a FIFO
  never holds a read up.
- :func:`output_path`: a file the user names for output, checked before any work is done:
  it is a regular file or nothing (never a device, a FIFO, a directory, a socket, nor a
  symlink), in a directory that exists (only the tool's own default places are made), and
  a path inside ``tree`` does not lead out of it through a symlink.

- :func:`atomic_write`: the one way a file is replaced, all at once; the new file has the
  mode of the one it replaces, or a new file's usual mode (``0o666`` less the umask). An
  exclusive write makes a new file only: where one is there by then, it is left as it is.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from release.errors import ReleaseError, UsageError

__all__ = [
    "MAX_TREE_FILE",
    "TextFile",
    "atomic_write",
    "is_regular",
    "output_path",
    "read_regular",
    "read_text",
    "read_tree_file",
    "read_tree_text",
    "tree_path",
]

BOM = "\ufeff"
MAX_TREE_FILE = 16 * 2**20  # bytes: far above any config, changelog or Dockerfile
_OPEN = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


@dataclass(frozen=True)
class TextFile:
    text: str  # without the byte-order mark
    bom: bool = False

    def restore(self, text: str) -> str:
        """``text`` as the file should hold it: with its byte-order mark if it had one."""
        return BOM + text if self.bom else text


def read_text(path: Path, what: str) -> TextFile | None:
    """The file's text, or None when there is no file at ``path``."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise UsageError(f"{what} {path} is a directory, not a file") from None
    except OSError as err:
        raise UsageError(f"cannot read {what} {path}: {err.strerror or err}") from None
    return _decode(data, f"{what} {path}", UsageError)


def _decode(data: bytes, what: str, error: type[ReleaseError]) -> TextFile:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise error(
            f"{what} is not UTF-8 text (byte {err.start} is {data[err.start]:#04x}); "
            "save it as UTF-8"
        ) from None
    if text.startswith(BOM):
        return TextFile(text[1:], bom=True)
    return TextFile(text)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a symbolic link" if stat.S_ISLNK(mode) else "something else"


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def tree_path(root: Path, rel: str, what: str, *, error: type[ReleaseError] = UsageError) -> Path:
    """Where ``root/rel`` really is, every symlink followed; refused when that is outside
    ``root`` (``what`` names the path in the message)."""
    base = os.path.realpath(root)
    real = os.path.realpath(os.path.join(base, rel))
    if not _inside(real, base):
        raise error(f"{what} leads outside the work tree ({real})")
    return Path(real)


def _regular(st: os.stat_result, what: str, error: type[ReleaseError], limit: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{what} is {_kind(st.st_mode)}, not a regular file")
    if st.st_size > limit:
        raise error(f"{what} is {st.st_size:,} bytes, more than the {limit:,} read here")


def is_regular(
    path: Path, what: str, *, error: type[ReleaseError] = UsageError, limit: int = MAX_TREE_FILE
) -> bool:
    """Whether there is a file at ``path``; anything there but a regular file of at most
    ``limit`` bytes is refused, and nothing is opened."""
    try:
        _regular(os.stat(path), what, error, limit)
    except FileNotFoundError:
        return False
    except OSError as err:
        raise error(f"cannot read {what}: {err.strerror or err}") from None
    return True


def read_regular(
    path: Path, what: str, *, error: type[ReleaseError] = UsageError, limit: int = MAX_TREE_FILE
) -> bytes | None:
    """The bytes of the regular file at ``path`` (at most ``limit``), or None when there is
    nothing there; anything else there is refused without being read, and never waited on."""
    if not is_regular(path, what, error=error, limit=limit):
        return None
    try:
        fd = os.open(path, _OPEN)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise error(f"cannot read {what}: {err.strerror or err}") from None
    with os.fdopen(fd, "rb") as file:
        _regular(os.fstat(fd), what, error, limit)  # what was opened, not what was looked at
        data = file.read(limit + 1)
    if len(data) > limit:
        raise error(f"{what} grew past the {limit:,} bytes read here")
    return data


def read_tree_file(
    root: Path,
    rel: str,
    what: str,
    *,
    error: type[ReleaseError] = UsageError,
    limit: int = MAX_TREE_FILE,
) -> bytes | None:
    """The bytes of the file ``rel`` names in the work tree at ``root``; None when there is
    none. Refused in one line naming ``what``: a real location outside ``root``, anything
    but a regular file, more than ``limit`` bytes."""
    return read_regular(tree_path(root, rel, what, error=error), what, error=error, limit=limit)


def read_tree_text(
    root: Path,
    rel: str,
    what: str,
    *,
    error: type[ReleaseError] = UsageError,
    limit: int = MAX_TREE_FILE,
) -> TextFile | None:
    """:func:`read_tree_file` as UTF-8 text (a byte-order mark read past)."""
    data = read_tree_file(root, rel, what, error=error, limit=limit)
    return None if data is None else _decode(data, what, error)


def output_path(path: Path, what: str, *, tree: Path | None = None, made: bool = False) -> Path:
    """``path``, checked as a file to write before any work is done. Refused
    (:class:`UsageError`): a symlink, or anything but a regular file, at ``path`` (a
    device such as ``/dev/null`` is never replaced); a directory that is not there, unless
    ``made`` (the tool's own default places, which the write makes); and, for a path in
    ``tree``, a directory that leads out of it through a symlink."""
    shown = f"{what} {path}"
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        pass  # its directory is looked at next
    except OSError as err:
        raise UsageError(f"{shown}: {err.strerror or err}") from None
    else:
        if stat.S_ISLNK(st.st_mode):
            raise UsageError(f"{shown} is a symbolic link; name the file itself")
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{shown} is {_kind(st.st_mode)}, not a regular file")
    parent = Path(os.path.abspath(path)).parent
    existing = parent
    while not os.path.lexists(existing):
        existing = existing.parent
    if existing != parent and not made:
        raise UsageError(f"{shown}: there is no directory {parent}; make it first")
    if not existing.is_dir():
        raise UsageError(f"{shown}: {existing} is not a directory")
    if tree is not None:
        _within(shown, existing, tree)
    return path


def _within(shown: str, directory: Path, tree: Path) -> None:
    """A directory written in that is in ``tree`` as spelt must be in it where it really is."""
    base = os.path.realpath(tree)
    spelt = os.fspath(directory)
    if not (_inside(spelt, os.path.abspath(tree)) or _inside(spelt, base)):
        return
    real = os.path.realpath(directory)
    if not _inside(real, base):
        raise UsageError(f"{shown} leads outside the repository through a symlink ({real})")


def _umask() -> int:
    """This process's umask, read (``/proc``), not set: setting it to read it races the
    threads that make files meanwhile."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022


def _unique_beside(path: Path) -> tuple[int, Path]:
    """A new file of a name of its own beside ``path``, opened for writing (mode 0600), as
    ``tempfile.mkstemp`` makes one, without importing ``tempfile`` (which loads ``random``
    and ``hashlib``: ~15 ms of a short command's start-up, for one cache write)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = path.parent / f".{path.name}-{os.urandom(6).hex()}"
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no unused name beside {path}")


def atomic_write(
    path: Path, text: str | bytes, *, scratch: Path | None = None, exclusive: bool = False
) -> None:
    """Replace ``path`` with ``text`` (UTF-8, or bytes as given) all at once: readers see
    the old file or the new one, never part of one. ``scratch``: a fixed name for the file
    written first (so a write cut short by a kill leaves a known file to clean up), else a
    unique one beside ``path``. The new file keeps the mode of the one it replaces, or gets
    a new file's usual one. ``exclusive``: a new file only, put in place by a hard link,
    which fails (``FileExistsError``) where anything is at ``path``. Raises ``OSError``;
    callers for whom a failed write does not matter (caches) suppress it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    if scratch is None:
        fd, tmp = _unique_beside(path)
    else:
        tmp = scratch
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    try:
        with os.fdopen(fd, "wb") as raw:
            os.fchmod(raw.fileno(), mode)
            raw.write(data)
        if exclusive:
            os.link(tmp, path, follow_symlinks=False)
            tmp.unlink()
        else:
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise

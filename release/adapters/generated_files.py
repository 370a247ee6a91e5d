"""Writing the files a command generates into a repository (:mod:`release.core.generated`):
none of someone else's is replaced.

:func:`write_generated` reads what is at each path first, all of them before writing any:
a file without the tool's header (someone's own pipeline), or one changed since the tool
wrote it, is refused in one line naming each such file and ``--force`` (exit 3), and
nothing of the set is written. A file the tool wrote and nobody changed is replaced; one
that would come out byte for byte the same is left as it is. Each file is written whole
(:func:`~release.adapters.files.atomic_write`); one that was not there when checked is
created only if it is still not there, and a write that fails puts back every file of the
set written before it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from release import __version__
from release.adapters.files import atomic_write
from release.core.generated import Spelling, Standing, WrittenBy, stamped, standing
from release.core.terminal_text import escaped
from release.errors import RefusedError, UsageError

__all__ = ["Generated", "Written", "check_generated", "write_generated", "written_by"]

_LIMIT = 8 * 2**20  # bytes: a file larger than any the tool writes is not one it wrote
_KEPT = (Standing.EDITED, Standing.FOREIGN)  # replaced only with --force


@dataclass(frozen=True)
class Generated:
    """A file to write: where, its body, how its header is spelt, and what writes it."""

    path: Path
    body: str
    spelling: Spelling
    by: WrittenBy


@dataclass(frozen=True)
class Written:
    """A file written (or left, being the same already), and what was there before."""

    path: Path
    before: Standing
    changed: bool  # False: the same bytes were there

    @property
    def forced(self) -> bool:
        """Whether only --force let it be replaced."""
        return self.before in _KEPT


def written_by(command: Sequence[str]) -> WrittenBy:
    """This tool, as installed, writing by ``command``."""
    return WrittenBy(__version__, tuple(command))


def _found(path: Path) -> bytes | None:
    """The bytes at ``path``, None when there is nothing; anything there but a regular file
    is refused (:func:`~release.adapters.files.output_path` said so already, before any
    work was done)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{escaped(str(path))} is not a regular file; name a file to write")
    return path.read_bytes()


def _standing(data: bytes | None, spelling: Spelling) -> Standing:
    if data is None:
        return Standing.NEW
    if len(data) > _LIMIT:
        return Standing.FOREIGN
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Standing.FOREIGN
    return standing(text, spelling)


def _shown(path: Path, root: Path | None) -> str:
    if root is not None:
        with contextlib.suppress(ValueError):
            return escaped(str(Path(os.path.abspath(path)).relative_to(os.path.abspath(root))))
    return escaped(str(path))


def _refusal(command: str, kept: list[tuple[Path, Standing]], root: Path | None) -> str:
    named = ", ".join(f"{_shown(p, root)} ({s.value})" for p, s in kept)
    them = "it" if len(kept) == 1 else "them"
    return (
        f"{command} does not replace {named}: move {them} away, or run it again with "
        f"--force to replace {them} (nothing was written)"
    )


def _put(path: Path, text: str, before: bytes | None) -> None:
    """Write ``text`` at ``path``; where nothing was there, only if nothing is there yet."""
    try:
        atomic_write(path, text, exclusive=before is None)
    except FileExistsError:
        raise RefusedError(
            f"{escaped(str(path))} appeared while release wrote the files beside it; it is "
            "left as it is, and nothing was written"
        ) from None


def _undo(done: list[tuple[Path, bytes | None]]) -> None:
    for path, before in reversed(done):
        with contextlib.suppress(OSError):
            if before is None:
                path.unlink(missing_ok=True)
            else:
                atomic_write(path, before)


def _checked(
    files: Sequence[Generated], *, force: bool, command: str, root: Path | None
) -> tuple[list[bytes | None], list[Standing]]:
    found = [_found(f.path) for f in files]
    standings = [_standing(data, f.spelling) for data, f in zip(found, files, strict=True)]
    kept = [(f.path, s) for f, s in zip(files, standings, strict=True) if s in _KEPT]
    if kept and not force:
        raise RefusedError(_refusal(command, kept, root))
    return found, standings


def check_generated(
    files: Sequence[Generated], *, force: bool, command: str, root: Path | None = None
) -> None:
    """What :func:`write_generated` would refuse, refused; nothing is written (a dry run)."""
    _checked(files, force=force, command=command, root=root)


def write_generated(
    files: Sequence[Generated], *, force: bool, command: str, root: Path | None = None
) -> list[Written]:
    """Write every file of ``files`` with its header, or none: refused (exit 3) where one
    is not the tool's, or changed since, unless ``force``. ``command`` names the command in
    the refusal; ``root``: paths in it are shown relative to it."""
    found, standings = _checked(files, force=force, command=command, root=root)
    written: list[Written] = []
    done: list[tuple[Path, bytes | None]] = []
    try:
        for file, before, was in zip(files, found, standings, strict=True):
            text = stamped(file.body, file.spelling, file.by)
            same = before == text.encode("utf-8")
            if not same:
                _put(file.path, text, before)
                done.append((file.path, before))
            written.append(Written(file.path, was, not same))
    except BaseException:
        _undo(done)
        raise
    return written

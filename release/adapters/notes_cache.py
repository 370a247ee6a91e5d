"""Whole outputs of ``release notes`` kept between runs: a run over inputs already seen
prints what the run before printed, without reading or parsing a commit.

Where: ``release/notes/`` in the common git directory, beside the commit cache
(:mod:`release.adapters.commit_cache`): one file per output, named by its key.

What: the file format of :mod:`release.adapters.cache_file` (a header line, then one
``marshal`` payload): the text printed and the category spellings guessed (the
``note:`` lines). The last :data:`KEPT` outputs written or printed are kept; older
files are removed.

The key is a digest of the run's inputs (the caller's digest: everything a notes run
reads; see :mod:`release.flows.notes_output`) and of the code: this format, the Python
and package versions, and the source of every module of the package's core, flows,
adapters and command line, so a changed module means notes built anew.

When: as the commit cache, by ``RELEASE_REPO_CACHE`` and ``CI``
(:func:`~release.adapters.commit_cache.cache_policy`). Reading never fails (a damaged,
foreign or missing file holds nothing); writing never raises.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import re
import time
from pathlib import Path

from release.adapters.cache_file import digest_of, read_payload, write_payload

__all__ = ["KEPT", "Guessed", "NotesCache", "code_key", "notes_cache_dir"]

FORMAT = 1
KEPT = 4  # outputs kept: a few ranges and both formats
_MAGIC = b"release-notes"
_PACKAGE = Path(__file__).resolve().parent.parent
_CODE = ("core", "flows", "adapters", "cli")  # what builds, reads and prints the notes
_NAME = re.compile(r"[0-9a-f]{64}")
_SCRATCH = re.compile(r"\.[0-9a-f]{64}-\w+")  # atomic_write's scratch file for an output
_SCRATCH_AGE = 600

Guessed = tuple[tuple[str, str], ...]  # (spelling as written, category read)


def notes_cache_dir(common_dir: Path) -> Path:
    return common_dir / "release" / "notes"


def code_key() -> str | None:
    """A digest of the code a notes output depends on; None where its source cannot be
    read (then nothing is kept: an output could outlive the code that made it)."""
    files = sorted(path for part in _CODE for path in (_PACKAGE / part).glob("*.py"))
    try:
        sources = [f"{path.parent.name}/{path.name}".encode() + path.read_bytes() for path in files]
    except OSError:
        return None
    if not sources:
        return None
    return digest_of(FORMAT, (), *sources)


class NotesCache:
    """The kept outputs in ``directory``; :meth:`get` never fails, :meth:`put` never raises,
    and neither writes unless ``writable``."""

    def __init__(self, directory: Path, *, writable: bool) -> None:
        self.directory, self.writable = directory, writable

    def get(self, key: str) -> tuple[str, Guessed] | None:
        """The text and guesses kept under ``key``; a kept output read counts as new."""
        path = self.directory / key
        payload, _ = read_payload(path, _MAGIC, FORMAT, key)
        if payload is None:
            return None
        try:
            entry = marshal.loads(payload)
        except (EOFError, ValueError, TypeError):
            return None
        if not _is_entry(entry):
            return None
        if self.writable:
            with contextlib.suppress(OSError):
                os.utime(path)  # the last used are kept
        return entry[0], entry[1]

    def put(self, key: str, text: str, guessed: Guessed) -> None:
        """Keep this output, and only the :data:`KEPT` newest; a git directory that cannot
        be written is left as it is."""
        if not self.writable:
            return
        entry = (text, tuple(guessed))
        if write_payload(self.directory / key, _MAGIC, FORMAT, key, marshal.dumps(entry)):
            self._prune()

    def _prune(self) -> None:
        """Remove all but the :data:`KEPT` newest outputs, and what a write killed midway
        left (a scratch file, by :func:`~release.adapters.files.atomic_write`'s name for
        it, untouched for :data:`_SCRATCH_AGE` seconds: a write under way is not removed)."""
        with contextlib.suppress(OSError):
            files = [(p.stat().st_mtime_ns, p) for p in self.directory.iterdir()]
            kept = sorted((f for f in files if _NAME.fullmatch(f[1].name)), reverse=True)
            stale = time.time_ns() - _SCRATCH_AGE * 1_000_000_000
            left = [p for t, p in files if _SCRATCH.fullmatch(p.name) and t < stale]
            for path in [*(p for _, p in kept[KEPT:]), *left]:
                path.unlink(missing_ok=True)


def _is_entry(entry: object) -> bool:
    return (
        type(entry) is tuple
        and len(entry) == 2
        and isinstance(entry[0], str)
        and type(entry[1]) is tuple
        and all(type(g) is tuple and len(g) == 2 for g in entry[1])
    )

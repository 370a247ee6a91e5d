"""The content digest of an image's file system: what two builds of one release candidate
are compared by where their image ids cannot be (Docker 20.10 stamps every layer with the
time it was made, whatever ``SOURCE_DATE_EPOCH`` says).

In the spirit of diffoci, a tar stream of the file system (what ``docker export`` writes)
is read once, front to back, and each entry is reduced to a record of what it is:

- its path (``./`` and ``/`` in front dropped, ``a//b/../c`` read as ``a/c``), its type,
  its permission bits (setuid, setgid and sticky included), its numeric owner and group,
  the target of a symbolic or hard link, the device numbers of a device, its extended
  attributes (file capabilities) and the sha256 of a file's contents;
- never a time (mtime, atime, ctime, pax time records), an owner's name or the order of
  the entries: records are hashed sorted by path, and a path written twice counts once,
  as its last entry (what extracting the stream leaves);
- the files the engine writes into every container, whatever the image holds there, are
  left out (:data:`ENGINE_FILES`): ``.dockerenv``, ``etc/hostname``, ``etc/hosts`` and
  ``etc/resolv.conf``, and likewise ``dev/console`` and the ``etc/mtab`` link. The
  directories the engine makes (``proc``, ``sys``, ``dev/pts``...) are kept: it makes
  them only where the image has none, the same way every time.

Besides the whole digest, the records are also hashed by part: the directory two levels
deep that holds an entry (the directory itself included), so ``usr/lib`` holds ``usr/lib``
and ``usr/lib/x/libc.so.6``, ``etc`` holds ``etc`` and ``etc/passwd``, and ``/`` holds the
files and links at the top level (a merged-/usr system's ``bin -> usr/bin``).
:func:`compare_content` names the parts two digests differ in; to name the paths, the
records themselves are read again (:func:`content_records`) and compared
(:func:`compare_records`).
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

from release.core.json_text import JSONValue

if TYPE_CHECKING:
    from _hashlib import HASH

__all__ = [
    "ALGORITHM",
    "ENGINE_FILES",
    "ContentDigest",
    "ContentDrift",
    "compare_content",
    "compare_records",
    "content_records",
    "digest_tar",
]

ALGORITHM = 1  # bump when what a record holds changes: digests of another version differ
ENGINE_FILES = frozenset(
    {".dockerenv", "etc/hostname", "etc/hosts", "etc/resolv.conf", "dev/console", "etc/mtab"}
)
TOP = "/"  # the part of what lies at the top level
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")
_XATTR = "SCHILY.xattr."  # how Go's archive/tar (docker) and GNU tar write extended attributes
_KINDS = (
    ("file", tarfile.TarInfo.isreg),  # regular, contiguous and sparse files alike
    ("dir", tarfile.TarInfo.isdir),
    ("symlink", tarfile.TarInfo.issym),
    ("hardlink", tarfile.TarInfo.islnk),
    ("char", tarfile.TarInfo.ischr),
    ("block", tarfile.TarInfo.isblk),
    ("fifo", tarfile.TarInfo.isfifo),
)


@dataclass(frozen=True)
class ContentDigest:
    """The digest of a file system (``sha256:<hex>``), of each of its parts, and how many
    entries (files, directories, links, devices) went into it."""

    digest: str
    parts: Mapping[str, str]  # part name -> sha256:<hex> of its records
    files: int

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "digest": self.digest,
            "parts": {name: digest for name, digest in sorted(self.parts.items())},
            "files": self.files,
        }

    @classmethod
    def from_dict(cls, data: object) -> ContentDigest:
        """The digest :meth:`to_dict` wrote; ``ValueError`` naming what is wrong otherwise."""
        if not isinstance(data, Mapping) or set(data) != {"digest", "parts", "files"}:
            raise ValueError("a content digest has exactly: digest, parts, files")
        digest, parts, files = data["digest"], data["parts"], data["files"]
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise ValueError(f"content digest: {digest!r} is not sha256:<64 hex digits>")
        if not isinstance(parts, Mapping) or not all(
            isinstance(name, str) and isinstance(part, str) and _SHA256.fullmatch(part)
            for name, part in parts.items()
        ):
            raise ValueError("content digest: parts must map names to sha256:<64 hex digits>")
        if not isinstance(files, int) or isinstance(files, bool) or files < 0:
            raise ValueError(f"content digest: files must be a count, not {files!r}")
        return cls(digest, dict(parts), files)


@dataclass(frozen=True)
class ContentDrift:
    """The parts two content digests differ in, each list sorted: what a drift report names."""

    added: tuple[str, ...] = ()  # only the new file system has it
    removed: tuple[str, ...] = ()  # only the old one has it
    changed: tuple[str, ...] = ()  # both have it, with different contents

    @property
    def same(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def to_dict(self) -> dict[str, list[str]]:
        return {"added": [*self.added], "removed": [*self.removed], "changed": [*self.changed]}


def compare_content(old: ContentDigest, new: ContentDigest) -> ContentDrift:
    """Which parts of ``new`` were added, removed or changed since ``old``."""
    return ContentDrift(
        added=tuple(sorted(set(new.parts) - set(old.parts))),
        removed=tuple(sorted(set(old.parts) - set(new.parts))),
        changed=tuple(
            sorted(p for p in set(old.parts) & set(new.parts) if old.parts[p] != new.parts[p])
        ),
    )


def compare_records(old: Mapping[str, bytes], new: Mapping[str, bytes]) -> ContentDrift:
    """Which paths of ``new`` were added, removed or changed since ``old`` (records by path,
    as :func:`content_records` reads them)."""
    return ContentDrift(
        added=tuple(sorted(set(new) - set(old))),
        removed=tuple(sorted(set(old) - set(new))),
        changed=tuple(sorted(p for p in set(old) & set(new) if old[p] != new[p])),
    )


def content_records(stream: IO[bytes]) -> dict[str, bytes]:
    """The record of each path in the tar stream ``stream``, what :func:`digest_tar`
    hashes: read the same way, to name the files two digests differ in."""
    return {path: record for path, (_, record) in _read(stream).items()}


def digest_tar(stream: IO[bytes]) -> ContentDigest:
    """The content digest of the tar stream ``stream``: read once, front to back (a pipe
    will do), keeping nothing but the records. Raises :class:`tarfile.TarError` when it is
    not a tar stream."""
    records = _read(stream)
    whole = hashlib.sha256()
    parts: dict[str, HASH] = {}
    for path in sorted(records):
        part, record = records[path]
        whole.update(record)
        parts.setdefault(part, hashlib.sha256()).update(record)
    return ContentDigest(
        f"sha256:{whole.hexdigest()}",
        {name: f"sha256:{sums.hexdigest()}" for name, sums in sorted(parts.items())},
        len(records),
    )


def _read(stream: IO[bytes]) -> dict[str, tuple[str, bytes]]:
    """Path -> (part, record) of every entry of the tar stream ``stream`` but the engine's."""
    records: dict[str, tuple[str, bytes]] = {}
    with tarfile.open(fileobj=stream, mode="r|", errors="surrogateescape") as tar:
        while (entry := tar.next()) is not None:
            path = _normalized(entry.name)
            if path not in ENGINE_FILES:
                records[path] = (_part(path, entry.isdir()), _record(path, entry, tar))
            # tarfile keeps every entry it read (typeshed leaves the list out): an image
            # of 100,000 files would hold some 70 MB for nothing
            tar.members.clear()  # type: ignore[attr-defined]
    return records


def _normalized(name: str) -> str:
    """An entry's path as the file system knows it: ``./usr/`` and ``/usr`` are ``usr``."""
    path = posixpath.normpath("/" + name).lstrip("/")
    return path or "."


def _part(path: str, is_dir: bool) -> str:
    """The directory two levels deep that holds ``path`` (see the module docstring)."""
    names = path.split("/") if path != "." else []
    holders = names[:2] if is_dir else names[:-1][:2]
    return "/".join(holders) or TOP


def _record(path: str, entry: tarfile.TarInfo, tar: tarfile.TarFile) -> bytes:
    """One entry as a line of JSON: every field that tells its content, no time."""
    link = None
    if entry.issym():
        link = entry.linkname
    elif entry.islnk():
        link = _normalized(entry.linkname)
    device = [entry.devmajor, entry.devminor] if entry.ischr() or entry.isblk() else None
    contents = None
    if entry.isreg():
        extracted = tar.extractfile(entry)
        assert extracted is not None  # a regular file always has contents
        sums = hashlib.sha256()
        while chunk := extracted.read(1 << 20):
            sums.update(chunk)
        contents = sums.hexdigest()
    xattrs = sorted((k, v) for k, v in entry.pax_headers.items() if k.startswith(_XATTR))
    fields = [path, _kind(entry), entry.mode & 0o7777, entry.uid, entry.gid]
    fields += [link, device, contents, xattrs]
    return json.dumps(fields, separators=(",", ":")).encode("ascii") + b"\n"


def _kind(entry: tarfile.TarInfo) -> str:
    return next((kind for kind, test in _KINDS if test(entry)), f"type {entry.type!r}")

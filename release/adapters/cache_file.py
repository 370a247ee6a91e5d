"""The file format of the caches kept in the common git directory (``.git/release/``):
a header line, ``<magic> <format> <key> <length> <crc32>``, then one ``marshal`` payload.

The header is checked before anything is unpacked: another magic, format or key, a length
or checksum that does not match, and the file holds nothing for this reader (it is written
anew, atomically: readers see the old file or the new one). Writing never raises: a git
directory that cannot be written is left as it is.
"""

from __future__ import annotations

import contextlib
import marshal
import sys
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType

from release import __version__
from release.adapters.files import atomic_write
from release.errors import ConfigError

try:  # hashlib's own import loads OpenSSL (milliseconds of every command) for any digest,
    from _blake2 import blake2b  # and its blake2b is this one
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

__all__ = ["ENV", "cache_policy", "digest_of", "read_payload", "write_payload"]

ENV = "RELEASE_REPO_CACHE"  # 1: read and write the caches; 0: neither
_ON = ("1", "on", "yes", "true")
_OFF = ("0", "off", "no", "false")


def cache_policy(env: Mapping[str, str]) -> tuple[bool, bool]:
    """(read, write) the cache, from ``RELEASE_REPO_CACHE`` and ``CI``."""
    setting = env.get(ENV, "").strip().lower()
    if setting in _OFF:
        return False, False
    if setting in _ON:
        return True, True
    if setting:
        raise ConfigError(f"{ENV}={env[ENV]!r}: use 1 (read and write) or 0 (neither)")
    on_ci = env.get("CI", "").strip().lower() not in ("", *_OFF)
    return True, not on_ci


def digest_of(fmt: int, modules: Iterable[ModuleType], *parts: bytes) -> str:
    """A key: a digest of the format, marshal's and Python's versions, this package's
    version, the source of ``modules`` (what the cached values are worked out by) and
    ``parts``."""
    digest = blake2b(digest_size=32)
    digest.update(
        repr((fmt, marshal.version, sys.version_info[:2], sys.byteorder, __version__)).encode()
    )
    for module in modules:
        source = module.__file__
        with contextlib.suppress(OSError, TypeError):
            digest.update(Path(source).read_bytes() if source else b"")
        digest.update(b"\0")
    for part in parts:
        digest.update(part)
        digest.update(b"\0")
    return digest.hexdigest()


def read_payload(path: Path, magic: bytes, fmt: int, key: str) -> tuple[memoryview | None, bool]:
    """(the payload of ``path`` when it was written for ``magic``, ``fmt`` and ``key``,
    whole and undamaged, else None; whether a file was there at all)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None, False
    end = data.find(b"\n", 0, 256)
    if end < 0:
        return None, bool(data)
    fields = data[:end].split(b" ")
    if len(fields) != 5 or fields[0] != magic or fields[1] != b"%d" % fmt:
        return None, True
    if fields[2] != key.encode() or not (fields[3].isdigit() and fields[4].isdigit()):
        return None, True
    payload = memoryview(data)[end + 1 :]  # not a copy
    if len(payload) != int(fields[3]) or zlib.crc32(payload) != int(fields[4]):
        return None, True
    return payload, True


def write_payload(path: Path, magic: bytes, fmt: int, key: str, payload: bytes) -> bool:
    """Write ``payload`` under its header, all at once; False when the directory cannot be
    written (the file is then as it was)."""
    header = b"%s %d %s %d %d\n" % (magic, fmt, key.encode(), len(payload), zlib.crc32(payload))
    try:
        atomic_write(path, header + payload)
    except OSError:
        return False
    return True

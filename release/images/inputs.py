"""What a build is made from, and its digest: the context files docker would send
(``.dockerignore`` applied), the Dockerfile, build args, labels, the base image's identity
and platform. The same inputs give the same digest on every machine, so nothing about the
clone or the machine goes in: not the source label (the remote it was cloned from). An
unchanged digest means an unchanged image. Each context file's sha256 is kept in
``hashes.json`` beside the build logs (:class:`HashCache`), so an unchanged re-run reads no
file whose size, mtime and inode are as they were.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import posixpath
import re
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from release.adapters.files import (
    atomic_write,
    is_regular,
    read_regular,
    read_tree_text,
    tree_path,
)
from release.adapters.state import STATE_DIR_ENV
from release.core.json_text import parse_json
from release.errors import ConfigError

__all__ = [
    "DIGEST_LABEL",
    "HASHES",
    "SOURCE_LABEL",
    "HashCache",
    "build_paths",
    "context_files",
    "context_filter",
    "docker_regex",
    "input_digest",
]

DIGEST_LABEL = "org.release.input-digest"
SOURCE_LABEL = "org.opencontainers.image.source"  # where it was cloned from: not an input
_STATE_DIR = ".git/release/"  # logs and records, when the context includes .git
_SHA256 = re.compile("[0-9a-f]{64}")
HASHES = "hashes.json"  # in the logs dir: each context file's sha256, by path/size/mtime/inode
_RACY_NS = 2_000_000_000  # a file modified this recently may change again within its mtime


def build_paths(root: Path, context: str, dockerfile: str) -> tuple[Path, Path]:
    """The build context and the Dockerfile ``[tool.release.images]`` names, under the work
    tree at ``root``, as docker is given them. Refused in one line when either really lies
    outside the tree (a symlink in it, ``docker -> /etc``), when the context is not a
    directory or the Dockerfile not a regular file; a missing one is docker's to report."""
    where = "[tool.release.images]"
    real = tree_path(root, context, f"{where} context {context!r}", error=ConfigError)
    if real.exists() and not real.is_dir():
        raise ConfigError(f"{where} context {context!r} is not a directory")
    what = f"{where} dockerfile {dockerfile!r}"
    is_regular(tree_path(root, dockerfile, what, error=ConfigError), what, error=ConfigError)
    return root / context, root / dockerfile


def _dockerfile_bytes(dockerfile: Path) -> bytes:
    data = read_regular(dockerfile, f"the Dockerfile {dockerfile}", error=ConfigError)
    if data is None:
        raise ConfigError(f"the Dockerfile {dockerfile} is not there")
    return data


def _ignore_patterns(context: Path) -> list[tuple[re.Pattern[str], bool]]:
    found = read_tree_text(context, ".dockerignore", str(context / ".dockerignore"))
    if found is None:
        return []
    rules: list[tuple[re.Pattern[str], bool]] = []
    for raw in found.text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = _cleaned(line[1:].strip() if negate else line)
        if not pattern:
            continue
        try:
            rules.append((re.compile(docker_regex(pattern) + "(?:/.*)?$", re.DOTALL), negate))
        except re.error as err:
            raise ConfigError(
                f"{context / '.dockerignore'}: {raw.strip()!r} is not a pattern ({err}); "
                "docker refuses it too"
            ) from None
    return rules


def _cleaned(pattern: str) -> str:
    """A pattern as Docker reads it: ``filepath.Clean`` (``./a`` is ``a``, ``a//b`` is
    ``a/b``, ``a/../b`` is ``b``), then without a leading ``/``; "" for the context itself."""
    cleaned = posixpath.normpath(pattern).lstrip("/")
    return "" if cleaned in (".", "") else cleaned


_DOCKER_ESCAPED = set(".+()|{}$")  # regexp characters that mean nothing in a pattern


def docker_regex(pattern: str) -> str:
    """A ``.dockerignore`` pattern as the regular expression Docker's pattern matcher
    (moby/patternmatcher) makes of it, anchored at the start: ``*`` and ``?`` within one
    path element, ``**`` across them (``**/`` also none), ``[...]`` a character class,
    ``\\x`` the character x. Pure."""
    regex, i = "^", 0
    while i < len(pattern):
        ch = pattern[i]
        i += 1
        if ch == "*" and pattern.startswith("*", i):
            i += 1
            if pattern.startswith("/", i):
                i += 1
            regex += ".*" if i >= len(pattern) else "(?:.*/)?"
        elif ch == "*":
            regex += "[^/]*"
        elif ch == "?":
            regex += "[^/]"
        elif ch in _DOCKER_ESCAPED:
            regex += "\\" + ch
        elif ch == "\\":
            regex += "\\" + (pattern[i] if i < len(pattern) else "\\")
            i += 1
        else:
            regex += ch
    return regex


def context_filter(context: Path, dockerfile: Path | None = None) -> Callable[[Path], bool]:
    """Whether docker sends a path under ``context`` with the build context
    (``.dockerignore`` applied; the Dockerfile is sent whatever it says)."""
    rules = _ignore_patterns(context)

    def sends(path: Path) -> bool:
        if dockerfile is not None and path == dockerfile:
            return True
        rel = path.relative_to(context).as_posix()
        excluded = False
        for pattern, negate in rules:
            if pattern.match(rel):
                excluded = not negate
        return not excluded

    return sends


def context_files(context: Path, dockerfile: Path | None = None) -> list[Path]:
    """Files docker would send as the build context (``.dockerignore`` applied), in path
    order; symbolic links are files here, never followed."""
    return [context / rel for rel in _context_rels(context, dockerfile)]


def _context_rels(context: Path, dockerfile: Path | None) -> list[str]:
    """:func:`context_files` as relative POSIX paths. One ``scandir`` walk; a directory
    ``.dockerignore`` excludes is not entered when no ``!`` rule could take a file of it
    back (docker does the same), so an ignored ``.git`` costs nothing."""
    rules = _ignore_patterns(context)
    prune = not any(negate for _, negate in rules)
    wanted = dockerfile.relative_to(context).as_posix() if dockerfile else None

    def excluded(rel: str) -> bool:
        out = False
        for pattern, negate in rules:
            if pattern.match(rel):
                out = not negate
        return out and rel != wanted

    found: list[str] = []
    pending = [""]
    while pending:
        prefix = pending.pop()
        with os.scandir(context / prefix if prefix else context) as entries:
            for entry in entries:
                rel = prefix + entry.name
                if entry.is_symlink() or entry.is_file(follow_symlinks=False):
                    if not excluded(rel):
                        found.append(rel)
                elif entry.is_dir(follow_symlinks=False) and not (prune and excluded(rel)):
                    pending.append(rel + "/")
    if wanted is not None and wanted not in found and (context / wanted).is_file():
        found.append(wanted)  # in a directory left unwalked, and sent whatever
    return sorted(found, key=lambda rel: rel.split("/"))  # pathlib's order: part by part


class HashCache:
    """Context files' sha256 by relative path, trusted while (size, mtime_ns, inode) match.

    Loaded from ``path`` (a missing or corrupt file is an empty cache), shared by the
    threads of one run, and written back atomically by :meth:`save` with only the files
    seen in this run. A file modified within the last couple of seconds is hashed but not
    kept: it could change again without its mtime moving."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._old = _read_hashes(path) if path is not None else {}
        self._new: dict[str, tuple[int, int, int, str]] = {}
        # the variants of a run share their context: it is walked once per run
        self._listing_lock = threading.Lock()
        self._listings: dict[tuple[Path, Path], list[bytes]] = {}

    def context_part(self, context: Path, dockerfile: Path) -> list[bytes]:
        """What :func:`input_digest` hashes for the context's files, computed once."""
        with self._listing_lock:
            key = (context, dockerfile)
            if key not in self._listings:
                self._listings[key] = _context_part(context, dockerfile, self)
            return self._listings[key]

    def sha256(self, path: str, rel: str, st: os.stat_result) -> bytes:
        key = (st.st_size, st.st_mtime_ns, st.st_ino)
        with self._lock:
            entry = self._new.get(rel) or self._old.get(rel)
        if entry is not None and entry[:3] == key:
            with self._lock:
                self._new[rel] = entry
            return bytes.fromhex(entry[3])
        digest = _file_sha256(path)
        after = os.stat(path)
        if (after.st_size, after.st_mtime_ns, after.st_ino) == key and (
            time.time_ns() - st.st_mtime_ns > _RACY_NS
        ):
            with self._lock:
                self._new[rel] = (*key, digest.hex())
        return digest

    def save(self) -> None:
        """Write the files seen back (atomically; a failure to write is not an error)."""
        with self._lock:
            if self.path is None or self._new == self._old:
                return
            data = {"version": 1, "files": {k: list(v) for k, v in sorted(self._new.items())}}
        with contextlib.suppress(OSError):
            atomic_write(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def _read_hashes(path: Path) -> dict[str, tuple[int, int, int, str]]:
    try:
        data = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) and data.get("version") == 1 else None
    if not isinstance(files, dict):
        return {}
    out: dict[str, tuple[int, int, int, str]] = {}
    sha256 = _SHA256.fullmatch
    for rel, entry in files.items():
        if type(entry) is list and len(entry) == 4:
            size, mtime, inode, digest = entry
            # ints, not bools (whose type is bool); a digest as sha256 writes it
            ints = type(size) is type(mtime) is type(inode) is int
            if ints and type(digest) is str and sha256(digest):
                out[rel] = (size, mtime, inode, digest)
    return out


def _state_prefixes(context: Path) -> tuple[str, ...]:
    """Where our own logs and records may lie inside the context (writing them changes no
    input): ``.git/release/``, and ``$RELEASE_STATE_DIR`` when it is under the context."""
    chosen = os.environ.get(STATE_DIR_ENV)
    if chosen:
        with contextlib.suppress(ValueError):
            inside = Path(chosen).absolute().relative_to(context.absolute()).as_posix()
            return (_STATE_DIR, inside.rstrip("/") + "/")
    return (_STATE_DIR,)


def _context_part(context: Path, dockerfile: Path, cache: HashCache | None) -> list[bytes]:
    parts: list[bytes] = []
    skipped = _state_prefixes(context)
    root = os.fspath(context)
    for rel in _context_rels(context, dockerfile):
        if rel.startswith(skipped):
            continue
        path = os.path.join(root, rel)  # strings, not Paths: thousands of files
        st = os.lstat(path)
        link = stat.S_ISLNK(st.st_mode)
        if link:
            st = os.stat(path)  # the mode is its target's
        parts.append(f"file {rel} {st.st_mode & 0o111:o}\n".encode())
        if link:
            parts.append(str(Path(os.readlink(path))).encode())  # as pathlib spells it
        elif cache is not None:
            parts.append(cache.sha256(path, rel, st))
        else:
            parts.append(_file_sha256(path))
    return parts


def _file_sha256(path: str) -> bytes:
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "sha256").digest()


def input_digest(
    context: Path,
    dockerfile: Path,
    build_args: dict[str, str],
    base_identity: str,
    labels: dict[str, str],
    platform: str | None,
    cache: HashCache | None = None,
    target: str = "",
) -> str:
    """The digest of every build input. ``base_identity`` is what the base image is
    (:attr:`release.images.standin.BaseImage.identity`): its registry digest, or a digest
    of its content, both the same on every machine (a build always has the latter); a base
    known by neither would be known by its image id, which is this engine's alone.
    Of ``labels``, the source label is left out (:data:`SOURCE_LABEL`): the same sources
    cloned from another remote are the same inputs. ``cache`` spares reading unchanged
    files (and walking the context again for each variant of a run); it never changes the
    result. ``target``: the build stage, where one is named (another stage is another
    image)."""
    h = hashlib.sha256()
    parts = (
        cache.context_part(context, dockerfile)
        if cache is not None
        else _context_part(context, dockerfile, None)
    )
    for part in parts:
        h.update(part)
    h.update(b"dockerfile\n" + _dockerfile_bytes(dockerfile))
    for key, value in sorted(build_args.items()):
        h.update(f"arg {key}={value}\n".encode())
    for key, value in sorted(labels.items()):
        if key != SOURCE_LABEL:
            h.update(f"label {key}={value}\n".encode())
    h.update(f"base {base_identity}\nplatform {platform}\n".encode())
    if target:  # only where named, so the digest of a build without one is as it was
        h.update(f"target {target}\n".encode())
    return "sha256:" + h.hexdigest()

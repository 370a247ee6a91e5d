"""The files of a work tree ``release init`` reads, found where engines keep them and read
within bounds: Dockerfiles (the root, ``docker/``, ``.cd/`` and one level of folders below
each; ``Dockerfile``, ``Dockerfile.*``, ``*.Dockerfile``), requirements files (for a TPU
image's pins), a changelog (any case), the files that keep a version.

Every file is untrusted: read as data through :func:`~release.adapters.files.read_tree_file`
(nothing followed out of the tree, only regular files, a size cap), never run. A folder or
file that is a symbolic link is not followed; vendored code (``vendor``, ``third_party``,
``node_modules``...) and hidden folders other than ``.cd`` are not looked in. At most
:data:`MAX_DOCKERFILES` Dockerfiles of :data:`MAX_DOCKERFILE_BYTES` each are read; what is
left unread is said, with why.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from release.adapters.files import read_tree_text
from release.core.dockerfile_text import parse_dockerfile
from release.core.variant_guess import DockerfileSource, TextSource
from release.core.version_sources import VERSION_FILES
from release.errors import ReleaseError

__all__ = [
    "MAX_DOCKERFILES",
    "MAX_DOCKERFILE_BYTES",
    "changelog_files",
    "dockerfiles",
    "requirement_files",
    "version_files",
]

MAX_DOCKERFILES = 64
MAX_DOCKERFILE_BYTES = 2**20
_MAX_ENTRIES = 2000  # of one folder: a folder with more is read this far
_MAX_SMALL = 256 * 2**10  # a requirements or version file
_SKIP = {"vendor", "vendored", "third_party", "third-party", "node_modules", "site-packages",
         "build", "dist", "venv", "__pycache__"}  # fmt: skip
_DOCKERFILE = re.compile(r"(?i)dockerfile(?:[._-].+)?|.+[._-]dockerfile")
_NOT_DOCKERFILE = re.compile(r"(?i)\.(dockerignore|md|rst|txt|sh|py|json|ya?ml|orig|bak)$")
PRIMARY = ("Dockerfile", "docker/Dockerfile", "Dockerfile.cuda", "docker/Dockerfile.cuda")
_CHANGELOGS = ("changelog.md", "changes.md", "history.md", "news.md")
_OTHER_LOGS = ("changelog.rst", "changelog", "changelog.txt", "changes.rst", "history.rst",
               "news.rst", "changes.txt")  # fmt: skip


def _entries(root: Path, rel: str) -> list[os.DirEntry[str]]:
    """A folder's entries by name, none followed through a symbolic link; [] for
    anything but a real folder."""
    path = root / rel if rel else root
    if path.is_symlink() or not path.is_dir():
        return []
    try:
        with os.scandir(path) as listing:
            found = []
            for entry in listing:
                found.append(entry)
                if len(found) >= _MAX_ENTRIES:
                    break
    except OSError:
        return []
    return sorted(found, key=lambda e: e.name)


def _folders(root: Path, rel: str) -> list[str]:
    out = []
    for entry in _entries(root, rel):
        hidden = entry.name.startswith(".") and entry.name != ".cd"
        if entry.is_dir(follow_symlinks=False) and not hidden and entry.name not in _SKIP:
            out.append(f"{rel}/{entry.name}" if rel else entry.name)
    return out


def _places(root: Path) -> list[str]:
    """The root, its folders, and the folders of ``docker/`` and ``.cd/``."""
    top = _folders(root, "")
    below = [f for base in ("docker", ".cd") if base in top for f in _folders(root, base)]
    return ["", *top, *below]


def _names(root: Path, rel: str) -> list[tuple[str, bool]]:
    """The Dockerfiles a folder holds, each with whether it is a symbolic link."""
    return [
        (f"{rel}/{e.name}" if rel else e.name, e.is_symlink())
        for e in _entries(root, rel)
        if _DOCKERFILE.fullmatch(e.name) and not _NOT_DOCKERFILE.search(e.name)
        and (e.is_symlink() or e.is_file(follow_symlinks=False))
    ]  # fmt: skip


def _context(root: Path, path: str, text: str) -> tuple[str | None, str]:
    """Where the file's ``COPY`` sources are: the root, the file's own folder, or neither."""
    sources = [
        (s.removeprefix("./").rstrip("/"), line)
        for s, line in parse_dockerfile(text).copy_sources()
        if ".." not in s.split("/") and not s.startswith("/")
    ]
    sources = [(re.split(r"[*?\[]", s)[0].rsplit("/", 1)[0] if re.search(r"[*?\[]", s) else s,
                line) for s, line in sources]  # fmt: skip
    if not sources:
        return None, "no COPY or ADD from the build context to place it by"
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    shown = ", ".join(f"{s or '.'} ({path}:{line})" for s, line in sources[:3])
    for where in dict.fromkeys(["", folder]):
        base = root / where if where else root
        if all(os.path.lexists(base / s) if s else True for s, _ in sources):
            if where:
                return where, f"its COPY sources are in {where}: {shown}"
            return ".", f"the repository root, where its COPY sources are: {shown}"
    return None, f"its COPY sources ({shown}) are neither at the root nor beside it"


def dockerfiles(root: Path) -> tuple[list[DockerfileSource], list[tuple[str, str]], str | None]:
    """The Dockerfiles read, those not read (with why) and the main one, if any."""
    found: list[DockerfileSource] = []
    unread: list[tuple[str, str]] = []
    for place in _places(root):
        for rel, link in _names(root, place):
            if link:
                unread.append((rel, "a symbolic link, not followed"))
                continue
            if len(found) >= MAX_DOCKERFILES:
                unread.append((rel, f"past the {MAX_DOCKERFILES} Dockerfiles read"))
                continue
            try:
                text = read_tree_text(
                    root, rel, f"the Dockerfile {rel}", error=ReleaseError,
                    limit=MAX_DOCKERFILE_BYTES,
                )  # fmt: skip
            except ReleaseError as err:
                unread.append((rel, err.one_line().removeprefix(f"the Dockerfile {rel} ")))
                continue
            if text is not None:
                context, why = _context(root, rel, text.text)
                found.append(DockerfileSource(rel, text.text, context, why))
    paths = [f.path for f in found]
    primary = next((p for p in PRIMARY if p in paths), None)
    found.sort(key=lambda f: (f.path != primary, f.path))
    return found, unread, primary


def _small(root: Path, rel: str) -> str | None:
    try:
        text = read_tree_text(root, rel, rel, error=ReleaseError, limit=_MAX_SMALL)
    except ReleaseError:
        return None
    return text.text if text is not None else None


def requirement_files(root: Path) -> list[TextSource]:
    """``requirements*.txt`` at the root and ``requirements/*.txt`` (at most 32)."""
    names = [e.name for e in _entries(root, "") if e.name.startswith("requirements")]
    rels = [n for n in names if n.endswith(".txt")]
    rels += [f"requirements/{e.name}" for e in _entries(root, "requirements")
             if e.name.endswith(".txt")]  # fmt: skip
    out = []
    for rel in rels[:32]:
        text = _small(root, rel)
        if text is not None:
            out.append(TextSource(rel, text))
    return out


def changelog_files(root: Path) -> tuple[str | None, str | None]:
    """The Markdown changelog (``CHANGELOG.md``, ``CHANGES.md``, ``HISTORY.md``,
    ``NEWS.md``, any case, at the root or in ``docs/``) and, where there is none, a
    changelog in another format."""
    places = {"": _entries(root, ""), "docs": _entries(root, "docs")}
    files = {
        (where, e.name.lower()): f"{where}/{e.name}" if where else e.name
        for where, entries in places.items()
        for e in entries
        if e.is_file(follow_symlinks=False)
    }
    for where in places:
        for name in _CHANGELOGS:
            if (where, name) in files:
                return files[(where, name)], None
    other = next((files[("", n)] for n in _OTHER_LOGS if ("", n) in files), None)
    return None, other


def version_files(root: Path) -> dict[str, str]:
    """The files that may keep the version: ``version.txt``, ``pyproject.toml``,
    ``setup.py``, and a package's ``__init__.py``, ``_version.py`` or ``version.py``
    (packages at the root or under ``src/``)."""
    rels = list(VERSION_FILES)
    for base in ("", "src"):
        for folder in _folders(root, base):
            if folder in ("src", "tests", "test", "docs", "examples", "docker", "tools"):
                continue
            rels += [f"{folder}/{n}" for n in ("__init__.py", "_version.py", "version.py")]
    out = {}
    for rel in rels[:96]:
        path = root / rel
        if path.is_symlink() or not path.is_file():
            continue
        text = _small(root, rel)
        if text is not None:
            out[rel] = text
    return out

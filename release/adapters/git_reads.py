"""Reads in bulk of commits, messages and patches: a range's commits by sha for the notes,
what ``git log`` output depends on besides the commits (``.mailmap``, replacement objects
and grafts, a shallow clone's boundary), and the patches that compare a release branch
with main.

A mixin of :class:`release.adapters.git.GitRepo`: every read goes through its
:meth:`~release.adapters.git.GitRepo.start` and :meth:`~release.adapters.git.GitRepo.run`.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from release.adapters.git_process import GitRead, GitResult, executable_stamp

__all__ = ["GitReads", "cherry_equal", "cherry_marked", "files_changed"]

_PATCHES = ("diff-tree", "-p", "-U0", "-r", "-M", "-l1000", "--root", "--stdin")


class GitReads:
    """Commits of a range by sha, the settings that change what git says of them, messages,
    patches and patch ids."""

    if TYPE_CHECKING:
        root: Path
        common_dir: Path

        def start(self, *args: str, stdin: str | None = None) -> GitRead: ...

        def run(
            self,
            *args: str,
            check: bool = True,
            env: Mapping[str, str] | None = None,
            stdin: str | None = None,
        ) -> GitResult: ...

    def start_range_shas(self, spec: str) -> GitRead:
        """The non-merge commits of ``spec``, one sha a line, in the order ``git log`` lists
        them (the same walk)."""
        return self.start("rev-list", "--no-merges", "--end-of-options", spec, "--")

    def start_commit_log(self, shas: Sequence[str], fmt: str) -> GitRead:
        """``git log --format=fmt`` of exactly ``shas``, in the order given."""
        stdin = "".join(f"{sha}\n" for sha in shas)
        return self.start("log", "--no-walk=unsorted", "--stdin", f"--format={fmt}", stdin=stdin)

    def mailmap_fingerprint(self) -> str:
        """What the mailmap that ``%aN``/``%aE`` apply is made of: ``""`` when there is none,
        else a digest of the work tree's ``.mailmap`` and of ``mailmap.file`` and
        ``mailmap.blob`` (their settings and contents). Two calls answer the same exactly
        when git maps authors the same."""
        parts: list[bytes] = []
        local = self.root / ".mailmap"
        if local.exists():
            parts.append(b".mailmap\0" + _read(local))
        found = self.run("config", "--get-regexp", r"^mailmap\.(file|blob)$", check=False)
        for line in found.stdout.splitlines() if found.ok else ():
            key, _, value = line.partition(" ")
            parts.append(f"{key}\0{value}\0".encode("utf-8", "surrogateescape"))
            if key == "mailmap.file":
                parts.append(_read(self.root / Path(os.path.expanduser(value))))
            elif key == "mailmap.blob":
                blob = self.run("rev-parse", "--verify", "--quiet", value, check=False)
                parts.append(blob.stdout.strip().encode())
        if not parts:
            return ""
        import hashlib  # here: only a cache's key asks

        return hashlib.sha256(b"\0\0".join(parts)).hexdigest()

    def rewrites_history(self) -> bool:
        """Whether the history a sha names may not be the one its objects say: ``git
        replace`` refs (another message, tree or parents for a sha) or a grafts file (other
        parents: another history before a commit, another patch against its parent). What
        is kept by sha (parsed commits, who came before a range, patches, git cherry's
        answers, whole notes) is then neither read nor written. Read from the ref store and
        the file system, without git."""
        return self._replaces_objects() or self._grafted()

    def _replaces_objects(self) -> bool:
        """``git replace`` refs may change what ``git log`` shows for a sha. A ref store
        this cannot read (reftable) counts as yes."""
        if os.environ.get("GIT_NO_REPLACE_OBJECTS") is not None:
            return False
        if os.environ.get("GIT_REPLACE_REF_BASE") or (self.common_dir / "reftable").exists():
            return True
        loose = self.common_dir / "refs" / "replace"
        if loose.is_dir() and any(loose.iterdir()):
            return True
        return b" refs/replace/" in _read(self.common_dir / "packed-refs")

    def _grafted(self) -> bool:
        """A grafts file gives commits other parents than they name: ``$GIT_GRAFT_FILE``
        (relative to the work tree, where git runs), else ``info/grafts`` of the common git
        directory. git honours it with replace refs turned off too."""
        graft_file = os.environ.get("GIT_GRAFT_FILE")
        return (
            self.root / graft_file if graft_file else self.common_dir / "info" / "grafts"
        ).exists()

    def git_stamp(self) -> str:
        """Which git answers (see :func:`~release.adapters.git_process.executable_stamp`)."""
        return executable_stamp()

    def shallow_boundary(self) -> set[str]:
        """The commits a shallow clone has without their parents (``.git/shallow``): a walk
        stops there as if history began. Empty in a whole clone."""
        path = self.common_dir / "shallow"
        return set(path.read_text(encoding="ascii").split()) if path.exists() else set()

    def start_log(self, revs: str, fmt: str) -> GitRead:
        """``git log --format=fmt`` of ``revs``."""
        return self.start("log", f"--format={fmt}", "--end-of-options", revs, "--")

    def start_patches(self, shas: Sequence[str]) -> GitRead:
        """Each commit's patch against its first parent, led by its sha on a line of its own
        (``git diff-tree -p --stdin``; no context lines; renames found, so a moved file shows
        its changes, not all its lines; the rename limit given, not taken from the
        configuration, so a commit's patch reads the same everywhere)."""
        stdin = "".join(f"{sha}\n" for sha in shas)
        return self.start(*_PATCHES, stdin=stdin)

    def patches_in_parts(
        self, shas: Sequence[str], part: int = 200, running: int = 2
    ) -> Iterator[str]:
        """:meth:`start_patches` of ``shas``, ``part`` commits at a time and ``running``
        parts read by git at once: each part's output comes as soon as it is read, while
        git reads the next (a long list's patches are parsed as they come, on another core
        than git's)."""
        parts = [shas[n : n + part] for n in range(0, len(shas), part)]
        reading = deque(self.start_patches(p) for p in parts[:running])
        try:
            for later in parts[running:]:
                done = reading.popleft()
                reading.append(self.start_patches(later))
                yield done.out()
            while reading:
                yield reading.popleft().out()
        finally:  # given up half way: the parts still read end before this does
            for left in reading:
                left.result()

    def start_merge_base(self, a: str, b: str) -> GitRead:
        """``git merge-base a b``: their best common ancestor (fails when they have none)."""
        return self.start("merge-base", a, b)

    def start_cherry(self, upstream: str, head: str, limit: str) -> GitRead:
        """``git cherry``: which commits of ``head`` after ``limit`` have their patch in
        ``upstream`` (read with :func:`cherry_marked`)."""
        return self.start("cherry", upstream, head, limit)

    def start_cherry_since(self, earlier: str, tip: str, main: str) -> GitRead:
        """Which commits of ``main`` since its merge-base with ``tip`` have their patch in
        a commit of ``earlier..tip`` (read with :func:`cherry_equal`): with ``git cherry``'s
        answer for ``earlier``, an ancestor of ``tip``, its answer for ``tip`` (the same
        patch ids, ``git rev-list --cherry-mark``, over only the new commits)."""
        return self.start(
            "rev-list", "--cherry-mark", "--right-only", "--no-merges",
            f"{tip}...{main}", f"^{earlier}", "--",
        )  # fmt: skip

    def added_blobs(self, shas: Sequence[str]) -> dict[str, set[str]]:
        """Path -> the blobs these commits add at it (files new in a commit)."""
        if not shas:
            return {}
        stdin = "".join(f"{sha}\n" for sha in shas)
        text = self.run(
            "diff-tree", "--stdin", "-r", "--no-renames", "--diff-filter=A", "-z", "--root",
            stdin=stdin,
        ).stdout  # fmt: skip
        added: dict[str, set[str]] = {}
        tokens = text.split("\0")
        for index, token in enumerate(tokens[:-1]):
            fields = token.lstrip("\n").split(" ")
            if token.lstrip("\n").startswith(":") and len(fields) == 5:
                added.setdefault(tokens[index + 1], set()).add(fields[3])
        return added

    def untracked(self, paths: Sequence[str]) -> list[str]:
        """Those of ``paths`` that are files in the work tree git does not track (ignored
        ones too), each path taken literally."""
        if not paths:
            return []
        text = self.run(
            "ls-files", "--others", "-z", "--", *paths, env={"GIT_LITERAL_PATHSPECS": "1"}
        ).stdout
        return [path for path in text.split("\0") if path]

    def blob_ids(self, paths: Sequence[str]) -> list[str]:
        """The blob each work-tree file would be stored as (its attributes' filters applied),
        in the order given."""
        return self.run("hash-object", "--", *paths).stdout.split() if paths else []

    def newest_messages(self, count: int) -> list[str]:
        """The messages of HEAD and its first parents, ``count`` at most, newest first."""
        text = self.run("log", f"-{count}", "--first-parent", "-z", "--format=%B", "HEAD").stdout
        return text.split("\0")[:count]

    def checkout_form(self, blob: str, path: str) -> bytes | None:
        """The bytes git writes to the work tree for ``blob`` at ``path`` (the path's
        attributes' filters and line endings applied); None when git cannot say."""
        if "\n" in path:
            return None
        result = self.run("cat-file", "--batch", "--filters", stdin=f"{blob} {path}\n", check=False)
        header, found, content = result.stdout.partition("\n")  # the batch's last LF is gone
        if not result.ok or not found or header.split()[1:2] != ["blob"]:
            return None
        return content.encode(sys.getfilesystemencoding(), "surrogateescape")

    def patch_ids(self, shas: Sequence[str]) -> dict[str, str]:
        """Commit -> its patch id (``git patch-id --stable``: what ``git cherry`` compares);
        a commit that changes nothing has none."""
        if not shas:
            return {}
        stdin = "".join(f"{sha}\n" for sha in shas)
        patches = self.run(
            "log", "-p", "--no-walk=unsorted", "--stdin", "--format=commit %H", stdin=stdin
        ).stdout
        ids = self.run("patch-id", "--stable", stdin=patches + "\n").stdout
        pairs = (line.split() for line in ids.splitlines())
        return {sha: pid for pid, sha in pairs}


def cherry_marked(text: str) -> set[str]:
    """The commits ``git cherry`` marks ``-``: the same change is upstream, whatever its
    message or sha."""
    return {line[2:].strip() for line in text.splitlines() if line.startswith("- ")}


def cherry_equal(text: str) -> set[str]:
    """The commits ``git rev-list --cherry-mark`` marks ``=``: their patch is on the other
    side."""
    return {line[1:].strip() for line in text.splitlines() if line.startswith("=")}


_GITLINK = "160000"


def files_changed(text: str, *, by_sha: bool) -> dict[str, frozenset[str]]:
    """Commit -> the files it changes, from ``-z --raw`` output; commits start with their
    sha (:meth:`GitRepo.start_files_of`) or with a record separator
    (:meth:`GitRepo.start_files_log`, keyed by count).

    The sets are what git's patch ids hash first, made coarser so that two commits git
    could match always have the same set: whitespace is dropped from file names (as git
    does), each file counts once, submodules not at all.
    """
    out: dict[str, set[str]] = {}
    current: set[str] = set()
    tokens = text.split("\0")
    index = 0
    while index < len(tokens):
        token = tokens[index].lstrip("\n")
        index += 1
        if token.startswith(":"):  # ":<mode> <mode> <sha> <sha> <status>", then its paths
            fields = token[1:].split(" ")
            paths = tokens[index : index + (2 if fields[-1][:1] in ("R", "C") else 1)]
            index += len(paths)
            if _GITLINK not in fields[:2]:
                current.update("".join(p.split()) for p in paths)
        elif by_sha and token:
            current = out.setdefault(token, set())
        elif token == "\x1e":
            current = out.setdefault(str(len(out)), set())
    return {key: frozenset(paths) for key, paths in out.items()}


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b"\0missing"

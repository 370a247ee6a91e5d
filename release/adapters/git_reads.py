"""Reads in bulk of commits, messages and patches: a range's commits by sha for the notes,
what ``git log`` output depends on besides the commits (``.mailmap``, replacement objects,
a shallow clone's boundary), and the patches that compare a release branch with main.

A mixin of :class:`release.adapters.git.GitRepo`: every read goes through its
:meth:`~release.adapters.git.GitRepo.start` and :meth:`~release.adapters.git.GitRepo.run`.
"""

from __future__ import annotations

import hashlib
import os
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from release.adapters.git_process import GitRead, GitResult

__all__ = ["GitReads"]


class GitReads:
    """Commits of a range by sha, the settings that change what git says of them, messages,
    patches and patch ids."""

    if TYPE_CHECKING:
        root: Path
        common_dir: Path

        def start(self, *args: str, stdin: str | None = None) -> GitRead: ...

        def run(self, *args: str, check: bool = True, stdin: str | None = None) -> GitResult: ...

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
        return hashlib.sha256(b"\0\0".join(parts)).hexdigest()

    def replaces_objects(self) -> bool:
        """Whether ``git replace`` refs may change what ``git log`` shows for a sha (then a
        commit's sha does not fix its message). Read from the ref store, without git; a ref
        store this cannot read (reftable) counts as yes."""
        if os.environ.get("GIT_NO_REPLACE_OBJECTS") is not None:
            return False
        if os.environ.get("GIT_REPLACE_REF_BASE") or (self.common_dir / "reftable").exists():
            return True
        loose = self.common_dir / "refs" / "replace"
        if loose.is_dir() and any(loose.iterdir()):
            return True
        return b" refs/replace/" in _read(self.common_dir / "packed-refs")

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
        its changes, not all its lines)."""
        stdin = "".join(f"{sha}\n" for sha in shas)
        return self.start(
            "diff-tree", "-p", "-U0", "-r", "-M", "--root", "--stdin", stdin=stdin
        )  # fmt: skip

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


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b"\0missing"

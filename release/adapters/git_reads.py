"""Reads of commit messages and patches for comparing a release branch with main.

A mixin of :class:`release.adapters.git.GitRepo`: every read goes through its
:meth:`~release.adapters.git.GitRepo.start` and :meth:`~release.adapters.git.GitRepo.run`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from release.adapters.git_process import GitRead, GitResult

__all__ = ["GitReads"]


class GitReads:
    """Messages, patches and patch ids, read in bulk."""

    if TYPE_CHECKING:

        def start(self, *args: str, stdin: str | None = None) -> GitRead: ...

        def run(self, *args: str, check: bool = True, stdin: str | None = None) -> GitResult: ...

    def start_log(self, revs: str, fmt: str, *, merges: bool = True) -> GitRead:
        """``git log --format=fmt`` of ``revs`` (without merge commits unless ``merges``)."""
        return self.start(
            "log", f"--format={fmt}", *(() if merges else ("--no-merges",)),
            "--end-of-options", revs, "--",
        )  # fmt: skip

    def start_patches(self, shas: Sequence[str]) -> GitRead:
        """Each commit's patch against its first parent, led by its sha on a line of its own
        (``git diff-tree -p --stdin``; no context lines; renames found, so a moved file shows
        its changes, not all its lines)."""
        stdin = "".join(f"{sha}\n" for sha in shas)
        return self.start(
            "diff-tree", "-p", "-U0", "-r", "-M", "--root", "--stdin", stdin=stdin
        )  # fmt: skip

    def patch_ids(self, shas: Sequence[str]) -> dict[str, str]:
        """Commit -> its patch id (``git patch-id --stable``: what ``git cherry`` compares);
        a commit that changes nothing has none."""
        if not shas:
            return {}
        stdin = "".join(f"{sha}\n" for sha in shas)
        patches = self.run("diff-tree", "-p", "-r", "--root", "--stdin", stdin=stdin).stdout
        # diff-tree leads each patch with the bare sha; patch-id wants a "commit <sha>" line
        text = "\n".join(
            f"commit {line}" if len(line) == 40 and " " not in line else line
            for line in patches.split("\n")
        )
        ids = self.run("patch-id", "--stable", stdin=text + "\n").stdout
        pairs = (line.split() for line in ids.splitlines())
        return {sha: pid for pid, sha in pairs}

"""What a work tree is in the middle of (a pick, a rebase ...), the lock files git leaves
when killed, and what changed in it: dirty, untracked and unmerged paths, and the blobs
its files would be stored as.

``repo.worktree`` of a :class:`~release.adapters.git.GitRepo`: every command goes
through the repository's :meth:`~release.adapters.git.GitRepo.run`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from release.adapters.git_process import Repository

__all__ = ["WorkTree"]


class WorkTree:
    """The work tree and index of a repository."""

    def __init__(self, repo: Repository) -> None:
        self.repo = repo

    def in_progress(self) -> tuple[str, str] | None:
        """What git is in the middle of in this work tree, and the commands that finish or
        abort it; None when nothing is."""
        here = self.repo.git_dir
        if (here / "rebase-apply" / "applying").exists():
            return "git am", "git am --continue, or git am --abort"
        if (here / "rebase-merge").is_dir() or (here / "rebase-apply").is_dir():
            return "a rebase", "git rebase --continue, or git rebase --abort"
        if (here / "MERGE_HEAD").exists():
            return "a merge", "git commit to finish it, or git merge --abort"
        if (here / "CHERRY_PICK_HEAD").exists():
            return "a cherry-pick", "git cherry-pick --continue, or git cherry-pick --abort"
        if (here / "REVERT_HEAD").exists():
            return "a revert", "git revert --continue, or git revert --abort"
        todo = here / "sequencer" / "todo"
        if todo.exists():  # a sequence stopped between commits (an empty one, say)
            first = todo.read_text(errors="replace").split(maxsplit=1)[:1]
            kind = "revert" if first == ["revert"] else "cherry-pick"
            return f"a {kind} sequence", f"git {kind} --continue, or git {kind} --abort"
        if (here / "BISECT_LOG").exists():
            return "a bisect", "git bisect reset"
        return None

    def lock_files(self, *refs: str) -> list[Path]:
        """The lock files git makes while it changes this work tree (index, HEAD, a
        pick's message and state, ``reset``'s ORIG_HEAD) and the given refs (full names),
        where git keeps each: a killed git leaves them behind."""
        here, common = self.repo.git_dir, self.repo.common_dir
        names = ("index", "HEAD", "CHERRY_PICK_HEAD", "MERGE_MSG", "AUTO_MERGE", "ORIG_HEAD")
        found = [here / f"{name}.lock" for name in names]
        found.append(common / "packed-refs.lock")
        return found + [common / f"{ref}.lock" for ref in dict.fromkeys(refs)]

    def is_tracked(self, path: str) -> bool:
        return self.repo.run("ls-files", "--error-unmatch", "--", path, check=False).ok

    def dirty_paths(self) -> list[str]:
        """Tracked files with staged or unstaged changes (untracked files do not count); a
        rename is its two paths, each with a status of its own.

        Read without taking the index lock (no opportunistic index refresh): a query must
        not leave ``index.lock`` behind if it is killed, nor block a concurrent git.
        """
        text = self.repo.run(
            "status", "--porcelain=v1", "--untracked-files=no", "--no-renames", "-z",
            env=_NO_OPTIONAL_LOCKS,
        ).stdout  # fmt: skip
        return [entry[3:] for entry in text.split("\0") if entry]

    def uncommitted(self) -> list[str]:
        """Every path a commit would not carry as it is here: changed, staged or untracked
        (ignored files aside); read without the index lock, as :meth:`dirty_paths`."""
        text = self.repo.run(
            "status", "--porcelain=v1", "--untracked-files=all", "--no-renames", "-z",
            env=_NO_OPTIONAL_LOCKS,
        ).stdout  # fmt: skip
        return [entry[3:] for entry in text.split("\0") if entry]

    def untracked_files(self, *under: str) -> list[str]:
        """Files under the paths ``under`` that git does not track, ignored ones included,
        relative to the work tree (what a build context holds besides the commit)."""
        text = self.repo.out("ls-files", "--others", "-z", "--", *under)
        return [path for path in text.split("\0") if path]

    def unmerged_paths(self) -> list[str]:
        text = self.repo.out("diff", "--name-only", "--diff-filter=U", "-z")
        return sorted({p for p in text.split("\0") if p})

    def has_staged_changes(self) -> bool:
        return not self.repo.run("diff", "--cached", "--quiet", check=False).ok

    def cherry_pick_head(self) -> str | None:
        path = self.repo.git_dir / "CHERRY_PICK_HEAD"
        return path.read_text().strip() if path.exists() else None

    def sequencer_active(self) -> bool:
        return (self.repo.git_dir / "sequencer").exists()

    def untracked(self, paths: Sequence[str]) -> list[str]:
        """Those of ``paths`` that are files in the work tree git does not track (ignored
        ones too), each path taken literally."""
        if not paths:
            return []
        text = self.repo.run(
            "ls-files", "--others", "-z", "--", *paths, env={"GIT_LITERAL_PATHSPECS": "1"}
        ).stdout
        return [path for path in text.split("\0") if path]

    def blob_ids(self, paths: Sequence[str]) -> list[str]:
        """The blob each work-tree file would be stored as (its attributes' filters applied),
        in the order given."""
        return self.repo.run("hash-object", "--", *paths).stdout.split() if paths else []

    def checkout_form(self, blob: str, path: str) -> bytes | None:
        """The bytes git writes to the work tree for ``blob`` at ``path`` (the path's
        attributes' filters and line endings applied); None when git cannot say."""
        if "\n" in path:
            return None
        result = self.repo.run(
            "cat-file", "--batch", "--filters", stdin=f"{blob} {path}\n", check=False
        )
        header, found, content = result.stdout.partition("\n")  # the batch's last LF is gone
        if not result.ok or not found or header.split()[1:2] != ["blob"]:
            return None
        return content.encode(sys.getfilesystemencoding(), "surrogateescape")


_NO_OPTIONAL_LOCKS = {"GIT_OPTIONAL_LOCKS": "0"}  # what --no-optional-locks sets

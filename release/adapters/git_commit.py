"""A commit made on a branch that may not be checked out: ``cut`` sets main's version
files after the branch cut (pytorch/ao's "bump torchao version after 0.15.0 branch cut")
from wherever it runs.

The commit is built from the branch's tree in an index of its own (under
``.git/release/``), never the work tree's, and the branch moves to it only if it is still
where it was read (``update-ref`` with the old value): a branch someone moved meanwhile is
left alone. Where the branch is checked out here, the work tree follows it as ``git
checkout`` would (a two-tree ``read-tree -m -u``: local changes to other files are kept,
and one to a file the commit changes refuses before the branch moves).
"""

from __future__ import annotations

from collections.abc import Mapping

from release.adapters.git import GitRepo

__all__ = ["commit_on_branch", "follow_branch"]


def _mode(repo: GitRepo, parent: str, path: str) -> str:
    listed = repo.run("ls-tree", "--full-tree", parent, "--", path).stdout
    return listed.split()[0] if listed else "100644"


def commit_on_branch(
    repo: GitRepo, branch: str, parent: str, files: Mapping[str, str], message: str
) -> str:
    """Commit ``files`` (path -> text) on ``branch``, which must be at ``parent``; the new
    commit's sha."""
    scratch = repo.git_dir / "release"
    scratch.mkdir(parents=True, exist_ok=True)
    index = scratch / "commit.index"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        repo.run("read-tree", parent, env=env)
        for path, text in files.items():
            blob = repo.run("hash-object", "-w", "--stdin", stdin=text).stdout.strip()
            info = f"{_mode(repo, parent, path)},{blob},{path}"
            repo.run("update-index", "--cacheinfo", info, env=env)
        tree = repo.run("write-tree", env=env).stdout.strip()
    finally:
        index.unlink(missing_ok=True)
    sha = repo.run("commit-tree", tree, "-p", parent, "-F", "-", stdin=message).stdout.strip()
    ref = f"refs/heads/{branch}"
    repo.run("update-ref", "-m", "release cut: version files", ref, sha, parent, mutating=True)
    return sha


def follow_branch(repo: GitRepo, old: str, new: str) -> None:
    """The index and work tree of a checkout of a branch that moved from ``old`` to
    ``new``, brought along (as ``git checkout`` would; again, it changes nothing)."""
    repo.run("read-tree", "-m", "-u", old, new, mutating=True)

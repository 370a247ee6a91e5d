"""The git adapter: the only module that runs git.

Every command goes through :meth:`GitRepo.run` (GitPython's thin command interface),
which echoes mutating commands when asked and turns failures into :class:`GitError`.
Ranges are read with one ``git log --format`` call, never by loading commit objects
one by one.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from release.errors import GitError, UsageError

__all__ = ["GitRepo", "GitResult"]

Echo = Callable[[str], None]


@dataclass(frozen=True)
class GitResult:
    status: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.status == 0


def _default_echo(line: str) -> None:
    if os.environ.get("RELEASE_ECHO"):
        print(line, file=sys.stderr)


class GitRepo:
    """A working copy, opened at (or above) a directory."""

    echo: Echo = staticmethod(_default_echo)

    def __init__(self, path: Path | str = ".") -> None:
        import logging

        import git  # lazy: GitPython costs ~100 ms to import

        logging.getLogger("git").setLevel(logging.WARNING)  # nox turns on DEBUG for every logger

        try:
            self._repo = git.Repo(path, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise UsageError(
                f"not a git repository: {Path(path).resolve()} (run inside the engine's checkout)"
            ) from None
        if self._repo.bare or self._repo.working_tree_dir is None:
            raise UsageError(f"{path} is a bare repository; run inside a checkout")
        self.root = Path(self._repo.working_tree_dir)
        self.git_dir = Path(self._repo.git_dir)
        self._git = self._repo.git

    @classmethod
    def init(cls, path: Path, *, bare: bool = False, branch: str = "main") -> GitRepo | None:
        """``git init`` a new repository; returns it opened unless bare."""
        import git

        path.mkdir(parents=True, exist_ok=True)
        git.Git(str(path)).execute(
            ["git", "init", "--quiet", f"--initial-branch={branch}", *(["--bare"] if bare else [])]
        )
        return None if bare else cls(path)

    # -- the choke point -------------------------------------------------
    def run(
        self,
        *args: str,
        check: bool = True,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        mutating: bool = False,
    ) -> GitResult:
        if mutating:
            type(self).echo("+ git " + " ".join(args))
        with contextlib.ExitStack() as stack:
            istream = None
            if stdin is not None:
                istream = stack.enter_context(tempfile.TemporaryFile())
                istream.write(stdin.encode())
                istream.seek(0)
            status, out, err = self._git.execute(
                ["git", *args],
                istream=istream,
                with_extended_output=True,
                with_exceptions=False,
                env=dict(env) if env else None,
            )
        result = GitResult(status, out, err)
        if check and not result.ok:
            raise GitError(f"git {' '.join(args[:3])} failed: {_first_line(err) or out}")
        return result

    def out(self, *args: str) -> str:
        return self.run(*args).stdout

    # -- queries ---------------------------------------------------------
    def current_branch(self) -> str | None:
        result = self.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        return result.stdout.strip() or None if result.ok else None

    def rev(self, ref: str) -> str | None:
        result = self.run(
            "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False
        )
        return result.stdout.strip() if result.ok and result.stdout.strip() else None

    def branch_exists(self, name: str) -> bool:
        return self.run("show-ref", "--verify", "--quiet", f"refs/heads/{name}", check=False).ok

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return self.run("merge-base", "--is-ancestor", ancestor, descendant, check=False).ok

    def merge_base(self, a: str, b: str) -> str | None:
        result = self.run("merge-base", a, b, check=False)
        return result.stdout.strip() if result.ok else None

    def dirty_paths(self) -> list[str]:
        """Tracked files with staged or unstaged changes (untracked files do not count)."""
        text = self.out("status", "--porcelain=v1", "--untracked-files=no", "-z")
        return [entry[3:] for entry in text.split("\0") if entry]

    def unmerged_paths(self) -> list[str]:
        text = self.out("diff", "--name-only", "--diff-filter=U", "-z")
        return sorted({p for p in text.split("\0") if p})

    def has_staged_changes(self) -> bool:
        return not self.run("diff", "--cached", "--quiet", check=False).ok

    def cherry_pick_head(self) -> str | None:
        path = self.git_dir / "CHERRY_PICK_HEAD"
        return path.read_text().strip() if path.exists() else None

    def sequencer_active(self) -> bool:
        return (self.git_dir / "sequencer").exists()

    def local_tags(self) -> dict[str, str]:
        """Tag name -> commit it points to (peeled)."""
        text = self.out(
            "for-each-ref",
            "--format=%(refname:lstrip=2)%00%(objectname)%00%(*objectname)",
            "refs/tags",
        )
        tags: dict[str, str] = {}
        for line in text.splitlines():
            name, obj, peeled = line.split("\0")
            tags[name] = peeled or obj
        return tags

    def has_remote(self, remote: str) -> bool:
        return remote in self.out("remote").split()

    def remote_tags(self, remote: str) -> dict[str, str]:
        """Tags on the remote (read with ls-remote; local refs are not touched)."""
        result = self.run("ls-remote", "--tags", remote, check=False)
        if not result.ok:
            raise GitError(f"cannot read tags of remote {remote!r}: {_first_line(result.stderr)}")
        tags: dict[str, str] = {}
        for line in result.stdout.splitlines():
            sha, ref = line.split("\t", 1)
            name = ref.removeprefix("refs/tags/")
            if name.endswith("^{}"):
                tags[name[:-3]] = sha
            else:
                tags.setdefault(name, sha)
        return tags

    def log(self, *range_args: str, fmt: str) -> str:
        return self.out("log", f"--format={fmt}", *range_args, "--")

    def rev_list(self, *args: str) -> list[str]:
        return self.out("rev-list", *args).split()

    def config_value(self, key: str) -> str | None:
        result = self.run("config", "--get", key, check=False)
        return result.stdout.strip() if result.ok else None

    def remote_url(self, remote: str) -> str | None:
        return self.config_value(f"remote.{remote}.url")

    def refs(self) -> dict[str, str]:
        text = self.out("for-each-ref", "--format=%(refname) %(objectname)")
        pairs = (line.split(" ", 1) for line in text.splitlines())
        return {name: sha for name, sha in pairs}

    def show_file(self, ref: str, path: str) -> str | None:
        result = self.run("show", f"{ref}:{path}", check=False)
        return result.stdout if result.ok else None


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith("hint:")]
    return (useful or lines or [""])[0]


def short(sha: str) -> str:
    return sha[:10]


def quote_args(args: Sequence[str]) -> str:
    import shlex

    return " ".join(shlex.quote(a) for a in args)

"""What a repository asks of its remotes and sends them: which refs they have
(``git ls-remote``), objects fetched without a ref here changing, and atomic pushes.

A mixin of :class:`release.adapters.git.GitRepo`: every command goes through its
:meth:`~release.adapters.git.GitRepo.run`. Nothing here writes a ref of this repository
but a push's remote-tracking update.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from release.adapters import process
from release.adapters.git_process import GitResult
from release.errors import GitError

__all__ = ["GitRemotes"]


class GitRemotes:
    """The remotes: their names and URLs, their refs, fetching objects, pushing."""

    if TYPE_CHECKING:

        def run(
            self,
            *args: str,
            check: bool = True,
            env: Mapping[str, str] | None = None,
            stdin: str | None = None,
            mutating: bool = False,
        ) -> GitResult: ...

        def out(self, *args: str) -> str: ...

        def config_value(self, key: str) -> str | None: ...

    def has_remote(self, remote: str) -> bool:
        return remote in self.out("remote").split()

    def remote_tags(self, remote: str) -> dict[str, str]:
        """Tags on the remote (read with ls-remote; local refs are not touched)."""
        result = self.run("ls-remote", "--tags", remote, check=False)
        if not result.ok:
            raise GitError(
                f"cannot read tags of remote {remote!r}: {process.first_line(result.stderr)}"
            )
        tags: dict[str, str] = {}
        for line in result.stdout.splitlines():
            sha, ref = line.split("\t", 1)
            name = ref.removeprefix("refs/tags/")
            if name.endswith("^{}"):
                tags[name[:-3]] = sha
            else:
                tags.setdefault(name, sha)
        return tags

    def remote_url(self, remote: str) -> str | None:
        return self.config_value(f"remote.{remote}.url")

    def remote_refs(self, remote: str, *patterns: str) -> dict[str, str]:
        """Ref name -> sha on ``remote`` (``git ls-remote``); :class:`GitError` when it
        cannot be read."""
        result = self.run("ls-remote", remote, *patterns, check=False)
        if not result.ok:
            reason = process.last_line(result.stderr, "no answer")
            raise GitError(f"cannot reach {remote}: {reason}")
        pairs = (line.split("\t", 1) for line in result.stdout.splitlines())
        return {ref: sha for sha, ref in pairs}

    def fetch_objects(self, remote: str, refs: Sequence[str]) -> None:
        """The objects of ``remote``'s ``refs``, and no ref here changed: no refspec maps
        them (``--refmap=`` disables the configured ones), no tag follows, no FETCH_HEAD,
        no maintenance, no submodules."""
        result = self.run(
            "fetch", "--quiet", "--no-tags", "--refmap=", "--no-write-fetch-head",
            "--no-auto-maintenance", "--no-recurse-submodules", remote, *refs, check=False,
        )  # fmt: skip
        if not result.ok:
            raise GitError(
                f"fetching {', '.join(refs)} from {remote} failed: {process.last_line(result.stderr, 'no answer')}"
            )

    def push_atomic(self, remote: str, refspecs: Sequence[str]) -> GitResult:
        return self.run(
            "push", "--atomic", "--porcelain", remote, *refspecs, check=False, mutating=True
        )

"""What a repository asks of its remotes and sends them: which refs they have
(``git ls-remote``), objects fetched without a ref here changing, and atomic pushes.

``repo.remotes`` of a :class:`~release.adapters.git.GitRepo`: every command goes
through the repository's :meth:`~release.adapters.git.GitRepo.run`. Nothing here writes a ref of this repository
but a push's remote-tracking update.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from release.adapters import process
from release.adapters.git_process import GitResult, Repository
from release.errors import GitError

__all__ = ["RefRecord", "Remotes"]


@dataclass(frozen=True, slots=True)
class RefRecord:
    """A ref as a remote lists it: the object it points to (a tag object, for an annotated
    tag) and, for an annotated tag, the object that tag names (``peeled``)."""

    name: str
    sha: str
    peeled: str | None = None

    @property
    def target(self) -> str:
        """What the ref names once peeled: a tag's commit (or its object, when not a tag)."""
        return self.peeled or self.sha


class Remotes:
    """The remotes: their names and URLs, their refs, fetching objects, pushing."""

    def __init__(self, repo: Repository) -> None:
        self.repo = repo

    def has(self, remote: str) -> bool:
        return remote in self.repo.out("remote").split()

    def tags(self, remote: str) -> dict[str, str]:
        """Tags on the remote (read with ls-remote; local refs are not touched)."""
        return self.tags_and_heads(remote)[0]

    def tags_and_heads(self, remote: str) -> tuple[dict[str, str], dict[str, str]]:
        """Tag -> commit (peeled) and branch -> commit on the remote, read by one
        ls-remote; local refs are not touched."""
        result = self.repo.run("ls-remote", "--tags", "--heads", remote, check=False)
        if not result.ok:
            raise GitError(
                f"cannot read tags of remote {remote!r}: {process.first_line(result.stderr)}"
            )
        tags: dict[str, str] = {}
        heads: dict[str, str] = {}
        for line in result.stdout.splitlines():
            sha, ref = line.split("\t", 1)
            if ref.startswith("refs/heads/"):
                heads[ref.removeprefix("refs/heads/")] = sha
                continue
            name = ref.removeprefix("refs/tags/")
            if name.endswith("^{}"):
                tags[name[:-3]] = sha
            else:
                tags.setdefault(name, sha)
        return tags, heads

    def url(self, remote: str) -> str | None:
        return self.repo.config_value(f"remote.{remote}.url")

    def holding(self, commit: str) -> list[str]:
        """The remotes one of whose remote-tracking branches holds ``commit`` (as this
        repository last fetched or pushed them), in ``git remote``'s order."""
        names = self.repo.out("remote").split()
        held = self.repo.out(
            "for-each-ref", f"--contains={commit}", "--format=%(refname)", "refs/remotes/"
        ).splitlines()
        return [n for n in names if any(r.startswith(f"refs/remotes/{n}/") for r in held)]

    def refs(self, remote: str, *patterns: str) -> dict[str, RefRecord]:
        """Ref name -> its record on ``remote`` (``git ls-remote``), annotated tags peeled
        (a pattern that names one tag asks for its peeled line too); :class:`GitError`
        when it cannot be read."""
        peel = [f"{p}^{{}}" for p in patterns if p.startswith("refs/tags/") and "*" not in p]
        result = self.repo.run("ls-remote", remote, *patterns, *peel, check=False)
        if not result.ok:
            reason = process.last_line(result.stderr, "no answer")
            raise GitError(f"cannot reach {remote}: {reason}")
        refs: dict[str, RefRecord] = {}
        peeled: dict[str, str] = {}
        for line in result.stdout.splitlines():
            sha, _, name = line.partition("\t")
            if name.endswith("^{}"):
                peeled[name[:-3]] = sha
            else:
                refs[name] = RefRecord(name, sha)
        for name, sha in peeled.items():
            if name in refs:
                refs[name] = RefRecord(name, refs[name].sha, sha)
        return refs

    def fetch_objects(self, remote: str, refs: Sequence[str]) -> None:
        """The objects of ``remote``'s ``refs``, and no ref here changed: no refspec maps
        them (``--refmap=`` disables the configured ones), no tag follows, no FETCH_HEAD,
        no maintenance, no submodules."""
        result = self.repo.run(
            "fetch", "--quiet", "--no-tags", "--refmap=", "--no-write-fetch-head",
            "--no-auto-maintenance", "--no-recurse-submodules", remote, *refs, check=False,
        )  # fmt: skip
        if not result.ok:
            raise GitError(
                f"fetching {', '.join(refs)} from {remote} failed: {process.last_line(result.stderr, 'no answer')}"
            )

    def push_atomic(self, remote: str, refspecs: Sequence[str]) -> GitResult:
        return self.repo.run(
            "push", "--atomic", "--porcelain", remote, *refspecs, check=False, mutating=True
        )

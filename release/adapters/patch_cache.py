"""What ``pick`` and ``status`` learnt of a commit's change, kept between runs, by sha: the
files it changes and the signature of its changed lines (:func:`release.core.backports.
signature`). Finding adapted backports reads the patches of every main commit that shares
a file name with the release branch: on a long real history that is most of main, and
git takes seconds to diff them. A commit's change does not change, so it is read once.

Where: ``release/patches.cache`` in the common git directory (beside the commit cache,
:mod:`release.adapters.commit_cache`; the same file format, :mod:`release.adapters.
cache_file`). What: by sha, the files (as :func:`release.adapters.git_reads.files_changed`
gives them) and the line signature, as one packed array of its hashes, sorted, each as
often as its line is there; for each main and branch commit compared, how many changed
lines they share (a fact of the two commits: a later run compares only the pairs it has
not seen, for a new commit on either side); and what a commit's message says of backports
(its PR number, the numbers it carries, its normalized title); and, for the last few
(branch tip, main, merge-base) asked about, which main commits ``git cherry`` marked as
having their patch on the branch (a fact of those three commits; for a later tip of the
same branch, the answer of an earlier one plus what the commits gained since match).

The key is a digest of this format, the Python and package versions, the source of the
modules that read and sign patches and messages (the git options included) and the
repository whose PRs a message may name by URL. A commit is not kept when its change
could read otherwise later: not in a repository with replacement objects, not for a
shallow clone's boundary commits (they show as adding every file).

When: read and written as the commit cache is (``RELEASE_REPO_CACHE``), and written only
by what changes nothing else in the repository (``pick --dry-run``, ``status``): a pick
leaves its git directory to its journal.
"""

from __future__ import annotations

import marshal
import sys
from array import array
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from release.adapters import git_reads
from release.adapters.cache_file import digest_of, read_payload, write_payload
from release.core import backports, commits, patch_lines, pull_requests
from release.core.backports import Facts
from release.core.pull_requests import RepoIdentity

__all__ = ["CHERRY_KEPT", "PatchCache", "patch_cache_key", "patch_cache_path"]

FORMAT = 1
CHERRY_KEPT = 4  # git cherry answers kept (a branch tip moves with every pick)
_MAGIC = b"release-patches"
_HASHES = "Q"  # array type of a line's 64-bit hash


def patch_cache_path(common_dir: Path) -> Path:
    return common_dir / "release" / "patches.cache"


def patch_cache_key(repo: RepoIdentity | None) -> str:
    """The key for commits of the repository ``repo`` (what a message says it carries
    depends on which PR URLs are this repository's)."""
    return digest_of(
        FORMAT,
        (backports, commits, patch_lines, pull_requests, git_reads, sys.modules[__name__]),
        (repo.key if repo is not None else "").encode("utf-8", "surrogateescape"),
    )


class PatchCache:
    """The cached changes for one key; :meth:`load` never fails, :meth:`save` never raises."""

    def __init__(self, path: Path, key: str) -> None:
        self.path = path
        self.key = key
        self.files: dict[str, tuple[str, ...]] = {}
        self.lines: dict[str, bytes] = {}  # sorted 64-bit hashes, repeated as lines are
        self.shared: dict[str, dict[str, int]] = {}  # main -> branch commit -> lines shared
        self.facts: dict[str, Facts] = {}  # what backports.Message reads from a message
        self.cherry: dict[str, tuple[str, ...]] = {}  # "tip main base" -> what git cherry marks
        self.changed = False  # what the file holds is not what this holds

    @classmethod
    def load(cls, path: Path, key: str) -> PatchCache:
        """What ``path`` holds for ``key``; empty when it holds nothing usable."""
        cache = cls(path, key)
        payload, there = read_payload(path, _MAGIC, FORMAT, key)
        if payload is not None:
            try:
                parts = marshal.loads(payload)
                if type(parts) is tuple and len(parts) == 5 and all(type(p) is dict for p in parts):
                    cache.files, cache.lines, cache.shared, cache.facts, cache.cherry = parts
                    return cache
            except (EOFError, ValueError, TypeError):
                pass
        cache.changed = there
        return cache

    def files_of(self, sha: str) -> frozenset[str] | None:
        found = self.files.get(sha)
        return frozenset(found) if type(found) is tuple else None

    def add_files(self, files: Mapping[str, frozenset[str]]) -> None:
        for sha, paths in files.items():
            if sha not in self.files:
                self.files[sha] = tuple(sorted(paths))
                self.changed = True

    def lines_of(self, sha: str) -> array[int] | None:
        """The commit's line signature as its hashes in order, each as often as the line is
        there; None when not held (or not readable)."""
        found = self.lines.get(sha)
        if type(found) is not bytes:
            return None
        try:
            return array(_HASHES, found)
        except ValueError:
            return None

    def total_of(self, sha: str) -> int | None:
        """How many changed lines the commit has, when its signature is held."""
        found = self.lines.get(sha)
        return len(found) // 8 if type(found) is bytes else None

    def shared_with(self, sha: str) -> dict[str, int]:
        """Branch commit -> how many changed lines it shares with main commit ``sha``, for
        the pairs compared before."""
        found = self.shared.get(sha)
        return found if type(found) is dict else {}

    def add_shared(self, shared: Mapping[str, Mapping[str, int]]) -> None:
        for sha, counts in shared.items():
            if counts:
                self.shared.setdefault(sha, {}).update(counts)
                self.changed = True

    def facts_of(self, sha: str) -> Facts | None:
        found = self.facts.get(sha)
        if type(found) is tuple and len(found) == 3 and type(found[1]) is tuple:
            return found
        return None

    def add_facts(self, facts: Mapping[str, Facts]) -> None:
        for sha, known in facts.items():
            if sha not in self.facts:
                self.facts[sha] = known
                self.changed = True

    def cherry_of(self, key: str) -> set[str] | None:
        found = self.cherry.get(key)
        return set(found) if type(found) is tuple else None

    def earlier_cherry(self, key: str) -> list[tuple[str, set[str]]]:
        """(tip, what ``git cherry`` marked) kept for other tips with ``key``'s main and
        merge-base, newest first."""
        tip, _, rest = key.partition(" ")
        found = []
        for kept, marked in reversed(self.cherry.items()):
            other, _, same = kept.partition(" ")
            if same == rest and other != tip and type(marked) is tuple:
                found.append((other, set(marked)))
        return found

    def keep_cherry(self, key: str, marked: set[str]) -> None:
        """What ``git cherry`` marked for ``key``, kept for the last
        :data:`CHERRY_KEPT` keys."""
        self.cherry.pop(key, None)
        self.cherry[key] = tuple(sorted(marked))
        while len(self.cherry) > CHERRY_KEPT:
            del self.cherry[next(iter(self.cherry))]
        self.changed = True

    def add_lines(self, signatures: Mapping[str, Counter[int]]) -> None:
        for sha, lines in signatures.items():
            if sha not in self.lines:
                self.lines[sha] = array(_HASHES, sorted(lines.elements())).tobytes()
                self.changed = True

    def save(self) -> None:
        """Write what this holds, if it changed."""
        if self.changed:
            parts = (self.files, self.lines, self.shared, self.facts, self.cherry)
            payload = marshal.dumps(parts)
            if write_payload(self.path, _MAGIC, FORMAT, self.key, payload):
                self.changed = False

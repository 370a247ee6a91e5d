"""Parsed commits kept between runs of ``release notes``, by sha, so a commit is parsed once.

Where: ``release/commits.cache`` in the common git directory (``.git/release/`` of the main
checkout; linked worktrees share it, as they share the commits).

What: a header line, ``release-commits <format> <key> <length> <crc32>``, then one
``marshal`` payload: the people seen (name, email) and, by sha, every field parsing
gives (:class:`~release.core.commits.Commit`, the whole body included), so a cached
commit equals the parsed one; and, for the last few commits a range of notes started
at, who had changes before it (the distinct lines of ``git log`` of authors and
co-author trailers over all the history up to it, which is what makes a short range's
notes slow on a long history).

The key is a digest of everything parsing depends on: this format, the Python version
(marshal's), the package version, the source of the modules that parse (commits,
categories, config, pull requests), the category alias map, the mailmap (``%aN``/``%aE``
are authors as it maps them) and the repository the commits are of (which PRs they name:
:mod:`release.core.pull_requests`). Another key, a length or checksum that does not
match, a payload that does not unpack: the file is ignored and written anew, atomically
(readers see the old file or the new one). The header is checked before anything is unpacked.

When: read unless ``RELEASE_REPO_CACHE=0``; written unless ``RELEASE_REPO_CACHE=0``,
or on CI (``CI`` set, as CI services set it: a one-off checkout gains nothing and its
git directory may be shared or read-only) unless ``RELEASE_REPO_CACHE=1``. A git
directory that cannot be written is left as it is, silently.
"""

from __future__ import annotations

import marshal
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from release.adapters.cache_file import ENV, cache_policy, digest_of, read_payload, write_payload
from release.core import categories, commits, config, pull_requests
from release.core.commits import FIELDS, Commit, Person, commit_of
from release.core.pull_requests import RepoIdentity

__all__ = ["ENV", "CommitCache", "cache_key", "cache_path", "cache_policy"]

FORMAT = 2
EARLIER_KEPT = 4  # commits whose earlier people are kept
_MAGIC = b"release-commits"
# what a commit's fields are worked out by
_PARSERS = (commits, categories, config, pull_requests)


def cache_path(common_dir: Path) -> Path:
    return common_dir / "release" / "commits.cache"


def cache_key(aliases: Mapping[str, str], mailmap: str, repo: RepoIdentity | None) -> str:
    """A digest of what parsing a commit depends on (see the module's doc)."""
    return digest_of(
        FORMAT,
        (*_PARSERS, sys.modules[__name__]),
        repr(sorted(aliases.items())).encode("utf-8", "surrogateescape"),
        mailmap.encode(),
        (repo.key if repo is not None else "").encode("utf-8", "surrogateescape"),
    )


# A record: author and co-authors as indexes into the people, then the other fields in
# Commit's order (the sha is the record's key).
_Record = tuple[Any, ...]
_RECORDED = tuple(name for name in FIELDS if name not in ("sha", "author", "co_authors"))


class CommitCache:
    """The cached commits for one key; :meth:`load` never fails, :meth:`save` never raises."""

    def __init__(self, path: Path, key: str) -> None:
        self.path = path
        self.key = key
        self.people: list[tuple[str, str]] = []
        self.records: dict[str, _Record] = {}
        self.earlier: dict[str, tuple[str, ...]] = {}  # commit -> people before it, as read
        self.changed = False  # what the file holds is not what this holds
        self._persons: list[Person] | None = None
        self._index: dict[tuple[str, str], int] | None = None

    @classmethod
    def load(cls, path: Path, key: str) -> CommitCache:
        """What ``path`` holds for ``key``; empty (to be written anew) when it holds
        nothing usable: missing, another key, damaged, foreign."""
        cache = cls(path, key)
        payload, there = read_payload(path, _MAGIC, FORMAT, key)
        if payload is not None:
            try:
                people, records, earlier = marshal.loads(payload)
                if (
                    isinstance(people, list)
                    and isinstance(records, dict)
                    and all(type(p) is tuple and len(p) == 2 for p in people)
                    and isinstance(earlier, dict)
                    and all(type(v) is tuple for v in earlier.values())
                ):
                    cache.people, cache.records, cache.earlier = people, records, earlier
                    return cache
            except (EOFError, ValueError, TypeError):
                pass
        cache.changed = there
        return cache

    def __contains__(self, sha: str) -> bool:
        return sha in self.records

    def take(self, shas: Sequence[str]) -> list[Commit] | None:
        """The commits ``shas`` name, in that order (all held), or None when a record does
        not unpack (the cache is then emptied, to be written anew)."""
        try:
            persons = self._persons
            if persons is None:
                persons = self._persons = [Person(name, email) for name, email in self.people]
            records = self.records
            return [_commit(sha, records[sha], persons) for sha in shas]
        except (KeyError, IndexError, TypeError, ValueError):
            self.people, self.records, self._persons, self._index = [], {}, None, None
            self.changed = True
            return None

    def add(self, parsed: Iterable[Commit]) -> None:
        index = self._index
        if index is None:
            index = self._index = {person: n for n, person in enumerate(self.people)}
        people, records = self.people, self.records
        for commit in parsed:
            if commit.sha in records:
                continue
            author = commit.author
            names = [(author.name, author.email)]
            names += [(p.name, p.email) for p in commit.co_authors]
            numbers = []
            for name in names:
                number = index.get(name)
                if number is None:
                    number = index[name] = len(people)
                    people.append(name)
                numbers.append(number)
            fields = commit.__dict__
            records[commit.sha] = (
                numbers[0],
                tuple(numbers[1:]),
                *[fields[name] for name in _RECORDED],
            )
            self.changed = True
        self._persons = None

    def keep_earlier(self, commit: str, lines: Iterable[str]) -> None:
        """Who had changes before ``commit`` (the distinct lines read), kept for the last
        :data:`EARLIER_KEPT` commits asked about."""
        self.earlier.pop(commit, None)
        self.earlier[commit] = tuple(sorted(set(lines)))
        while len(self.earlier) > EARLIER_KEPT:
            del self.earlier[next(iter(self.earlier))]
        self.changed = True

    def save(self) -> None:
        """Write what this holds, if it changed, at once; a git directory that cannot be
        written is left as it is."""
        if not self.changed:
            return
        payload = marshal.dumps((self.people, self.records, self.earlier))
        if write_payload(self.path, _MAGIC, FORMAT, self.key, payload):
            self.changed = False


def _commit(sha: str, record: _Record, persons: list[Person]) -> Commit:
    """The commit a record holds, built as parsing builds it."""
    author, co_authors, *rest = record
    values = dict(zip(_RECORDED, rest, strict=True))
    values.update(
        sha=sha,
        author=persons[author],
        co_authors=tuple([persons[n] for n in co_authors]) if co_authors else (),
    )
    return commit_of(values)

"""The commits of a range, parsed: from one streamed ``git log``, or, for ``release notes``,
from the commit cache where it holds them (:mod:`release.adapters.commit_cache`).

Without the cache (or with an empty one) the log is streamed: its records are parsed
while git is still writing the rest, and the cache, when it may be written, gets them
all. With one, ``git rev-list`` names the range's commits (the order ``git log`` lists
them in: the same walk); only those the cache does not hold are read (``git log
--no-walk --stdin``) and parsed, then added to it. Either way the commits are the same,
in the same order.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from release.adapters.commit_cache import CommitCache, cache_key, cache_path, cache_policy
from release.adapters.git import GitLog, GitRepo
from release.adapters.git_process import GitRead
from release.core.commits import LOG_FORMAT, RECORD_END, Commit, parse_log, parse_records

__all__ = ["RangeCommits"]


class RangeCommits:
    """Starts reading ``spec`` (a revision range) at once; :meth:`commits` parses it.

    ``cached``: use the commit cache as its policy allows (``release notes`` only; tasks
    that change the repository leave its git directory to their journals).
    ``mailmap``: whether a mailmap applies, when reading the range found it out (else None).
    """

    def __init__(
        self, repo: GitRepo, spec: str, aliases: Mapping[str, str], *, cached: bool = False
    ) -> None:
        self.repo, self.spec, self.aliases = repo, spec, aliases
        self.mailmap: bool | None = None
        self._stream: GitLog | None = None
        self._shas: GitRead | None = None
        self._cache: CommitCache | None = None
        read, self._write = cache_policy(os.environ) if cached else (False, False)
        path = cache_path(repo.common_dir)
        if (read or self._write) and repo.replaces_objects():
            read = self._write = False
        unused = None
        if read and path.is_file():
            self._shas = repo.start_range_shas(spec)  # runs while the cache is read
            self._cache = CommitCache.load(path, self._key())
            if not self._cache.records:  # nothing to take from it: read the range whole
                unused, self._shas = self._shas, None
        if self._shas is None:
            self._stream = repo.log_stream(
                "--no-merges", "--end-of-options", spec, fmt=LOG_FORMAT, sep=RECORD_END
            )
        if unused is not None:
            unused.result()  # a short read: let it end (it fails as the log does, if at all)

    def _key(self) -> str:
        fingerprint = self.repo.mailmap_fingerprint()
        self.mailmap = bool(fingerprint)
        return cache_key(self.aliases, fingerprint)

    def commits(self) -> list[Commit]:
        """The range's non-merge commits, newest first (as ``git log`` lists them)."""
        if self._stream is not None:
            parsed = list(parse_records(self._stream, self.aliases))
            if self._write:
                cache = self._cache or CommitCache(cache_path(self.repo.common_dir), self._key())
                cache.add(parsed)
                cache.save()
            return parsed
        assert self._shas is not None and self._cache is not None
        shas = self._shas.out().split()
        self._shas = None
        cache = self._cache
        missing = [sha for sha in shas if sha not in cache]
        if missing:
            text = self.repo.start_commit_log(missing, LOG_FORMAT).out()
            cache.add(parse_log(text, self.aliases))
        found = cache.take(shas)
        if found is None:  # a record that does not unpack: read them all again
            text = self.repo.start_commit_log(shas, LOG_FORMAT).out()
            found = list(parse_log(text, self.aliases))
            cache.add(found)
        if self._write:
            cache.save()
        return found

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
        if self._shas is not None:
            self._shas.result()
            self._shas = None

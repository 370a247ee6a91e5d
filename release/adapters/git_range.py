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
from collections.abc import Iterable, Iterator, Mapping

from release.adapters.commit_cache import CommitCache, cache_key, cache_path, cache_policy
from release.adapters.git import GitLog, GitRepo
from release.adapters.git_log import LOG_FORMAT, parse_log, parse_records, people_of
from release.adapters.git_process import GitRead
from release.core.commits import Commit, Person
from release.core.pull_requests import RepoIdentity

__all__ = ["RangeCommits"]


class RangeCommits:
    """Starts reading the commits after ``since`` up to ``until`` (refs, each peeled to
    the commit it names; ``since`` None: all history) at once; :meth:`commits` parses
    them.

    ``identity``: the repository the commits are of (None: its URL is unknown), which
    decides the PRs they name. ``cached``: use the commit cache as its policy allows
    (``release notes`` only; tasks that change the repository leave its git directory to
    their journals). ``mailmap``: the mailmap's fingerprint
    (:meth:`~release.adapters.git_reads.History.mailmap_fingerprint`), when read already.
    ``since_commit``: the commit ``since`` names, when resolved already.
    :attr:`mailmap`: whether a mailmap applies, when reading the range found it out (else
    None).
    With ``since``, its earlier people (:meth:`people_before`) are read at once, or
    taken from the cache.
    """

    def __init__(
        self,
        repo: GitRepo,
        aliases: Mapping[str, str],
        *,
        identity: RepoIdentity | None,
        since: str | None,
        until: str,
        cached: bool = False,
        mailmap: str | None = None,
        since_commit: str | None = None,
    ) -> None:
        self.repo, self.aliases, self.identity = repo, aliases, identity
        self.mailmap: bool | None = None
        self._fingerprint = mailmap
        self._stream: GitLog | None = None
        self._shas: GitRead | None = None
        self._cache: CommitCache | None = None
        self._before: GitRead | None = None
        self._earlier: tuple[str, ...] | None = None
        self._since: str | None = None  # its sha, when the cache is used
        read, self._write = cache_policy(os.environ) if cached else (False, False)
        path = cache_path(repo.common_dir)
        history = repo.history
        if (read or self._write) and history.rewrites_history():
            read = self._write = False
        warm = read and path.is_file()
        if not warm:  # the log first: it takes longest
            self._start_stream(since, until)
        if since is not None and (read or self._write):
            self._since = since_commit or repo.rev(since)
        unused = None
        if warm:
            # runs while the cache is read
            self._shas = history.start_range_shas(since=since, until=until)
            self._cache = CommitCache.load(path, self._key())
            if self._since is not None:
                self._earlier = self._cache.earlier.get(self._since)
            if not self._cache.records:  # nothing to take from it: read the range whole
                unused, self._shas = self._shas, None
        if since is not None and self._earlier is None:
            self._before = history.start_people(since)
        if self._shas is None and self._stream is None:
            self._start_stream(since, until)
        if self._write and self._stream is not None:
            self._writable()  # (its key is read while git writes the log)
        if unused is not None:
            unused.result()  # a short read: let it end (it fails as the log does, if at all)

    def _start_stream(self, since: str | None, until: str) -> None:
        self._stream = self.repo.history.stream_commits(since=since, until=until)

    def _key(self) -> str:
        fingerprint = self._fingerprint
        if fingerprint is None:
            fingerprint = self.repo.history.mailmap_fingerprint()
        self.mailmap = bool(fingerprint)
        return cache_key(self.aliases, fingerprint, self.identity)

    def commits(self) -> list[Commit]:
        """The range's non-merge commits, newest first (as ``git log`` lists them)."""
        if self._stream is not None:
            records = parse_records(self._stream, self.aliases, repo=self.identity)
            if not self._write:
                return list(records)
            parsed: list[Commit] = []
            # each commit goes into the cache as it is parsed, while git still writes
            self._writable().add(_kept_in(records, parsed))
            return parsed
        assert self._shas is not None and self._cache is not None
        shas = self._shas.out().split()
        self._shas = None
        cache = self._cache
        missing = [sha for sha in shas if sha not in cache]
        if missing:
            text = self.repo.history.start_commit_log(missing, LOG_FORMAT).out()
            cache.add(parse_log(text, self.aliases, repo=self.identity))
        found = cache.take(shas)
        if found is None:  # a record that does not unpack: read them all again
            text = self.repo.history.start_commit_log(shas, LOG_FORMAT).out()
            found = list(parse_log(text, self.aliases, repo=self.identity))
            cache.add(found)
        return found

    def people_before(self) -> list[Person]:
        """Who had commits up to ``since`` (authors as .mailmap says, and co-authors as
        their trailers spell them), each once: read by :meth:`GitRepo.start_people`, or
        its lines kept in the cache."""
        if self._earlier is not None:
            return people_of(self._earlier)
        assert self._before is not None, "people_before needs since"
        lines = self._before.out().splitlines()
        self._before = None
        if self._write and self._since is not None:
            self._writable().keep_earlier(self._since, lines)
        return people_of(lines)

    def _writable(self) -> CommitCache:
        if self._cache is None:
            self._cache = CommitCache(cache_path(self.repo.common_dir), self._key())
        return self._cache

    def close(self) -> None:
        """Stop what still runs; write the cache (once, with all that was read)."""
        if self._stream is not None:
            self._stream.close()
        for running in (self._shas, self._before):
            if running is not None:
                running.result()
        self._shas = self._before = None
        if self._write and self._cache is not None:
            self._cache.save()


def _kept_in(commits: Iterable[Commit], kept: list[Commit]) -> Iterator[Commit]:
    """``commits``, each also appended to ``kept`` as it is handed on."""
    add = kept.append
    for commit in commits:
        add(commit)
        yield commit

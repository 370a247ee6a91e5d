"""Main commits likely on the release branch already, though no ``-x`` line names them and
``git cherry`` does not see them: backports adapted to the branch, found by PR numbers and
title, then by changed lines (:mod:`release.core.backports`).

What a commit changes (its files, its changed lines) is read from git once and kept in
the patch cache (:mod:`release.adapters.patch_cache`) where the run may write it: on a
long real history the patches of most of main are compared, and git takes seconds to diff
them. :class:`Changes` answers from the cache first.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

from release.adapters.commit_cache import cache_policy
from release.adapters.git import GitRepo
from release.adapters.patch_cache import PatchCache, patch_cache_key, patch_cache_path
from release.core import backport_pairs, backports
from release.core.backport_pairs import Moved
from release.core.backports import Evidence, Facts, Message
from release.core.commits import Commit
from release.core.pull_requests import RepoIdentity

__all__ = ["Changes", "likely_backports"]

_FEW = 16  # common lines counted by bisection; more, by counting the whole signature
_V = TypeVar("_V")
FilesOf = Callable[[Sequence[str]], Mapping[str, frozenset[str]]]


class Changes:
    """The files and line signatures of commits: from the patch cache where it holds them,
    else read from git and, when ``remember`` and the cache policy allow, kept. ``identity``:
    the repository the commits are of (None: unknown), whose PR URLs a message may name."""

    def __init__(self, repo: GitRepo, *, remember: bool, identity: RepoIdentity | None) -> None:
        self.repo, self.identity = repo, identity
        read, write = cache_policy(os.environ)
        write = write and remember
        if (read or write) and repo.history.rewrites_history():
            read = write = False
        path = patch_cache_path(repo.common_dir)
        self._cache: PatchCache | None = None
        key = patch_cache_key(identity)
        if read and path.is_file():
            self._cache = PatchCache.load(path, key)
        elif write:
            self._cache = PatchCache(path, key)
        self._keep = self._cache if write else None  # what learns what this run read
        # a shallow clone's boundary commits show as adding every file: not kept
        self._unsure = repo.history.shallow_boundary() if write else set()
        self._totals: dict[str, int] = {}  # commit -> its number of changed lines

    def messages(self, texts: Mapping[str, tuple[str, str]]) -> list[Message]:
        """Commit (subject, body) -> its :class:`Message`, with what it says of backports
        from the cache where held (working it out is regular expressions over every
        message)."""
        cache = self._cache
        out: list[Message] = []
        new: dict[str, Facts] = {}
        for sha, (subject, body) in texts.items():
            facts = cache.facts_of(sha) if cache is not None else None
            if facts is None:
                message = Message(sha, subject, body, self.identity)
                new[sha] = message.facts
            else:
                message = Message.known(sha, subject, body, facts)
            out.append(message)
        if new and self._keep is not None:
            self._keep.add_facts(self._sure(new))
        return out

    def cherry_of(self, key: str) -> set[str] | None:
        """What ``git cherry`` marked for ``key`` (branch tip, main, merge-base), if kept."""
        return self._cache.cherry_of(key) if self._cache is not None else None

    def earlier_cherry(self, key: str) -> list[tuple[str, set[str]]]:
        """(tip, what ``git cherry`` marked) kept for earlier tips of the same branch point
        and main (:meth:`PatchCache.earlier_cherry`)."""
        return self._cache.earlier_cherry(key) if self._cache is not None else []

    def keep_cherry(self, key: str, marked: set[str]) -> None:
        if self._keep is not None:
            self._keep.keep_cherry(key, marked)

    def known_files(self, shas: Iterable[str]) -> dict[str, frozenset[str]]:
        """Those of ``shas`` whose files the cache holds."""
        cache = self._cache
        return _held_by(cache.files_of, shas) if cache is not None and cache.files else {}

    def keep_files(self, files: Mapping[str, frozenset[str]]) -> None:
        if self._keep is not None:
            self._keep.add_files(self._sure(files))

    def lines(self, shas: Sequence[str]) -> dict[str, Counter[int]]:
        """Commit -> the signature of its changed lines (:func:`backports.signature`)."""
        found: dict[str, Counter[int]] = {}
        for sha, held in self._held(shas).items():
            found[sha] = Counter(held)
            self._totals[sha] = len(held)
        missing = [sha for sha in shas if sha not in found]
        return {**found, **self._read(missing)} if missing else found

    def lines_within(self, shas: Sequence[str], within: set[int]) -> dict[str, dict[int, int]]:
        """Commit -> those of its signature's lines that are ``within``, for the commits
        that have any (their number of changed lines is noted for :meth:`totals`). What a
        commit shares with others whose lines are all ``within`` is counted from these
        alone."""
        part: dict[str, dict[int, int]] = {}
        held = self._held(shas)
        for sha, hashes in held.items():
            self._totals[sha] = len(hashes)
            common = within.intersection(hashes)  # one pass in C
            if len(common) > _FEW:  # counted in one pass (in C) too
                counts = Counter(hashes)
                part[sha] = {h: counts[h] for h in common}
            elif common:  # each one's count: its run in the sorted hashes
                part[sha] = {h: bisect_right(hashes, h) - bisect_left(hashes, h) for h in common}
        missing = [sha for sha in shas if sha not in held]
        for sha, lines in self._read(missing).items():
            common = within.intersection(lines)
            if common:
                part[sha] = {h: lines[h] for h in common}
        return part

    def shared(self, pairs: Mapping[str, Sequence[str]]) -> dict[str, dict[str, int]]:
        """Main commit -> branch commit -> how many changed lines they share, for each of
        ``pairs`` (:func:`backports.shared_lines`); the pairs compared before are taken from
        the cache, and only the others read lines. Of a main commit only the lines its
        branch commits have are counted (:meth:`lines_within`)."""
        cache = self._cache
        known = {sha: cache.shared_with(sha) for sha in pairs} if cache is not None else {}
        todo: dict[str, list[str]] = {}
        for sha, others in pairs.items():
            held = known.get(sha, {})
            left = [b for b in others if b not in held]
            if left:
                todo[sha] = left
        new: dict[str, dict[str, int]] = {}
        if todo:
            branch = self.lines(list(dict.fromkeys(b for bs in todo.values() for b in bs)))
            part = self.lines_within(list(todo), set().union(*branch.values()))
            new = backports.shared_lines(part, branch, todo)
            for sha, others in todo.items():  # no line in common: none shared
                new.setdefault(sha, dict.fromkeys(others, 0))
            if self._keep is not None:
                self._keep.add_shared(
                    {sha: self._sure(counts) for sha, counts in self._sure(new).items()}
                )
        return {
            sha: {b: new[sha][b] if b in new.get(sha, {}) else known[sha][b] for b in others}
            for sha, others in pairs.items()
        }

    def totals(self, shas: Iterable[str]) -> dict[str, int]:
        """Commit -> its number of changed lines, for ``shas`` at least: from the cache or
        what this run read."""
        shas = list(shas)
        cache = self._cache
        for sha in shas:
            if sha not in self._totals and cache is not None:
                total = cache.total_of(sha)
                if total is not None:
                    self._totals[sha] = total
        missing = [sha for sha in shas if sha not in self._totals]
        if missing:
            self.lines(missing)
        return self._totals

    def joint(self, sha: str, others: list[str]) -> int:
        """:func:`backports.joint_shared` of main commit ``sha`` and branch commits."""
        lines = self.lines([sha, *others])
        return backports.joint_shared(lines[sha], (lines[b] for b in others))

    def _held(self, shas: Sequence[str]) -> dict[str, array[int]]:
        cache = self._cache
        return _held_by(cache.lines_of, shas) if cache is not None and cache.lines else {}

    def _read(self, shas: Sequence[str]) -> dict[str, Counter[int]]:
        """The signatures of ``shas``, from git (a commit with no patch has none)."""
        if not shas:
            return {}
        read: dict[str, Counter[int]] = {sha: Counter() for sha in shas}
        for text in self.repo.history.patches_in_parts(shas):
            read.update(backports.signatures(text))
        for sha, signed in read.items():
            self._totals[sha] = signed.total()
        if self._keep is not None:
            self._keep.add_lines(self._sure(read))
        return read

    def _sure(self, by_sha: Mapping[str, _V]) -> dict[str, _V]:
        """``by_sha`` without the commits whose change may read otherwise later."""
        return {sha: value for sha, value in by_sha.items() if sha not in self._unsure}

    def save(self) -> None:
        """Write the cache, when this run may and learnt something."""
        if self._keep is not None:
            self._keep.save()


def _held_by(lookup: Callable[[str], _V | None], shas: Iterable[str]) -> dict[str, _V]:
    """Sha -> what ``lookup`` holds for it, for those it holds anything for."""
    found = {sha: lookup(sha) for sha in shas}
    return {sha: value for sha, value in found.items() if value is not None}


def likely_backports(
    shas: Sequence[str],
    messages: Mapping[str, tuple[str, str]],
    live: Sequence[Commit],
    files_of: FilesOf,
    changes: Changes,
    moved: Moved | None = None,
) -> dict[str, Evidence]:
    """Main commits (of ``shas``) likely on the branch, with the evidence: by PR numbers
    and title (:func:`backports.by_message`), then by changed lines, compared only with
    the branch commits the prefilter pairs them with (:mod:`release.core.backport_pairs`:
    the same path, or a file of the same name where ``moved`` says a move explains the
    other path; None: any file of the same name; and never a branch commit too small to
    count). ``messages``: subject and body of every main commit asked about (which one a
    port's quoted numbers belong to); ``live``: the branch commits that stand (not
    reverted), bar ``-x`` picks, which carry the one commit they name."""
    if not live:
        return {}
    main = changes.messages(messages)
    branch = changes.messages({c.sha: (c.subject, c.body) for c in live})
    wanted = set(shas)
    found = {
        sha: evidence
        for sha, evidence in backports.by_message(main, branch).items()
        if sha in wanted
    }
    rest = [sha for sha in shas if sha not in found]
    if not rest:
        return found
    standing = [c.sha for c in live]
    # a revert pairs with a revert only (as for the messages)
    undoes = {m.sha: m.reverts for m in (*main, *branch)}
    pairs = backport_pairs.by_paths(rest, standing, files_of([*rest, *standing]), undoes, moved)
    if pairs:  # the branch side's patches first: few, and their sizes rule pairs out
        paired = list(dict.fromkeys(b for bs in pairs.values() for b in bs))
        pairs = backport_pairs.without_small(pairs, changes.totals(paired))
    if pairs:
        shared = changes.shared(pairs)
        totals = changes.totals([*pairs, *dict.fromkeys(b for bs in pairs.values() for b in bs)])
        found.update(backports.by_counts(shared, totals, totals, changes.joint))
    return found

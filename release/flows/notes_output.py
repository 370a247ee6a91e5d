"""What ``release notes`` prints for a range: the output kept by the notes cache
(:mod:`release.adapters.notes_cache`) when a run with the same inputs was kept, else the
notes built (:func:`release.flows.history.notes_for_range`), rendered and kept. A kept
output is found before any commit is read: the modules that parse them are not loaded.

A range's commits are fixed by the commits its ends resolve to: a commit's sha fixes its
message and its ancestry. So a run's inputs, all in the digest an output is kept under,
are:

- the ends, and the ref whose release's picks are left out, as written (they are printed
  in JSON) and as resolved;
- the format;
- the whole configuration (categories, bots, name merging ...);
- the URL that PR links use (configured, or read from the remote's URL);
- the mailmap (what ``%aN``/``%aE`` and ``git check-mailmap`` apply: the work tree's
  ``.mailmap``, ``mailmap.file`` and ``mailmap.blob``, settings and contents);
- git itself (its executable's path, size and time).

Where a sha does not fix what git says of a range (``git replace`` refs, a grafts file),
the cache is neither read nor written; a shallow clone is refused before.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from release.flows.context import ReleaseContext
from release.flows.notes_range import NotesRange

if TYPE_CHECKING:  # (the cache's modules are loaded where a range has commits)
    from release.adapters.notes_cache import Guessed, NotesCache
    from release.core.notes import Notes

__all__ = ["notes_output"]


def notes_output(ctx: ReleaseContext, rng: NotesRange, fmt: str) -> tuple[str, Guessed]:
    """The notes of ``rng`` rendered in ``fmt`` (``md`` or ``json``), and the category
    spellings they guessed: kept from an earlier run of the same inputs, or built."""
    ctx.require_full_history("notes")
    refs = [rng.since, rng.until, rng.exclude_from]
    named = [ref for ref in refs if ref is not None]
    shas = ctx.repo.revs(named)  # (one git process reads every end)
    if rng.since is not None and shas[0] is not None and shas[0] == shas[1]:
        # the ends are one commit (v1..v1): the notes of no commits, whatever the
        # history, the config or the previous final; nothing is read, nothing kept
        from release.core.notes import build_notes

        return _rendered(
            build_notes((), category_order=(), since=rng.since, until=rng.until), fmt, ""
        )
    repo_url = ctx.repo_url  # (read from the remote's URL when not configured)
    kept = _kept(ctx, (refs, named, shas), fmt, repo_url)
    if kept is not None:
        cache, inputs, _ = kept
        found = cache.get(inputs)
        if found is not None:
            return found
    # only a run whose output was not kept reads and parses commits
    from release.flows.history import notes_for_range

    mailmap = kept[2] if kept is not None else None
    since = shas[0] if rng.since is not None else None
    notes = notes_for_range(ctx, rng, cached=True, mailmap=mailmap, since_commit=since)
    text, guessed = _rendered(notes, fmt, repo_url)
    if kept is not None:
        cache, inputs, _ = kept
        cache.put(inputs, text, guessed)
    return text, guessed


def _rendered(notes: Notes, fmt: str, repo_url: str) -> tuple[str, Guessed]:
    from release.core.notes import render_json, render_markdown

    if fmt == "json":
        return render_json(notes, repo_url=repo_url), notes.guessed
    return render_markdown(notes, repo_url=repo_url), notes.guessed


_Ends = tuple[list[str | None], list[str], list[str | None]]  # as given, named, resolved


def _kept(
    ctx: ReleaseContext, ends: _Ends, fmt: str, repo_url: str
) -> tuple[NotesCache, str, str] | None:
    """The notes cache, this run's key (a digest of the code and of every input) and the
    mailmap's fingerprint; None where no output may be kept (turned off, refs that do not
    resolve here, history a sha does not fix)."""
    import hashlib

    from release.adapters.cache_file import cache_policy
    from release.adapters.notes_cache import NotesCache, code_key, notes_cache_dir

    read, write = cache_policy(os.environ)
    if not read:  # (never written unread)
        return None
    repo = ctx.repo
    refs, named, shas = ends
    if any(not ref or ref.startswith("-") for ref in named):
        return None  # the build says why
    if repo.history.rewrites_history():
        return None
    code = code_key()
    if code is None:
        return None
    if None in shas:
        return None  # not a commit here: the build says so
    mailmap = repo.history.mailmap_fingerprint()
    digest = hashlib.sha256()
    for part in (
        code,
        fmt,
        repr(refs),
        repr(shas),
        repr(ctx.config),
        repo_url,
        mailmap,
        repo.history.git_stamp(),
    ):
        digest.update(part.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
    cache = NotesCache(notes_cache_dir(repo.common_dir), writable=write)
    return cache, digest.hexdigest(), mailmap

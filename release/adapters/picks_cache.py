"""What ``status`` found the release branch holds of main, kept by (branch tip, main): the
picks it counted (:mod:`release.flows.branch_picks`) are a fact of those two commits, so a
``status`` run again on the same two answers without reading either history.

Where: ``release/picks.cache`` in the common git directory, beside the other caches (the
same file format, :mod:`release.adapters.cache_file`), for the last :data:`KEPT` pairs.
The key, given by the caller, is a digest of the code that counts the picks. Read and
written as the other caches are (``RELEASE_REPO_CACHE``); never in a repository whose
history a sha may not name (replace refs, grafts) or in a shallow clone (the branch point
would read otherwise once it is not). :func:`read_picks` never fails; :func:`keep_picks`
never raises.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Sequence
from pathlib import Path

from release.adapters.cache_file import cache_policy, read_payload, write_payload
from release.adapters.git import GitRepo

__all__ = ["KEPT", "Kept", "Pick", "keep_picks", "keep_reverts", "read_picks", "read_reverts"]

FORMAT = 1
KEPT = 8  # (tip, main) pairs kept: a tip moves with every pick
_MAGIC = b"release-picks"

Pick = tuple[str, str, str, str | None, str]  # sha, from, subject, reason, how
Kept = tuple[Pick, ...]


def _path(repo: GitRepo, *, writing: bool) -> Path | None:
    read, write = cache_policy(os.environ)
    if not (write if writing else read):
        return None
    history = repo.history
    if history.rewrites_history() or history.is_shallow():
        return None
    return repo.common_dir / "release" / "picks.cache"


def _load(path: Path, key: str) -> dict[str, Kept]:
    payload, _ = read_payload(path, _MAGIC, FORMAT, key)
    if payload is None:
        return {}
    try:
        found = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return {}
    return found if type(found) is dict else {}


def read_picks(repo: GitRepo, key: str, tip: str, main: str) -> Kept | None:
    """The picks kept for ``tip`` and ``main``, if any."""
    return _read(repo, key, f"{tip} {main}")


def keep_picks(repo: GitRepo, key: str, tip: str, main: str, picks: Sequence[Pick]) -> None:
    """Keep ``picks`` for ``tip`` and ``main`` (the oldest pair goes past :data:`KEPT`)."""
    _keep(repo, key, f"{tip} {main}", picks)


def read_reverts(repo: GitRepo, key: str, tip: str, main: str) -> Kept | None:
    """The reverts on main to pick (:mod:`release.flows.main_reverts`, five fields each)
    kept for ``tip`` and ``main``, if any: a fact of the two commits, as the picks are."""
    return _read(repo, key, f"reverts {tip} {main}")


def keep_reverts(repo: GitRepo, key: str, tip: str, main: str, rows: Sequence[Pick]) -> None:
    _keep(repo, key, f"reverts {tip} {main}", rows)


def _read(repo: GitRepo, key: str, pair: str) -> Kept | None:
    path = _path(repo, writing=False)
    if path is None:
        return None
    found = _load(path, key).get(pair)
    if type(found) is not tuple or not all(type(p) is tuple and len(p) == 5 for p in found):
        return None
    return found


def _keep(repo: GitRepo, key: str, pair: str, rows: Sequence[Pick]) -> None:
    path = _path(repo, writing=True)
    if path is None:
        return
    kept = _load(path, key)
    kept.pop(pair, None)
    kept[pair] = tuple(rows)
    while len(kept) > 2 * KEPT:  # the picks and the reverts of each pair
        del kept[next(iter(kept))]
    write_payload(path, _MAGIC, FORMAT, key, marshal.dumps(kept))

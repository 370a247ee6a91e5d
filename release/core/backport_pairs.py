"""Which main and branch commits are worth comparing by changed lines
(:func:`release.core.backports.by_counts`): the prefilter that decides whose patches are
read at all. Pure: works on the files each commit changes, the paths each side has, and
the size of the branch commits.

Reading a main commit's patch is what finding adapted backports costs (git diffs it, and
its lines are signed); the files a commit changes cost a tree diff, without contents. So
the pairs are narrowed first by what is known without patches:

- **Paths.** A main and a branch commit are paired when they change the same path, or a
  file of the same name at another path that a move explains: the main commit's path is
  not on the branch, or the branch commit's path is not on main (a file moved on one side
  since the cut keeps its name). Two files of one name at paths both sides have
  (``__init__.py`` of two packages, ``test_utils.py`` of two suites) are two files, and
  pair nothing.
- **Size.** A branch commit with fewer changed lines than
  :data:`~release.core.backports.MIN_SHARED` pairs with nothing: no criterion counts a
  branch commit that shares fewer lines than that (a version bump, a one-line pin).

A revert pairs with a revert only (as the messages are compared).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Collection, Mapping, Sequence

from release.core.backports import MIN_SHARED

__all__ = ["Moved", "by_paths", "moved_between", "without_small"]

Moved = Callable[[str, str], bool]  # (main commit's path, branch commit's path) -> a move?


def by_paths(
    main: Sequence[str],
    branch: Sequence[str],
    files: Mapping[str, Collection[str]],
    reverts: Mapping[str, bool],
    moved: Moved | None = None,
) -> dict[str, list[str]]:
    """Main commit -> the branch commits (in ``branch``'s order) that change one of its
    paths, or a file of the same name where ``moved`` says a move explains the other path
    (None: any file of the same name pairs, whatever its path). ``files``: the paths each
    commit changes; ``reverts``: whether a commit undoes one. Main commits that pair with
    none are left out."""
    touching: dict[str, list[tuple[str, str]]] = {}  # file name -> (branch commit, path)
    for b in branch:
        for path in files.get(b, ()):
            touching.setdefault(posixpath.basename(path), []).append((b, path))
    pairs: dict[str, list[str]] = {}
    for sha in main:
        undoes = reverts.get(sha, False)
        found: dict[str, None] = {}
        for path in files.get(sha, ()):
            for b, other in touching.get(posixpath.basename(path), ()):
                if b in found or reverts.get(b, False) is not undoes:
                    continue
                if other == path or moved is None or moved(path, other):
                    found[b] = None
        if found:
            ordered = [b for b in branch if b in found] if len(found) > 1 else list(found)
            pairs[sha] = ordered
    return pairs


def without_small(
    pairs: Mapping[str, Sequence[str]], sizes: Mapping[str, int]
) -> dict[str, list[str]]:
    """``pairs`` without the branch commits of fewer than :data:`MIN_SHARED` changed lines
    (``sizes``), and without the main commits left with none."""
    kept = {
        sha: [b for b in others if sizes.get(b, 0) >= MIN_SHARED] for sha, others in pairs.items()
    }
    return {sha: others for sha, others in kept.items() if others}


def moved_between(on_main: Collection[str], on_branch: Collection[str]) -> Moved:
    """A move explains a main commit's ``path`` and a branch commit's ``other`` (one file
    name) when ``path`` is not on the branch or ``other`` is not on main: ``on_main`` and
    ``on_branch``, the paths of each side's tip."""

    def moved(path: str, other: str) -> bool:
        return path not in on_branch or other not in on_main

    return moved

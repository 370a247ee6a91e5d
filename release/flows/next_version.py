"""Which version to tag next on a release branch (what ``tag`` makes and ``status``
shows): pure, from the release under way and every tag there is."""

from __future__ import annotations

from dataclasses import replace

from release.core.versions import ReleaseVersion, next_rc
from release.errors import RefusedError, UsageError
from release.flows.context import TagInfo

__all__ = ["choose_version"]


def choose_version(
    base: ReleaseVersion,
    requested: ReleaseVersion | None,
    tags: list[TagInfo],
    *,
    first_rc: int = 1,
    patches: bool = False,
) -> ReleaseVersion:
    """The rc or post version to tag now. ``base``: the release under way on the branch
    (:attr:`ReleaseLine.current`); ``patches``: the branch carries patch releases, so once
    ``base`` is final the next tag is the next patch's first rc. A later patch asked for
    by name starts once ``base`` is released. Pure; refuses with what would be valid."""
    ours = [t.version for t in tags if t.version.base == base.base]
    released = any(not v.is_rc for v in ours)
    if requested is None:
        if released and patches:
            following = replace(base.base, patch=base.patch + 1)
            return next_rc(following, [t.version for t in tags], first_rc=first_rc)
        return next_rc(base, ours, first_rc=first_rc)
    if (requested.major, requested.minor) != (base.major, base.minor):
        raise UsageError(f"{requested} is not a version of the {base} release branch")
    if requested.is_final:
        raise UsageError(f"{requested} is a final release; finals are made with promote")
    if requested.base < base.base:
        raise RefusedError(f"{requested} would go back: this branch is on {base} already")
    if requested.base > base.base:
        if not released:
            raise RefusedError(
                f"{requested} is a later patch release, and {base} is not released yet "
                "(promote it first)"
            )
        return choose_version(requested.base, requested, tags, first_rc=first_rc)
    if requested.is_post and not released:
        raise RefusedError(f"{requested} needs the final {base} first (run promote)")
    latest = max(ours, default=None)
    if latest is not None and requested <= latest:
        valid = (
            next_rc(base, ours, first_rc=first_rc)
            if not released
            else replace(base.base, patch=base.patch + 1, rc=first_rc)
            if patches
            else replace(base.base, post=(latest.post or 0) + 1)
        )
        hint = f"; next valid: {valid}"
        raise RefusedError(
            f"{requested} is not greater than the latest tag of this release, {latest}{hint}"
        )
    return requested

"""Which version to tag next on a release branch (what ``tag`` makes and ``status``
shows): pure, from the release under way, every tag there is, and how the project ships
fixes after a final (:class:`~release.core.versions.PatchStyle`): the next patch's rcs
(``v0.18.1-rc1`` on ao's ``release/0.18.0``), the next four-part release (``0.12.0.2``
after ``0.12.0.1``), or a post release, which is made only when asked for by name."""

from __future__ import annotations

from dataclasses import replace

from release.core.versions import PatchStyle, ReleaseVersion, next_rc
from release.errors import RefusedError, UsageError
from release.flows.context import TagInfo

__all__ = ["choose_version", "same_version_tag", "version_to_ask"]


def choose_version(
    base: ReleaseVersion,
    requested: ReleaseVersion | None,
    tags: list[TagInfo],
    *,
    first_rc: int = 1,
    patches: bool = False,
    style: PatchStyle | None = None,
) -> ReleaseVersion:
    """The rc, four-part or post version to tag now. ``base``: the release under way on
    the branch (:attr:`ReleaseLine.current`); ``style``: how fixes after a final ship
    (``patches``, without a style: the branch carries patch releases, else post). Once
    ``base`` is final, the next tag is the next patch's first rc, or the next four-part
    release; a post release only by name. A later patch asked for by name starts once
    ``base`` is released. Pure; refuses with what would be valid."""
    style = style or (PatchStyle.PATCH if patches else PatchStyle.POST)
    ours = [t.version for t in tags if t.version.base == base.base]
    released = any(not v.is_rc for v in ours)
    if requested is None:
        if released and style is PatchStyle.PATCH:
            following = replace(base.base, patch=base.patch + 1, fix=None)
            return next_rc(following, [t.version for t in tags], first_rc=first_rc)
        if released and style is PatchStyle.FOUR_PART:
            return _next_four_part(base, tags)
        return next_rc(base, ours, first_rc=first_rc)
    if (requested.major, requested.minor) != (base.major, base.minor):
        raise UsageError(f"{requested} is not a version of the {base} release branch")
    if requested.is_final and requested.fix is not None:
        return _four_part(base, requested, tags)
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
        return choose_version(requested.base, requested, tags, first_rc=first_rc, style=style)
    if requested.is_post and not released:
        raise RefusedError(f"{requested} needs the final {base} first (run promote)")
    latest = max(ours, default=None)
    if latest is not None and requested <= latest:
        valid = (
            next_rc(base, ours, first_rc=first_rc)
            if not released
            else replace(base.base, patch=base.patch + 1, rc=first_rc, fix=None)
            if style is PatchStyle.PATCH
            else _next_four_part(base, tags)
            if style is PatchStyle.FOUR_PART
            else latest.base.with_post((latest.post or 0) + 1)
        )
        hint = f"; next valid: {valid}"
        raise RefusedError(
            f"{requested} is not greater than the latest tag of this release, {latest}{hint}"
        )
    return requested


def _three(version: ReleaseVersion) -> tuple[int, int, int]:
    return version.major, version.minor, version.patch


def _next_four_part(base: ReleaseVersion, tags: list[TagInfo]) -> ReleaseVersion:
    """One past every four-part release of ``base``'s X.Y.Z there is."""
    fixes = [t.version.fix or 0 for t in tags if _three(t.version) == _three(base)]
    return ReleaseVersion(*_three(base), fix=max(fixes, default=0) + 1)


def _four_part(
    base: ReleaseVersion, requested: ReleaseVersion, tags: list[TagInfo]
) -> ReleaseVersion:
    """A four-part release asked for by name (``0.12.0.2``): after the final of its X.Y.Z,
    past every four-part release of it."""
    if _three(requested) < _three(base):
        raise RefusedError(f"{requested} would go back: this branch is on {base} already")
    shipped = [
        t.version for t in tags if _three(t.version) == _three(requested) and not t.version.is_rc
    ]
    if not shipped:
        final = ReleaseVersion(*_three(requested))
        raise RefusedError(f"{requested} needs the final {final} first (run promote)")
    latest = max(shipped)
    if requested <= latest:
        raise RefusedError(
            f"{requested} is not greater than the latest tag of this release, {latest}; "
            f"next valid: {_next_four_part(requested, tags)}"
        )
    return requested


def version_to_ask(current: ReleaseVersion, tags: list[TagInfo], style: PatchStyle) -> str | None:
    """The version ``tag --version`` must be given after ``current``'s final where ``tag``
    alone makes none: the next post release, in the post style only (a project that ships
    patch or four-part releases is never offered a post release)."""
    shipped = [t.version for t in tags if t.version.base == current.base and not t.version.is_rc]
    if not shipped or style is not PatchStyle.POST:
        return None
    return str(current.base.with_post(max(v.post or 0 for v in shipped) + 1))


def same_version_tag(name: str, version: ReleaseVersion, tags: list[TagInfo]) -> TagInfo | None:
    """A tag there is of ``version`` under another name (``v0.18.1rc1`` for
    ``v0.18.1-rc1``): the version is made already, whatever its spelling."""
    return next((t for t in tags if t.version == version and t.name != name), None)

"""Release versions: one canonical value, many spellings in and out.

``0.31.0rc1``, ``v0.31.0rc1``, ``0.31.0-rc.1`` and ``0.31.0-rc1`` all parse to the
same :class:`ReleaseVersion`; tag, branch, image-tag and SemVer spellings are derived
from it. Pure: no git, no I/O.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import total_ordering
from typing import TYPE_CHECKING

from release.core.patterns import lazy_pattern
from release.errors import ConfigError, RefusedError, VersionError

if TYPE_CHECKING:  # packaging is imported where a version is not spelt canonically
    from packaging.version import Version

__all__ = [
    "PATCH_STYLES",
    "SCHEMES",
    "PatchStyle",
    "ReleaseVersion",
    "TagTemplate",
    "image_tag_for",
    "learned_style",
    "next_rc",
    "parse_version",
    "ref_format_problem",
    "shipping_style",
]

SCHEMES = ("pep440", "semver")

# SemVer-style pre-release spellings people type: 0.31.0-rc.1, 0.31.0-rc1, 0.31.0-RC-1.
_SEMVER_RC = lazy_pattern(r"^(?P<base>\d+\.\d+\.\d+)-rc[.-]?(?P<n>\d+)$", re.IGNORECASE | re.ASCII)
# ...and post releases, including the semver spelling written out below (0.31.0+post.1).
_SEMVER_POST = lazy_pattern(
    r"^(?P<base>\d+\.\d+\.\d+)[-+]post[.-]?(?P<n>\d+)$", re.IGNORECASE | re.ASCII
)
# The canonical PEP 440 spellings this tool writes (0.31.0, 0.31.0rc1, 0.31.0.post1,
# 0.12.0.1): read without packaging, as packaging reads them; any other goes to packaging.
_CANONICAL = lazy_pattern(
    r"(?P<release>\d+\.\d+\.\d+(?:\.[1-9]\d*)?)(?:rc(?P<rc>\d+)|\.post(?P<post>\d+))?",
    re.ASCII,
)
_LONGEST = 64  # characters: no release version is longer (and int() of thousands of digits fails)
_VALID_HELP = "valid: 0.31.0, 0.31.0rc1, 0.31.0-rc.1, v0.31.0rc1, 0.31.0.post1 or 0.31.0.1"


class PatchStyle(StrEnum):
    """How a project ships fixes to a release that is final; the value is how
    ``patch-releases`` in ``[tool.release]`` names it."""

    PATCH = "patch"  # X.Y.(Z+1), with its own rcs, on the same branch (PyTorch, ao)
    FOUR_PART = "four-part"  # X.Y.Z.N, tagged directly (llm-compressor's 0.12.0.1)
    POST = "post"  # X.Y.Z.postN, tagged directly

    def after(self, final: ReleaseVersion, first_rc: int = 1) -> ReleaseVersion:
        """The first release after ``final`` in this style (an rc for PATCH)."""
        if self is PatchStyle.PATCH:
            return ReleaseVersion(final.major, final.minor, final.patch + 1, rc=first_rc)
        if self is PatchStyle.FOUR_PART:
            return ReleaseVersion(final.major, final.minor, final.patch, fix=(final.fix or 0) + 1)
        return final.with_post((final.post or 0) + 1)


PATCH_STYLES = tuple(s.value for s in PatchStyle)


@total_ordering
@dataclass(frozen=True)
class ReleaseVersion:
    """A release version X.Y.Z, or X.Y.Z.N where a project's patch releases have four
    parts (``fix``), optionally an rc (``rc``) or a post release (``post``)."""

    major: int
    minor: int
    patch: int
    rc: int | None = None
    post: int | None = None
    fix: int | None = None  # the fourth part: 0.12.0.1

    # -- spellings -------------------------------------------------------
    @property
    def base(self) -> ReleaseVersion:
        """The final release this version belongs to (``0.31.0`` for ``0.31.0rc2``)."""
        return ReleaseVersion(self.major, self.minor, self.patch, fix=self.fix)

    def with_post(self, post: int) -> ReleaseVersion:
        return ReleaseVersion(self.major, self.minor, self.patch, post=post, fix=self.fix)

    @property
    def is_rc(self) -> bool:
        return self.rc is not None

    @property
    def is_final(self) -> bool:
        return self.rc is None and self.post is None

    @property
    def is_post(self) -> bool:
        return self.post is not None

    @property
    def release(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        return text if self.fix is None else f"{text}.{self.fix}"

    def pep440(self) -> str:
        text = self.release
        if self.rc is not None:
            text += f"rc{self.rc}"
        if self.post is not None:
            text += f".post{self.post}"
        return text

    def semver(self) -> str:
        import semver  # lazy: only the semver spelling needs it

        if self.fix is not None:
            raise VersionError(f"{self.pep440()} has four parts, which SemVer cannot spell")
        pre = f"rc.{self.rc}" if self.rc is not None else None
        if self.post is not None:
            # SemVer has no post releases: spelled as build metadata (0.31.0+post.1), which
            # parse_version reads back; ordering is PEP 440's (order_key), never semver's.
            return str(
                semver.Version(self.major, self.minor, self.patch, build=f"post.{self.post}")
            )
        return str(semver.Version(self.major, self.minor, self.patch, prerelease=pre))

    def spelled(self, scheme: str) -> str:
        return self.semver() if scheme == "semver" else self.pep440()

    def image_tag(self) -> str:
        """The container image tag: ``v0.31.0rc1``."""
        return image_tag_for(self.pep440())

    def packaging(self) -> Version:
        from packaging.version import Version

        return Version(self.pep440())

    def order_key(self) -> tuple[tuple[int, ...], tuple[int, int], tuple[int, int]]:
        """What PEP 440 orders by, as packaging's ``Version`` does for these versions
        (release without trailing zeros, an rc before its final, a post release after):
        comparing two needs no packaging."""
        release = [self.major, self.minor, self.patch, *([] if self.fix is None else [self.fix])]
        while len(release) > 1 and release[-1] == 0:
            release.pop()
        pre = (1, 0) if self.rc is None else (0, self.rc)
        post = (0, 0) if self.post is None else (1, self.post)
        return tuple(release), pre, post

    def next_rc(self) -> ReleaseVersion:
        return ReleaseVersion(
            self.major, self.minor, self.patch, rc=(self.rc or 0) + 1, fix=self.fix
        )

    def __str__(self) -> str:
        return self.pep440()

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, ReleaseVersion):
            return NotImplemented
        return self.order_key() < other.order_key()


def parse_version(text: str, *, first_rc: int = 1) -> ReleaseVersion:
    """Parse any accepted spelling; refuse anything else with what would be valid.

    ``first_rc`` is the number a release's first rc has (``first-rc`` in
    ``[tool.release]``: 1, or 0 as in projects that tag ``X.Y.Zrc0``); a lower rc is
    refused. Tags already made are read with ``first_rc=0``, whatever the setting."""
    raw = text.strip()
    if not raw:
        raise VersionError(f"empty version; {_VALID_HELP}")
    if len(raw) > _LONGEST:
        raise VersionError(
            f"not a version: {raw[:20]!r}... is {len(raw)} characters; {_VALID_HELP}"
        )
    body = raw[1:] if raw[:1] in "vV" else raw
    if not ("0" <= body[:1] <= "9"):
        raise VersionError(f"not a version: {text!r}; {_VALID_HELP}")
    canonical = _canonical(body, first_rc)
    if canonical is not None:
        return canonical
    return _parsed(text, body, first_rc)


def _canonical(body: str, first_rc: int) -> ReleaseVersion | None:
    """``body`` read without packaging where it is spelt as this tool writes versions and
    is valid; None for every other text (:func:`_parsed` answers, or says why not)."""
    match = _CANONICAL.fullmatch(body)
    if match is None:
        return None
    rc = None if match["rc"] is None else int(match["rc"])
    if rc is not None and rc < first_rc:
        return None
    major, minor, patch, *fix = (int(part) for part in match["release"].split("."))
    post = None if match["post"] is None else int(match["post"])
    return ReleaseVersion(major, minor, patch, rc=rc, post=post, fix=fix[0] if fix else None)


def _parsed(text: str, body: str, first_rc: int) -> ReleaseVersion:
    """``body`` (``text`` without its ``v``) read in any spelling packaging reads, or
    refused with what would be valid."""
    from packaging.version import InvalidVersion, Version

    for pattern, field in ((_SEMVER_RC, "rc"), (_SEMVER_POST, "post")):
        match = pattern.match(body)
        if match:
            if field == "rc" and int(match["n"]) < first_rc:
                raise VersionError(_rc_too_low(text, first_rc))
            major, minor, patch = (int(p) for p in match["base"].split("."))
            return ReleaseVersion(major, minor, patch, **{field: int(match["n"])})
    try:
        version = Version(body)
    except InvalidVersion:
        raise VersionError(f"not a version: {text!r}; {_VALID_HELP}") from None
    if len(version.release) not in (3, 4):
        raise VersionError(f"{text!r} must have three parts X.Y.Z, or four X.Y.Z.N; {_VALID_HELP}")
    if version.epoch or version.local or version.dev is not None:
        raise VersionError(
            f"{text!r}: epochs, local and dev versions are not releases; {_VALID_HELP}"
        )
    rc = None
    if version.pre is not None:
        kind, number = version.pre
        if kind != "rc":
            raise VersionError(
                f"{text!r}: only rc pre-releases are cut (got {kind}); {_VALID_HELP}"
            )
        rc = number
    if rc is not None and version.post is not None:
        raise VersionError(f"{text!r}: a post release of an rc is not a release; {_VALID_HELP}")
    if rc is not None and rc < first_rc:
        raise VersionError(_rc_too_low(text, first_rc))
    major, minor, patch, *fix = version.release
    if fix == [0]:
        raise VersionError(f"{text!r}: a four-part release counts from X.Y.Z.1; {_VALID_HELP}")
    return ReleaseVersion(
        major, minor, patch, rc=rc, post=version.post, fix=fix[0] if fix else None
    )


def _rc_too_low(text: str, first_rc: int) -> str:
    return f"{text!r}: rc numbers start at {first_rc} (first-rc in [tool.release]); {_VALID_HELP}"


@dataclass(frozen=True)
class TagTemplate:
    """A tag or branch spelling such as ``v{version}`` or ``releases/v{version}``.

    Fields: ``{version}`` (scheme spelling for tags, ``X.Y.Z`` for branches),
    ``{major}``, ``{minor}``, ``{patch}``.
    """

    template: str
    key: str
    scheme: str = "pep440"
    rc: str = ""  # how an rc is spelt after X.Y.Z ("rc{n}", "-rc{n}", "-rc.{n}"); "": the scheme's

    FIELDS = frozenset({"version", "major", "minor", "patch"})

    def __post_init__(self) -> None:
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(self.template) if f is not None]
        except ValueError as err:
            raise ConfigError(
                f"[tool.release] {self.key}: bad format string {self.template!r}: {err}"
            ) from None
        unknown = [f for f in fields if f not in self.FIELDS]
        if unknown:
            raise ConfigError(
                f"[tool.release] {self.key}: unknown field {{{unknown[0]}}} in {self.template!r}; "
                f"use {{version}}, {{major}}, {{minor}} or {{patch}}"
            )
        if not fields:
            raise ConfigError(
                f"[tool.release] {self.key}: {self.template!r} has no {{version}} field"
            )

    @property
    def carries_patches(self) -> bool:
        """A branch name without the patch number (``release/{major}.{minor}``): one
        branch for X.Y.0 and its patch releases."""
        fields = {f for _, f, _, _ in string.Formatter().parse(self.template) if f is not None}
        return not fields & {"version", "patch"}

    def render(self, version: ReleaseVersion) -> str:
        spelled = version.spelled(self.scheme)
        if self.rc and version.rc is not None:
            spelled = version.release + self.rc.format(n=version.rc)
        return self.template.format(
            version=spelled,
            major=version.major,
            minor=version.minor,
            patch=version.patch,
        )

    def pattern(self) -> re.Pattern[str]:
        out = ""
        for literal, field, _, _ in string.Formatter().parse(self.template):
            out += re.escape(literal)
            if field == "version":
                out += r"(?P<version>[0-9][0-9A-Za-z.+\-]*)"
            elif field is not None:
                out += rf"(?P<{field}>[0-9]{{1,9}})"
        return re.compile("^" + out + "$")

    def parse_any(self, name: str) -> ReleaseVersion | None:
        """The version a tag name spells in any accepted spelling (``rc1``, ``-rc1``,
        ``-rc.1``): every tag of a release counts when numbering the next rc, whichever
        scheme it was made under."""
        found = self.parse(name)
        if found is not None or self.scheme not in SCHEMES:
            return found
        for scheme in SCHEMES:
            other = TagTemplate(self.template, self.key, scheme).parse(name)
            if other is not None:
                return other
        match = self.pattern().match(name)
        if match is None or "version" not in match.groupdict():
            return None
        try:
            return parse_version(match["version"], first_rc=0)
        except VersionError:
            return None

    def parse(self, name: str) -> ReleaseVersion | None:
        """The version a tag or branch name spells, or None when it is not one of ours."""
        match = self.pattern().match(name)
        if not match:
            return None
        groups = match.groupdict()
        if "version" in groups:
            try:
                version = parse_version(groups["version"], first_rc=0)
            except VersionError:
                return None
        else:
            version = ReleaseVersion(
                int(groups["major"]), int(groups.get("minor") or 0), int(groups.get("patch") or 0)
            )
        try:
            spelled = self.render(version)
        except VersionError:
            return None  # four parts under a semver template
        if spelled != name:
            return None  # e.g. a semver spelling under a pep440 template
        return version


def image_tag_for(version: str) -> str:
    """A PEP 440 version as a container image tag: ``v`` before it, and its local part joined
    with ``-``, since docker tags allow no ``+`` (``0.31.0rc1+dirty`` -> ``v0.31.0rc1-dirty``;
    a normalized PEP 440 version has no ``-`` of its own). Pure."""
    return "v" + version.replace("+", "-")


def ref_format_problem(name: str) -> str | None:
    """Why git would refuse ``name`` as a branch or tag name (``git check-ref-format
    --branch`` rules, and no leading ``-``, which git would read as an option); None when it
    is fine. Pure."""
    rules = (
        (not name, "it is empty"),
        (name.startswith("-"), "it begins with '-'"),
        (name == "@", "it is '@'"),
        (name.endswith("/") or name.startswith("/") or "//" in name, "it has an empty part"),
        (name.endswith("."), "it ends with '.'"),
        (".." in name, "it contains '..'"),
        ("@{" in name, "it contains '@{'"),
        (any(ord(ch) < 32 or ord(ch) == 127 for ch in name), "it contains a control character"),
        (any(ch in name for ch in " ~^:?*[\\"), "it contains one of: space ~ ^ : ? * [ \\"),
    )
    for broken, why in rules:
        if broken:
            return why
    for part in name.split("/"):
        if part.startswith("."):
            return f"its part {part!r} begins with '.'"
        if part.endswith(".lock"):
            return f"its part {part!r} ends with '.lock'"
    return None


def next_rc(
    base: ReleaseVersion, existing: Iterable[ReleaseVersion], *, first_rc: int = 1
) -> ReleaseVersion:
    """The next rc of ``base``: one past every rc of it that exists anywhere (``first_rc``
    when there is none).

    Refuses when the final (or a post release) of ``base`` already exists, since an
    rc after the final would go back in version order.
    """
    ours = [v for v in existing if v.base == base.base]
    shipped = [v for v in ours if not v.is_rc]
    if shipped:
        latest = max(shipped)
        raise RefusedError(
            f"{latest} is already released; an rc of {base.base} would go back "
            f"(cut a new release, or tag {latest.base.with_post((latest.post or 0) + 1)})"
        )
    rcs = [v.rc for v in ours if v.rc is not None]
    number = max(rcs, default=first_rc - 1) + 1
    return ReleaseVersion(base.major, base.minor, base.patch, rc=number)


def shipping_style(version: ReleaseVersion) -> PatchStyle | None:
    """How ``version`` ships a fix after a final, where it does: ``0.12.0.1`` four-part,
    ``0.31.0.post1`` post, ``0.14.1`` (or its rcs) patch; None for an X.Y.0 or its rcs."""
    if version.fix is not None:
        return PatchStyle.FOUR_PART
    if version.post is not None:
        return PatchStyle.POST
    return PatchStyle.PATCH if version.patch > 0 else None


def learned_style(versions: Iterable[ReleaseVersion], *, carries_patches: bool) -> PatchStyle:
    """How a project's tags ship fixes after a final: as its newest release past X.Y.0
    does (llm-compressor shipped ``0.8.1`` once, and four-part releases since); with none
    yet, patch on a branch that carries patch releases, else post (vLLM's)."""
    shipped = [v for v in versions if shipping_style(v) is not None]
    if not shipped:
        return PatchStyle.PATCH if carries_patches else PatchStyle.POST
    newest = shipping_style(max(shipped))
    assert newest is not None
    return newest

"""What a repository's names say about its release conventions, for ``release init``:
release branches (``releases/v0.13.0``, ``release/2.5``, ``release-0.10.0``) and tag
spellings (``v0.13.0rc1``, ``v2.5.0-rc1``, ``v1.0.0-rc.1``, ``0.12.0``). Each guess says
what it was guessed from and how many of the release-looking names it reads. A spelling the configuration cannot express is a note, never a value.
Pure: the names are read by :mod:`release.adapters.repo_facts`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from release.core.tag_survey import survey
from release.core.versions import (
    PatchStyle,
    ReleaseVersion,
    TagTemplate,
    ref_format_problem,
    shipping_style,
)
from release.errors import ConfigError

__all__ = ["Guess", "guess_branch", "guess_patch_releases", "guess_tags"]

_BRANCH = re.compile(r"^(?P<prefix>.*release[s]?[/_-]v?)(?P<version>\d+\.\d+(?:\.\d+)?)$", re.I)
_TAG = re.compile(r"^(?P<prefix>[A-Za-z_./-]*?)(?P<base>\d+\.\d+\.\d+)(?P<suffix>.*)$")
# a tag's pre-release spelling -> the version scheme that spells it; None: no scheme does
# an rc's spelling -> (its pattern, the version-scheme, the rc-spelling it needs beyond it)
_SPELLINGS: dict[str, tuple[re.Pattern[str], str, str | None]] = {
    "X.Y.ZrcN": (re.compile(r"^rc(?P<n>\d+)$"), "pep440", None),
    "X.Y.Z-rc.N": (re.compile(r"^-rc\.(?P<n>\d+)$"), "semver", None),
    "X.Y.Z-rcN": (re.compile(r"^-rc(?P<n>\d+)$"), "pep440", "-rc{n}"),  # PyTorch's
}
_FINAL = re.compile(r"^(?:\.post\d+|\.[1-9]\d*)?$")
_READS = "release reads X.Y.Z, X.Y.ZrcN, X.Y.Z.postN and X.Y.Z.N"


@dataclass(frozen=True)
class Guess:
    """One key of ``[tool.release]`` and where its value came from; ``value`` None: the
    key is left at its default and ``why`` says why (a spelling it cannot express)."""

    key: str
    value: str | int | bool | tuple[str, ...] | None
    why: str


def _listed(names: list[str], limit: int = 3) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def guess_branch(branches: Iterable[str]) -> Guess | None:
    """The release branch template most of the release-looking branch names follow, and
    how many of them it reads."""
    seen: dict[str, list[str]] = {}
    branches = list(branches)
    looking = [b for b in branches if b.lower().startswith("release") and re.search(r"\d", b)]
    for name in branches:
        match = _BRANCH.match(name)
        if match is None or any(c in match["prefix"] for c in "{}"):
            continue
        field = "{version}" if match["version"].count(".") == 2 else "{major}.{minor}"
        seen.setdefault(match["prefix"] + field, []).append(name)
    for template, names in sorted(seen.items(), key=lambda kv: -len(kv[1])):
        try:
            TagTemplate(template, "branch")
        except ConfigError:
            continue
        if ref_format_problem(template.format(version="0.31.0", major=0, minor=31)) is None:
            why = f"{len(names)} of the {len(looking)} release branches ({_listed(sorted(names))})"
            others = sorted(set(looking) - set(names))
            return Guess(
                "branch", template, why + (f"; not read: {_listed(others)}" if others else "")
            )
    return None


def guess_tags(tags: Iterable[str]) -> list[Guess]:
    """``tag``, ``version-scheme``, ``rc-spelling`` and ``first-rc`` as the release tags
    spell them."""
    prefixes: Counter[str] = Counter()
    tags = list(tags)
    tags_seen: list[str] = []
    spellings: dict[str, list[str]] = {}
    rc_numbers: list[int] = []
    for name in tags:
        match = _TAG.match(name)
        if match is None:
            continue
        suffix = match["suffix"]
        kind = next((k for k, (p, _, _) in _SPELLINGS.items() if p.match(suffix)), None)
        if kind is None and not _FINAL.match(suffix):
            continue
        prefixes[match["prefix"]] += 1
        tags_seen.append(name)
        if kind is not None:
            spellings.setdefault(kind, []).append(name)
            found = _SPELLINGS[kind][0].match(suffix)
            assert found is not None
            rc_numbers.append(int(found["n"]))
    if not prefixes:
        return []
    prefix, _ = prefixes.most_common(1)[0]
    out: list[Guess] = []
    tagged = sorted(n for names in spellings.values() for n in names)
    kind = max(spellings, key=lambda k: len(spellings[k])) if spellings else None
    scheme = _SPELLINGS[kind][1] if kind is not None else "pep440"
    if ref_format_problem(f"{prefix}0.31.0") is None and "{" not in prefix and "}" not in prefix:
        rc = _SPELLINGS[kind][2] if kind is not None else None
        read = survey(TagTemplate(prefix + "{version}", "tag", scheme, rc or ""), tags)
        why = (
            f"{len(read.read)} of the {len(read.looking)} release tags ({_listed(list(read.read))})"
        )
        if read.unread:
            why += f"; not read: {_listed(list(read.unread))}"
            if all(t.startswith(prefix) for t in read.unread):
                why += f" ({_READS})"
        out.append(Guess("tag", prefix + "{version}", why))
        template = TagTemplate(prefix + "{version}", "tag", scheme, rc or "")
        out += guess_patch_releases({n: template.parse_any(n) for n in read.read})
    if kind is not None:
        out.append(Guess("version-scheme", scheme, f"the rc tags {_listed(spellings[kind])}"))
        rc = _SPELLINGS[kind][2]
        if rc is not None:
            out.append(Guess("rc-spelling", rc, f"the rc tags {_listed(spellings[kind])}"))
        if 0 in rc_numbers:
            zero = [n for n in tagged if n.endswith(("rc0", "rc.0"))]
            out.append(Guess("first-rc", 0, f"the rc tags that start at 0: {_listed(zero)}"))
    return out


_SAID = {
    PatchStyle.PATCH: "a patch release",
    PatchStyle.FOUR_PART: "a four-part release",
    PatchStyle.POST: "a post release",
}


def guess_patch_releases(tags: dict[str, ReleaseVersion | None]) -> list[Guess]:
    """``patch-releases``: how the newest release past an X.Y.0 shipped (tag name ->
    version); none where no tag ships a fix after a final."""
    shipped = {n: v for n, v in tags.items() if v is not None and shipping_style(v)}
    if not shipped:
        return []
    newest = max(shipped, key=lambda n: shipped[n])
    style = shipping_style(shipped[newest])
    assert style is not None
    counts = {s: sum(shipping_style(v) is s for v in shipped.values()) for s in PatchStyle}
    told = ", ".join(f"{n} {s.value}" for s, n in counts.items() if n)
    why = f"the newest release after a final, {newest}: {_SAID[style]} (tags: {told})"
    return [Guess("patch-releases", style.value, why)]

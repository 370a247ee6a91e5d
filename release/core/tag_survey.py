"""A repository's tags held against a tag template: which tags look like releases (a
version in any spelling after a prefix of no digits: ``v0.13.0rc1``, ``0.12.0.1``,
``v2.5.0-rc1``), which of them a template reads, and the template that would read the
most. ``release check`` says a template that reads none of them is a problem; ``release
init`` says how many its guess reads. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from release.core.versions import TagTemplate, ref_format_problem
from release.errors import ConfigError

__all__ = ["TagSurvey", "best_template", "release_looking", "survey"]

_RELEASE = re.compile(r"^(?P<prefix>[^0-9]*)(?P<version>\d+(?:\.\d+)+\S*)$")
_SEMVER = re.compile(r"^\d+\.\d+\.\d+-(?:rc|alpha|beta|a|b)[.-]?\d+$", re.I)


def _version_text(tag: str) -> str | None:
    match = _RELEASE.match(tag)
    if match is None or len(match["version"]) > 64:
        return None
    text = match["version"]
    try:
        Version(text)
    except InvalidVersion:
        return text if _SEMVER.match(text) else None
    return text


def _prefix(tag: str) -> str:
    match = _RELEASE.match(tag)
    return match["prefix"] if match else ""


def release_looking(tags: Iterable[str]) -> list[str]:
    """The tags that name a version in some spelling, in the order given."""
    return [t for t in tags if _version_text(t) is not None]


def best_template(tags: Iterable[str]) -> tuple[str, list[str]] | None:
    """The ``PREFIX{version}`` template that reads the most of ``tags``, and those it
    reads; None where none reads any."""
    looking = release_looking(tags)
    best: tuple[str, list[str]] | None = None
    for prefix in dict.fromkeys(_prefix(t) for t in looking):
        if "{" in prefix or "}" in prefix or ref_format_problem(f"{prefix}0.1.0") is not None:
            continue
        try:
            template = TagTemplate(prefix + "{version}", "tag")
        except ConfigError:
            continue
        read = [t for t in looking if template.parse_any(t) is not None]
        if read and (best is None or len(read) > len(best[1])):
            best = (template.template, read)
    return best


@dataclass(frozen=True)
class TagSurvey:
    looking: tuple[str, ...]  # the release-looking tags
    read: tuple[str, ...]  # those the template reads

    @property
    def unread(self) -> tuple[str, ...]:
        return tuple(t for t in self.looking if t not in set(self.read))


def survey(template: TagTemplate, tags: Iterable[str]) -> TagSurvey:
    looking = release_looking(tags)
    return TagSurvey(tuple(looking), tuple(t for t in looking if template.parse_any(t)))

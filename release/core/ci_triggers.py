"""Which release tags start which CI pipeline, spelt from the tag template and the version
scheme: an rc or a post release (``v0.31.0rc1``, ``v0.31.0.post1``) is built, smoked,
snapshotted and published; a final (``v0.31.0``) is only promoted from its last rc.

Two spellings of each kind: GitHub's filter patterns (``on.push.tags``, which must match
the whole tag) and a regular expression for Buildkite's conditionals (``build.tag =~
/.../``, RE2), and Python's. An rc pattern accepts every rc spelling the tag parser
accepts (``rc1``, ``-rc1``, ``-rc.1``), a post pattern every post spelling (``.post1``,
``-post1``, ``+post.1``), as a tag pushed by hand may spell it. Pure.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass

from release.core.versions import TagTemplate

__all__ = ["BUILT", "KINDS", "PROMOTED", "TagKinds", "tag_kinds"]

KINDS = ("rc", "post", "final")
BUILT = ("rc", "post")  # tags whose images are built
PROMOTED = ("final",)  # tags whose images are the last rc's

_NUMBER_GLOB = "[0-9]+"
_NUMBER_RE = "[0-9]+"
_RELEASE_RE = r"[0-9]+\.[0-9]+\.[0-9]+"
# GitHub filter patterns: one pattern per spelling (a pattern has no alternation)
_SUFFIX_GLOBS = {
    "rc": ("rc[0-9]+", "-rc[0-9]+", "-rc.[0-9]+"),
    "post": (".post[0-9]+", "-post[0-9]+", "\\+post.[0-9]+"),
    "final": ("",),
}
_SUFFIX_RE = {"rc": r"-?rc\.?[0-9]+", "post": r"([.-]post|\+post\.)[0-9]+", "final": ""}
_GLOB_SPECIAL = set("*?+[]!\\")


@dataclass(frozen=True)
class TagKinds:
    """The tag patterns of one repository's releases."""

    template: TagTemplate

    def globs(self, kinds: tuple[str, ...]) -> list[str]:
        """GitHub filter patterns of the tags of ``kinds``."""
        return [glob for kind in kinds for glob in self._globs(kind)]

    def regex(self, kinds: tuple[str, ...]) -> str:
        """One regular expression (RE2 and Python alike) of the tags of ``kinds``."""
        versions = "|".join(f"{_RELEASE_RE}{_SUFFIX_RE[k]}" for k in kinds)
        spelt = self._spelt(_re_literal, f"({versions})", _NUMBER_RE)
        return "^" + spelt + "$"

    def kind_of(self, tag: str) -> str | None:
        """The kind of ``tag`` (rc, post or final); None for a tag of no release."""
        for kind in KINDS:
            if re.match(self.regex((kind,)), tag):
                return kind
        return None

    def _globs(self, kind: str) -> list[str]:
        release = ".".join([_NUMBER_GLOB] * 3)
        return [
            self._spelt(_glob_literal, release + suffix, _NUMBER_GLOB)
            for suffix in _SUFFIX_GLOBS[kind]
        ]

    def _spelt(self, quote: Callable[[str], str], version: str, number: str) -> str:
        out = ""
        for text, field, _, _ in string.Formatter().parse(self.template.template):
            out += quote(text)
            if field == "version":
                out += version
            elif field is not None:
                out += number
        return out


def _re_literal(text: str) -> str:
    # "/" too: Buildkite's conditionals write a regular expression between slashes
    return re.escape(text).replace("/", "\\/")


def _glob_literal(text: str) -> str:
    return "".join("\\" + ch if ch in _GLOB_SPECIAL else ch for ch in text)


def tag_kinds(template: TagTemplate) -> TagKinds:
    return TagKinds(template)

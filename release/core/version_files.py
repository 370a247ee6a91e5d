"""The files that keep a project's version, and how fixes after a final are versioned:
``version-files`` and ``patch-releases`` of ``[tool.release]``, and the edit that sets a
version file to a release.

A version file is one of three kinds, by its name: ``pyproject.toml`` (its ``[project]``
table's ``version = "..."`` line), a Python file (its ``__version__ = "..."`` line), or a
plain file such as ``version.txt`` or ``VERSION`` (its first line is the version, as
pytorch/ao keeps it). A file gets its release's version without the rc (``0.14.1`` for
``v0.14.1-rc1``; ``0.12.0.1``; ``0.18.0.post1``), as ao's ``version.txt`` says ``0.14.1``
from its first rc on. Only the version is changed; every other byte of the file stays.
The files are untrusted text: matched by pattern, never run. Pure: the files are read
and written by the flows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from release.core.patterns import lazy_pattern
from release.core.terminal_text import escaped
from release.core.tree_paths import tree_relative
from release.core.versions import PATCH_STYLES, PatchStyle, ReleaseVersion
from release.errors import ConfigError, RefusedError

__all__ = [
    "VersionEdit",
    "file_version",
    "kept_version",
    "patch_releases",
    "set_version",
    "version_files",
]

_VALUE = r"(?P<value>[0-9A-Za-z.+_-]{1,64})"
_DUNDER = lazy_pattern(
    r"(?m)^(?P<head>__version__\s*(?::\s*str\s*)?=\s*(?P<q>[\"']))" + _VALUE + r"(?P=q)"
)
_PROJECT = lazy_pattern(r"(?m)^\[project\][ \t]*(?:#[^\n]*)?$")
_TABLE = lazy_pattern(r"(?m)^\s*\[")
_TOML_VERSION = lazy_pattern(r"(?m)^(?P<head>version\s*=\s*(?P<q>[\"']))" + _VALUE + r"(?P=q)")
_PLAIN = lazy_pattern(r"\A(?P<head>\s*)" + _VALUE + r"(?=\s|\Z)")


def patch_releases(value: object) -> PatchStyle | None:
    """``patch-releases``: how fixes after a final ship; None where it is not set."""
    if value is None:
        return None
    if not isinstance(value, str) or value not in PATCH_STYLES:
        raise ConfigError(
            f"[tool.release] patch-releases: {value!r} is not one of {', '.join(PATCH_STYLES)} "
            "(patch: X.Y.(Z+1) with its rcs; four-part: X.Y.Z.N; post: X.Y.Z.postN)"
        )
    return PatchStyle(value)


def version_files(value: object) -> tuple[str, ...]:
    """``version-files``: paths in the work tree, each named once."""
    if not isinstance(value, list) or not all(isinstance(p, str) and p.strip() for p in value):
        raise ConfigError(
            '[tool.release] version-files: expected a list of paths, e.g. ["version.txt"]'
        )
    paths = tuple(tree_relative("[tool.release] version-files", p) for p in value)
    if len(set(paths)) != len(paths):
        raise ConfigError("[tool.release] version-files: a path is named twice")
    return paths


def file_version(version: ReleaseVersion) -> str:
    """What a version file says for ``version``: the release, without its rc."""
    return ReleaseVersion(
        version.major, version.minor, version.patch, post=version.post, fix=version.fix
    ).pep440()


@dataclass(frozen=True)
class VersionEdit:
    """One version file set to a release: its text before and after."""

    path: str
    old: str  # the version it said
    new: str
    before: str
    after: str

    def diff(self) -> list[str]:
        """The changed line, as a unified diff shows it (printable whatever the file holds)."""
        old_line, new_line = _line_at(self.before, self.old), _line_at(self.after, self.new)
        return [
            f"--- a/{escaped(self.path)}",
            f"+++ b/{escaped(self.path)}",
            f"-{escaped(old_line)}",
            f"+{escaped(new_line)}",
        ]


def _line_at(text: str, value: str) -> str:
    return next((line for line in text.splitlines() if value in line), value)


def _match(path: str, text: str) -> re.Match[str] | None:
    name = path.rsplit("/", 1)[-1]
    if name == "pyproject.toml":
        table = _PROJECT.search(text)
        if table is None:
            return None
        end = _TABLE.search(text, table.end())
        return _TOML_VERSION.search(text, table.end(), end.start() if end else len(text))
    if name.endswith(".py"):
        return _DUNDER.search(text)
    return _PLAIN.match(text)


def kept_version(path: str, text: str) -> str | None:
    """The version the file ``path`` keeps where it is one to set when tagging (a release,
    or a pre-release of one such as ``0.12.0a0``); None for none, or a placeholder
    (``0.0.0``) that the build replaces."""
    from packaging.version import InvalidVersion, Version

    found = _match(path, text)
    if found is None:
        return None
    try:
        version = Version(found["value"])
    except InvalidVersion:
        return None
    return found["value"] if any(version.release) and not version.local else None


def set_version(path: str, text: str, version: ReleaseVersion) -> VersionEdit | None:
    """``text`` of the version file ``path`` with its version set to ``version``'s (None
    when it says so already); refused where the file keeps no version we can read."""
    found = _match(path, text)
    if found is None:
        where = (
            'version = "..." line in its [project] table' if path.endswith("pyproject.toml")
            else '__version__ = "..." line' if path.endswith(".py")
            else "version on its first line"
        )  # fmt: skip
        raise RefusedError(
            f"version file {path} keeps no {where}; fix it, or take it out of "
            "version-files in [tool.release] (nothing changed)"
        )
    new = file_version(version)
    if found["value"] == new:
        return None
    after = text[: found.start("value")] + new + text[found.end("value") :]
    return VersionEdit(path, found["value"], new, text, after)

"""Paths a config names in the work tree (the changelog, the picks file, an image's build
context and Dockerfile), checked as written, on load: relative, not leaving the tree
(``..``), not into ``.git``, and with no control character (NUL, a newline). Pure: where a path really leads
(a symlink in the tree) is checked where it is used (:mod:`release.adapters.files`).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from release.errors import ConfigError

__all__ = ["tree_relative"]


def tree_relative(where: str, value: str) -> str:
    """``value`` as written, if it is a path inside the work tree, relative to it; else a
    :class:`ConfigError` naming ``where`` (``[tool.release] changelog``)."""
    parts = PurePosixPath(value.replace("\\", "/")).parts
    if value.startswith(("/", "~")) or PurePosixPath(value).is_absolute():
        raise ConfigError(f"{where}: {value!r} must be a path inside the work tree, relative to it")
    if ".." in parts:
        raise ConfigError(f"{where}: {value!r} leads out of the work tree ('..')")
    if parts[:1] == (".git",):
        raise ConfigError(f"{where}: {value!r} is inside the git directory")
    if any(ch < " " or ch == "\x7f" for ch in value):  # NUL, newlines, escapes
        raise ConfigError(f"{where}: {value!r} is not a usable file name")
    return value

"""The target's ``pyproject.toml``, read as a file of its work tree: a symlink may lead to
a file inside the tree, never out of it (``-> /etc/...``, ``-> /dev/zero``), and only a
regular file of a sane size is read, never a FIFO waited on (:mod:`release.adapters.files`).
What it says is :func:`release.core.config.config_from_text`'s to validate.
"""

from __future__ import annotations

from pathlib import Path

from release.adapters.files import read_tree_text
from release.core.config import Config, config_from_mapping, parse_pyproject, release_table
from release.core.table_names import misspelt_notices
from release.errors import ConfigError

__all__ = ["CONFIG_FILE", "load_config", "read_config"]

CONFIG_FILE = "pyproject.toml"


def load_config(root: Path) -> Config:
    """``[tool.release]`` of ``root/pyproject.toml``; defaults when there is no such file."""
    return read_config(root)[0]


def read_config(root: Path) -> tuple[Config, tuple[str, ...]]:
    """:func:`load_config`, and what a run should say about how the file was read: a table
    under ``[tool]`` one edit away from ``release`` is not read (``[tool.relase]``)."""
    found = read_tree_text(root, CONFIG_FILE, CONFIG_FILE, error=ConfigError)
    if found is None:
        return Config(), ()
    document = parse_pyproject(found.text, CONFIG_FILE)
    notices = tuple(misspelt_notices(document, CONFIG_FILE))
    return config_from_mapping(release_table(document)), notices

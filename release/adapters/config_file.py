"""The target's ``pyproject.toml``, read as a file of its work tree: a symlink may lead to
a file inside the tree, never out of it (``-> /etc/...``, ``-> /dev/zero``), and only a
regular file of a sane size is read, never a FIFO waited on (:mod:`release.adapters.files`).
What it says is :func:`release.core.config.config_from_text`'s to validate.
"""

from __future__ import annotations

from pathlib import Path

from release.adapters.files import read_tree_text
from release.core.config import Config, config_from_text
from release.errors import ConfigError

__all__ = ["CONFIG_FILE", "load_config"]

CONFIG_FILE = "pyproject.toml"


def load_config(root: Path) -> Config:
    """``[tool.release]`` of ``root/pyproject.toml``; defaults when there is no such file."""
    found = read_tree_text(root, CONFIG_FILE, CONFIG_FILE, error=ConfigError)
    return Config() if found is None else config_from_text(found.text, CONFIG_FILE)

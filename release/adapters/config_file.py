"""The target's ``pyproject.toml``, read as a file of its work tree: a symlink may lead to
a file inside the tree, never out of it (``-> /etc/...``, ``-> /dev/zero``), and only a
regular file of a sane size is read, never a FIFO waited on (:mod:`release.adapters.files`).
What it says is :func:`release.core.config.config_from_text`'s to validate.

A configuration from outside the tree, the user's own: ``RELEASE_CONFIG=FILE`` (or
``release --config FILE``) names a TOML file whose ``[tool.release]`` table, or else whose
keys, are the configuration instead of ``pyproject.toml``'s: to try one without
committing it (an edited ``pyproject.toml`` is a dirty tree), or for a repository with
none. Each run says where its configuration came from.

A tag's configuration is its commit's ``pyproject.toml``, read from git as committed
(:func:`committed_config`): what the tag builds, whatever the work tree holds now; where
the run's configuration comes from outside the tree, that file stands for every commit's.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from release.adapters.files import MAX_TREE_FILE, read_regular, read_tree_text
from release.adapters.git import GitRepo
from release.core.config import (
    Config,
    config_from_mapping,
    config_from_text,
    parse_pyproject,
    release_table,
)
from release.core.table_names import misspelt_notices
from release.errors import ConfigError

if TYPE_CHECKING:  # imported where a project's metadata is read (init, check)
    from release.core.project_meta import ProjectMeta

__all__ = [
    "CONFIG_ENV",
    "CONFIG_FILE",
    "committed_config",
    "load_config",
    "read_config",
    "tree_project",
]

CONFIG_FILE = "pyproject.toml"
CONFIG_ENV = "RELEASE_CONFIG"  # a configuration file from outside the tree (--config)


def load_config(root: Path) -> Config:
    """``[tool.release]`` of ``root/pyproject.toml``; defaults when there is no such file."""
    return read_config(root)[0]


def read_config(root: Path, given: Path | None = None) -> tuple[Config, tuple[str, ...]]:
    """:func:`load_config`, and what a run should say about how the file was read: a table
    under ``[tool]`` one edit away from ``release`` is not read (``[tool.relase]``).
    ``given``: the run's configuration from outside the tree (``--config``); None: the
    one ``$RELEASE_CONFIG`` names, if any."""
    given = given if given is not None else outside_file()
    if given is not None:
        return _outside(given)
    found = read_tree_text(root, CONFIG_FILE, CONFIG_FILE, error=ConfigError)
    if found is None:
        return Config(), ()
    document = parse_pyproject(found.text, CONFIG_FILE)
    notices = tuple(misspelt_notices(document, CONFIG_FILE))
    return config_from_mapping(release_table(document)), notices


def committed_config(repo: GitRepo, commit: str, name: str) -> Config:
    """The configuration ``commit`` (of the tag ``name``) was made with: ``[tool.release]``
    of its ``pyproject.toml`` as committed, or this run's file from outside the tree
    (``$RELEASE_CONFIG``); defaults when it has none. Only a regular file of a sane size is
    read, as in the work tree."""
    given = outside_file()
    if given is not None:
        return _outside(given)[0]
    what = f"{CONFIG_FILE} of {name}"
    text = repo.committed_text(commit, CONFIG_FILE, what, limit=MAX_TREE_FILE, error=ConfigError)
    return Config() if text is None else config_from_text(text, what)


def outside_file() -> Path | None:
    """The configuration file from outside the tree this run reads (``$RELEASE_CONFIG``,
    which ``release --config`` sets), if any."""
    given = os.environ.get(CONFIG_ENV)
    return Path(given) if given else None


def tree_config(root: Path) -> Config | None:
    """The work tree's own ``[tool.release]``, whatever ``$RELEASE_CONFIG`` says; None when
    there is none (or it does not load: the run's own configuration is what is checked)."""
    try:
        found = read_tree_text(root, CONFIG_FILE, CONFIG_FILE, error=ConfigError)
        table = release_table(parse_pyproject(found.text, CONFIG_FILE)) if found else None
        return config_from_mapping(table) if table else None
    except ConfigError:
        return None


def tree_project(root: Path) -> ProjectMeta:
    """What the work tree's ``pyproject.toml`` says of the project in its ``[project]``
    (:mod:`release.core.project_meta`), whatever ``$RELEASE_CONFIG`` says: the project is
    the tree's. A file that does not read as TOML is refused as the configuration is."""
    from release.core.project_meta import ProjectMeta, project_meta

    found = read_tree_text(root, CONFIG_FILE, CONFIG_FILE, error=ConfigError)
    return project_meta(parse_pyproject(found.text, CONFIG_FILE)) if found else ProjectMeta()


def _outside(path: Path) -> tuple[Config, tuple[str, ...]]:
    """The configuration in ``path`` (``$RELEASE_CONFIG``): its ``[tool.release]``, else
    the whole file as the table."""
    what = f"{CONFIG_ENV} {path}"
    data = read_regular(path, what, error=ConfigError)
    if data is None:
        raise ConfigError(f"{what}: no such file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{what}: not UTF-8 text") from None
    document = parse_pyproject(text, str(path))
    table = release_table(document) if "tool" in document else document
    notices = tuple(misspelt_notices(document, str(path))) if "tool" in document else ()
    said = f"configuration: {path} ({CONFIG_ENV}), not {CONFIG_FILE}'s [tool.release]"
    return config_from_mapping(table), (said, *notices)

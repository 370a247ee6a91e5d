"""``[tool.release.github]``: where the repository lives on GitHub and how releases meet it
there. Pure.

- ``repo``: ``"OWNER/REPO"`` (github.com) or ``"HOST/OWNER/REPO"`` (an Enterprise host),
  as ``gh --repo`` takes it (default: from ``repo-url``, else the remote's URL);
- ``protected``: the release branch takes picks by PR (the PR route), not by push
  (default false);
- ``pick-label``: the label put on pick PRs (default ``"cherry-pick"``);
- ``release``: make the GitHub release for rcs (a pre-release) and finals (default true).

Only the settings' shape is imported with the configuration; the table is parsed (and
:mod:`release.core.github` loaded) where one is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from release.errors import ConfigError

if TYPE_CHECKING:
    from release.core.github import GitHubRepo

__all__ = ["DEFAULT_PICK_LABEL", "GITHUB_KEYS", "GitHubSettings", "parse_github"]

PREFIX = "[tool.release.github]"
GITHUB_KEYS = ("repo", "protected", "pick-label", "release")
DEFAULT_PICK_LABEL = "cherry-pick"


@dataclass(frozen=True)
class GitHubSettings:
    repo: GitHubRepo | None = None  # None: from repo-url or the remote's URL
    protected: bool = False
    pick_label: str = DEFAULT_PICK_LABEL
    release: bool = True


def _flag(table: Mapping[str, object], key: str, default: bool) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{PREFIX} {key}: expected true or false, got {value!r}")
    return value


def _pick_label(table: Mapping[str, object]) -> str:
    value = table.get("pick-label", DEFAULT_PICK_LABEL)
    if (
        not isinstance(value, str)
        or not value.strip()
        or not value.isprintable()
        or len(value) > 50
        or any(ch in value for ch in ',"')
    ):
        raise ConfigError(
            f"{PREFIX} pick-label: expected a GitHub label (one line, at most 50 characters, "
            f"no ',' or '\"'), got {value!r}"
        )
    return value


def parse_github(table: object) -> GitHubSettings:
    """Validate ``[tool.release.github]``."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"{PREFIX}: expected a table")
    if not table:
        return GitHubSettings()
    from release.core.serving import refuse_unknown

    refuse_unknown(table, GITHUB_KEYS, PREFIX)
    repo = None
    if "repo" in table:
        from release.core.github import parse_repo_spec

        repo = parse_repo_spec(table["repo"], f"{PREFIX} repo")
    return GitHubSettings(
        repo=repo,
        protected=_flag(table, "protected", False),
        pick_label=_pick_label(table),
        release=_flag(table, "release", True),
    )

"""What every workflow reads first: the repository, its config and its release tags."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from release.adapters.config_file import CONFIG_FILE, outside_file, read_config, tree_config
from release.adapters.files import TextFile, read_tree_text, tree_path
from release.adapters.git import GitRepo
from release.core.commits import CHANGELOG_TRAILER
from release.core.config import Config
from release.core.pull_requests import RepoIdentity
from release.core.versions import PatchStyle, ReleaseVersion, learned_style, ref_format_problem
from release.errors import ConfigError, GitError, RefusedError

__all__ = ["MAIN_ENV", "ReleaseContext", "ReleaseLine", "TagInfo"]

MAIN_ENV = "RELEASE_MAIN_BRANCH"  # overrides main-branch without editing pyproject.toml


@dataclass(frozen=True)
class TagInfo:
    name: str
    version: ReleaseVersion
    commit: str
    local: bool = True
    remote: bool = False


@dataclass(frozen=True)
class ReleaseLine:
    """A release branch and the release under way on it.

    A branch named for one version (``releases/v{version}``) carries that version, its
    rcs and what ships fixes after its final (``style``: post releases, four-part
    releases, or, as on ao's ``release/0.18.0``, patch releases). A branch named for X.Y
    only (``release/{major}.{minor}``) carries a line: X.Y.0, then the patch releases
    X.Y.1, X.Y.2, each with its rcs. On either, the release under way is the newest tag's
    in the branch's history (a later patch or four-part release tagged there moves it on
    too), else the one the name says."""

    branch: str
    named: ReleaseVersion  # what the branch's name says (X.Y.0 for a line)
    tags: tuple[TagInfo, ...]  # the line's tags in the branch's history, oldest first
    style: PatchStyle  # how fixes after a final ship: patch releases here, four-part, post

    @property
    def patches(self) -> bool:
        """The branch carries the patch releases X.Y.(Z+1), each with its rcs."""
        return self.style is PatchStyle.PATCH

    @property
    def current(self) -> ReleaseVersion:
        """The release under way: the newest tag's release, else the branch's own."""
        return self.tags[-1].version.base if self.tags else self.named.base


class ReleaseContext:
    """A target repository with its ``[tool.release]`` config."""

    def __init__(
        self,
        path: Path | str = ".",
        *,
        config: Config | None = None,
        main_branch: str | None = None,
        config_file: Path | None = None,
    ) -> None:
        """``main_branch`` overrides the config's ``main-branch`` for this run (the CLI's
        ``--main-branch`` or ``$RELEASE_MAIN_BRANCH``); ``config_file``: the run's
        configuration from outside the tree (``--config``; None: ``$RELEASE_CONFIG``'s,
        if any), read instead of the tree's ``[tool.release]``."""
        self.repo = GitRepo(path)
        self.main_branch_given = main_branch
        self.config_file = config_file if config_file is not None else outside_file()
        notices: tuple[str, ...] = ()
        if config is None:
            config, notices = read_config(self.repo.root, self.config_file)
        self.config = config
        if main_branch is not None:
            if not main_branch.strip() or ref_format_problem(main_branch):
                raise ConfigError(f"main branch {main_branch!r} is not a branch name")
            self.config = replace(self.config, main_branch=main_branch)
        # what the run should say about how it read the repo (a misspelt table, ...)
        self.notices: list[str] = list(notices)
        self._check_path("changelog", self.config.changelog, writes=True)
        self._check_path("picks-file", self.config.picks_file, writes=False)
        self.remote_checked = False
        self.remote_heads: dict[str, str] = {}  # the remote's branches, when it was read

    @property
    def root(self) -> Path:
        return self.repo.root

    def elsewhere(self, path: Path | str) -> ReleaseContext:
        """Another checkout (a tag's clone) read with this run's settings: its main branch
        and its configuration file from outside the tree."""
        return ReleaseContext(
            path, main_branch=self.main_branch_given, config_file=self.config_file
        )

    def _check_path(self, key: str, rel: str, *, writes: bool) -> None:
        """``rel`` must resolve inside the work tree, outside the git directory, to a regular
        file or nothing; a file the tool writes must not be a symlink at all."""
        if not rel:
            return
        where = self.root / rel
        resolved = tree_path(self.root, rel, f"[tool.release] {key}: {rel!r}", error=ConfigError)
        in_git = any(
            resolved.is_relative_to(d.resolve()) for d in (self.repo.git_dir, self.repo.common_dir)
        )
        problem = (
            "leads into the git directory" if in_git
            else "is a symlink; point it at the file itself" if writes and where.is_symlink()
            else "is not a regular file" if where.exists() and not resolved.is_file()
            else None
        )  # fmt: skip
        if problem:
            raise ConfigError(f"[tool.release] {key}: {rel!r} {problem} ({resolved})")

    def tree_text(self, rel: str, what: str) -> TextFile | None:
        """The text of the work tree's file ``rel`` (the changelog, the picks file), read
        as a file of the tree (:func:`read_tree_text`); None when there is none."""
        return read_tree_text(self.root, rel, f"{what} {rel}")

    # -- branches ----------------------------------------------------------
    def branch_name(self, version: ReleaseVersion) -> str:
        return self.config.branch.render(version.base)

    def tag_name(self, version: ReleaseVersion) -> str:
        return self.config.tag.render(version)

    def main_sha(self) -> str:
        """The tip of main: the local branch, else the remote's (a checkout that never made
        a local main), said once in :attr:`notices`."""
        main, remote = self.config.main_branch, self.config.remote
        sha = self.repo.rev(f"refs/heads/{main}")
        if sha is not None:
            return sha
        sha = self.repo.rev(f"refs/remotes/{remote}/{main}")
        if sha is None:
            raise RefusedError(
                f"main branch {main!r} does not exist here, nor {remote}/{main} "
                f"(set main-branch in [tool.release], or {MAIN_ENV}, or release --main-branch)"
            )
        from release.core.plan import short  # here: reading notes needs none of the planning

        notice = f"no local branch {main}: using {remote}/{main} ({short(sha)})"
        if notice not in self.notices:
            self.notices.append(notice)
        return sha

    def current_release(self) -> tuple[str, ReleaseVersion]:
        """The checked-out release branch and the release it is for, or refuse."""
        branch = self.repo.current_branch()
        version = self.config.branch.parse(branch) if branch else None
        if branch is None or version is None:
            example = self.config.branch.render(ReleaseVersion(0, 31, 0))
            raise RefusedError(
                f"not on a release branch (on {branch or 'a detached HEAD'}); "
                f"switch to one, e.g. git switch {example}"
            )
        return branch, version

    def release_line(
        self, branch: str, named: ReleaseVersion, tags: list[TagInfo], head: str = "HEAD"
    ) -> ReleaseLine:
        """The branch's line (:class:`ReleaseLine`): of ``tags``, those of its X.Y, not
        before its own version, whose commit is in ``head``'s history."""
        line = [
            t
            for t in tags
            if (t.version.major, t.version.minor) == (named.major, named.minor)
            and t.version.base >= named.base
        ]
        merged = self.repo.tags_merged_into(head, [t.name for t in line if t.local])
        there = tuple(
            t
            for t in line
            if t.name in merged
            or (not t.local and self.repo.rev(t.commit) and self.repo.is_ancestor(t.commit, head))
        )
        return ReleaseLine(branch, named, there, self.patch_style(tags))

    def patch_style(self, tags: list[TagInfo]) -> PatchStyle:
        """How fixes after a final ship: as configured (``patch-releases``), else as the
        project's tags have shipped them (:func:`learned_style`)."""
        if self.config.patch_releases is not None:
            return self.config.patch_releases
        carries = self.config.branch.carries_patches
        return learned_style((t.version for t in tags), carries_patches=carries)

    def require_same_reading(self, branch: str) -> None:
        """With a configuration from outside the tree (``--config``), refuse to tag when
        it reads the tags already made, or a release branch the tree's own
        ``[tool.release]`` names, otherwise than that table does: what a tag recorded (its
        version, its release) would be read as something else, and the next tag numbered
        or placed by that."""
        given = self.config_file
        own = tree_config(self.root) if given is not None else None
        if given is None or own is None:
            return
        theirs = self.config
        mine = own.branch.parse(branch)  # a branch the tree's table does not name is new
        if mine is not None and mine != theirs.branch.parse(branch):
            seen = theirs.branch.parse(branch)
            raise RefusedError(self._misread(given, f"branch {branch}", mine, seen))
        for name in sorted(self.repo.local_tags()):
            mine, read = own.tag.parse_any(name), theirs.tag.parse_any(name)
            if mine is not None and mine != read:
                raise RefusedError(self._misread(given, f"tag {name}", mine, read))

    @staticmethod
    def _misread(
        given: Path, what: str, own: ReleaseVersion | None, theirs: ReleaseVersion | None
    ) -> str:
        def said(version: ReleaseVersion | None) -> str:
            return str(version) if version is not None else "none of its releases"

        return (
            f"{given} reads {what} as {said(theirs)}, where {CONFIG_FILE}'s [tool.release] "
            f"reads it as {said(own)}: tagging with it would change what was recorded; "
            "make the two agree (or run without --config)"
        )

    def require_settled(self, *, own_pick: bool = False) -> None:
        """Refuse while git is in the middle of something here (a merge, a rebase, ...), or,
        unless ``own_pick``, while a pick of ours is unfinished. ``own_pick``: a pick's own
        ``--continue``/``--abort``, for which a cherry-pick in progress is its own."""
        state = self.repo.worktree.in_progress()
        if state is not None and not (own_pick and "cherry-pick" in state[0]):
            raise RefusedError(
                f"git is in the middle of {state[0]} here; finish or abort it first ({state[1]})"
            )
        if own_pick:
            return
        from release.core.plan import short
        from release.flows.pick_journal import read_journal  # only the mutating tasks ask

        journal = read_journal(self.repo.git_dir)
        if journal is not None:
            where = (
                f"stopped on a conflict at {short(journal.conflict.sha)}"
                if journal.conflict is not None
                else "interrupted"
            )
            raise RefusedError(
                f"a pick on {journal.branch} is unfinished ({where}, {len(journal.queue)} "
                "left); finish it with release pick --continue, or undo it with release pick --abort"
            )

    def require_full_history(self, what: str) -> None:
        """Refuse in a shallow clone: ``what`` would read a history that is cut short."""
        if self.repo.history.is_shallow():
            raise RefusedError(
                f"this is a shallow clone: {what} would read a history cut short; "
                "fetch all of it first (git fetch --unshallow --tags)"
            )

    def untagged_commits(
        self, since: str, until: str = "HEAD", *, besides: Sequence[str] = ()
    ) -> list[str]:
        """Commits after ``since`` (and after each of ``besides``) that an rc would ship:
        all but the changelog commits that ``tag`` and ``promote`` make."""
        found = self.repo.history.trailers(
            CHANGELOG_TRAILER, since=since, until=until, besides=besides
        )
        return [t.sha for t in found if not t.value.strip()]

    def require_clean(self) -> None:
        dirty = self.repo.worktree.dirty_paths()
        if dirty:
            shown = ", ".join(dirty[:5]) + (" ..." if len(dirty) > 5 else "")
            raise RefusedError(
                f"work tree has uncommitted changes ({shown}); commit or stash them first"
            )

    # -- tags --------------------------------------------------------------
    def tags(self, *, remote: bool = True, offline: bool = False) -> list[TagInfo]:
        """Every release tag, local and (unless offline) on the remote, oldest version first."""
        found: dict[str, TagInfo] = {}
        for name, sha in self.repo.local_tags().items():
            version = self.config.tag.parse_any(name)
            if version is not None:
                found[name] = TagInfo(name, version, sha, local=True)
        if remote and not offline and self.repo.remotes.has(self.config.remote):
            try:
                remote_tags, self.remote_heads = self.repo.remotes.tags_and_heads(
                    self.config.remote
                )
            except GitError as err:
                raise RefusedError(
                    f"{err.message}; the next version must account for its tags "
                    "(retry when it is reachable, or pass --offline to use local tags only)"
                ) from None
            self.remote_checked = True
            for name, sha in remote_tags.items():
                version = self.config.tag.parse_any(name)
                if version is None:
                    continue
                if name in found:
                    found[name] = TagInfo(
                        name, version, found[name].commit, local=True, remote=True
                    )
                else:
                    found[name] = TagInfo(name, version, sha, local=False, remote=True)
        return sorted(found.values(), key=lambda t: t.version)

    def release_tags(self, base: ReleaseVersion, tags: list[TagInfo]) -> list[TagInfo]:
        return [t for t in tags if t.version.base == base.base]

    def previous_final(self, base: ReleaseVersion, tags: list[TagInfo]) -> TagInfo | None:
        finals = [t for t in tags if t.version.is_final and t.version < base.base and t.local]
        return finals[-1] if finals else None

    @cached_property
    def repo_url(self) -> str:
        """Base URL for PR links: config, else derived from a GitHub-style remote URL."""
        if self.config.repo_url:
            return self.config.repo_url
        url = self.remote_url or ""
        match = re.match(r"^(?:https?://|git@|ssh://git@)(github\.com)[:/](.+?)(?:\.git)?/?$", url)
        return f"https://{match[1]}/{match[2]}" if match else ""

    @cached_property
    def remote_url(self) -> str | None:
        """The configured remote's URL (None: there is no such remote), read once."""
        return self.repo.remotes.url(self.config.remote)

    @cached_property
    def repo_identity(self) -> RepoIdentity | None:
        """This repository as PR URLs name it, from :attr:`repo_url`: which landing lines
        (``Pull Request resolved:``) are its PRs. None where its URL is unknown (then none
        is: :mod:`release.core.pull_requests`)."""
        return RepoIdentity.of(self.repo_url)

"""The GitHub release of a tag, as a plan: what is sent to ``gh``, decided from values only.

An rc (or a post release) is a pre-release; a final is a release marked latest. Its body is
the tag's notes (``release notes --view rc`` for an rc, ``--view final`` for a final), its
title the tag; an rc's assets are its rc page and its release manifest, where it has one.

Invariants:

- every argv comes from :mod:`release.core.gh_commands` (so the check of each against the
  real ``gh``'s ``--help`` covers what is sent), led by ``gh``;
- a release is never made twice: where ``gh release view`` finds the tag's release it is
  edited in place (title, notes, pre-release, latest) and the assets uploaded again with
  ``--clobber``; a release made by a run stopped before its upload gets its assets so;
- a dry run's text names both routes (made, or found and edited), so it needs no read of
  GitHub, and every line of untrusted text in it (the notes) is escaped for the terminal.
"""

from __future__ import annotations

import enum
import posixpath
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from release.core import gh_commands
from release.core.github import GitHubRelease, GitHubRepo
from release.core.json_text import JSONValue
from release.core.terminal_text import escaped

__all__ = [
    "NOTES_FILE",
    "Action",
    "Asset",
    "GitHubReleasePlan",
    "manifest_asset",
    "page_asset",
    "shown",
]

NOTES_FILE = "notes.md"  # the notes' file as a dry run names it (gh is given a temporary one)


def _stem(tag: str) -> str:
    return tag.replace("/", "-")


def page_asset(tag: str) -> str:
    """The rc page's file name, as ``release report`` writes it: ``v0.31.0rc1.html``."""
    return f"{_stem(tag)}.html"


def manifest_asset(tag: str) -> str:
    """The release manifest's asset name: ``v0.31.0rc1-manifest.json``."""
    return f"{_stem(tag)}-manifest.json"


class Action(enum.Enum):
    """What is sent to GitHub, in this order."""

    CREATE = "create"
    EDIT = "edit"
    UPLOAD = "upload"


@dataclass(frozen=True)
class Asset:
    name: str  # the file's name, in the directory the assets are written to
    what: str  # "the rc page", "the release manifest"


@dataclass(frozen=True)
class GitHubReleasePlan:
    """The release of ``tag`` on ``repo`` as it should be; :meth:`actions` says what a
    found one needs."""

    repo: GitHubRepo
    tag: str
    title: str
    notes: str
    prerelease: bool
    assets: tuple[Asset, ...] = ()
    left_out: tuple[str, ...] = ()  # what an rc's release goes without, and why

    @property
    def latest(self) -> bool:
        return not self.prerelease

    @property
    def kind(self) -> str:
        return "a pre-release" if self.prerelease else "a release, marked latest"

    def differences(self, found: GitHubRelease) -> list[str]:
        """What of ``found`` differs from the plan. Whether a release is latest cannot be
        read back (``gh release view`` does not say), so a final's is always set again."""
        said = [
            *(["its title"] if found.name != self.title else []),
            *(["its notes"] if _body(found.body) != _body(self.notes) else []),
            *(["pre-release or not"] if found.is_prerelease != self.prerelease else []),
        ]
        return said + (["latest"] if self.latest else [])

    def actions(self, found: GitHubRelease | None) -> tuple[Action, ...]:
        """Made with its assets where there is none; else edited where it differs, and its
        assets uploaded again (``--clobber``)."""
        if found is None:
            return (Action.CREATE,)
        edit = (Action.EDIT,) if self.differences(found) else ()
        return edit + ((Action.UPLOAD,) if self.assets else ())

    def argv(
        self, action: Action, *, notes_file: str = NOTES_FILE, directory: str = ""
    ) -> list[str]:
        """The command line of ``action`` (``gh`` first); the assets named in ``directory``."""
        files = [posixpath.join(directory, a.name) if directory else a.name for a in self.assets]
        if action is Action.CREATE:
            args = gh_commands.release_create(
                self.repo,
                self.tag,
                title=self.title,
                notes_file=notes_file,
                prerelease=self.prerelease,
                latest=self.latest,
                files=files,
            )
        elif action is Action.EDIT:
            args = gh_commands.release_edit(
                self.repo,
                self.tag,
                title=self.title,
                notes_file=notes_file,
                prerelease=self.prerelease,
                latest=self.latest,
            )
        else:
            args = gh_commands.release_upload(self.repo, self.tag, files)
        return ["gh", *args]

    def commands(self) -> dict[str, list[list[str]]]:
        """Both routes, as a dry run shows them: none there yet, or one found."""
        found = [Action.EDIT, *([Action.UPLOAD] if self.assets else [])]
        return {
            "none": [self.argv(Action.CREATE)],
            "found": [self.argv(a) for a in found],
        }

    def head(self) -> list[str]:
        """What the release is: its kind, title, assets and what it goes without."""
        lines = [
            f"the GitHub release of {self.tag} on {self.repo.spec}: {self.kind}, titled "
            f"{escaped(self.title)}"
        ]
        if self.assets:
            lines.append("assets: " + ", ".join(f"{a.name} ({a.what})" for a in self.assets))
        lines += [f"left out: {escaped(why)}" for why in self.left_out]
        return lines

    def plan_lines(self) -> list[str]:
        """What a dry run prints: the release, the commands of both routes exactly as they
        would be sent, and the notes."""
        routes = self.commands()
        return [
            *self.head(),
            f"where {self.repo.spec} has no release {self.tag}, gh would be sent:",
            *(f"  {shown(argv)}" for argv in routes["none"]),
            "where gh release view finds it, gh would be sent:",
            *(f"  {shown(argv)}" for argv in routes["found"]),
            f"({NOTES_FILE} and the assets: files of a temporary directory, removed afterwards)",
            f"the notes ({NOTES_FILE}):",
            *(f"  {escaped(line)}" if line else "" for line in self.notes.splitlines()),
        ]

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "repo": self.repo.spec,
            "tag": self.tag,
            "title": self.title,
            "prerelease": self.prerelease,
            "latest": self.latest,
            "assets": [{"name": a.name, "what": a.what} for a in self.assets],
            "left_out": list(self.left_out),
            "notes": self.notes,
        }


def shown(argv: Sequence[str]) -> str:
    """A command line as a shell would take it, escaped for the terminal."""
    return escaped(shlex.join(argv))


def _body(text: str) -> str:
    """A release body as compared: GitHub may give back CRLF line ends and trimmed ends."""
    return text.replace("\r\n", "\n").strip()

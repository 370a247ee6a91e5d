"""Which PR a commit names, and whether it is this repository's.

A squash merge's subject ends with ``(#N)``: GitHub wrote it, for a PR of this
repository. A ghstack or Phabricator commit names its PR only in its body, ``Pull Request
resolved: https://HOST/ORG/REPO/pull/N``: text its author wrote, whose URL may name any
repository (a change exported from pytorch/pytorch into pytorch/data keeps its landing line,
and its subject's number, which is pytorch/pytorch's). So, with :class:`RepoIdentity` the
repository these commits are in:

- a landing line names this repository's PR only when it is the body's only one (with
  two, which one landed is not said) and its URL is this repository's, compared as GitHub
  compares them: host and ORG/REPO in any case, http and https alike, a trailing ``.git``
  or ``/`` ignored;
- a subject's ``(#N)`` is this repository's, unless the body's landing lines name PR N of
  other repositories only (the number came with the change from there);
- where this repository's URL is unknown (no ``repo-url``, a remote that is no GitHub URL),
  no landing line names a PR: any body could name any number, and nothing tells this
  repository's from another's. A subject's ``(#N)`` stays this repository's.

Pure: the identity is made of a URL the caller read
(:attr:`release.flows.context.ReleaseContext.repo_identity`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import urlsplit

from release.core.patterns import lazy_pattern
from release.core.terminal_text import escaped

__all__ = [
    "LANDING_TEXT",
    "Landing",
    "RepoIdentity",
    "commit_pr",
    "landings",
    "passed_over",
    "resolved_pr",
]

LANDING_TEXT = "Pull Request resolved:"  # what a body must hold before it is searched
_LANDING = lazy_pattern(
    r"^Pull Request resolved:\s*(?P<url>https?://(?P<host>[^\s/]+)/(?P<repo>[\w.-]+/[\w.-]+)"
    r"/pull/(?P<number>[0-9]{1,9})(?![0-9]))?",
    re.MULTILINE,
)


def _path_key(path: str) -> str:
    """ORG/REPO as GitHub tells repositories apart: in any case, without ``.git`` or
    slashes around it."""
    return path.strip("/").lower().removesuffix(".git").rstrip("/")


class Landing(NamedTuple):
    """A ``Pull Request resolved:`` line: the PR URL it names (``number`` None and the rest
    empty when the line names none)."""

    url: str
    host: str
    repo: str
    number: int | None


@dataclass(frozen=True)
class RepoIdentity:
    """This repository as a PR's URL names it: its web host (port kept) and ORG/REPO, both
    lower case. ``url``: as configured or derived, for messages."""

    url: str
    host: str
    path: str

    @classmethod
    def of(cls, url: str) -> RepoIdentity | None:
        """The identity an ``http(s)`` URL of a repository gives; None for anything else
        (nothing, a local path, another scheme): then no landing line is this one's."""
        try:
            parts = urlsplit(url.strip())
            port = parts.port
        except ValueError:
            return None
        path = _path_key(parts.path)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname or not path:
            return None
        return cls(url, parts.hostname + (f":{port}" if port else ""), path)

    @property
    def key(self) -> str:
        """``host/org/repo``: what tells two repositories apart (not how a URL spells it)."""
        return f"{self.host}/{self.path}"

    def names(self, landing: Landing) -> bool:
        """Whether ``landing``'s URL is a PR of this repository."""
        return self.is_url_of(f"https://{landing.host}/{landing.repo}")

    def is_url_of(self, url: str) -> bool:
        """Whether ``url`` (``https://HOST/ORG/REPO``, as a PR's URL starts) is this
        repository's, read as :meth:`of` reads this one's."""
        other = RepoIdentity.of(url)
        return other is not None and other.key == self.key


def landings(body: str) -> tuple[Landing, ...]:
    """Every ``Pull Request resolved:`` line of ``body`` (at a line's start), in order."""
    if LANDING_TEXT not in body:
        return ()
    return tuple(
        Landing(m["url"], m["host"], m["repo"], int(m["number"]))
        if m["url"]
        else Landing("", "", "", None)
        for m in _LANDING.finditer(body)
    )


def commit_pr(subject_pr: int | None, body: str, repo: RepoIdentity | None) -> int | None:
    """A commit's PR in this repository: the subject's ``(#N)``, else the body's one landing
    line of this repository (see the module's doc); None when it names none."""
    if LANDING_TEXT not in body:
        return subject_pr
    lines = landings(body)
    if subject_pr is not None:
        return None if _foreign(lines, subject_pr, repo) else subject_pr
    if len(lines) != 1 or repo is None or not repo.names(lines[0]):
        return None
    return lines[0].number


def resolved_pr(body: str, repo: RepoIdentity | None) -> int | None:
    """This repository's PR a body names as landed: its only landing line, when that names
    ``repo``; None otherwise (also where ``repo`` is unknown)."""
    return commit_pr(None, body, repo)


def _foreign(lines: tuple[Landing, ...], number: int, repo: RepoIdentity | None) -> bool:
    """Whether ``lines`` say PR ``number`` is another repository's: they name it, and only
    of repositories known not to be this one."""
    naming = [line for line in lines if line.number == number]
    return repo is not None and bool(naming) and not any(repo.names(n) for n in naming)


def passed_over(
    subject_pr: int | None, body: str, number: int, repo: RepoIdentity | None
) -> str | None:
    """Why a commit whose subject or body names PR ``number`` is not this repository's
    #number, for a user asking for it (the URL escaped: it is a body's text); None when it
    is, or names no such PR."""
    if commit_pr(subject_pr, body, repo) == number:
        return None
    lines = landings(body)
    naming = [line for line in lines if line.number == number]
    if not naming or subject_pr not in (None, number):
        return None
    shown = escaped(naming[0].url)
    if subject_pr is not None:  # the body says whose the subject's number is
        return f"its subject's (#{number}) is {shown}, another repository's PR"
    if len(lines) > 1:
        return f"its body has {len(lines)} '{LANDING_TEXT}' lines, so it names none of them"
    if repo is None:
        return (
            f"its body names {shown}, and this repository's URL is unknown, so that cannot be "
            "told to be this repository's PR: set repo-url in [tool.release]"
        )
    return f"its body names {shown}, another repository's PR (this one is {escaped(repo.url)})"

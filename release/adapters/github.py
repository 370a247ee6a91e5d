"""GitHub, through its CLI ``gh``: pull requests and releases read into typed records
(:mod:`release.core.github`), and the few changes the tool makes there.

Invariants:

- every command line is one of :mod:`release.core.gh_commands`'s, run through the process
  adapter (no shell), with ``--json`` answers parsed and checked field by field;
- ``gh``'s own login is used: ``GH_TOKEN``, ``GITHUB_TOKEN``, ``GH_HOST`` and
  ``GH_ENTERPRISE_TOKEN`` pass through from the environment, are never put on a command
  line, never written and never shown (they are added to the secrets redacted from
  every message);
- what ``gh`` says on failure is untrusted: one line of it, redacted and escaped, goes in
  the error, whose message says what to do;
- a body or release notes go through a file of their own, removed afterwards.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from release.adapters import process
from release.adapters.known_secrets import remember
from release.core import gh_commands as commands
from release.core.github import (
    GitHubRelease,
    GitHubRepo,
    PullRequest,
    pull_request_of,
    release_of,
    repo_of_url,
)
from release.core.json_text import parse_json
from release.core.terminal_text import escaped
from release.errors import GitHubError

if TYPE_CHECKING:
    from release.core.config import Config

__all__ = ["Gh", "GitHubError", "PullRequestExists", "repo_for"]

TIMEOUT = 120  # seconds: gh retries nothing itself; an answer slower than this is a hang
TOKEN_ENV = ("GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN")
# gh as a program, not a person's terminal: no prompt, no colour, no update check, no pager
QUIET_ENV = {
    "GH_PROMPT_DISABLED": "1",
    "GH_NO_UPDATE_NOTIFIER": "1",
    "NO_COLOR": "1",
    "GH_PAGER": "cat",
    "CLICOLOR": "0",
}
_NOT_LOGGED_IN = 4  # gh's exit code when it has no login


class PullRequestExists(GitHubError):
    """``gh pr create`` refused: an open PR for the same head and base exists (``url``)."""

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url


class _NotStarted(GitHubError):
    """The process adapter could not start ``gh``."""


def repo_for(config: Config, remote_url: str | None) -> GitHubRepo | None:
    """Where the repository lives on GitHub: ``[tool.release.github] repo``, else
    ``[tool.release] repo-url`` where it is a GitHub-shaped URL, else the remote's URL;
    None when none of them names one."""
    if config.github.repo is not None:
        return config.github.repo
    for url in (config.repo_url, remote_url):
        found = repo_of_url(url) if url else None
        if found is not None:
            return found
    return None


@contextlib.contextmanager
def _text_file(name: str, text: str) -> Iterator[str]:
    """``text`` in a file of its own (readable by this user only), removed afterwards."""
    folder = tempfile.mkdtemp(prefix="release-gh-")
    try:
        path = Path(folder) / name
        path.write_text(text, encoding="utf-8")
        yield str(path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _said(result: process.Result) -> str:
    """gh's first line of error output, redacted (by the process adapter) and escaped."""
    return escaped(process.first_line(result.stderr or result.stdout, "no message"))[:300]


class Gh:
    """One repository on GitHub, as ``gh`` reaches it."""

    def __init__(
        self, repo: GitHubRepo, *, env: Mapping[str, str] | None = None, executable: str = "gh"
    ) -> None:
        self.repo = repo
        self.env = dict(env or {})
        self.executable = executable
        remember(value for name in TOKEN_ENV if (value := self.env.get(name)))

    # -- reads ---------------------------------------------------------------------------

    def pr(self, number: int) -> PullRequest | None:
        """PR ``number`` of this repository; None where it has none."""
        result = self._run(commands.pr_view(self.repo, number), missing="PullRequest")
        return None if result is None else pull_request_of(self._json(result))

    def prs(
        self,
        *,
        state: str,
        search: str | None = None,
        label: str | None = None,
        head: str | None = None,
        base: str | None = None,
    ) -> list[PullRequest]:
        argv = commands.pr_list(
            self.repo, state=state, search=search, label=label, head=head, base=base
        )
        result = self._run(argv)
        assert result is not None
        found = self._json(result)
        if not isinstance(found, list):
            raise GitHubError(f"gh pr list answered with {type(found).__name__}, not a list")
        return [pull_request_of(item) for item in found]

    def release(self, tag: str) -> GitHubRelease | None:
        """The release of ``tag``; None where there is none."""
        result = self._run(commands.release_view(self.repo, tag), missing="release not found")
        return None if result is None else release_of(self._json(result))

    # -- changes -------------------------------------------------------------------------

    def create_pr(
        self,
        *,
        base: str,
        head: str,
        title: str,
        body: str,
        labels: Sequence[str] = (),
        milestone: str | None = None,
    ) -> str:
        """Open a PR of ``head`` into ``base``; its URL. :class:`PullRequestExists` where
        one is open for the same branches."""
        with _text_file("body.md", body) as body_file:
            argv = commands.pr_create(
                self.repo, base=base, head=head, title=title, body_file=body_file,
                labels=labels, milestone=milestone,
            )  # fmt: skip
            result = self._run(argv, exists=True)
        assert result is not None
        lines = result.stdout.split()
        url = lines[-1] if lines else ""
        if not url.startswith("https://") or not url.isprintable():
            raise GitHubError(f"gh pr create answered {escaped(url[:100])!r}, not a PR's URL")
        return url

    def create_release(
        self,
        tag: str,
        *,
        title: str,
        notes: str,
        prerelease: bool,
        latest: bool,
        files: Sequence[Path] = (),
    ) -> None:
        with _text_file("notes.md", notes) as notes_file:
            argv = commands.release_create(
                self.repo, tag, title=title, notes_file=notes_file, prerelease=prerelease,
                latest=latest, files=[_asset(path) for path in files],
            )  # fmt: skip
            self._run(argv)

    def edit_release(
        self, tag: str, *, title: str, notes: str, prerelease: bool, latest: bool
    ) -> None:
        with _text_file("notes.md", notes) as notes_file:
            argv = commands.release_edit(
                self.repo, tag, title=title, notes_file=notes_file, prerelease=prerelease,
                latest=latest,
            )  # fmt: skip
            self._run(argv)

    def upload(self, tag: str, files: Sequence[Path]) -> None:
        """Upload ``files`` as assets of ``tag``'s release, replacing ones of the same name."""
        self._run(commands.release_upload(self.repo, tag, [_asset(path) for path in files]))

    # -- the one way gh is run -------------------------------------------------------------

    def _run(
        self, argv: list[str], *, missing: str | None = None, exists: bool = False
    ) -> process.Result | None:
        """Run ``gh ARGV``; None where ``missing`` names the 404 that means "none"."""
        try:
            result = process.run(
                [self.executable, *argv],
                error=_NotStarted,
                env={**QUIET_ENV, **self.env},
                timeout=TIMEOUT,
            )
        except _NotStarted:
            raise GitHubError(
                f"cannot run {self.executable!r}: install GitHub's CLI, gh (Debian and "
                "Ubuntu: apt-get install gh), and log in with `gh auth login`"
            ) from None
        if result.ok:
            return result
        if missing and missing in result.stderr:
            return None
        raise self._failure(argv, result, exists)

    def _failure(self, argv: list[str], result: process.Result, exists: bool) -> GitHubError:
        said, command = _said(result), f"gh {' '.join(argv[:2])}"
        stderr = result.stderr
        if result.timed_out:
            return GitHubError(
                f"{command}: no answer from {self.repo.host} in {TIMEOUT}s; try again"
            )
        if result.status == _NOT_LOGGED_IN or "gh auth login" in stderr:
            return GitHubError(
                f"{command}: gh is not logged in to {self.repo.host}: run `gh auth login"
                f"{'' if self.repo.host == 'github.com' else ' --hostname ' + self.repo.host}`"
                " or set GH_TOKEN"
            )
        if "rate limit" in stderr.lower():
            return GitHubError(f"{command}: GitHub's API rate limit: try again later ({said})")
        if "error connecting to" in stderr:
            host = stderr.split("error connecting to", 1)[1].split()[:1] or [self.repo.host]
            return GitHubError(
                f"cannot reach {escaped(host[0])[:100]}: check the network, the proxy "
                "settings or the host's status, then run the command again"
            )
        if argv[:2] == ["release", "create"] and "already exists" in stderr:
            return GitHubError(
                f"{command}: {self.repo.spec} has a release {argv[2]} already: edit it instead"
            )
        if exists and "already exists" in stderr:
            url = next((w for w in stderr.split() if w.startswith("https://")), "")
            return PullRequestExists(f"{command}: {said}", url=escaped(url))
        if "Could not resolve to a Repository" in stderr or "HTTP 404" in stderr:
            return GitHubError(
                f"{command}: {self.repo.url} not found, or not visible to gh's login ({said})"
            )
        if "Could not resolve to a PullRequest" in stderr:
            return GitHubError(f"{command}: {self.repo.spec} has no pull request #{argv[2]}")
        if "release not found" in stderr:
            return GitHubError(f"{command}: {self.repo.spec} has no release {argv[2]}")
        return GitHubError(f"{command} failed (exit {result.status}): {said}")

    def _json(self, result: process.Result) -> object:
        try:
            return parse_json(result.stdout)
        except ValueError:
            raise GitHubError(
                f"gh {' '.join(result.argv[1:3])} answered with something that is not JSON"
            ) from None


def _asset(path: Path) -> str:
    """An asset as gh gets it: an absolute path to a regular file."""
    absolute = os.path.abspath(path)
    if not os.path.isfile(absolute):
        raise GitHubError(f"cannot upload {escaped(str(path))}: not a file")
    return absolute

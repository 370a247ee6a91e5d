"""How one git command is run: started in the C locale, as GitPython's command interface
starts it (so git's messages are in English), and waited for by
:mod:`release.adapters.process`. Output is decoded with ``surrogateescape`` (file names
round-trip) and loses one final newline; a failure reads as :class:`GitError` with git's
first line. Only :mod:`release.adapters.git` uses this module.
"""

from __future__ import annotations

import itertools
import os
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, Any, Protocol

from release.adapters import process
from release.adapters.process import Result
from release.errors import GitError

__all__ = [
    "GIT",
    "GitLog",
    "GitRead",
    "GitResult",
    "Repository",
    "cause",
    "executable_stamp",
    "execute",
    "failed",
]

# Every command's text comes out in UTF-8 (what the parsers read), also for commits
# written under another i18n.commitEncoding; raw bytes are read with cat-file.
GIT = ("git", "-c", "i18n.logOutputEncoding=UTF-8")

GitResult = Result  # what every git command answers
GitStream = process.Stream


# What GitPython's command interface sets for every git it runs: the C locale, so git's
# messages are in English (they are parsed and quoted).
C_LOCALE = {"LANGUAGE": "C", "LC_ALL": "C"}


def _spawn(
    argv: Sequence[str],
    *,
    cwd: Path | None,
    env: Mapping[str, str],
    stdin: bool,
    stdout: int | IO[Any],
    stderr: int | IO[Any],
    own_group: bool,
) -> subprocess.Popen[bytes]:
    """git in the C locale, started by the process runner's own :func:`process.popen`.

    Not through GitPython's ``Git.execute`` (which does the same, a ``Popen`` with
    :data:`C_LOCALE`, under the environment handed to it, so a locale set there still
    wins, as it does there): importing GitPython takes ~60 ms and runs ``git version``
    twice, more than most commands' whole work.
    """
    assert stdout == stderr == subprocess.PIPE, "git output is always read"
    return process.popen(
        argv,
        cwd=cwd,
        env={**C_LOCALE, **env},
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        own_group=own_group,
    )


def executable_stamp() -> str:
    """Which git runs the commands (the first ``git`` on ``PATH``: commands are started
    by that name): its path, size and modification time ("" when it is not found), so
    what a cache keeps from one git is not read under another."""
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        # as shutil.which looks (not imported for this: only a cache's key asks)
        found = os.path.join(directory or os.curdir, GIT[0])
        try:
            stat = os.stat(found)
        except OSError:
            continue
        if os.path.isfile(found) and os.access(found, os.X_OK):
            return f"{os.path.realpath(found)} {stat.st_size} {stat.st_mtime_ns}"
    return ""


def _trimmed(result: Result) -> Result:
    # one final newline is not part of the answer
    return replace(
        result, stdout=result.stdout.removesuffix("\n"), stderr=result.stderr.removesuffix("\n")
    )


def execute(
    cwd: Path,
    args: Sequence[str],
    *,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Result:
    result = process.run(
        [*GIT, *args],
        error=GitError,
        cwd=cwd,
        env=env,
        stdin=stdin,
        errors="surrogateescape",
        spawn=_spawn,
    )
    return _trimmed(result)


def failed(args: Sequence[str], result: Result) -> GitError:
    reason = process.first_line(result.stderr) or result.stdout
    return GitError(f"git {' '.join(args[:3])} failed: {reason}")


def cause(stderr: str, default: str = "") -> str:
    """What git says went wrong: its first ``error:`` line with the indented lines under it
    (the paths it names, the first five), where its last line may only say that the
    command failed ("fatal: cherry-pick failed"); else its last line."""
    lines = stderr.splitlines()
    for at, line in enumerate(lines):
        if line.startswith("error: "):
            named = [n.strip() for n in itertools.takewhile(_indented, lines[at + 1 :])]
            more = [f"and {len(named) - 5} more"] if len(named) > 5 else []
            return " ".join([line.removeprefix("error: ").strip(), *named[:5], *more])
    return process.last_line(stderr, default)


def _indented(line: str) -> bool:
    return line.startswith("\t")


class GitRead:
    """A read-only git command started at once, its output collected in the background."""

    def __init__(self, cwd: Path, args: Sequence[str], stdin: str | None) -> None:
        self.args = tuple(args)
        self._started = process.start(
            [*GIT, *args],
            error=GitError,
            cwd=cwd,
            stdin=stdin,
            errors="surrogateescape",
            spawn=_spawn,
        )

    def result(self) -> Result:
        """Wait for git; what :meth:`GitRepo.run` with ``check=False`` returns."""
        return _trimmed(self._started.result())

    def out(self) -> str:
        """Wait for git; its output, or :class:`GitError` as :meth:`GitRepo.out` raises."""
        result = self.result()
        if not result.ok:
            raise failed(self.args, result)
        return result.stdout


class GitLog(process.Stream):
    """:class:`process.Stream` of a git read: a failure raises :class:`GitError` once the
    output has been read."""

    def __init__(self, cwd: Path, args: Sequence[str], sep: str) -> None:
        super().__init__(
            [*GIT, *args], sep, error=GitError, cwd=cwd, errors="surrogateescape", spawn=_spawn
        )
        self.args = tuple(args)

    def __iter__(self) -> Iterator[str]:
        yield from super().__iter__()
        if self.status != 0:
            raise GitError(
                f"git {' '.join(self.args[:3])} failed: {process.first_line(self.stderr)}"
            )


class Repository(Protocol):
    """What the concerns of a repository (its history, work tree, remotes) run git
    through: :class:`~release.adapters.git.GitRepo`'s directories and its choke point."""

    root: Path
    git_dir: Path
    common_dir: Path

    def run(
        self,
        *args: str,
        check: bool = True,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        mutating: bool = False,
    ) -> Result: ...

    def out(self, *args: str) -> str: ...

    def start(self, *args: str, stdin: str | None = None) -> GitRead: ...

    def stream(self, *args: str, sep: str = "\n") -> GitLog: ...

    def config_value(self, key: str) -> str | None: ...

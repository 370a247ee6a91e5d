"""Journals of ``cut``, ``tag`` and ``promote``: what a run set out to do, written before it
changes anything, cleared when it is done (``.git/release/<command>.json``).

A run killed half-way leaves its journal. The next run of the command reads it first and
either finishes the work (the ref it was making exists: only what follows is left, for
promote its changelog commit and its image side, from the rc the journal names) or rolls
the branch back to where the killed run started and begins again, so a re-run ends where
an uninterrupted run would. ``status`` says when a journal is left, and which command
finishes it. Git lock files the killed run held are removed only
when the journal shows they were ours and our process group is gone.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from release.adapters.git import GitRepo
from release.adapters.lock import require_ended
from release.adapters.state import StateFile

__all__ = ["TaskJournal", "TaskJournals", "interrupted"]

_FIELDS = {"command": str, "ref": str, "orig_head": str, "target": str}
_OPTIONAL = {"rc": str, "version": str, "main": str}  # a journal written without them has none


@dataclass(frozen=True)
class TaskJournal:
    command: str  # "cut", "tag" or "promote"
    ref: str  # the full name of the ref it makes: refs/heads/... or refs/tags/...
    orig_head: str  # HEAD when it started: where a roll-back goes
    target: str = ""  # the commit the ref goes on, when known up front
    changelog: str | None = None  # the changelog it writes (promote finishes with it)
    switch: bool = False  # cut: switch to the new branch
    rc: str = ""  # promote: the rc whose images the final gets (its image side follows the tag)
    version: str = ""  # promote: the final's version; cut: the version main is set to
    main: str = ""  # cut: main's tip before its version files are set ("": none are)
    pid: int = 0
    pgid: int = 0

    @property
    def name(self) -> str:
        return self.ref.removeprefix("refs/heads/").removeprefix("refs/tags/")


class TaskJournals:
    """The journal of one command in one work tree."""

    def __init__(self, repo: GitRepo, command: str) -> None:
        self.repo = repo
        self.command = command
        self.file = StateFile(repo.git_dir, f"{command}.json")

    def read(self) -> TaskJournal | None:
        data = self.file.read()
        if data is None:
            return None
        wrong = [k for k, kind in _FIELDS.items() if not isinstance(data.get(k), kind)]
        wrong += [k for k, kind in _OPTIONAL.items() if not isinstance(data.get(k, ""), kind)]
        if wrong or data["command"] != self.command:
            self.file.damaged(f"no valid {', '.join(wrong) or 'command'}")
        known = {k: v for k, v in data.items() if k in TaskJournal.__dataclass_fields__}
        try:
            return TaskJournal(**known)
        except TypeError as err:
            self.file.damaged(str(err))

    def write(self, journal: TaskJournal) -> TaskJournal:
        stamped = replace(journal, pid=os.getpid(), pgid=os.getpgid(0))
        data: dict[str, Any] = asdict(stamped)
        self.file.write(data)
        return stamped

    def clear(self) -> None:
        self.file.clear()

    def release_locks(self, journal: TaskJournal, say: Callable[[str], None]) -> None:
        """Remove the git lock files a killed run of ours left; refuse while its process
        group may still be running git."""
        require_ended(journal.pgid, self.command)
        for path in self.repo.worktree.lock_files(journal.ref, f"refs/heads/{self._branch()}"):
            if path.exists():
                path.unlink()
                say(f"removed {path.name} left by the interrupted {self.command}")

    def _branch(self) -> str:
        return self.repo.current_branch() or "HEAD"


def interrupted(repo: GitRepo) -> tuple[str, str] | None:
    """A cut, tag or promote stopped half-way, which the same command finishes (a
    promote's registry side included): the command and the branch or tag it makes."""
    for command in ("cut", "tag", "promote"):
        journal = TaskJournals(repo, command).read()
        if journal is not None:
            return command, journal.name
    return None

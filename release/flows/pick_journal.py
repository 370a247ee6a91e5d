"""The journal of a pick in progress: ``.git/release/pick.json``.

It is written before every ``git cherry-pick`` and says what is left to pick, where the
branch was when the pick started (``--abort`` goes back there), and, once stopped on a
conflict, which commit and files. A killed run leaves it behind; the next run reads it
to recover, continue or abort. A journal that does not read back as a valid one is
refused, never half-used.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from release.adapters.state import StateFile

__all__ = [
    "Conflict",
    "Journal",
    "JournalStatus",
    "PickJournal",
    "QueueRun",
    "QueuedPick",
    "read_journal",
]

JOURNAL = "pick.json"


class JournalStatus(enum.Enum):
    RUNNING = "running"  # cherry-picks under way, or killed while they were
    CONFLICT = "conflict"  # stopped on a conflict; resolved by hand, then --continue


@dataclass(frozen=True)
class QueuedPick:
    sha: str
    subject: str
    reason: str | None = None


@dataclass(frozen=True)
class QueueRun:
    """What applying a queue did: the lines that report it, and the commits skipped as
    their change was on the branch already (nothing of theirs was picked)."""

    lines: tuple[str, ...]
    emptied: frozenset[str]


@dataclass(frozen=True)
class Conflict:
    sha: str
    subject: str
    files: tuple[str, ...]


@dataclass(frozen=True)
class PickJournal:
    branch: str
    orig_head: str
    queue: tuple[QueuedPick, ...]
    status: JournalStatus = JournalStatus.RUNNING
    conflict: Conflict | None = None
    pid: int = 0  # of the run that wrote it
    pgid: int = field(default=0)  # its process group: alive means git may still be running

    def advanced(self, queue: tuple[QueuedPick, ...]) -> PickJournal:
        """Running again, with ``queue`` left."""
        return replace(self, queue=queue, status=JournalStatus.RUNNING, conflict=None)

    def stopped(self, queue: tuple[QueuedPick, ...], conflict: Conflict) -> PickJournal:
        """Stopped on a conflict at ``queue[0]``."""
        return replace(self, queue=queue, status=JournalStatus.CONFLICT, conflict=conflict)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "branch": self.branch,
            "orig_head": self.orig_head,
            "queue": [{"sha": q.sha, "subject": q.subject, "reason": q.reason} for q in self.queue],
            "status": self.status.value,
            "pid": self.pid,
            "pgid": self.pgid,
        }
        if self.conflict is not None:
            c = self.conflict
            data["conflict"] = {"sha": c.sha, "subject": c.subject, "files": list(c.files)}
        return data


def _queued(item: Any) -> QueuedPick | None:
    if not isinstance(item, Mapping) or not isinstance(item.get("sha"), str):
        return None
    if "subject" not in item:
        return None
    reason = item.get("reason")
    return QueuedPick(
        item["sha"], str(item["subject"]), reason if isinstance(reason, str) else None
    )


def _conflict(data: Any) -> Conflict | None:
    if not isinstance(data, Mapping) or not isinstance(data.get("sha"), str):
        return None
    files = data.get("files")
    if not isinstance(files, list):
        return None
    return Conflict(data["sha"], str(data.get("subject", "")), tuple(str(f) for f in files))


def _parse(data: Mapping[str, Any]) -> PickJournal | str:
    """The journal, or what is wrong with it."""
    fields = {"branch": str, "orig_head": str, "queue": list, "status": str}
    missing = [key for key, kind in fields.items() if not isinstance(data.get(key), kind)]
    if missing:
        return f"no valid {', '.join(missing)}"
    queue = [_queued(item) for item in data["queue"]]
    if any(q is None for q in queue):
        return "no valid queue entries"
    try:
        status = JournalStatus(data["status"])
    except ValueError:
        return f"unknown status {data['status']!r}"
    conflict = _conflict(data.get("conflict"))
    if status is JournalStatus.CONFLICT and (conflict is None or not queue):
        return "no valid conflict"
    pid, pgid = data.get("pid", 0), data.get("pgid", 0)
    return PickJournal(
        data["branch"],
        data["orig_head"],
        tuple(q for q in queue if q is not None),
        status,
        conflict,
        pid if isinstance(pid, int) else 0,
        pgid if isinstance(pgid, int) else 0,
    )


class Journal:
    """The journal file of one repository."""

    def __init__(self, git_dir: Path) -> None:
        self.file = StateFile(git_dir, JOURNAL)

    def read(self) -> PickJournal | None:
        """The pick in progress, or None; a damaged journal is refused."""
        data = self.file.read()
        if data is None:
            return None
        parsed = _parse(data)
        if isinstance(parsed, str):
            self.file.damaged(parsed)
        return parsed

    def write(self, journal: PickJournal) -> PickJournal:
        """Save ``journal``, stamped with this process (whose group a later run checks)."""
        stamped = replace(journal, pid=os.getpid(), pgid=os.getpgid(0))
        self.file.write(stamped.to_dict())
        return stamped

    def written_ns(self) -> int | None:
        """When the journal was last written (its mtime; None without one): every file the
        run that wrote it went on to write is at least as new."""
        try:
            return self.file.path.stat().st_mtime_ns
        except FileNotFoundError:
            return None

    def clear(self) -> None:
        self.file.clear()


def read_journal(git_dir: Path) -> PickJournal | None:
    """The pick in progress in the repository at ``git_dir`` (for ``status`` and refusals)."""
    return Journal(git_dir).read()

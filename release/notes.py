"""Release notes: commits in, grouped notes out (Markdown or JSON). Pure.

Rules: sections by canonical category (config order, then "Other"); a revert and
what it reverts cancel out inside the range; one change is listed once even when it
was picked more than once (identity = the main commit it came from); the author and
every co-author are credited once each.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from release.commits import Commit, Person

__all__ = ["Entry", "Notes", "build_notes", "render_json", "render_markdown"]


@dataclass(frozen=True)
class Entry:
    title: str
    category: str
    sha: str
    pr: int | None
    credits: tuple[Person, ...]
    pick_reason: str | None = None
    picked_from: str | None = None
    identity: str = ""


@dataclass(frozen=True)
class Notes:
    since: str | None
    until: str
    sections: tuple[tuple[str, tuple[Entry, ...]], ...]
    contributors: tuple[Person, ...] = field(default=())
    cancelled: tuple[str, ...] = field(default=())

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(e for _, entries in self.sections for e in entries)

    def is_empty(self) -> bool:
        return not self.sections


def _cancel_reverts(commits: Sequence[Commit]) -> tuple[list[Commit], list[str]]:
    """Drop each revert together with its target when both are in the range."""
    kept: list[Commit] = []
    cancelled: list[str] = []
    for commit in commits:  # oldest first
        if commit.reverts_subject is not None or commit.reverts_sha:
            target = None
            for index in range(len(kept) - 1, -1, -1):
                candidate = kept[index]
                if commit.reverts_sha and candidate.sha.startswith(commit.reverts_sha):
                    target = index
                    break
                if (
                    candidate.picked_from
                    and commit.reverts_sha
                    and any(p.startswith(commit.reverts_sha) for p in candidate.picked_from)
                ):
                    target = index
                    break
            if target is None and commit.reverts_subject is not None:
                for index in range(len(kept) - 1, -1, -1):
                    if kept[index].subject == commit.reverts_subject:
                        target = index
                        break
            if target is not None:
                cancelled.extend([kept[target].sha, commit.sha])
                del kept[target]
                continue
        kept.append(commit)
    return kept, cancelled


def build_notes(
    commits: Iterable[Commit],
    *,
    category_order: Sequence[str],
    since: str | None,
    until: str,
    exclude_identities: Iterable[str] = (),
) -> Notes:
    """Notes for ``commits`` (newest first, as git prints them)."""
    ordered = [c for c in reversed(list(commits)) if c.changelog_for is None]
    kept, cancelled = _cancel_reverts(ordered)
    seen = set(exclude_identities)
    by_category: dict[str, list[Entry]] = {}
    contributors: dict[str, Person] = {}
    for commit in kept:
        if commit.identity in seen:
            continue
        seen.add(commit.identity)
        if commit.pr is not None:
            # A backport re-numbered on the branch still lists once per original PR.
            pr_key = f"pr:{commit.pr}"
            if pr_key in seen and commit.picked_from:
                continue
            seen.add(pr_key)
        entry = Entry(
            title=commit.title,
            category=commit.category,
            sha=commit.sha,
            pr=commit.pr,
            credits=commit.credited,
            pick_reason=commit.pick_reason,
            picked_from=commit.picked_from[-1] if commit.picked_from else None,
            identity=commit.identity,
        )
        by_category.setdefault(commit.category, []).append(entry)
        for person in commit.credited:
            contributors.setdefault(person.key, person)
    order = [c for c in category_order if c in by_category]
    order += sorted(c for c in by_category if c not in order and c != "Other")
    if "Other" in by_category:
        order.append("Other")
    sections = tuple((name, tuple(by_category[name])) for name in order)
    people = tuple(sorted(contributors.values(), key=lambda p: p.name.lower()))
    return Notes(since, until, sections, people, tuple(cancelled))


def _pr_link(pr: int, repo_url: str) -> str:
    return f"[#{pr}]({repo_url}/pull/{pr})" if repo_url else f"#{pr}"


def render_entry(entry: Entry, repo_url: str) -> str:
    line = f"- {entry.title}"
    if entry.pr is not None:
        line += f" ({_pr_link(entry.pr, repo_url)})"
    names = ", ".join(p.name for p in entry.credits)
    if names:
        line += f" by {names}"
    if entry.pick_reason:
        line += f" [picked: {entry.pick_reason}]"
    return line


def render_markdown(notes: Notes, *, repo_url: str = "", heading_level: int = 2) -> str:
    """Markdown body; ``heading_level`` sets the depth of the category headings."""
    hashes = "#" * heading_level
    if notes.is_empty():
        return "No changes.\n"
    blocks: list[str] = []
    for category, entries in notes.sections:
        lines = [f"{hashes} {category}", ""]
        lines += [render_entry(e, repo_url) for e in entries]
        blocks.append("\n".join(lines))
    if notes.contributors:
        blocks.append(f"{hashes} Contributors\n\n" + ", ".join(p.name for p in notes.contributors))
    return "\n\n".join(blocks) + "\n"


def render_json(notes: Notes, *, repo_url: str = "") -> str:
    def person(p: Person) -> dict[str, str]:
        return {"name": p.name, "email": p.email}

    data = {
        "since": notes.since,
        "until": notes.until,
        "sections": [
            {
                "category": category,
                "entries": [
                    {
                        "title": e.title,
                        "sha": e.sha,
                        "pr": e.pr,
                        "pr_url": f"{repo_url}/pull/{e.pr}" if repo_url and e.pr else None,
                        "credits": [person(p) for p in e.credits],
                        "pick_reason": e.pick_reason,
                        "picked_from": e.picked_from,
                    }
                    for e in entries
                ],
            }
            for category, entries in notes.sections
        ],
        "contributors": [person(p) for p in notes.contributors],
        "cancelled_reverts": list(notes.cancelled),
    }
    return json.dumps(data, indent=2) + "\n"

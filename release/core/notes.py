"""Release notes: commits in, grouped notes out (Markdown or JSON). Pure.

Rules: sections by canonical category (config order, then "Other"); a revert and
what it reverts cancel out inside the range; one change is listed once even when it
was picked more than once (identity = the main commit it came from); the author and
every co-author are credited once each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from release.core.categories import near_category, prefix_key
from release.core.commits import Commit, Person, title_key
from release.core.people import Identities, People

__all__ = [
    "Entry",
    "Notes",
    "build_notes",
    "cancel_reverts",
    "render_json",
    "render_markdown",
    "revert_targets",
]


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
    new_contributors: tuple[tuple[Person, int | None], ...] = field(default=())  # and their PR
    guessed: tuple[tuple[str, str], ...] = field(default=())  # (typo'd prefix, category read)
    cancelled: tuple[str, ...] = field(default=())

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(e for _, entries in self.sections for e in entries)

    def is_empty(self) -> bool:
        return not self.sections


_KEY = 7  # a revert names at least this many characters of a sha (git never prints fewer)


def _entry(
    title: str,
    category: str,
    sha: str,
    pr: int | None,
    credits: tuple[Person, ...],
    pick_reason: str | None,
    picked_from: str | None,
    identity: str,
) -> Entry:
    """``Entry(...)`` with every field given, at a third of the cost (one per commit: the
    fields go into the new instance's dict at once, not one ``object.__setattr__`` each;
    the tests check that this makes the same entry)."""
    entry = object.__new__(Entry)
    object.__setattr__(
        entry,
        "__dict__",
        {
            "title": title,
            "category": category,
            "sha": sha,
            "pr": pr,
            "credits": credits,
            "pick_reason": pick_reason,
            "picked_from": picked_from,
            "identity": identity,
        },
    )
    return entry


def cancel_reverts(commits: Sequence[Commit]) -> tuple[list[Commit], list[str]]:
    """Drop each revert together with its target when both are in the range.

    The target is the latest kept commit that the revert names, tried in this order: by
    the sha in its body (or a ``-x`` source of it), by the PR number it reverts (GitHub's
    "Reverts org/repo#N", or the quoted title's "(#N)"), by the exact subject, then by the
    title with prefixes and PR number dropped (a title GitHub cut short matches what it
    begins with). A revert of several commits ("This reverts commit X." for each) drops
    each one here, and is dropped itself only when all of them were. A revert of a revert
    that was cancelled stays, as the reland. The latest commit for each key is kept at
    hand (:class:`_Kept`), so a revert looks back through the commits before it only when
    that one is gone, or for a title cut short.
    """
    kept = _Kept()
    cancelled: list[str] = []
    for commit in commits:  # oldest first
        if commit.reverts_subject is not None or commit.reverts_sha:
            target = _target(commit, kept)
            found = [] if target is None else [target]
            extra = commit.reverts_shas[1:]  # a revert of several commits names each
            for sha in extra:
                other = _by_sha(kept.commits, sha)
                if other is not None and other not in found:
                    found.append(other)
            for index in found:
                reverted = kept.commits[index]
                assert reverted is not None
                cancelled.append(reverted.sha)
                kept.commits[index] = None
            if found and len(found) == 1 + len(extra):  # every one it reverts is here
                cancelled.append(commit.sha)
                continue
        kept.add(commit)
    return [c for c in kept.commits if c is not None], cancelled


def revert_targets(commits: Sequence[Commit]) -> dict[str, str]:
    """Revert -> the commit of ``commits`` (oldest first) it reverts, found as
    :func:`cancel_reverts` finds it (the latest one before it that it names), for the
    reverts whose target is there. Nothing is dropped: a revert of a revert names the
    revert, and what it reverted is still named by the first."""
    kept = _Kept()
    found: dict[str, str] = {}
    for commit in commits:
        if commit.reverts_subject is not None or commit.reverts_sha:
            index = _target(commit, kept)
            target = None if index is None else kept.commits[index]
            if target is not None:
                found[commit.sha] = target.sha
        kept.add(commit)
    return found


class _Kept:
    """The commits kept so far, with the latest one for each key a revert can name. Titles
    are indexed only once a revert asks for one (most ranges never do)."""

    def __init__(self) -> None:
        self.commits: list[Commit | None] = []
        # kind of key ("sha", "pr", "subject", "title") -> key -> index of the latest commit
        self.latest: dict[str, dict[Any, int]] = {"sha": {}, "pr": {}, "subject": {}, "title": {}}
        self._titles = False

    def add(self, commit: Commit) -> None:
        index = len(self.commits)
        self.commits.append(commit)
        latest = self.latest
        shas = latest["sha"]
        shas[commit.sha[:_KEY]] = index
        for sha in commit.picked_from:
            shas[sha[:_KEY]] = index
        if commit.pr is not None:
            latest["pr"][commit.pr] = index
        latest["subject"][commit.subject] = index
        if self._titles:
            latest["title"][title_key(commit.subject)] = index

    def index_titles(self) -> None:
        if not self._titles:
            self._titles = True
            titles = self.latest["title"]
            for index, commit in enumerate(self.commits):
                if commit is not None:
                    titles[title_key(commit.subject)] = index


def _wanted(revert: Commit) -> list[tuple[str, object]]:
    """What a revert names, most certain first."""
    wanted: list[tuple[str, object]] = []
    if revert.reverts_sha and len(revert.reverts_sha) >= _KEY:
        wanted.append(("sha", revert.reverts_sha[:_KEY]))
    if revert.reverts_pr is not None:
        wanted.append(("pr", revert.reverts_pr))
    if revert.reverts_subject is not None:
        wanted.append(("subject", revert.reverts_subject))
        wanted.append(("title", revert.reverts_title))
    return wanted


def _matches(candidate: Commit, revert: Commit, kind: str, key: object) -> bool:
    if kind == "sha":
        return _names(candidate, revert.reverts_sha or "")
    if kind == "pr":
        return candidate.pr == key
    if kind == "subject":
        return candidate.subject == key
    title, wanted = title_key(candidate.subject), str(key)
    cut = (revert.reverts_subject or "").rstrip().endswith(("…", "..."))  # GitHub cut it
    return bool(wanted) and (
        title == wanted or (cut and len(wanted) >= 8 and title.startswith(wanted))
    )


def _target(revert: Commit, kept: _Kept) -> int | None:
    for kind, key in _wanted(revert):
        if kind == "title":
            kept.index_titles()
        index = kept.latest[kind].get(key)
        candidate = None if index is None else kept.commits[index]
        if candidate is not None and _matches(candidate, revert, kind, key):
            return index
        cut = kind == "title" and (revert.reverts_subject or "").rstrip().endswith(("…", "..."))
        if index is not None or cut:  # the latest one is gone, or a title cut short
            found = _scan(kept.commits, revert, kind, key)
            if found is not None:
                return found
    if revert.reverts_sha and len(revert.reverts_sha) < _KEY:
        return _scan(kept.commits, revert, "sha", revert.reverts_sha)
    return None


def _scan(kept: Sequence[Commit | None], revert: Commit, kind: str, key: object) -> int | None:
    """The latest kept commit ``revert`` names by ``kind`` (the slow way, for the rare
    lookups the indexes cannot answer)."""
    for index in range(len(kept) - 1, -1, -1):
        candidate = kept[index]
        if (
            candidate is not None
            and candidate is not revert
            and _matches(candidate, revert, kind, key)
        ):
            return index
    return None


def _by_sha(kept: Sequence[Commit | None], sha: str) -> int | None:
    """The latest kept commit that is ``sha`` (or was picked from it)."""
    for index in range(len(kept) - 1, -1, -1):
        candidate = kept[index]
        if candidate is not None and _names(candidate, sha):
            return index
    return None


def _names(commit: Commit, sha: str) -> bool:
    return bool(sha) and (
        commit.sha.startswith(sha) or any(p.startswith(sha) for p in commit.picked_from)
    )


def build_notes(
    commits: Iterable[Commit],
    *,
    category_order: Sequence[str],
    since: str | None,
    until: str,
    exclude_identities: Iterable[str] = (),
    exclude_prs: Iterable[int] = (),
    people: People | None = None,
    aliases: Mapping[str, str] | None = None,
) -> Notes:
    """Notes for ``commits`` (newest first, as git prints them). ``people``: how authors
    are credited (mailmap, bots, one per name) and who is new. ``exclude_identities`` and
    ``exclude_prs``: changes an earlier release shipped (by main commit, by PR number)."""
    people = people if people is not None else People()
    ordered = [c for c in reversed(list(commits)) if c.changelog_for is None]
    seen = set(exclude_identities)
    shipped_prs = frozenset(exclude_prs)
    if seen or shipped_prs:  # gone before reverts are matched: a revert of them is news
        ordered = [c for c in ordered if not _shipped(c, seen, shipped_prs)]
    kept, cancelled = cancel_reverts(ordered)
    seen_prs: set[int] = set()
    by_category: dict[str, list[Entry]] = {}
    contributors: dict[int, Person] = {}
    identities = Identities(people)
    identities.learn([(c.author, c.co_authors) for c in kept])
    new: list[tuple[Person, int | None]] = []
    for commit in kept:
        identity = commit.identity
        if identity in seen:
            continue
        seen.add(identity)
        pr = commit.pr
        if pr is not None:
            # A backport re-numbered on the branch still lists once per original PR.
            if pr in seen_prs and commit.picked_from:
                continue
            seen_prs.add(pr)
        credits, first = identities.credit(commit.author, commit.co_authors)
        entry = _entry(
            commit.title,
            commit.category,
            commit.sha,
            pr,
            credits,
            commit.pick_reason,
            commit.picked_from[-1] if commit.picked_from else None,
            identity,
        )
        entries = by_category.get(commit.category)
        if entries is None:
            entries = by_category[commit.category] = []
        entries.append(entry)
        for person in credits if first else ():  # asked before: every one of them is known
            key = identities.of(person)
            if key not in contributors:
                contributors[key] = person
                if identities.is_new(person):
                    new.append((person, pr))
    order = [c for c in category_order if c in by_category]
    order += sorted(c for c in by_category if c not in order and c != "Other")
    if "Other" in by_category:
        order.append("Other")
    sections = tuple((name, tuple(by_category[name])) for name in order)
    credited = tuple(sorted(contributors.values(), key=lambda p: p.name.lower()))
    guessed = _guessed(kept, aliases) if aliases is not None else ()
    return Notes(
        since,
        until,
        sections,
        credited,
        new_contributors=tuple(new),
        guessed=guessed,
        cancelled=tuple(cancelled),
    )


def _shipped(commit: Commit, identities: set[str], prs: frozenset[int]) -> bool:
    """Whether an earlier release shipped ``commit``: its main commit, or (not a revert)
    its PR."""
    if commit.identity in identities:
        return True
    return commit.pr is not None and commit.pr in prs and commit.reverts_subject is None


def _guessed(commits: Iterable[Commit], aliases: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """Prefixes no spelling names, read as the category one edit away (said, not hidden)."""
    found: dict[str, str] = {}
    seen: set[tuple[str, tuple[str, ...]]] = set()  # the answer depends on these alone
    for commit in commits:
        if commit.category == "Other" or not commit.raw_categories:
            continue
        decided = (commit.category, commit.raw_categories)
        if decided in seen:
            continue
        seen.add(decided)
        if any(aliases.get(prefix_key(p)) for p in commit.raw_categories):
            continue
        for prefix in commit.raw_categories:
            if near_category(prefix, aliases) == commit.category:
                found.setdefault(prefix, commit.category)
    return tuple(sorted(found.items()))


def _pr_link(pr: int, repo_url: str) -> str:
    return f"[#{pr}]({repo_url}/pull/{pr})" if repo_url else f"#{pr}"


def render_entry(entry: Entry, repo_url: str) -> str:
    line = f"- {entry.title}"
    pr = entry.pr
    if pr is not None:
        line += f" ([#{pr}]({repo_url}/pull/{pr}))" if repo_url else f" (#{pr})"
    credits = entry.credits
    names = credits[0].name if len(credits) == 1 else ", ".join([p.name for p in credits])
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
    if notes.new_contributors:
        lines = [
            f"- {p.name} made their first contribution"
            + (f" in {_pr_link(pr, repo_url)}" if pr is not None else "")
            for p, pr in notes.new_contributors
        ]
        blocks.append(f"{hashes} New Contributors\n\n" + "\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def render_json(notes: Notes, *, repo_url: str = "") -> str:
    import json  # only this output needs it

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
        "new_contributors": [{**person(p), "pr": pr} for p, pr in notes.new_contributors],
        "cancelled_reverts": list(notes.cancelled),
        "guessed_categories": [{"prefix": p, "category": c} for p, c in notes.guessed],
    }
    return json.dumps(data, indent=2) + "\n"

"""Commits as the release flow sees them: category, PR number, credits, picks, reverts.

Pure: parses the text of ``git log`` records (see :data:`LOG_FORMAT`) into
:class:`Commit` values; no git calls here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

__all__ = [
    "CHANGELOG_TRAILER",
    "LOG_FORMAT",
    "REASON_TRAILER",
    "Commit",
    "Person",
    "parse_log",
    "parse_subject",
]

# One record per commit: fields split by US (0x1f); records end with RS (0x1e).
LOG_FORMAT = "%H%x1f%an%x1f%ae%x1f%s%x1f%b%x1e"
REASON_TRAILER = "Cherry-pick-reason"
CHANGELOG_TRAILER = "Release-changelog"

_PREFIX = re.compile(r"^\s*\[([^\]]*)\]\s*")
_PR_AT_END = re.compile(r"\s*\(#(\d+)\)\s*$")
# 'Revert "<subject>"', optionally followed by the revert's own PR number (vLLM style).
_REVERT = re.compile(r'^Revert\s+"(?P<subject>.*)"(?:\s*\(#\d+\))?\s*$')
_REVERTS_SHA = re.compile(r"This reverts commit ([0-9a-f]{7,40})")
_PICKED_FROM = re.compile(r"\(cherry picked from commit ([0-9a-f]{7,40})\)")
_TRAILER = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9-]*):\s*(?P<value>.+?)\s*$", re.MULTILINE)
_PERSON = re.compile(r"^(?P<name>.*?)\s*<(?P<email>[^>]*)>\s*$")
# Prefixes that are not categories: versions/branches ([v0.23.0], [main]) and series ([1/N]).
_NOISE = re.compile(
    r"^(v?\d+(\.\d+)*([a-z]+\d*)?|main|master|release|releases?/\S*|\d+\s*/\s*(\d+|n)|wip|draft)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Person:
    name: str
    email: str

    @property
    def key(self) -> str:
        return self.email.lower() or self.name.lower()


@dataclass(frozen=True)
class Commit:
    sha: str
    author: Person
    subject: str
    body: str = ""
    category: str = "Other"
    title: str = ""
    pr: int | None = None
    co_authors: tuple[Person, ...] = ()
    picked_from: tuple[str, ...] = ()
    pick_reason: str | None = None
    reverts_subject: str | None = None
    reverts_sha: str | None = None
    changelog_for: str | None = None
    raw_categories: tuple[str, ...] = field(default=())

    @property
    def identity(self) -> str:
        """What makes two commits "the same change" across rcs: the main commit it came from."""
        return self.picked_from[-1] if self.picked_from else self.sha

    @property
    def credited(self) -> tuple[Person, ...]:
        seen: dict[str, Person] = {}
        for person in (self.author, *self.co_authors):
            seen.setdefault(person.key, person)
        return tuple(seen.values())


def parse_subject(
    subject: str, aliases: Mapping[str, str]
) -> tuple[str, str, int | None, tuple[str, ...]]:
    """Split a subject into (canonical category, title, PR number, raw prefixes).

    The first prefix that names a known category wins; noise prefixes are dropped;
    anything else leaves the commit under "Other".
    """
    from release.config import normalize_category

    rest = subject.strip()
    prefixes: list[str] = []
    while True:
        match = _PREFIX.match(rest)
        if not match:
            break
        prefixes.append(match.group(1).strip())
        rest = rest[match.end() :]
    pr = None
    pr_match = _PR_AT_END.search(rest)
    if pr_match:
        pr = int(pr_match.group(1))
        rest = rest[: pr_match.start()]
    category = "Other"
    for prefix in prefixes:
        canonical = aliases.get(normalize_category(prefix))
        if _NOISE.match(prefix) and canonical is None:
            continue  # a configured spelling wins: vLLM's [V1] also looks like a version
        if canonical:
            category = canonical
            break
    return category, rest.strip() or subject.strip(), pr, tuple(prefixes)


def _trailers(body: str) -> list[tuple[str, str]]:
    return [(m["key"], m["value"]) for m in _TRAILER.finditer(body)]


def _person(text: str) -> Person:
    match = _PERSON.match(text.strip())
    if match:
        return Person(match["name"].strip(), match["email"].strip())
    return Person(text.strip(), "")


def make_commit(
    sha: str,
    author_name: str,
    author_email: str,
    subject: str,
    body: str,
    aliases: Mapping[str, str],
) -> Commit:
    revert = _REVERT.match(subject)
    category, title, pr, prefixes = parse_subject(revert["subject"] if revert else subject, aliases)
    if revert:
        # A revert is listed under what it reverts, but keeps its own PR number.
        own_pr = _PR_AT_END.search(subject)
        pr = int(own_pr.group(1)) if own_pr else None
        title = f'Revert "{title}"'
    trailers = _trailers(body)
    co_authors = tuple(_person(v) for k, v in trailers if k.lower() == "co-authored-by")
    reason = next((v for k, v in trailers if k.lower() == REASON_TRAILER.lower()), None)
    changelog_for = next((v for k, v in trailers if k.lower() == CHANGELOG_TRAILER.lower()), None)
    reverts_sha = _REVERTS_SHA.search(body)
    return Commit(
        sha=sha,
        author=Person(author_name, author_email),
        subject=subject,
        body=body,
        category=category,
        title=title,
        pr=pr,
        co_authors=co_authors,
        picked_from=tuple(_PICKED_FROM.findall(body)),
        pick_reason=reason,
        reverts_subject=revert["subject"] if revert else None,
        reverts_sha=reverts_sha.group(1) if reverts_sha else None,
        changelog_for=changelog_for,
        raw_categories=prefixes,
    )


def parse_log(text: str, aliases: Mapping[str, str]) -> Iterator[Commit]:
    """Parse ``git log --format=LOG_FORMAT`` output, newest first as git prints it."""
    for record in text.split("\x1e"):
        record = record.lstrip("\n")
        if not record:
            continue
        parts = record.split("\x1f", 4)
        if len(parts) < 5:
            continue
        sha, name, email, subject, body = parts
        yield make_commit(sha, name, email, subject, body.strip("\n"), aliases)

"""Commits as the release flow sees them: category, PR number, credits, picks, reverts.

Pure: makes :class:`Commit` values of a commit's fields (the git adapter reads them,
:mod:`release.adapters.git_log`); no git calls here. A commit's PR is this repository's
(:mod:`release.core.pull_requests` says when a subject's or a body's number is).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import NamedTuple

from release.core.categories import category_from_words, decide_category
from release.core.patterns import lazy_pattern
from release.core.pull_requests import RepoIdentity, commit_pr

__all__ = [
    "CHANGELOG_TRAILER",
    "FIELDS",
    "PICK_LINE",
    "REASON_TRAILER",
    "Commit",
    "Person",
    "assemble_commit",
    "commit_maker",
    "commit_of",
    "is_pr_digits",
    "make_commit",
    "parse_person",
    "parse_subject",
    "pick_fields",
    "pr_number",
    "subject_parser",
    "title_key",
]

REASON_TRAILER = "Cherry-pick-reason"
CHANGELOG_TRAILER = "Release-changelog"

_PREFIXES = lazy_pattern(r"(?:\s*\[[^\]]*\]\s*)+")  # every leading prefix at once
# 'Revert "<subject>"', after category prefixes, optionally with the revert's own PR number
# (vLLM style); the closing quote may be missing (GitHub cuts long titles). With two
# numbers after the quote, the first is the reverted one's ('Revert "<title>" (#N) (#M)',
# as revert bots write it). git's 'Reapply "<subject>"' reverts the revert of <subject>.
# '[Revert] "<subject>"': the word as a bracketed prefix, the quote after it.
_REVERT = lazy_pattern(
    r'^(?:\s*\[[^\]]*\])*\s*(?:\[(?P<tag>Revert|Reapply)\]\s*|(?P<kind>Revert|Reapply)\s+)"(?P<subject>.*?)'
    r'(?:"(?:(?P<reverted>\s*\(#\d+\))(?=\s*\(#\d+\)\s*$))?(?:\s*\(#\d+\))?)?\s*$'
)
# 'Revert "X (#1)" — fixes Y (#2)': the quote that closes is the first right after X's
# "(#N)", else the first before a spaced dash (a quote inside X is followed by neither).
_CLOSING = lazy_pattern(r'^(?:(.*?\(#\d+\))"\s|(.*?)"\s+(?:[\u2014\u2013]|--?)\s)')
# GitHub's revert body: "Reverts org/repo#123" (or "Reverts #123").
_REVERTS_PR = lazy_pattern(r"^Reverts (?:[\w.-]+/[\w.-]+)?#([0-9]{1,9})\b", re.MULTILINE)
_REVERTS_SHA = lazy_pattern(r"This reverts commit ([0-9a-f]{7,40})")
_PICKED_FROM = lazy_pattern(r"\(cherry picked from commit ([0-9a-f]{7,40})\)")
# ``Key: value`` lines. The value is trimmed afterwards (:func:`_value`) to what
# ``(?P<value>.+?)\s*$`` takes, without the lazy match that costs a step per character.
_TRAILER = lazy_pattern(r"^(?P<key>[A-Za-z][A-Za-z0-9-]*):\s*(?P<value>.+)", re.MULTILINE)
_PERSON = lazy_pattern(r"^(?P<name>.*?)\s*<(?P<email>[^>]*)>\s*$")
# a co-author named without an email: letters first, then letters, spaces, . ' - only
_PLAIN_NAME = lazy_pattern(r"^[^\W\d_][^\W_]*(?:[ .'-]+[^\W_]+)*\.?$")
# Text a body must contain before the regexes that look for it are run (the trailer
# keys are matched in any case, so they are looked for in the lower-cased body).
_CO_AUTHOR = "co-authored-by"
_REASON = REASON_TRAILER.lower()
_CHANGELOG = CHANGELOG_TRAILER.lower()
_WANTED_TRAILERS = (_CO_AUTHOR, _REASON, _CHANGELOG)
PICK_LINE = "(cherry picked from commit "  # what a -x line starts with
_PICKED_TEXT = PICK_LINE
_REVERTS_TEXT = "This reverts commit "


class Person(NamedTuple):
    """A name and an email, as a commit gives them. A tuple: notes hash and compare people
    by the hundred thousand, and a tuple does that in C."""

    name: str
    email: str

    @property
    def key(self) -> str:
        """Who this is, however the name and the case of the email are spelt."""
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
    def reverts_pr(self) -> int | None:
        """The PR number of what this revert reverts: from GitHub's "Reverts org/repo#N"
        body, else from the reverted subject's own "(#N)"."""
        if self.reverts_subject is None:
            return None
        found = _REVERTS_PR.search(self.body) if "Reverts " in self.body else None
        if found:
            return int(found.group(1))
        number = pr_number(self.reverts_subject)
        return number[0] if number else None

    @property
    def reverts_shas(self) -> tuple[str, ...]:
        """Every commit the body says this reverts ("This reverts commit X." once per
        commit: a revert of two commits names both), the first being :attr:`reverts_sha`."""
        if _REVERTS_TEXT not in self.body:
            return ()
        return tuple(dict.fromkeys(_REVERTS_SHA.findall(self.body)))

    @property
    def reverts_title(self) -> str | None:
        """The reverted subject as a title (prefixes and "(#N)" dropped), for matching."""
        if self.reverts_subject is None:
            return None
        return title_key(self.reverts_subject)

    @property
    def identity(self) -> str:
        """What makes two commits "the same change" across rcs: the main commit it came from."""
        return self.picked_from[-1] if self.picked_from else self.sha

    @property
    def credited(self) -> tuple[Person, ...]:
        if not self.co_authors:
            return (self.author,)
        seen: dict[str, Person] = {}
        for person in (self.author, *self.co_authors):
            seen.setdefault(person.key, person)
        return tuple(seen.values())


# Commit's fields, in order: the one declaration the fast constructor below, the commit
# cache's records and the log's parse all follow.
FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Commit))


def assemble_commit(*values: object) -> Commit:
    """``Commit(*values)``, every field given in :data:`FIELDS` order, at a third of the
    cost.

    A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``;
    parsing makes commits by the ten thousand, so here the fields go into the new
    instance's dict at once (the tests check that this makes the same commit). A value
    too many or too few is a ``ValueError``.
    """
    commit = _new(Commit)
    _set(commit, "__dict__", dict(zip(FIELDS, values, strict=True)))
    return commit


def commit_of(values: dict[str, object]) -> Commit:
    """The commit whose fields ``values`` holds, each by name (all of :data:`FIELDS`)."""
    commit = _new(Commit)
    _set(commit, "__dict__", values)
    return commit


_new, _set = object.__new__, object.__setattr__


def title_key(subject: str) -> str:
    """A subject reduced to what a revert's quoted title and the original share: no leading
    ``[...]`` prefixes, no trailing ``(#N)``, spaces collapsed, lower case; a title GitHub
    cut short ("…" or "...") keeps only what is there."""
    rest = _PREFIXES.sub("", subject, count=1) if subject.lstrip().startswith("[") else subject
    number = pr_number(rest)
    if number is not None:
        rest = rest[: number[1]]
    rest = rest.strip().removesuffix("…").removesuffix("...")
    return " ".join(rest.lower().split())


def pr_number(subject: str) -> tuple[int, int] | None:
    """The ``(#N)`` a subject ends with, and where it starts; ``None`` without one.

    The same as searching ``\\s*\\(#(\\d+)\\)\\s*$``: only the last ``(#N)`` can end the
    subject, so it is found from the right without a regex.
    """
    tail = subject.rstrip()
    if not tail.endswith(")"):
        return None
    start = tail.rfind("(#")
    if start < 0:
        return None
    digits = tail[start + 2 : -1]
    if not is_pr_digits(digits):
        return None
    return int(digits), start


def is_revert(subject: str, body: str) -> bool:
    """Whether a commit undoes another: a revert subject (``Revert "X"``, ``[Revert] "X"``;
    ``Reapply "X"`` lands X again), else git's ``This reverts commit`` line."""
    match = _REVERT.match(subject)
    return (match["tag"] or match["kind"]) == "Revert" if match else _REVERTS_TEXT in body


def is_pr_digits(text: str) -> bool:
    """ASCII digits, at most nine: a PR number (``(#` then thousands of digits is not one,
    and Unicode digits are not ASCII ones)."""
    return 0 < len(text) <= 9 and text.isascii() and text.isdigit()


def _trailers(body: str, lower: str) -> list[tuple[str, str]]:
    """The ``Key: value`` lines of ``body`` that can carry a key this module reads.

    Values are raw: see :func:`_value`. Only the lines from the first one mentioning a
    wanted key (in ``lower``, the lower-cased body) are scanned: a match never spans a
    non-blank line unless the line above it ends with ``:`` (a key with its value on
    the next line), in which case the whole body is scanned.
    """
    start = 0
    if len(lower) == len(body):  # positions in ``lower`` are positions in ``body``
        first = len(body)
        for key in _WANTED_TRAILERS:
            at = lower.find(key)
            if 0 <= at < first:
                first = at
        start = body.rfind("\n", 0, first) + 1
        if start and body[:start].rstrip().endswith(":"):
            start = 0
    return _TRAILER.findall(body, start)


def _value(raw: str) -> str:
    r"""A trailer's value as ``(?P<value>.+?)\s*$`` takes it: the rest of the line without
    trailing whitespace, or (only whitespace after the colon to the end of the body) the
    last whitespace character that is not a newline."""
    return raw.rstrip() or raw


def pick_fields(body: str) -> tuple[tuple[str, ...], str | None]:
    """The ``-x`` sources and the pick reason in a commit body (as in :class:`Commit`)."""
    picked = tuple(_PICKED_FROM.findall(body)) if _PICKED_TEXT in body else ()
    lower = body.lower()
    if _REASON not in lower:
        return picked, None
    for key, value in _trailers(body, lower):
        if key.lower() == _REASON:
            return picked, _value(value)
    return picked, None


class _Parser:
    """Commits from record fields, with what repeats across commits worked out once.

    The category decision is cached per leading ``[...]`` block, and people per name
    and email, for one alias map. ``words``: a subject no prefix categorizes is read by
    its words (for notes; never for deciding what a pick refuses). ``repo``: the repository
    whose PRs a commit may name (None: unknown; see :func:`commit_pr`).
    """

    def __init__(
        self, aliases: Mapping[str, str], *, words: bool = False, repo: RepoIdentity | None = None
    ) -> None:
        self.aliases = aliases
        self.words = words
        self.repo = repo
        self.known = frozenset(aliases.values())  # the configured categories
        self.blocks: dict[str, tuple[str, tuple[str, ...]]] = {}
        self.people: dict[tuple[str, str], Person] = {}
        self.co_authors: dict[str, Person | None] = {}

    def subject(self, subject: str) -> tuple[str, str, int | None, tuple[str, ...]]:
        whole = subject.strip()
        rest = whole
        block = ""
        if rest.startswith("["):
            match = _PREFIXES.match(rest)
            if match:
                block = match.group()
                rest = rest[match.end() :]
        decided = self.blocks.get(block)
        if decided is None:
            decided = self.blocks[block] = decide_category(block, self.aliases)
        if rest.startswith(":"):  # "[CI]: Pin the tools"
            rest = rest[1:].lstrip()
        if self.words and decided[0] == "Other" and rest:  # no prefix says: its words may
            words = category_from_words(rest, self.aliases, self.known)
            if words is not None:
                decided = (words, decided[1])
        # pr_number(rest), inline; rest has no whitespace at either end
        if rest.endswith(")"):
            start = rest.rfind("(#")
            if start >= 0 and is_pr_digits(digits := rest[start + 2 : -1]):
                return decided[0], rest[:start].rstrip() or whole, int(digits), decided[1]
        return decided[0], rest or whole, None, decided[1]

    def person(self, text: str) -> Person | None:
        """A co-author as the trailer names one: ``Name <email>``, or a plain name alone;
        None for anything else (a handle, markdown, a URL), which credits no one."""
        if text in self.co_authors:
            return self.co_authors[text]
        match = _PERSON.match(text.strip())
        person: Person | None
        if match:
            person = Person(match["name"].strip(), match["email"].strip())
        else:
            name = " ".join(text.split())
            person = Person(name, "") if _PLAIN_NAME.match(name) else None
        self.co_authors[text] = person
        return person

    def commit(self, sha: str, name: str, email: str, subject: str, body: str) -> Commit:
        revert = _REVERT.match(subject) if ("Revert" in subject or "Reapply" in subject) else None
        reverted = inner = None
        if revert is not None:
            reverted = inner = revert["subject"]
            if '"' in inner and revert.end("subject") >= len(subject.rstrip()):  # not closed
                closing = _CLOSING.match(inner)
                reverted = inner = (closing[1] or closing[2]) if closing else inner
            kind = revert["kind"] or revert["tag"]
            if kind == "Reapply":  # git's name for reverting 'Revert "X"'
                reverted = f'Revert "{reverted}"'
            reverted += revert["reverted"] or ""  # 'Revert "X" (#N)' has X (#N)'s number
        category, title, pr, prefixes = self.subject(subject if inner is None else inner)
        if revert:
            # A revert is listed under what it reverts, but keeps its own PR number.
            own_pr = pr_number(subject)
            pr = own_pr[0] if own_pr else None
            title = f'{kind} "{title}"'
            if category == "Other" and self.words:  # nothing says what it reverts: "Revert" does
                own = _PREFIXES.sub("", subject, count=1).strip()
                category = category_from_words(own, self.aliases, self.known) or category
        co_authors: tuple[Person, ...] = ()
        reason = changelog_for = None
        picked: tuple[str, ...] = ()
        reverts_sha = None
        if body:
            lower = body.lower()
            if _CO_AUTHOR in lower or _REASON in lower or _CHANGELOG in lower:
                people: list[Person] = []
                known = self.co_authors
                for key, value in _trailers(body, lower):
                    key = key.lower()
                    if key == _CO_AUTHOR:
                        value = value.rstrip() or value  # _value(), inline: one per co-author
                        named = known[value] if value in known else self.person(value)
                        if named is not None:
                            people.append(named)
                    elif key == _REASON:
                        if reason is None:
                            reason = _value(value)
                    elif key == _CHANGELOG and changelog_for is None:
                        changelog_for = _value(value)
                co_authors = tuple(people)
            if _PICKED_TEXT in body:
                picked = tuple(_PICKED_FROM.findall(body))
            if _REVERTS_TEXT in body:
                found = _REVERTS_SHA.search(body)
                reverts_sha = found.group(1) if found else None
        if body:  # a ghstack commit names its PR only there, an exported one whose it is
            pr = commit_pr(pr, body, self.repo)
        author = self.people.get((name, email))
        if author is None:
            author = self.people[name, email] = Person(name, email)
        return assemble_commit(
            sha,
            author,
            subject,
            body,
            category,
            title,
            pr,
            co_authors,
            picked,
            reason,
            reverted,
            reverts_sha,
            changelog_for,
            prefixes,
        )


def parse_person(text: str) -> Person:
    """``Name <email>`` (or a bare name) as a trailer or git writes it; anything else as
    a name, as it is."""
    return _Parser({}).person(text) or Person(text.strip(), "")


def parse_subject(
    subject: str, aliases: Mapping[str, str]
) -> tuple[str, str, int | None, tuple[str, ...]]:
    """Split a subject into (canonical category, title, PR number, raw prefixes).

    The first prefix that names a known category wins; noise prefixes are dropped;
    anything else leaves the commit under "Other".
    """
    return _Parser(aliases).subject(subject)


def subject_parser(
    aliases: Mapping[str, str],
) -> Callable[[str], tuple[str, str, int | None, tuple[str, ...]]]:
    """:func:`parse_subject` for many subjects: category decisions are worked out once."""
    return _Parser(aliases).subject


def make_commit(
    sha: str,
    author_name: str,
    author_email: str,
    subject: str,
    body: str,
    aliases: Mapping[str, str],
    *,
    repo: RepoIdentity | None = None,
) -> Commit:
    """A commit of the repository ``repo`` (None: its URL is unknown)."""
    parser = _Parser(aliases, words=True, repo=repo)
    return parser.commit(sha, author_name, author_email, subject, body)


def commit_maker(
    aliases: Mapping[str, str], repo: RepoIdentity | None
) -> Callable[[str, str, str, str, str], Commit]:
    """:func:`make_commit` for many commits (``sha, author name, email, subject, body``):
    what repeats across them (categories, people) is worked out once."""
    return _Parser(aliases, words=True, repo=repo).commit

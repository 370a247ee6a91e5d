"""What ``git log`` says of commits, as records: the format each read asks git for, and
the parse of its fields (US, 0x1f, between fields; RS, 0x1e, after each record) into
:class:`~release.core.commits.Commit` values and the small records below.

The separators and formats stay here: callers get records, never git's text. Records
are named tuples, made in C (as :class:`~release.core.commits.Person` is): a record costs
what unpacking the split fields did.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import NamedTuple

from release.core.commits import Commit, Person, commit_maker, parse_person
from release.core.pull_requests import RepoIdentity

__all__ = [
    "ABOUT_FORMAT",
    "LOGGED_FIELDS",
    "LOG_FORMAT",
    "MESSAGE_FORMAT",
    "PEOPLE_FORMAT",
    "RECORD_END",
    "SUBJECT_FORMAT",
    "About",
    "CommitMessage",
    "Subject",
    "Trailer",
    "parse_about",
    "parse_log",
    "parse_messages",
    "parse_records",
    "parse_subjects",
    "parse_trailers",
    "people_of",
    "trailer_format",
]

# What git gives of a Commit, by its field (the author as .mailmap says: %aN, %aE); parsing
# works out the other fields from these.
LOGGED_FIELDS = {"sha": "%H", "author": "%aN%x1f%aE", "subject": "%s", "body": "%b"}
# One record per commit: fields split by US (0x1f); records end with RS (0x1e).
LOG_FORMAT = "%x1f".join(LOGGED_FIELDS.values()) + "%x1e"
_LOG_PARTS = LOG_FORMAT.count("%x1f") + 1  # what a record splits into
RECORD_END = "\x1e"
_FIELD = "\x1f"
_GROUP = "\x1d"
MESSAGE_FORMAT = "%H%x1f%s%x1f%b%x1e"
ABOUT_FORMAT = "%H%x1f%P%x1f%s%x1f%b%x1e"
SUBJECT_FORMAT = "%H%x1f%s"
# author name, email, co-author trailers (GS between), authors as .mailmap says
PEOPLE_FORMAT = "%aN%x1f%aE%x1f%(trailers:key=Co-authored-by,valueonly,separator=%x1d)"


def trailer_format(key: str) -> str:
    """``sha<US>the values of trailer key`` per commit."""
    return f"%H%x1f%(trailers:key={key},valueonly)"


class CommitMessage(NamedTuple):
    """A commit's sha, subject and body (trimmed of the newlines git puts around it)."""

    sha: str
    subject: str
    body: str


class About(NamedTuple):
    """A commit's sha, its parents, subject and body."""

    sha: str
    parents: tuple[str, ...]
    subject: str
    body: str


class Subject(NamedTuple):
    """A commit's sha and subject."""

    sha: str
    subject: str


class Trailer(NamedTuple):
    """A commit and the values of one trailer key in its message ("" when none)."""

    sha: str
    value: str


def parse_records(
    records: Iterable[str], aliases: Mapping[str, str], *, repo: RepoIdentity | None
) -> Iterator[Commit]:
    """Parse ``git log --format=LOG_FORMAT`` records (the text between separators), commits
    of the repository ``repo`` (None: unknown; it decides which PRs they name)."""
    commit = commit_maker(aliases, repo)
    for record in records:
        parts = record.split(_FIELD, _LOG_PARTS - 1)  # a newline before all records but the first
        if len(parts) < _LOG_PARTS:
            continue
        sha, name, email, subject, body = parts
        yield commit(sha.lstrip("\n"), name, email, subject, body.strip("\n"))


def parse_log(
    text: str, aliases: Mapping[str, str], *, repo: RepoIdentity | None
) -> Iterator[Commit]:
    """Parse ``git log --format=LOG_FORMAT`` output, newest first as git prints it."""
    return parse_records(text.split(RECORD_END), aliases, repo=repo)


def parse_messages(text: str) -> list[CommitMessage]:
    """``MESSAGE_FORMAT`` output, in git's order."""
    found: list[CommitMessage] = []
    add, make = found.append, tuple.__new__  # a tuple made in C, as fast as unpacking
    for record in text.split(RECORD_END):
        parts = record.lstrip("\n").split(_FIELD, 2)
        if len(parts) == 3:
            add(make(CommitMessage, (parts[0], parts[1], parts[2].strip("\n"))))
    return found


def parse_about(text: str) -> dict[str, About]:
    """``ABOUT_FORMAT`` output, by sha."""
    about: dict[str, About] = {}
    for record in text.split(RECORD_END):
        parts = record.lstrip("\n").split(_FIELD, 3)
        if len(parts) == 4:
            sha, parent_list, subject, body = parts
            about[sha] = About(sha, tuple(parent_list.split()), subject, body.strip("\n"))
    return about


def parse_subjects(text: str) -> list[Subject]:
    """``SUBJECT_FORMAT`` output, one commit a line (git ends each with a newline; a
    subject may hold a carriage return or a form feed, never a newline)."""
    make = tuple.__new__
    return [make(Subject, line.partition(_FIELD)[::2]) for line in text.split("\n") if line]


def parse_trailers(text: str) -> list[Trailer]:
    """:func:`trailer_format` output, in git's order. A commit with the key twice has its
    values on lines of their own: a line without a separator continues a value."""
    found: list[Trailer] = []
    for line in text.splitlines():
        sha, sep, value = line.partition(_FIELD)
        if sep:
            found.append(Trailer(sha, value))
        elif line and found:
            found[-1] = Trailer(found[-1].sha, f"{found[-1].value}\n{line}")
    return found


def people_of(lines: Iterable[str]) -> list[Person]:
    """Everyone ``PEOPLE_FORMAT`` lines name, authors first, each once (in order)."""
    earlier: dict[Person, None] = {}
    trailers: dict[str, None] = {}
    for line in lines:
        name, email, co = [*line.split(_FIELD), "", ""][:3]
        earlier[Person(name, email)] = None
        if co:
            trailers.update(dict.fromkeys(co.split(_GROUP)))
    earlier.update(dict.fromkeys(parse_person(t) for t in trailers if t.strip()))
    return list(earlier)

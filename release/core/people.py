"""Who is credited in notes: identities mapped (``.mailmap``), one person however many
names and emails they were seen with, bots left out, and who is new in a range. Pure: the
mapping and the people already known are read by the caller.

One person: the spellings (name and email) that share a key are one contributor, and so
is everything linked through them (union-find over keys: py4_ and Pooya Moradi who share
an address are one, whichever name a co-author trailer gives). The keys are the email
(case folded) and, when ``merge_by_name`` holds, the name (case and spacing folded). An
address that says nothing about who wrote a change (git's ``you@example.com``, a
template's ``your-email@example.com``, a ``localhost`` address, GitHub's
``noreply@github.com``, none) links no one when names are merged: people paste it in
trailers. A person is shown under one spelling everywhere: a full name over a handle,
the one credited most often, with a real address over a placeholder.

Bots are matched by glob (case folded; only ``*`` and ``?`` are wildcards): a glob with
``@`` against the whole email, any other against the name and the email's local part.
The default list holds the bots and CI accounts GitHub projects see most, by name and by
shape (``*[bot]``, ``*-bot``, ``* Bot``).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from release.core.commits import Person
from release.core.config import DEFAULT_BOTS

__all__ = ["DEFAULT_BOTS", "Identities", "People", "is_placeholder_address"]

_EXAMPLE_DOMAINS = ("example.com", "example.org", "example.net")
# what documentation and templates put before an example domain for "your address"
_PLACEHOLDER_LOCAL = frozenset({"you", "your-email", "your.email", "your_email", "youremail",
                                "your-name", "yourname", "email", "user", "username", "name"})  # fmt: skip
_PLACEHOLDER_ADDRESSES = frozenset({"noreply@github.com"})


def is_placeholder_address(email: str) -> bool:
    """Whether ``email`` names nobody in particular: an example address as documentation
    and templates write it (``you@example.com``, ``your-email@example.com``), a local
    machine's, GitHub's own no-reply address, or no address at all."""
    lower = email.lower()
    local, at, domain = lower.rpartition("@")
    if not at or not local:
        return True
    if domain == "localhost" or domain.startswith("localhost."):
        return True
    if domain in _EXAMPLE_DOMAINS or domain.endswith(tuple("." + d for d in _EXAMPLE_DOMAINS)):
        return local in _PLACEHOLDER_LOCAL
    return lower in _PLACEHOLDER_ADDRESSES


@dataclass(frozen=True)
class People:
    bots: tuple[str, ...] = DEFAULT_BOTS
    merge_by_name: bool = True
    mailmap: Mapping[str, Person] = field(default_factory=dict)  # "Name <email>" -> mapped
    known: frozenset[str] | None = None  # keys of people with changes before the range

    def canonical(self, person: Person) -> Person | None:
        """The person as credited, or None for a bot."""
        mapped = self.mailmap.get(f"{person.name} <{person.email}>", person)
        return None if self.is_bot(mapped) else mapped

    def is_bot(self, person: Person) -> bool:
        email = person.email.lower()
        by_name, by_address = _bot_patterns(self.bots)
        names = (person.name.lower(), email.partition("@")[0])
        return any(by_name(n) for n in names if n) or bool(email and by_address(email))

    def keys(self, person: Person) -> list[str]:
        """What identifies a contributor: the email (case folded; a placeholder address
        only when names are not merged) and, when merging by name, the name (case and
        spacing folded). Two people sharing any key are one."""
        email = person.email
        keys = []
        if email and not (self.merge_by_name and is_placeholder_address(email)):
            keys.append(f"email:{email.lower()}")
        if self.merge_by_name or not email:
            name = " ".join(person.name.lower().split())
            if name:
                keys.append(f"name:{name}")
        return keys

    def is_new(self, person: Person) -> bool:
        """No change before the range carries any of this person's keys."""
        return self.known is not None and not any(k in self.known for k in self.keys(person))


@functools.cache
def _bot_patterns(bots: tuple[str, ...]) -> tuple[Callable[[str], object], Callable[[str], object]]:
    """Two regexes for all the globs, matching what ``fnmatchcase`` matches for any of
    them, case folded: those for a name or local part, and those for a whole address
    (globs with ``@``). "[bot]" is literal, as in "dependabot[bot]"."""

    def one(globs: list[str]) -> Callable[[str], object]:
        parts = [fnmatch.translate(p.lower().replace("[", "[[]")) for p in globs]
        return re.compile("|".join(f"(?:{g})" for g in parts) or "(?!)").match

    return one([b for b in bots if "@" not in b]), one([b for b in bots if "@" in b])


class Identities:
    """Contributors of one run. :meth:`learn` every list of people credited first (each
    spelling joins the keys it carries; the most credited spelling of each person is the
    one shown); then :meth:`credit`, :meth:`of` and :meth:`is_new` answer for whole
    people. Someone asked about without being learnt is learnt then (what was answered
    before stays as it was)."""

    def __init__(self, people: People) -> None:
        self.people = people
        self._parent: dict[str, str] = {}
        self._keys: dict[Person, list[str]] = {}
        self._count: Counter[Person] = Counter()
        self._canonical: dict[Person, Person | None] = {}
        self._credits: dict[tuple[Person, tuple[Person, ...]], tuple[Person, ...]] = {}
        self._numbers: dict[str, int] = {}
        self._shown: dict[str, Person] | None = None
        self._members: dict[str, list[str]] | None = None
        # a person as given -> their contributor's number and spelling (None: a bot)
        self._resolved: dict[Person, tuple[int, Person] | None] = {}

    def learn(self, credits: Iterable[tuple[Person, tuple[Person, ...]]]) -> None:
        """Take in the run's credit lists (an author and co-authors, once per change)."""
        for (author, co_authors), times in Counter(credits).items():
            for person in (author, *co_authors):
                mapped = self._mapped(person)
                if mapped is not None:
                    self._join(mapped)
                    self._count[mapped] += times
        self._shown = None
        self._resolved = {}

    def _mapped(self, person: Person) -> Person | None:
        try:
            return self._canonical[person]
        except KeyError:
            mapped = self._canonical[person] = self.people.canonical(person)
            return mapped

    def _join(self, person: Person) -> list[str]:
        keys = self._keys.get(person)
        if keys is None:
            keys = self._keys[person] = self.people.keys(person) or [f"self:{person!r}"]
            root = self._root(keys[0])
            for key in keys[1:]:
                other = self._root(key)
                if other != root:
                    self._parent[other] = root
            self._count.setdefault(person, 0)
            self._members = self._shown = None
            self._resolved = {}
        return keys

    def _root(self, key: str) -> str:
        parent = self._parent
        root = parent.setdefault(key, key)
        while parent[root] != root:
            root = parent[root]
        while key != root:  # every key on the way now points at the root
            parent[key], key = root, parent[key]
        return root

    def _spelling(self, person: Person) -> Person:
        """The spelling ``person``'s contributor is shown under, whatever order the run met
        them in: a full name (with a space) over a handle, then the name credited most
        often (then the one of more words, then the first in sorted order); with the
        address credited most often under that name, a placeholder last (then the first
        in sorted order)."""
        if self._shown is None:
            groups: dict[str, list[tuple[Person, int]]] = {}
            for spelling, times in self._count.items():
                groups.setdefault(self._root(self._keys[spelling][0]), []).append((spelling, times))
            self._shown = {root: _shown(group) for root, group in groups.items()}
        root = self._root(self._join(person)[0])
        return self._shown.setdefault(root, person)

    def of(self, person: Person) -> int:
        """The contributor's number (people linked by a key share one)."""
        root = self._root(self._join(person)[0])
        return self._numbers.setdefault(root, len(self._numbers))

    def is_new(self, person: Person) -> bool:
        """No change before the range carries any key of anyone linked to ``person``."""
        known = self.people.known
        if known is None:
            return False
        root = self._root(self._join(person)[0])
        if self._members is None or root not in self._members:
            members: dict[str, list[str]] = {}
            for key in self._parent:
                members.setdefault(self._root(key), []).append(key)
            self._members = members
        return not any(key in known for key in self._members[root])

    def credit(
        self, author: Person, co_authors: tuple[Person, ...]
    ) -> tuple[tuple[Person, ...], bool]:
        """``credited((author, *co_authors))``, worked out once per such list, and whether
        this is the first time it was asked for (only then can its people be new to the
        run: asked again, each of them already has a number)."""
        key = (author, co_authors)
        found = self._credits.get(key)
        if found is not None:
            return found, False
        found = self._credits[key] = self.credited((author, *co_authors))
        return found, True

    def credited(self, people: Iterable[Person]) -> tuple[Person, ...]:
        """``people`` mapped, bots dropped, each contributor once, under its spelling."""
        seen: dict[int, Person] = {}
        for person in people:
            try:
                found = self._resolved[person]
            except KeyError:
                found = self._resolve(person)
            if found is not None:
                seen.setdefault(*found)
        return tuple(seen.values())

    def _resolve(self, person: Person) -> tuple[int, Person] | None:
        mapped = self._mapped(person)
        found = None if mapped is None else (self.of(mapped), self._spelling(mapped))
        self._resolved[person] = found
        return found


def _shown(spellings: list[tuple[Person, int]]) -> Person:
    """The spelling of one contributor to show (see :meth:`Identities._spelling`)."""
    names: Counter[str] = Counter()
    for spelling, times in spellings:
        names[" ".join(spelling.name.split())] += times
    name = min(names, key=lambda n: (" " not in n, -names[n], -len(n.split()), n))
    return min(
        ((p, t) for p, t in spellings if " ".join(p.name.split()) == name),
        key=lambda pt: (is_placeholder_address(pt[0].email), -pt[1], pt[0].email.lower()),
    )[0]

"""Who is credited in notes: identities mapped (``.mailmap``), one person per name, bots
left out, and who is new in a range. Pure: the mapping and the people already known are
read by the caller.

A person seen with several emails (a work and a personal address, a GitHub noreply) is
one contributor when ``merge_by_name`` holds: names are compared with case and spacing
folded. Bots are matched by glob against the name and the email's local part, case
folded; the default list holds the bots GitHub projects see most.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from release.core.commits import Person
from release.core.config import DEFAULT_BOTS

__all__ = ["DEFAULT_BOTS", "Identities", "People"]


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
        names = (person.name.lower(), person.email.lower().partition("@")[0])
        match = _bot_pattern(self.bots)
        return any(match(n) for n in names if n)

    def keys(self, person: Person) -> list[str]:
        """What identifies a contributor: the email (case folded) and, when merging by name,
        the name (case and spacing folded). Two people sharing any key are one."""
        keys = [f"email:{person.email.lower()}"] if person.email else []
        if self.merge_by_name or not keys:
            name = " ".join(person.name.lower().split())
            if name:
                keys.append(f"name:{name}")
        return keys

    def is_new(self, person: Person) -> bool:
        """No change before the range carries any of this person's keys."""
        return self.known is not None and not any(k in self.known for k in self.keys(person))


@functools.cache
def _bot_pattern(bots: tuple[str, ...]) -> Callable[[str], object]:
    """One regex for all the globs: matches what ``fnmatchcase`` matches for any of them,
    case folded. Only ``*`` and ``?`` are wildcards: "[bot]" is literal, as in
    "dependabot[bot]"."""
    globs = [fnmatch.translate(p.lower().replace("[", "[[]")) for p in bots]
    return re.compile("|".join(f"(?:{g})" for g in globs) or "(?!)").match


class Identities:
    """Contributors of one run: each person gets the number of the first person seen
    sharing a key with them (an email or, when merging by name, a name; the name when the
    two point at different people). What a person maps to and their number are worked out
    once per spelling (a person's number never changes once given)."""

    def __init__(self, people: People) -> None:
        self.people = people
        self._ids: dict[str, int] = {}
        self._next = 0
        self._of: dict[Person, int] = {}
        self._canonical: dict[Person, Person | None] = {}
        self._credits: dict[tuple[Person, tuple[Person, ...]], tuple[Person, ...]] = {}

    def of(self, person: Person) -> int:
        found = self._of.get(person)
        if found is None:
            found = self._of[person] = self._number(person)
        return found

    def _number(self, person: Person) -> int:
        keys = self.people.keys(person)
        # the name first: an address can be one that others used as well (a placeholder
        # such as you@example.com in a co-author trailer), a name given is the person's own
        found = next((self._ids[k] for k in reversed(keys) if k in self._ids), None)
        if found is None:
            found, self._next = self._next, self._next + 1
        for key in keys:
            self._ids.setdefault(key, found)
        return found

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
        """``people`` mapped, bots dropped, each contributor once (first spelling kept)."""
        seen: dict[int, Person] = {}
        canonical = self._canonical
        for person in people:
            try:
                mapped = canonical[person]
            except KeyError:
                mapped = canonical[person] = self.people.canonical(person)
            if mapped is not None:
                seen.setdefault(self.of(mapped), mapped)
        return tuple(seen.values())

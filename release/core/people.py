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
from collections.abc import Iterable, Mapping
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
        # only * and ? are wildcards: "[bot]" is literal, as in "dependabot[bot]"
        globs = [p.lower().replace("[", "[[]") for p in self.bots]
        return any(fnmatch.fnmatchcase(n, g) for g in globs for n in names if n)

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


class Identities:
    """Contributors of one run: each person gets the number of the first person seen
    sharing a key with them (an email or, when merging by name, a name)."""

    def __init__(self, people: People) -> None:
        self.people = people
        self._ids: dict[str, int] = {}
        self._next = 0

    def of(self, person: Person) -> int:
        keys = self.people.keys(person)
        found = next((self._ids[k] for k in keys if k in self._ids), None)
        if found is None:
            found, self._next = self._next, self._next + 1
        for key in keys:
            self._ids.setdefault(key, found)
        return found

    def credited(self, people: Iterable[Person]) -> tuple[Person, ...]:
        """``people`` mapped, bots dropped, each contributor once (first spelling kept)."""
        seen: dict[int, Person] = {}
        for person in people:
            mapped = self.people.canonical(person)
            if mapped is not None:
                seen.setdefault(self.of(mapped), mapped)
        return tuple(seen.values())

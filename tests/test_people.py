"""Who is credited, worked out once per person: the bot globs as one pattern match what
``fnmatch`` matches for each of them, and a list of people asked again is credited the same."""

from __future__ import annotations

import fnmatch

import pytest

from release.core.commits import Person
from release.core.config import DEFAULT_BOTS
from release.core.people import Identities, People

NAMES = [
    "dependabot[bot]", "Dependabot[BOT]", "renovate", "Renovate Bot", "github-actions",
    "Copilot", "copilot-swe-agent", "pre-commit-ci[bot]", "Alice Chen", "botany", "b",
    "abot", "a[bot]x", "[bot]", "x?y", "",
]  # fmt: skip
GLOBS = [DEFAULT_BOTS, ("*[bot]",), ("a?ot",), ("*",), ("b*", "*y"), ("[bot]",), ()]


def _fnmatch(person: Person, bots: tuple[str, ...]) -> bool:
    """What ``People.is_bot`` said when it tried each glob in turn."""
    names = (person.name.lower(), person.email.lower().partition("@")[0])
    globs = [p.lower().replace("[", "[[]") for p in bots]
    return any(fnmatch.fnmatchcase(n, g) for g in globs for n in names if n)


@pytest.mark.parametrize("bots", GLOBS)
def test_bots_match_as_each_glob_does(bots: tuple[str, ...]) -> None:
    people = People(bots)
    for name in NAMES:
        for person in (Person(name, ""), Person("Someone", f"{name}@example.com")):
            assert people.is_bot(person) == _fnmatch(person, bots), (person, bots)


def test_a_list_asked_again_is_credited_the_same() -> None:
    alice, bob = Person("Alice Chen", "alice@example.com"), Person("Bob", "bob@example.com")
    bot = Person("dependabot[bot]", "d@example.com")
    alias = Person("alice chen", "alice@home.example")  # one person by name
    mapped = People(mailmap={"Bob <bob@example.com>": Person("Robert", "bob@example.com")})
    once, again = Identities(mapped), Identities(mapped)
    asked: list[tuple[Person, tuple[Person, ...]]] = []
    for author, co_authors in [(alice, (bob, bot)), (alias, ()), (alice, (bob, bot)), (bot, ())]:
        credits, first = once.credit(author, co_authors)
        assert credits == again.credited((author, *co_authors))
        assert first == ((author, co_authors) not in asked)
        asked.append((author, co_authors))
    assert once.credit(alice, (bob, bot)) == ((alice, Person("Robert", "bob@example.com")), False)
    assert once.of(alias) == once.of(alice)


# vllm-ascend #4588: the author with GitHub's address, and a co-author trailer in their
# own name with the address git's documentation shows, which other people used too
HERIZHEN = Person("herizhen", "59841270+herizhen@users.noreply.github.com")
HERIZHEN_TRAILER = Person("herizhen", "you@example.com")


def test_a_name_outweighs_an_address_someone_else_used_first() -> None:
    identities = Identities(People())
    earlier = Person("Lee Wong", "you@example.com")
    assert identities.credited([earlier]) == (earlier,)
    assert identities.credited([HERIZHEN]) == (HERIZHEN,)
    assert identities.credited([HERIZHEN, HERIZHEN_TRAILER]) == (HERIZHEN,)
    assert identities.of(HERIZHEN_TRAILER) == identities.of(HERIZHEN) != identities.of(earlier)
    # an address alone still joins spellings of one person
    renamed = Person("Lee W.", "you@example.com")
    assert identities.of(renamed) == identities.of(earlier)


def test_without_merging_by_name_the_address_decides() -> None:
    identities = Identities(People(merge_by_name=False))
    earlier = Person("Lee Wong", "you@example.com")
    identities.credited([earlier])
    assert identities.of(HERIZHEN_TRAILER) == identities.of(earlier)
    assert identities.of(HERIZHEN) != identities.of(earlier)

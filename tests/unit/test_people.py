"""Who is credited, worked out once per person: the bot globs as one pattern match what
``fnmatch`` matches for each of them, and a list of people asked again is credited the same."""

from __future__ import annotations

import fnmatch

import pytest

from release.core.commits import Person
from release.core.config import DEFAULT_BOTS
from release.core.people import Identities, People, is_placeholder_address

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
    # a placeholder address joins no one: another name with it is another person
    renamed = Person("Lee W.", "you@example.com")
    assert identities.of(renamed) != identities.of(earlier)
    assert identities.of(Person("Lee W.", "lee@wong.dev")) == identities.of(renamed)


def test_without_merging_by_name_the_address_decides() -> None:
    identities = Identities(People(merge_by_name=False))
    earlier = Person("Lee Wong", "you@example.com")
    identities.credited([earlier])
    assert identities.of(HERIZHEN_TRAILER) == identities.of(earlier)
    assert identities.of(HERIZHEN) != identities.of(earlier)


# Shapes of real histories: the bots and CI accounts on tpu-inference, pytorch/ao and
# pytorch/data, and the people there whose names or addresses come close to them.
REAL_BOTS = [
    Person("Buildkite Bot", "buildkite-bot@users.noreply.github.com"),
    Person("vllm-ci-bot[bot]", "vllm-ci-bot[bot]@users.noreply.github.com"),
    Person("copilot-swe-agent[bot]", "198982749+Copilot@users.noreply.github.com"),
    Person("AI Bot", "bot@example.com"),
    Person("Ruff Auto-fixes", "ruff-bot@users.noreply.github.com"),
    Person("Facebook Community Bot", "facebook-github-bot@users.noreply.github.com"),
    Person("CodemodService Bot", "unknown"),
    Person("Devmate Bot", "noreply+537391475639613@fb.com"),
    Person("Pyre Bot Jr.", "phtarnajni_1568064294@tfbnw.net"),
    Person("pytorchbot", "soumith+bot@pytorch.org"),
    Person("github-actions", "github-actions@github.com"),
]
REAL_PEOPLE = [
    Person("Botao Chen", "markchen1015@meta.com"),
    Person("Lihao Ran", "your-email@example.com"),
    Person("Your Name", "you@example.com"),
    Person("Jane Talbot", "talbot@example.org"),
    Person("Abbot Li", "abbot.li@example.org"),
    Person("Robotics Team", "robot@example.org"),
]


def test_bots_of_real_histories_are_known_by_name_or_by_shape() -> None:
    people = People()
    assert [p for p in REAL_BOTS if not people.is_bot(p)] == []
    assert [p for p in REAL_PEOPLE if people.is_bot(p)] == []


def test_a_bot_glob_with_an_at_sign_matches_the_whole_address() -> None:
    people = People(("*@ci.example.org",))
    assert people.is_bot(Person("Nightly", "sync@ci.example.org"))
    assert not people.is_bot(Person("Nightly", "sync@example.org"))
    assert not people.is_bot(Person("ci.example.org", "x@y"))


# tpu-inference: py4_ and Pooya Moradi commit with one address, and a trailer names
# Pooya Moradi with another
PY4 = Person("py4_", "ibtkm2009@gmail.com")
POOYA = Person("Pooya Moradi", "ibtkm2009@gmail.com")
POOYA_WORK = Person("Pooya Moradi", "pooyam@google.com")


@pytest.mark.parametrize(
    "order",
    [
        [(PY4, (POOYA_WORK,)), (POOYA, ())],
        [(POOYA, ()), (PY4, (POOYA_WORK,))],
        [(PY4, ()), (POOYA_WORK, ()), (POOYA, ())],  # linked only by the last one
    ],
)
def test_people_linked_by_an_address_or_a_name_are_one_under_one_name(
    order: list[tuple[Person, tuple[Person, ...]]],
) -> None:
    identities = Identities(People())
    identities.learn(order)
    assert {identities.credited((a, *c)) for a, c in order} == {(POOYA,)}
    assert identities.of(PY4) == identities.of(POOYA_WORK) == identities.of(POOYA)


def test_the_name_shown_is_a_full_name_then_the_one_credited_most() -> None:
    identities = Identities(People())
    identities.learn([(PY4, ()), (PY4, ()), (POOYA, ()), (PY4, ())])
    assert identities.credited([PY4]) == (POOYA,)  # a full name over a handle
    yijia = [Person("Yijia J", "yijiaj@google.com"), Person("Yijia Jin", "yijiaj@google.com")]
    credits = [(yijia[0], ()), (yijia[1], ()), (yijia[1], ())]
    for order in (credits, credits[::-1]):  # whichever came first
        identities = Identities(People())
        identities.learn(order)
        assert identities.credited([yijia[0]]) == (yijia[1],)
    lihao = [Person("Lihao Ran", "your-email@example.com"), Person("Lihao Ran", "l@ran.dev")]
    identities = Identities(People())
    identities.learn([(lihao[0], ()), (lihao[0], ()), (lihao[1], ())])
    assert identities.credited([lihao[0]]) == (lihao[1],)  # a real address over a placeholder


def test_a_placeholder_address_links_no_one() -> None:
    identities = Identities(People())
    lee, kim = Person("Lee Wong", "you@example.com"), Person("Kim Park", "you@example.com")
    identities.learn([(lee, (kim,))])
    assert identities.credited([lee, kim]) == (lee, kim)


def test_someone_is_new_only_when_no_one_linked_to_them_had_changes_before() -> None:
    known = frozenset(People().keys(POOYA_WORK))
    identities = Identities(People(known=known))
    identities.learn([(PY4, ()), (POOYA, ())])
    assert not identities.is_new(PY4)
    stranger = Person("Kim Park", "kim@park.dev")
    assert identities.is_new(stranger)


@pytest.mark.parametrize(
    ("email", "placeholder"),
    [
        ("you@example.com", True),
        ("your-email@example.com", True),  # tpu-inference: Lihao Ran's, 187 commits
        ("Your.Email@Example.ORG", True),
        ("root@localhost", True),
        ("dev@localhost.localdomain", True),
        ("noreply@github.com", True),
        ("unknown", True),  # CodemodService Bot's
        ("", True),
        ("alice@example.com", False),  # a name at an example domain is someone's, in tests
        ("you@notexample.com", False),
        ("12345+you@users.noreply.github.com", False),
        ("pooyam@google.com", False),
    ],
)
def test_placeholder_addresses(email: str, placeholder: bool) -> None:
    assert is_placeholder_address(email) is placeholder

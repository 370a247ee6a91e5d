"""A main branch with what parsing commits meets: co-authors, a revert, a typo'd prefix, a
subject without one, a pick with ``-x`` and a reason, non-ASCII and a message in Latin-1
(the fixture ``parsing_history``, made once and copied; registered by conftest)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from release.sample import ALICE, BOB, CAROL, Change, SampleEngine, make_sample_engine
from tests.conftest import copied_engine, cut


@pytest.fixture
def parsing_history(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> SampleEngine:
    """Main with what parsing works on: co-authors, a revert, a typo'd prefix, a prefix-less
    subject, a pick with ``-x`` and a reason, non-ASCII and a message in Latin-1 (made once
    and copied)."""
    return copied_engine("history", _history, tmp_path / "copy", tmp_path_factory)


def _history(root: Path) -> SampleEngine:
    engine = cut(make_sample_engine(root))
    repo = engine.repo
    repo.run("switch", "--quiet", "main")
    engine.commit(
        Change(
            "[Bugfix] Keep the queue order (#201)",
            BOB,
            {"a.txt": "a\n"},
            body="Co-authored-by: Carol Diaz <carol@example.com>\nCo-authored-by: dependabot[bot] <d@x>",
        )
    )
    engine.commit(Change("[Perfomance] Faster batching (#202)", CAROL, {"b.txt": "b\n"}))
    engine.commit(Change("Add a test for the limits (#203)", ALICE, {"c.txt": "c\n"}))
    engine.commit(Change('Revert "[Bugfix] Keep the queue order (#201)" (#204)', BOB, {},
                         revert_of="Keep the queue order"))  # fmt: skip
    engine.commit(Change("[Doc] Explain résumé tokens ✓ (#205)", ("Zoë Ünal", "zoe@example.com"),
                         {"d.txt": "d\n"}))  # fmt: skip
    picked = engine.shas[109]
    engine.commit(
        Change(
            "[Fix] A pick, carried over (#206)",
            ALICE,
            {"e.txt": "e\n"},
            body=f"(cherry picked from commit {picked})\nCherry-pick-reason: regression",
        )
    )
    repo.run("config", "i18n.commitEncoding", "ISO-8859-1")
    (engine.root / "f.txt").write_text("f\n", encoding="utf-8")
    repo.run("add", "f.txt")
    message = "[Core] Caf\xe9 in Latin-1 (#207)\n".encode("latin-1")
    repo.run("commit", "--quiet", "-F", "-", stdin=message.decode("utf-8", "surrogateescape"))
    repo.run("config", "--unset", "i18n.commitEncoding")
    return engine


class RunOnce:
    """What ``run(parsing_history, *args)`` prints of a history no test has changed yet, run
    once per argument list: each test's history is a copy of the same repository, and a run
    with the caches off writes nothing (the caches' tests check that), so it prints the same
    of every copy."""

    def __init__(self, run: Callable[..., str]) -> None:
        self._run = run
        self._kept: dict[tuple[str, ...], str] = {}

    def __call__(self, parsing_history: SampleEngine, *args: str) -> str:
        if args not in self._kept:
            self._kept[args] = self._run(parsing_history, *args)
        return self._kept[args]

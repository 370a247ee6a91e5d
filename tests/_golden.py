"""Golden files and the deterministic rc cycle they are rendered from.

``UPDATE_GOLDEN=1 pytest tests/unit/test_notes.py tests/functional/test_changelog.py`` rewrites the files
under ``tests/golden/``; review the diff before committing it.

The cycle is reproducible: the sample history has fixed authors and a fixed clock (reset
here), and every command runs with fixed committer dates and ``SOURCE_DATE_EPOCH``, so
commit shas come out the same on every run. They still change whenever the bundled sample
engine's files do, so golden files hold commit names (``<pick of #109>``), not shas.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from release import sample
from release.adapters.git_log import LOG_FORMAT, parse_log
from release.sample import AFTER_CUT, LATE_FIX, SampleEngine, make_sample_engine
from tests.conftest import GIT_ENV, CliResult, run_cli

GOLDEN = Path(__file__).parent / "golden"
EPOCH = 1_764_100_000  # 2025-11-25, a day after the sample history
FIXED_DATES = {
    "GIT_AUTHOR_DATE": f"@{EPOCH} +0000",
    "GIT_COMMITTER_DATE": f"@{EPOCH} +0000",
    "SOURCE_DATE_EPOCH": str(EPOCH),
}


def assert_golden(name: str, text: str) -> None:
    """``text`` equals ``tests/golden/<name>`` byte for byte (or rewrites it on request)."""
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return
    assert path.exists(), f"{path} is missing; create it with UPDATE_GOLDEN=1 and review it"
    expected = path.read_bytes().decode("utf-8")
    assert text == expected, f"{name} differs from its golden file (UPDATE_GOLDEN=1 rewrites it)"


@contextlib.contextmanager
def isolated_git(home: Path) -> Iterator[None]:
    """What the autouse fixture in conftest does, for fixtures wider than one test."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        for key, value in GIT_ENV.items():
            mp.setenv(key, value)
        for key in ("RELEASE_DEBUG", "RELEASE_REPO", "SOURCE_DATE_EPOCH"):
            mp.delenv(key, raising=False)
        yield


@contextlib.contextmanager
def fixed_sample_clock() -> Iterator[None]:
    """The sample's commit clock from its start, as in a fresh process."""
    saved = sample._CLOCK[0]
    sample._CLOCK[0] = 1_764_000_000
    try:
        yield
    finally:
        sample._CLOCK[0] = max(saved, sample._CLOCK[0])


@dataclass
class Cycle:
    """An rc cycle of the sample engine: rc1, rc2 (with a revert), final; outputs captured."""

    engine: SampleEngine
    changelog: dict[str, str] = field(default_factory=dict)  # after rc1, rc2, final
    tag_messages: dict[str, str] = field(default_factory=dict)
    shas: dict[str, str] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.engine.root

    def release(self, *args: str) -> CliResult:
        result = run_cli(self.root, *args, env=FIXED_DATES)
        assert result.code == 0, f"release {' '.join(args)} exited {result.code}:\n{result.output}"
        return result

    def git(self, *args: str, env: dict[str, str] | None = None) -> str:
        return self.engine.repo.run(*args, env={**FIXED_DATES, **(env or {})}).stdout

    def read_changelog(self) -> str:
        return (self.root / "CHANGELOG.md").read_bytes().decode("utf-8")

    def tag_message(self, name: str) -> str:
        return self.git("for-each-ref", "--format=%(contents)", f"refs/tags/{name}")

    def sha_names(self) -> dict[str, str]:
        """A readable, stable name for every commit of the cycle."""
        names = {sha: f"<main #{pr}>" for pr, sha in self.engine.shas.items()}
        text = self.git("log", f"--format={LOG_FORMAT}", "main..releases/v0.1.0")
        for commit in reversed(list(parse_log(text, {}, repo=None))):  # oldest first
            if commit.changelog_for:
                names[commit.sha] = f"<changelog commit for {commit.changelog_for}>"
            elif commit.picked_from:
                names[commit.sha] = f"<pick of #{commit.pr}>"
            elif commit.reverts_sha:
                reverted = names.get(commit.reverts_sha, commit.reverts_sha)
                names[commit.sha] = f"<revert of {reverted}>"
        return names

    def without_shas(self, text: str) -> str:
        """``text`` with each commit sha replaced by its name (the sample's files set the shas)."""
        names = self.sha_names()
        return re.sub(r"\b[0-9a-f]{40}\b", lambda m: names.get(m[0], "<unknown commit>"), text)


def run_cycle(root: Path) -> Cycle:
    """cut -> pick #109, #111 -> rc1 -> revert #111, pick #112 -> rc2 -> promote."""
    with fixed_sample_clock():
        engine = make_sample_engine(root)
        repo = engine.repo
        repo.run("branch", "releases/v0.1.0", "main")
        for change in AFTER_CUT:
            engine.commit(change)
        repo.run("push", "--quiet", "origin", "main", "releases/v0.1.0")
        repo.run("switch", "--quiet", "releases/v0.1.0")
        cycle = Cycle(engine)

        cycle.release("pick", "#109 #106", "--reason", "regression")  # #106 is before the cut
        cycle.release("pick", "#111", "--reason", "release-only")
        cycle.release("tag")
        cycle.changelog["rc1"] = cycle.read_changelog()
        cycle.tag_messages["v0.1.0rc1"] = cycle.tag_message("v0.1.0rc1")

        repo.run("switch", "--quiet", "main")
        engine.commit(LATE_FIX)
        repo.run("push", "--quiet", "origin", "main")
        repo.run("switch", "--quiet", "releases/v0.1.0")
        pick_111 = cycle.git("log", "-1", "--format=%H", "--grep=Pin the build tools").strip()
        eve = {"GIT_AUTHOR_NAME": "Eve Park", "GIT_AUTHOR_EMAIL": "eve@example.com"}
        cycle.git("revert", "--no-edit", pick_111, env=eve)
        cycle.shas.update(pick_111=pick_111, revert_111=cycle.git("rev-parse", "HEAD").strip())
        cycle.release("pick", "#112", "--reason", "critical")
        cycle.release("tag")
        cycle.changelog["rc2"] = cycle.read_changelog()
        cycle.tag_messages["v0.1.0rc2"] = cycle.tag_message("v0.1.0rc2")

        cycle.release("promote")
        cycle.changelog["final"] = cycle.read_changelog()
        cycle.tag_messages["v0.1.0"] = cycle.tag_message("v0.1.0")
        for name in ("v0.1.0rc1", "v0.1.0rc2", "v0.1.0", "releases/v0.1.0"):
            cycle.shas[name] = cycle.git("rev-parse", f"{name}^{{commit}}").strip()
        return cycle


@pytest.fixture(scope="module")
def cycle(tmp_path_factory: pytest.TempPathFactory) -> Cycle:
    with isolated_git(tmp_path_factory.mktemp("home")):
        return run_cycle(tmp_path_factory.mktemp("cycle"))

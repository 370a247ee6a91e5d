"""A pick's message is byte for byte what ``git cherry-pick -x`` writes, plus the reason
trailer: ``#`` lines of a PR template, code blocks, trailing spaces, CRLF, existing
trailers and a message in another encoding all survive. The reason survives too, however
a conflict is finished."""

from __future__ import annotations

import pytest

from release.sample import RESOLVED_SCHEDULER_108, SampleEngine
from tests.conftest import run_cli

TRAILER = b"Cherry-pick-reason: regression\n"

# Messages shaped like real ones (vLLM's PR template among them).
CORPUS = {
    "pr-template": (
        "[Bugfix] Fix the scheduler (#301)\n\n"
        "### What this PR does / why we need it?\n\n"
        "It fixes the batch limit.\n\n"
        "### Does this PR introduce _any_ user-facing change?\n\nNo\n\n"
        "### How was this patch tested?\n\nCI passed.\n\n"
        "Signed-off-by: Alice Chen <alice@example.com>\n"
    ),
    "code-block-and-spaces": (
        "[Misc] Keep the comment (#302)\n\n"
        "```python\n# not a comment to strip\nx = 1   \n```\n\n\n\n"
        "Trailing spaces here:   \n"
    ),
    "crlf": "[Bugfix] Windows line ends (#303)\r\n\r\nBody line one.\r\nBody line two.\r\n",
    "co-authors": (
        "[Core] Two authors (#304)\n\nWhy.\n\n"
        "Co-authored-by: Bob Li <bob@example.com>\n"
        "Signed-off-by: Alice Chen <alice@example.com>\n"
    ),
    "subject-only": "[Bugfix] Just a subject (#305)\n",
    "hash-subject-line": "#306 is the number of this one\n\n# a heading-like line\n",
}


def _raw_message(engine: SampleEngine, ref: str = "HEAD") -> bytes:
    raw = engine.repo.run("cat-file", "commit", ref).stdout.encode("utf-8", "surrogateescape")
    return raw.split(b"\n\n", 1)[1] + b"\n"


def _commit_on_main(engine: SampleEngine, message: bytes, name: str) -> str:
    engine.repo.run("switch", "--quiet", "main")
    (engine.root / f"{name}.txt").write_text(name + "\n", encoding="utf-8")
    engine.repo.run("add", f"{name}.txt")
    path = engine.root.parent / f"{name}.msg"
    path.write_bytes(message)
    engine.repo.run("commit", "--quiet", "--cleanup=verbatim", "-F", str(path))
    sha = engine.repo.run("rev-parse", "HEAD").stdout.strip()
    engine.repo.run("switch", "--quiet", "releases/v0.1.0")
    return sha


def _plain_pick(engine: SampleEngine, sha: str) -> bytes:
    """What ``git cherry-pick -x`` alone writes (then undone)."""
    engine.repo.run("cherry-pick", "-x", sha, env={"GIT_EDITOR": "true"})
    plain = _raw_message(engine)
    engine.repo.run("reset", "--quiet", "--hard", "HEAD~1")
    return plain


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_a_picked_message_keeps_every_byte(cut_engine_copy: SampleEngine, name: str) -> None:
    engine = cut_engine_copy
    sha = _commit_on_main(engine, CORPUS[name].encode(), name)
    plain = _plain_pick(engine, sha)

    result = run_cli(engine.root, "pick", sha, "--reason", "regression")

    assert result.code == 0, result.output
    assert _raw_message(engine) == plain + TRAILER


def test_a_message_in_another_encoding_keeps_its_bytes(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    engine.repo.run("config", "i18n.commitEncoding", "ISO-8859-1")
    message = "[Bugfix] Caf\u00e9 au lait (#307)\n\nR\u00e9sum\u00e9 of the change.\n".encode(
        "latin-1"
    )
    sha = _commit_on_main(engine, message, "latin")
    plain = _plain_pick(engine, sha)
    assert b"Caf\xe9" in plain

    result = run_cli(engine.root, "pick", sha, "--reason", "regression")

    assert result.code == 0, result.output
    assert _raw_message(engine) == plain + TRAILER
    assert "encoding ISO-8859-1" in engine.repo.run("cat-file", "commit", "HEAD").stdout


@pytest.mark.parametrize("finish", ["release-continue", "git-continue-first", "staged-only"])
def test_the_reason_survives_however_a_conflict_is_finished(
    cut_engine_copy: SampleEngine, finish: str
) -> None:
    engine = cut_engine_copy
    stopped = run_cli(engine.root, "pick", "#108", "--reason", "regression")
    assert stopped.code == 4, stopped.output
    sha = engine.shas[108]
    if finish != "staged-only":
        engine.repo.run("cherry-pick", "-x", sha, check=False)
    (engine.root / "tinyengine" / "scheduler.py").write_text(RESOLVED_SCHEDULER_108, "utf-8")
    engine.repo.run("add", "tinyengine/scheduler.py")
    if finish == "git-continue-first":
        engine.repo.run("cherry-pick", "--continue", env={"GIT_EDITOR": "true"})

    result = run_cli(engine.root, "pick", "--continue")

    assert result.code == 0, result.output
    message = _raw_message(engine)
    assert message.endswith(f"(cherry picked from commit {sha})\n".encode() + TRAILER)
    assert message.count(b"Cherry-pick-reason:") == 1

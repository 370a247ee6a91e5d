"""PyTorch-family commits land through ghstack or Phabricator: the subject has no ``(#N)``,
the body says ``Pull Request resolved: https://github.com/ORG/REPO/pull/N`` (the pattern of
pytorch/tensordict's and pytorch/torchtune's histories). That number is the commit's PR
for notes and links, and ``pick '#N'`` finds the commit by it."""

from __future__ import annotations

import json

from release.core.commits import make_commit, resolved_pr
from release.sample import ALICE, Change, SampleEngine
from tests.conftest import run_cli

# a ghstack commit as it lands (tensordict's shape: summary, the stack, the landing lines)
GHSTACK_BODY = """Summary: Keep the lazy stack's device when it is indexed.

Stack from [ghstack](https://github.com/ezyang/ghstack) (oldest at bottom):
* __->__ #1187
* #1186

Pull Request resolved: https://github.com/pytorch/tensordict/pull/1187
ghstack-source-id: 5a1f0e2
Differential Revision: [D67891234](https://our.internmc.facebook.com/intern/diff/D67891234)
"""


def test_the_pr_a_body_names_landed_is_the_commits() -> None:
    assert resolved_pr(GHSTACK_BODY) == 1187  # not #1186, another PR of the stack
    commit = make_commit(
        "a" * 40, "A", "a@example.com", "[BugFix] Keep the device", GHSTACK_BODY, {}
    )
    assert commit.pr == 1187
    numbered = make_commit("b" * 40, "A", "a@example.com", "Fix it (#12)", GHSTACK_BODY, {})
    assert numbered.pr == 12  # the subject's own number wins
    for body in (
        "Pull Request resolved: https://github.com/o/r/pull/1234567890",  # ten digits
        "Pull Request resolved: https://github.com/o/r/issues/5",
        "See Pull Request resolved: https://github.com/o/r/pull/5",  # not at a line's start
        "Differential Revision: D123",
    ):
        assert resolved_pr(body) is None, body


def test_notes_link_and_pick_find_a_ghstack_commit(cut_engine: SampleEngine) -> None:
    engine = cut_engine
    engine.repo.run("switch", "--quiet", "main")
    change = Change(
        "[BugFix] Keep the scheduler's order on an empty batch",
        ALICE,
        {"tinyengine/empty.py": "EMPTY = ()\n"},
        body=GHSTACK_BODY.replace("1187", "1301"),
    )
    sha = engine.commit(change)
    engine.repo.run("switch", "--quiet", "releases/v0.1.0")
    planned = run_cli(engine.root, "pick", "#1301", "--dry-run", "--json")
    assert planned.code == 0, planned.output
    steps = json.loads(planned.stdout)["steps"]
    assert [s.get("sha") for s in steps if s.get("sha")][:1] == [sha]
    missing = run_cli(engine.root, "pick", "#1302", "--dry-run")
    assert missing.code == 3 and "Pull Request resolved: .../pull/1302" in missing.stderr
    notes = run_cli(engine.root, "notes", "--since", engine.shas[101], "--until", "main")
    assert notes.code == 0, notes.output
    line = next(row for row in notes.stdout.splitlines() if "empty batch" in row)
    assert "https://github.com/example/tinyengine/pull/1301" in line

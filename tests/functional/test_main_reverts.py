"""Reverts on main of what the release branch carries: ``status`` lists each one not on the
branch yet (target before the cut, or picked), with the command that picks it, and
``pick --reverts`` picks them all. Real git repositories, the CLI as a maintainer runs it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from release.core.commits import Commit, make_commit
from release.core.notes import revert_targets
from release.flows.main_reverts import standing_reverts
from tests.conftest import repo_state, run_cli
from tests.shell_support import run_block

INIT = "git init -q -b main r && cd r && git config user.email t@e && git config user.name T\n"
# A pre-cut fix (a), a fix picked after the cut (b), one never picked (c); main reverts all
# three with git revert.
HISTORY = (
    INIT
    + """
for f in a b c d; do echo $f > $f; done; git add . && git commit -qm init
echo a2 >> a && git commit -qam "[Bugfix] Change a (#1)"
release cut 0.1.0 --offline >/dev/null 2>&1; git switch -q main
echo b2 >> b && git commit -qam "[Bugfix] Change b (#2)"; B=$(git rev-parse HEAD)
echo c2 >> c && git commit -qam "[Bugfix] Change c (#3)"; C=$(git rev-parse HEAD)
git revert --no-edit HEAD~2 >/dev/null; git revert --no-edit $B >/dev/null; git revert --no-edit $C >/dev/null
git switch -q releases/v0.1.0 && git cherry-pick -x $B >/dev/null
"""
)


def shell(cwd: Path, script: str) -> str:
    return run_block(cwd, script, bin_dir=cwd / ".bin")


def status(root: Path) -> dict[str, Any]:
    result = run_cli(root, "status", "--offline", "--json")
    assert result.code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def sha(root: Path, rev: str) -> str:
    return shell(root, f"git rev-parse '{rev}'").strip()


def on_main(root: Path, subject: str) -> str:
    """The sha of the commit on main whose subject is exactly ``subject``."""
    lines = shell(root, "git log main --format='%H %s'").splitlines()
    return next(line[:40] for line in lines if line[41:] == subject)


def revert_of(root: Path, subject: str) -> str:
    """The sha of the revert on main whose subject is ``Revert "<subject>"``."""
    return on_main(root, f'Revert "{subject}"')


@pytest.fixture
def main_with_reverts(tmp_path: Path) -> Path:
    shell(tmp_path, HISTORY)
    return tmp_path / "r"


def test_status_lists_reverts_of_pre_cut_and_picked_commits_only(main_with_reverts: Path) -> None:
    state = status(main_with_reverts)
    a, b = (
        revert_of(main_with_reverts, "[Bugfix] Change a (#1)"),
        revert_of(main_with_reverts, "[Bugfix] Change b (#2)"),
    )
    pick_b = sha(main_with_reverts, "HEAD")
    rows = [(r["sha"], r["reverts"], r["carried"]) for r in state["reverts_pending"]]
    assert rows == [
        (a, on_main(main_with_reverts, "[Bugfix] Change a (#1)"), "before the cut"),
        (b, on_main(main_with_reverts, "[Bugfix] Change b (#2)"), f"picked as {pick_b[:10]}"),
    ]  # the revert of c, which the branch never had, is not listed
    assert [r["command"] for r in state["reverts_pending"]] == [
        f"release pick {a[:10]}",
        f"release pick {b[:10]}",
    ]
    assert state["next_command"] == "release pick --reverts"
    text = run_cli(main_with_reverts, "status", "--offline").stdout
    assert "reverts:  2 on main undo what the branch carries" in text
    assert (
        f'  revert   {a[:10]} Revert "[Bugfix] Change a (#1)" (reverts '
        f"{on_main(main_with_reverts, '[Bugfix] Change a (#1)')[:10]}, before the cut): release pick {a[:10]}\n"
        in text
    )
    assert "Change c" not in text


def test_a_revert_already_picked_is_not_listed(main_with_reverts: Path) -> None:
    a = revert_of(main_with_reverts, "[Bugfix] Change a (#1)")
    shell(main_with_reverts, f"git cherry-pick -x {a} >/dev/null")
    assert [r["sha"] for r in status(main_with_reverts)["reverts_pending"]] == [
        revert_of(main_with_reverts, "[Bugfix] Change b (#2)")
    ]


def test_a_revert_picked_without_x_counts_by_its_patch(main_with_reverts: Path) -> None:
    a = revert_of(main_with_reverts, "[Bugfix] Change a (#1)")
    shell(
        main_with_reverts,
        f"git cherry-pick {a} >/dev/null && git commit -q --amend -m 'Undo a on the branch'",
    )
    assert a not in [r["sha"] for r in status(main_with_reverts)["reverts_pending"]]


def test_a_pick_the_branch_reverted_itself_is_not_listed(main_with_reverts: Path) -> None:
    """The branch reverted its pick of b (git revert, no -x): main's revert of b is done."""
    shell(main_with_reverts, "git revert --no-edit HEAD >/dev/null")
    assert [r["sha"] for r in status(main_with_reverts)["reverts_pending"]] == [
        revert_of(main_with_reverts, "[Bugfix] Change a (#1)")
    ]


def test_a_port_of_mains_revert_without_x_is_not_listed(main_with_reverts: Path) -> None:
    """vllm-ascend's releases/v0.13.0 shape: the branch reverted a pre-cut commit by hand,
    its own PR number on the subject, the body naming the main commit it reverts, the patch
    adapted (so no patch id matches main's revert)."""
    a = on_main(main_with_reverts, "[Bugfix] Change a (#1)")
    shell(
        main_with_reverts,
        f"git revert --no-commit {a} && echo d2 >> d && git add d && git commit -qm 'Revert \"[Bugfix] Change a(#1) (#9)'"
        f" -m 'This reverts commit {a}.'",
    )
    assert [r["sha"] for r in status(main_with_reverts)["reverts_pending"]] == [
        revert_of(main_with_reverts, "[Bugfix] Change b (#2)")
    ]


def test_two_reverts_of_one_commit_are_listed_once(main_with_reverts: Path) -> None:
    a = on_main(main_with_reverts, "[Bugfix] Change a (#1)")
    first = revert_of(main_with_reverts, "[Bugfix] Change a (#1)")
    shell(
        main_with_reverts,
        "git switch -q main && git commit -q --allow-empty"
        f" -m 'Revert \"[Bugfix] Change a (#1) (#7)' -m 'This reverts commit {a}.'"
        " && git switch -q releases/v0.1.0",
    )
    listed = [r["sha"] for r in status(main_with_reverts)["reverts_pending"]]
    assert listed[0] == first and len(listed) == 2 and sha(main_with_reverts, "main") not in listed


def test_pick_reverts_picks_them_and_status_then_lists_none(main_with_reverts: Path) -> None:
    pending = [r["sha"] for r in status(main_with_reverts)["reverts_pending"]]
    result = run_cli(main_with_reverts, "pick", "--reverts", "--json")
    assert result.code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["reverts"] == pending
    assert [s["sha"] for s in plan["steps"] if s["action"] == "cherry-pick"] == pending
    after = status(main_with_reverts)
    assert after["reverts_pending"] == []
    assert set(pending) <= {p["from"] for p in after["picks_done"]}
    assert after["next_command"] == "release tag"
    again = run_cli(main_with_reverts, "pick", "--reverts")
    assert again.code == 0 and "--reverts: no revert on main since the cut" in again.stdout
    log = shell(main_with_reverts, "git log -2 --format=%B")
    assert all(f"(cherry picked from commit {s})" in log for s in pending)


def test_pick_reverts_dry_run_shows_them_and_changes_nothing(main_with_reverts: Path) -> None:
    pending = [r["sha"] for r in status(main_with_reverts)["reverts_pending"]]
    before = repo_state(main_with_reverts)
    result = run_cli(
        main_with_reverts, "pick", "--reverts", "--dry-run", env={"RELEASE_REPO_CACHE": "0"}
    )
    assert result.code == 0, result.output
    assert repo_state(main_with_reverts) == before
    assert [line.split()[3] for line in result.stdout.splitlines() if "cherry-pick -x" in line] == [
        s[:10] for s in pending
    ]
    assert result.stdout.startswith("--reverts: 2 on main undo what releases/v0.1.0 carries")


def test_pick_reverts_with_other_commits_plans_them_in_mains_order(main_with_reverts: Path) -> None:
    c = on_main(main_with_reverts, "[Bugfix] Change c (#3)")  # never picked
    result = run_cli(main_with_reverts, "pick", c, "--reverts", "--dry-run", "--json")
    assert result.code == 0, result.output
    picked = [s["sha"] for s in json.loads(result.stdout)["steps"] if s["action"] == "cherry-pick"]
    assert picked == [c, *(r["sha"] for r in status(main_with_reverts)["reverts_pending"])]


def test_nothing_to_revert_says_so_and_changes_nothing(tmp_path: Path) -> None:
    shell(
        tmp_path,
        INIT
        + "echo a > a; git add a; git commit -qm init; release cut 0.1.0 --offline >/dev/null 2>&1",
    )
    root = tmp_path / "r"
    before = repo_state(root)
    result = run_cli(root, "pick", "--reverts")
    assert result.code == 0, result.output
    assert "no revert on main since the cut undoes what releases/v0.1.0 carries" in result.stdout
    assert repo_state(root) == before
    assert status(root)["reverts_pending"] == []


def test_continue_takes_no_reverts(main_with_reverts: Path) -> None:
    result = run_cli(main_with_reverts, "pick", "--continue", "--reverts")
    assert result.code == 2 and "take no commits" in result.output


def test_a_revert_of_a_revert_is_the_net_effect(main_with_reverts: Path) -> None:
    """Main reverts a, reapplies it (git's revert of the revert), then reverts it again:
    only the first revert stands for a (the reapply was undone), and picking it is due;
    before the third, nothing of a is due."""
    a = revert_of(main_with_reverts, "[Bugfix] Change a (#1)")
    shell(main_with_reverts, f"git switch -q main && git revert --no-edit {a} >/dev/null")
    reapply = sha(main_with_reverts, "main")
    shell(main_with_reverts, "git switch -q releases/v0.1.0")
    assert a not in [r["sha"] for r in status(main_with_reverts)["reverts_pending"]]
    shell(main_with_reverts, f"git switch -q main && git revert --no-edit {reapply} >/dev/null")
    shell(main_with_reverts, "git switch -q releases/v0.1.0")
    listed = [r["sha"] for r in status(main_with_reverts)["reverts_pending"]]
    assert a in listed and reapply not in listed and sha(main_with_reverts, "main") not in listed


def test_a_reapply_of_a_picked_revert_is_due(main_with_reverts: Path) -> None:
    """The branch took main's revert of a; main then reapplied a: the reapply (a revert of
    a revert the branch carries) is due."""
    a = revert_of(main_with_reverts, "[Bugfix] Change a (#1)")
    shell(main_with_reverts, f"git cherry-pick -x {a} >/dev/null")
    shell(main_with_reverts, f"git switch -q main && git revert --no-edit {a} >/dev/null")
    reapply = sha(main_with_reverts, "main")
    shell(main_with_reverts, "git switch -q releases/v0.1.0")
    rows = {r["sha"]: r for r in status(main_with_reverts)["reverts_pending"]}
    assert rows[reapply]["reverts"] == a and rows[reapply]["carried"].startswith("picked as ")


def test_a_revert_naming_its_target_by_pr_number_only(tmp_path: Path) -> None:
    """GitHub's revert, squashed: the title quotes the PR, the body says ``Reverts
    org/repo#N`` and names no sha; a title with text after the closing quote too."""
    shell(
        tmp_path,
        INIT
        + """
for f in a b c; do echo $f > $f; done; git add . && git commit -qm init
echo a2 >> a && git commit -qam "[Bugfix] Change a (#1)"
release cut 0.1.0 --offline >/dev/null 2>&1; git switch -q main
echo b2 >> b && git commit -qam "[Bugfix] Change b (#2)"; B=$(git rev-parse HEAD)
echo c2 >> c && git commit -qam "[Bugfix] Change c (#3)"
git revert --no-commit HEAD~2 && git commit -qm 'Revert "[Bugfix] Change a (#1)" (#4)' -m 'Reverts org/engine#1'
git revert --no-commit $B && git commit -qm 'Revert "[Bugfix] Change b (#2)" - it broke CI (#5)'
git revert --no-commit HEAD~2 && git commit -qm 'Revert "[Bugfix] Change c (#3)" (#6)'
git switch -q releases/v0.1.0 && git commit -q --allow-empty -m "Branch notes"
git cherry-pick $B >/dev/null  # no -x: the pick is known by its PR
""",
    )
    root = tmp_path / "r"
    rows = [(r["subject"], r["carried"][:9]) for r in status(root)["reverts_pending"]]
    assert rows == [
        ('Revert "[Bugfix] Change a (#1)" (#4)', "before th"),
        ('Revert "[Bugfix] Change b (#2)" - it broke CI (#5)', "picked as"),
    ]


def test_the_reverts_are_kept_with_the_picks_and_read_back(main_with_reverts: Path) -> None:
    on = {"RELEASE_REPO_CACHE": "1"}
    first = run_cli(main_with_reverts, "status", "--offline", "--json", env=on)
    cache = main_with_reverts / ".git" / "release" / "picks.cache"
    assert first.code == 0 and cache.exists()
    kept = cache.stat().st_ino
    second = run_cli(main_with_reverts, "status", "--offline", "--json", env=on)
    assert (
        json.loads(second.stdout)["reverts_pending"] == json.loads(first.stdout)["reverts_pending"]
    )
    assert json.loads(second.stdout)["reverts_pending"] and cache.stat().st_ino == kept


def test_after_the_final_status_lists_them_but_suggests_no_pick(main_with_reverts: Path) -> None:
    shell(main_with_reverts, "git tag v0.1.0rc1 && git tag v0.1.0")
    state = status(main_with_reverts)
    assert len(state["reverts_pending"]) == 2
    assert state["next_command"] != "release pick --reverts"


# -- the real shape: pytorch/ao's release/0.10.0 ------------------------------------------
# Cut at 8e8472cb3; main later landed bca41220 'Revert "Install bitsandbytes for ROCm"
# (#2098)', whose body quotes the title with its PR and names dfbd6816 ("Install
# bitsandbytes for ROCm (#1915)", on main before the cut). status there lists it and says
# release pick --reverts.
AO = (
    INIT
    + """
echo 'pip install torch' > ci.sh; git add . && git commit -qm "Add CI (#1800)"
echo 'pip install bitsandbytes' >> ci.sh; git commit -qam "Install bitsandbytes for ROCm (#1915)"; T=$(git rev-parse HEAD)
echo q > q.py; git add q.py; git commit -qm "Add quantized q @ k test for intented used in quantized attention"
git branch release/0.10.0; git switch -q release/0.10.0
git commit -q --allow-empty -m "fix test infra branch"; git switch -q main
echo fp > fp.py; git add fp.py; git commit -qm "Add fp32xint8 matmul (#2000)"
git revert --no-commit $T && git commit -qm 'Revert "Install bitsandbytes for ROCm" (#2098)' -m 'Revert "Install bitsandbytes for ROCm (#1915)"' -m "This reverts commit $T."
git switch -q release/0.10.0
printf '[tool.release]\\nbranch = "release/{version}"\\nrc-spelling = "-rc{n}"\\nchangelog = ""\\n' > ../release.toml
"""
)


def test_the_pytorch_ao_shape_after_its_cut(tmp_path: Path) -> None:
    shell(tmp_path, AO)
    root = tmp_path / "r"
    result = run_cli(
        root, "--config", str(tmp_path / "release.toml"), "status", "--offline", "--json"
    )
    assert result.code == 0, result.output
    state = json.loads(result.stdout)
    target = on_main(root, "Install bitsandbytes for ROCm (#1915)")
    assert [(r["subject"], r["reverts"], r["carried"]) for r in state["reverts_pending"]] == [
        ('Revert "Install bitsandbytes for ROCm" (#2098)', target, "before the cut")
    ]
    assert state["next_command"] == "release pick --reverts"


# -- pure: which reverts stand ------------------------------------------------------------


def _commit(sha: str, subject: str, body: str = "") -> Commit:
    return make_commit(sha, "T", "t@e", subject, body, {})


def test_standing_reverts_is_the_net_effect_of_a_chain() -> None:
    x = "a" * 40
    r1 = _commit("1" * 40, 'Revert "X"', f"This reverts commit {x}.")
    r2 = _commit("2" * 40, 'Reapply "X"', f"This reverts commit {r1.sha}.")
    r3 = _commit("3" * 40, 'Revert "Reapply "X""', f"This reverts commit {r2.sha}.")
    for chain, standing in (
        ([r1], [r1]),
        ([r2, r1], [r2]),  # the reapply stands; the revert it undid does not
        ([r3, r2, r1], [r1, r3]),  # the reapply undone: the first revert stands again
    ):
        undid = revert_targets(list(reversed(chain)))
        assert standing_reverts(chain, undid) == standing

"""``status`` as one answer: its counts and its ``next`` agree with what ``pick --dry-run``
and ``tag --dry-run`` plan, and its ``next``, run, does what it said.

Each reproduction found on a real release history (pytorch/ao, pytorch/data,
vllm-project/tpu-inference) is run as a shell block, with real git and the CLI, and its
answer asserted. Then small histories of those real shapes (submodule picks, a branch
rewritten past an rc, rcs after a final, adapted copies with one PR number) are replayed
step by step, and at every state :func:`check_one_answer` asks ``status``, ``tag
--dry-run`` and ``pick --file --dry-run`` the same question; where the history says so,
status's ``next`` is run (:func:`follow`) and its outcome checked.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.shell_support import run_block

PICKS = "release-picks.txt"
INIT = "git init -q -b main r && cd r && git config user.email t@e && git config user.name T\n"


def shell(cwd: Path, script: str) -> str:
    """Run a shell block as a maintainer would, ``release`` on its PATH (this package)."""
    return run_block(cwd, script, bin_dir=cwd / ".bin")


def cli_json(root: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    result = run_cli(root, *args, "--json")
    document = json.loads(result.stdout) if result.stdout.strip() else {}
    return result.code, document, result.stderr


def offline(root: Path) -> tuple[str, ...]:
    """``--offline`` where the repository has no remote (as the reproductions run)."""
    has = subprocess.run(["git", "remote"], cwd=root, capture_output=True, text=True, check=True)
    return () if has.stdout.strip() else ("--offline",)


def read_status(root: Path) -> dict[str, Any]:
    code, state, err = cli_json(root, "status", *offline(root))
    assert code == 0, err
    return state


def check_one_answer(root: Path) -> dict[str, Any]:
    """Status, tag --dry-run and pick --file --dry-run give one answer: status proposes a
    tag exactly when tag would make one (the one it names), its pending and held picks are
    exactly what pick would pick and hold, and its next command plans something."""
    state = read_status(root)
    nxt = state["next_command"]
    code, tag, err = cli_json(root, "tag", "--dry-run", *offline(root))
    planned = code == 0 and tag.get("tag") is not None
    due = state["tag_due"]
    assert (
        not state["release"]
        or due == (state["tagged_since"] is None or state["untagged_commits"] > 0)
        or (
            any(state["tagged_since"] in note for note in state["notes"])  # the newest is off it
        )
    ), state
    if code == 0 and not state["dirty"]:
        assert planned == due, (state, tag)
    if planned and not nxt.startswith("release tag --version"):
        assert tag["tag"] == state["next_rc"], (state, tag)
    if nxt == "release tag":
        assert planned, (state, tag, err)
    if nxt.startswith("nothing"):  # tag makes nothing (or refuses, naming what could come)
        assert not planned, (state, tag, err)
    if nxt.startswith("release tag --version"):
        version = nxt.split()[3]
        code, post, err = cli_json(root, *nxt.split()[1:4], "--dry-run", *offline(root))
        assert code == 0 and post["tag"] is not None and post["version"] == version, err
    if nxt.startswith("release promote"):
        code, promoted, err = cli_json(root, "promote", "--dry-run", *offline(root))
        assert code == 0 and promoted["steps"], err
    if nxt.startswith("release push") and state["remote_checked"]:
        code, pushed, err = cli_json(root, "push", "--dry-run")
        assert code == 0 and pushed["steps"], err
    if nxt.startswith("git remote add"):  # push has nowhere to go, as status says
        assert run_cli(root, "push", "--dry-run").code != 0
    if (root / PICKS).exists() and state["release"] and not state["dirty"]:
        code, plan, err = cli_json(root, "pick", "--file", PICKS, "--dry-run")
        if code != 0:
            assert state["picks_refused"] and nxt.startswith("fix "), (state, err)
        else:
            acted = {
                kind: [s["sha"] for s in plan["steps"] if s["action"] == kind]
                for kind in ("cherry-pick", "hold")
            }
            assert acted["cherry-pick"] == [p["sha"] for p in state["picks_pending"]], state
            assert sorted(acted["hold"]) == sorted(p["sha"] for p in state["picks_held"]), state
            done = {p["from"] for p in state["picks_done"]}
            assert not done & {*acted["cherry-pick"], *acted["hold"]}, state
    assert (nxt == f"release pick --file {PICKS}") == bool(state["picks_pending"]) or (
        state["dirty"] or state["picks_refused"]
    ), state
    return state


def follow(root: Path) -> str:
    """Run status's next command for real, and check it did what status said."""
    before = check_one_answer(root)
    nxt = before["next_command"].split("   (")[0]
    words = nxt.split()
    assert words[0] == "release", nxt
    flags = offline(root) if words[1] in ("tag", "promote") else ()
    result = run_cli(root, *words[1:], *flags)
    assert result.code == 0, result.output
    after = read_status(root)
    tags = set(shell(root, "git tag --points-at HEAD").split())
    if words[1:3] == ["pick", "--file"]:
        assert after["picks_pending"] == []
        done = {p["from"] for p in after["picks_done"]}
        assert {p["sha"] for p in before["picks_pending"]} <= done, after
    elif words[1:] == ["tag"]:
        assert before["next_rc"] in tags, (before, tags)
    elif words[1:3] == ["tag", "--version"]:
        assert any(words[3] in tag for tag in tags), (words, tags)
    elif words[1] == "promote":
        assert after["final"] is not None and after["final"] != before["final"]
    elif words[1] == "push":
        assert after["unpushed"] == [] and after["remote_checked"]
    else:
        raise AssertionError(f"not a command a history follows: {nxt}")
    check_one_answer(root)
    return nxt


# -- the reproductions -----------------------------------------------------------------

R3 = (
    INIT
    + """
printf '[tool.release]\\nbranch = "release/{major}.{minor}"\\nchangelog = ""\\n' > pyproject.toml; echo a > f; git add .
git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,third_party/sdk; git commit -qm init
release cut 0.9.0 --offline >/dev/null 2>&1; git switch -q main
git update-index --cacheinfo 160000,2222222222222222222222222222222222222222,third_party/sdk; git commit -qm "Fix broken windows build (#1320)"; M=$(git rev-parse HEAD)
git switch -q release/0.9; git cherry-pick $M >/dev/null; git commit -q --amend -m "Fix broken windows build (#1320) (#1323)"
"""
)


def test_r3_a_pick_that_only_moves_a_submodule_is_counted_done(tmp_path: Path) -> None:
    shell(tmp_path, R3)
    root = tmp_path / "r"
    main = shell(root, "git rev-parse main").strip()
    assert (
        shell(root, f"release pick {main} --dry-run | tail -1")
        .strip()
        .endswith("(already on the branch (same patch))")
    )
    state = check_one_answer(root)
    assert [(p["from"], p["how"]) for p in state["picks_done"]] == [(main, "same patch")]
    assert "picks:    1 done, 0 pending" in shell(root, "release status --offline")


R4 = (
    INIT
    + """
printf '[tool.release]\\nbranch = "release/{version}"\\nrc-spelling = "-rc{n}"\\nchangelog = ""\\n' > pyproject.toml; git add .; git commit -qm init
release cut 0.15.0 --offline >/dev/null 2>&1
echo a > f; git add f; git commit -qm "update table (#3455)"; git tag v0.15.0-rc1
git commit -q --amend -m "update table (#3455)" --date="2025-12-08 15:00"
git commit -q --allow-empty -m "Fix NVFP4 QAT convert path (#3450)"
"""
)


def test_r4_after_the_branch_is_rewritten_past_an_rc_status_says_tag(tmp_path: Path) -> None:
    shell(tmp_path, R4)
    root = tmp_path / "r"
    text = shell(root, "release status --offline")
    assert "untagged: 2 commit(s) since the last tag" in text
    assert "v0.15.0-rc1 is not in release/0.15.0's history" in text
    assert text.endswith("next:     release tag\n")
    assert shell(root, "release tag --dry-run --offline | head -1").startswith(
        "dry run, nothing changed: would tag v0.15.0-rc2"
    )
    state = check_one_answer(root)
    assert state["next_rc"] == "v0.15.0-rc2"
    assert follow(root) == "release tag"
    # no remote here: push would refuse, so status says what to do first
    assert read_status(root)["next_command"].startswith("git remote add origin URL")
    check_one_answer(root)


R6 = (
    INIT
    + """
printf 'jax==0.9.0\\n' > req.txt; printf 'x\\n' > other; git add .; git commit -qm init
printf 'jax==0.10.0\\n' > req.txt; printf 'x\\ny\\n' > other; git commit -qam "Update JAX to 0.10.0 (#2600)"
release cut 0.21.0 --offline >/dev/null 2>&1; git switch -q main
printf 'jax==0.9.0\\n' > req.txt; printf 'x\\n' > other; git commit -qam 'Revert "Update JAX to 0.10.0" (#2648)'
git switch -q releases/v0.21.0; printf 'jax==0.9.0\\n' > req.txt; git commit -qam 'Cherry-pick: Revert "Update JAX to 0.10.0" (#2648) (#2655)'
"""
)


def test_r6_a_ported_revert_is_evidence_for_the_revert_it_names(tmp_path: Path) -> None:
    shell(tmp_path, R6)
    root = tmp_path / "r"
    copy = shell(root, "git rev-parse HEAD").strip()
    last = shell(root, "release pick '#2648' --dry-run | tail -1")
    assert " hold " in last and f"likely already backported as {copy[:12]} (#2648 named by" in last
    (root / PICKS).write_text("#2648\n")
    state = check_one_answer(root)
    assert [p["ref"] for p in state["picks_held"]] == ["#2648"] and not state["picks_pending"]
    assert state["next_command"] == "release tag"


def test_a_revert_on_the_branch_is_still_no_evidence_that_a_change_is_there(
    tmp_path: Path,
) -> None:
    """The other side of R6: a ported revert names the revert's PR, not the change it undid."""
    shell(tmp_path, R6)
    root = tmp_path / "r"
    shell(root, 'git switch -q main; echo z >> other; git commit -qam "Add z (#2700)"')
    shell(root, "git switch -q releases/v0.21.0")
    shell(root, "git commit -q --allow-empty -m 'Cherry-pick: Revert \"Add z (#2700)\" (#2701)'")
    plan = cli_json(root, "pick", "#2700", "--dry-run")[1]
    assert [s["action"] for s in plan["steps"]] == ["cherry-pick"]


R8 = (
    INIT
    + """
printf 'a\\nb\\nc\\n' > f && git add f && git commit -qm init && release cut 0.14.0 --offline >/dev/null 2>&1
git switch -q main; printf 'a\\nB\\nc\\nd\\n' > f; git commit -qam "Update compatibility matrix (#3178)"
git switch -q releases/v0.14.0; printf 'a\\nB\\nc\\n' > f; git commit -qam "Update compatibility matrix (#3178)"
echo '#3178' > release-picks.txt
"""
)


def test_r8_a_copy_landed_under_the_same_pr_is_done_and_not_pending(tmp_path: Path) -> None:
    shell(tmp_path, R8)
    root = tmp_path / "r"
    main = shell(root, "git rev-parse main").strip()
    text = shell(root, "release status --offline")
    assert "picks:    1 done, 0 pending\n" in text and "pending  " not in text
    assert text.endswith("next:     release tag\n")
    first = shell(root, "release pick --file release-picks.txt --dry-run | head -1")
    assert "0 to pick, 1 already there" in first
    plan = cli_json(root, "pick", "--file", PICKS, "--dry-run")[1]
    assert [(s["action"], s["sha"], s["why"]) for s in plan["steps"]] == [
        ("skip", main, "already on the branch (PR #3178)")
    ]
    check_one_answer(root)


def test_a_copy_the_branch_reverted_since_is_not_there(tmp_path: Path) -> None:
    """R8's evidence is the copy standing: once the branch reverts it, the pick is due."""
    shell(tmp_path, R8)
    root = tmp_path / "r"
    shell(root, "git revert --no-edit HEAD >/dev/null")
    state = check_one_answer(root)
    assert [p["ref"] for p in state["picks_pending"]] == ["#3178"]
    assert state["next_command"] == f"release pick --file {PICKS}"


R9 = (
    INIT
    + """
printf '[tool.release]\\nbranch = "release/{version}"\\nrc-spelling = "-rc{n}"\\nchangelog = ""\\n' > pyproject.toml
git add . && git commit -qm init && release cut 0.13.0 --offline >/dev/null 2>&1
git commit -q --allow-empty -m "fix (#1)"; git tag v0.13.0-rc1; git tag v0.13.0
git commit -q --allow-empty -m "fix (#2)"; git commit -q --allow-empty -m "fix (#3)"; git tag v0.13.0-rc2
"""
)


def test_r9_an_rc_tagged_after_the_final_leaves_nothing_untagged(tmp_path: Path) -> None:
    shell(tmp_path, R9)
    root = tmp_path / "r"
    assert "untagged" not in shell(root, "release status --offline")
    state = check_one_answer(root)
    assert state["untagged_commits"] == 0 and state["tagged_since"] == "v0.13.0-rc2"
    assert not state["next_command"].startswith("release tag")
    nothing = run_cli(root, "tag", "--dry-run", "--offline", "--json")
    assert nothing.code != 0 or json.loads(nothing.stdout)["tag"] is None, nothing.output
    shell(root, "git commit -q --allow-empty -m 'fix (#4)'")
    assert read_status(root)["untagged_commits"] == 1
    check_one_answer(root)


# -- histories of real shapes, replayed step by step -----------------------------------

FOLLOW = "follow"  # a step: run status's next command and check its outcome

REMOTE = "git init -q --bare ../origin.git && git remote add origin ../origin.git && git push -q origin main\n"

HISTORIES: dict[str, list[str]] = {
    # pytorch/data release/0.9: a line branch, picks that only move a submodule, one made
    # by hand under a PR of its own, one by -x; rc, final, then a patch rc and its final
    "submodule-picks": [
        INIT
        + """printf '[tool.release]\\nbranch = "release/{major}.{minor}"\\nchangelog = ""\\n' > pyproject.toml; echo a > f; git add .
git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,third_party/sdk; git commit -qm init
"""
        + REMOTE
        + "release cut 0.9.0 >/dev/null",
        """git switch -q main
git update-index --cacheinfo 160000,2222222222222222222222222222222222222222,third_party/sdk; git commit -qm "Fix broken windows build (#1320)"
echo b >> f; git commit -qam "Fix f (#1321)"; git switch -q release/0.9""",
        """git cherry-pick main~1 >/dev/null; git commit -q --amend -m "Fix broken windows build (#1320) (#1323)" """,
        "echo '#1320\n#1321' > release-picks.txt",
        FOLLOW,  # pick --file: #1321
        FOLLOW,  # tag rc1
        FOLLOW,  # push
        FOLLOW,  # promote
        FOLLOW,  # push
        """git switch -q main
git update-index --add --cacheinfo 160000,3333333333333333333333333333333333333333,third_party/sdk; git commit -qm "Bump sdk (#1330)"
git switch -q release/0.9; echo '#1330' >> release-picks.txt""",
        FOLLOW,  # pick --file: #1330
        FOLLOW,  # tag the patch's rc1
    ],
    # pytorch/ao release/0.15.0: rc1 tagged, then the branch rewritten past it
    "rewritten-branch": [
        INIT
        + """printf '[tool.release]\\nbranch = "release/{version}"\\nrc-spelling = "-rc{n}"\\nchangelog = ""\\n' > pyproject.toml; git add .; git commit -qm init
"""
        + REMOTE
        + "release cut 0.15.0 >/dev/null",
        'echo a > f; git add f; git commit -qm "update table (#3455)"',
        FOLLOW,  # tag rc1
        'git commit -q --amend -m "update table (#3455)" --date="2025-12-08 15:00"',
        'git commit -q --allow-empty -m "Fix NVFP4 QAT convert path (#3450)"',
        FOLLOW,  # tag rc2
        "git reset -q --hard HEAD~1",  # rewritten again, under rc2 too
        FOLLOW,  # tag rc3
    ],
    # pytorch/ao release/0.13.0: rcs tagged after the final, with a changelog
    "rcs-after-a-final": [
        INIT
        + """printf '[tool.release]\\nbranch = "release/{version}"\\nrc-spelling = "-rc{n}"\\n' > pyproject.toml
printf '# Changelog\\n\\n## [Unreleased]\\n' > CHANGELOG.md; git add . && git commit -qm init
"""
        + REMOTE
        + "release cut 0.13.0 >/dev/null",
        'git commit -q --allow-empty -m "fix (#1)"',
        FOLLOW,  # tag rc1
        FOLLOW,  # push
        FOLLOW,  # promote
        FOLLOW,  # push
        'git commit -q --allow-empty -m "fix (#2)"; git commit -q --allow-empty -m "fix (#3)"',
        "git tag v0.13.0-rc2",
        'git commit -q --allow-empty -m "fix (#4)"',
        FOLLOW,  # what follows the final here
    ],
    # pytorch/ao release/0.14.0 and tpu-inference releases/v0.21.0: copies adapted to the
    # branch that keep one PR number, a ported revert, a picks file naming all three
    "adapted-copies": [
        INIT
        + """printf 'a\\nb\\nc\\n' > f; printf 'jax==0.10.0\\n' > req.txt; printf 'x\\ny\\n' > other; git add .; git commit -qm init
"""
        + REMOTE
        + "release cut 0.14.0 >/dev/null",
        """git switch -q main; printf 'a\\nB\\nc\\nd\\n' > f; git commit -qam "Update compatibility matrix (#3178)"
printf 'jax==0.9.0\\n' > req.txt; printf 'x\\n' > other; git commit -qam 'Revert "Update JAX to 0.10.0" (#2648)'
echo z > g; git add g; git commit -qm "Fix g (#3180)"; git switch -q releases/v0.14.0""",
        """printf 'a\\nB\\nc\\n' > f; git commit -qam "Update compatibility matrix (#3178)" """,
        """printf 'jax==0.9.0\\n' > req.txt; git commit -qam 'Cherry-pick: Revert "Update JAX to 0.10.0" (#2648) (#2655)'""",
        "printf '#3178\\n#2648\\n#3180\\n' > release-picks.txt",
        FOLLOW,  # pick --file: #3180 only (#3178 there, #2648 held)
        FOLLOW,  # tag rc1
        "printf '#3178\\n#2648\\n#3180\\nnot-a-ref\\n' > release-picks.txt",
    ],
}


@pytest.mark.slow  # every state of four histories, each read by four commands
@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_status_is_one_answer_at_every_step_of_a_real_shaped_history(
    tmp_path: Path, name: str
) -> None:
    root = tmp_path / "r"
    followed = []
    for step in HISTORIES[name]:
        if step == FOLLOW:
            followed.append(follow(root))
        else:
            shell(root if root.is_dir() else tmp_path, step)
        check_one_answer(root)
    assert len(followed) == len(FOLLOWED[name]), followed
    assert all(f.startswith(e) for f, e in zip(followed, FOLLOWED[name], strict=True)), followed


# status's next commands, as each history runs them (a post release or the line's next
# patch rc, as the project's versions say: both start "release tag")
FOLLOWED: dict[str, list[str]] = {
    "submodule-picks": [
        f"release pick --file {PICKS}",
        "release tag",
        "release push",
        "release promote",
        "release push",
        f"release pick --file {PICKS}",
        "release tag",
    ],
    "rewritten-branch": ["release tag", "release tag", "release tag"],
    "rcs-after-a-final": [
        "release tag",
        "release push",
        "release promote",
        "release push",
        "release tag",
    ],
    "adapted-copies": [f"release pick --file {PICKS}", "release tag"],
}

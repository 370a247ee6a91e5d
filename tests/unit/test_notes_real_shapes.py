"""Notes on shapes met in real release histories (vllm-project/tpu-inference, pytorch/data),
each reproduced with git alone and read through the command line, as a user would: a CI
bot's noreply address, a revert whose subject goes on after the closing quote, one person
under two names sharing an email, another repository's PR named in a body, and an adapted
copy of a PR a previous final shipped."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.shell_support import run_block


@pytest.fixture
def shell(tmp_path: Path) -> Any:
    """Runs a bash script in a new directory with ``release`` on PATH (this checkout's, as
    a separate process) and git's identity from the script's own ``git config``."""
    return lambda script: run_block(
        Path(tempfile.mkdtemp(dir=tmp_path)), script, bin_dir=tmp_path / "shims", timeout=120
    )


BASE = """
git init -q -b main r && cd r && git config user.email t@e && git config user.name T
git commit -q --allow-empty -m base && git tag v0.1.0
"""


def _notes(shell: Any, script: str, *args: str) -> dict[str, Any]:
    out = shell(BASE + script + f"\nrelease {' '.join(args)} notes --since v0.1.0 --format json")
    data: dict[str, Any] = json.loads(out)
    return data


def _entries(notes: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for s in notes["sections"] for e in s["entries"]]


# R1 (tpu-inference: 1,283 of its 3,799 commits are the bot's)
BUILDKITE = """
GIT_AUTHOR_NAME="Buildkite Bot" GIT_AUTHOR_EMAIL="buildkite-bot@users.noreply.github.com" \\
  git commit -q --allow-empty -m "[skip ci] Update nightly support matrices (v6e/v7x)"
GIT_AUTHOR_NAME="release-robot" GIT_AUTHOR_EMAIL="robot@ci.example.org" \\
  git commit -q --allow-empty -m "Sync wheels (#3)"
git commit -q --allow-empty -m "Fix x (#2)"
"""


def _config(bots: str) -> str:
    return f"printf '[tool.release]\\nbots = {bots}\\n' > ../cfg.toml\n"


def test_a_ci_bots_noreply_address_is_not_credited(shell: Any) -> None:
    notes = _notes(shell, BUILDKITE)
    people = [(p["name"], p["email"]) for p in notes["contributors"]]
    assert people == [("release-robot", "robot@ci.example.org"), ("T", "t@e")]
    bot_entry = next(e for e in _entries(notes) if "nightly" in e["title"])
    assert bot_entry["credits"] == []


def test_the_bots_list_can_add_to_the_default_one_or_replace_it(shell: Any) -> None:
    added = _notes(
        shell, _config('[\\"...\\", \\"release-robot\\"]') + BUILDKITE, "--config ../cfg.toml"
    )
    assert [p["name"] for p in added["contributors"]] == ["T"]
    replaced = _notes(shell, _config('[\\"buildkite*\\"]') + BUILDKITE, "--config ../cfg.toml")
    assert [p["name"] for p in replaced["contributors"]] == ["release-robot", "T"]
    nobody = _notes(shell, _config("[]") + BUILDKITE, "--config ../cfg.toml")
    assert [p["name"] for p in nobody["contributors"]] == ["Buildkite Bot", "release-robot", "T"]


# R2 (tpu-inference a11fb951a3)
def test_a_revert_whose_subject_goes_on_after_the_quote_cancels_its_original(shell: Any) -> None:
    notes = _notes(
        shell,
        """
echo 1 > f && git add f && git commit -qm "[Batch RPA] remove block_size override (#3223)"
git rm -q f && git commit -qm '[releases/v0.26.0] Revert "[Batch RPA] remove block_size override (#3223)" — fixes smem compile OOM in 7 nightly perf jobs (#3270)'
git commit -q --allow-empty -m "Keep me (#3300)"
""",
    )
    assert [e["title"] for e in _entries(notes)] == ["Keep me"]
    assert len(notes["cancelled_reverts"]) == 2


# R5 (tpu-inference, 89 entries)
def test_two_names_sharing_an_email_are_one_person_under_one_name(shell: Any) -> None:
    notes = _notes(
        shell,
        """
GIT_AUTHOR_NAME="py4_" GIT_AUTHOR_EMAIL=ibtkm2009@gmail.com git commit -q --allow-empty \\
  -m "Fix a (#1)" -m "Co-authored-by: Pooya Moradi <pooyam@google.com>"
GIT_AUTHOR_NAME="Pooya Moradi" GIT_AUTHOR_EMAIL=ibtkm2009@gmail.com git commit -q --allow-empty -m "Fix b (#2)"
GIT_AUTHOR_NAME="Lihao Ran" GIT_AUTHOR_EMAIL=your-email@example.com git commit -q --allow-empty -m "Fix c (#3)"
GIT_AUTHOR_NAME="Your Name" GIT_AUTHOR_EMAIL=your-email@example.com git commit -q --allow-empty -m "Fix d (#4)"
""",
    )
    assert [p["name"] for p in notes["contributors"]] == ["Lihao Ran", "Pooya Moradi", "Your Name"]
    credits = {e["title"]: [p["name"] for p in e["credits"]] for e in _entries(notes)}
    assert credits["Fix a"] == credits["Fix b"] == ["Pooya Moradi"]


# R7 (pytorch/data e53afb72, db216c1b): exported from pytorch/pytorch with its landing line
def test_another_repositorys_pr_is_never_linked_as_this_ones(shell: Any) -> None:
    script = """
git commit -q --allow-empty -m "Fix -Wmissing-braces in a few files" -m "Pull Request resolved: https://github.com/pytorch/pytorch/pull/150802"
git commit -q --allow-empty -m "Use the new API (#72209)" -m "Pull Request resolved: https://github.com/pytorch/pytorch/pull/72209"
git commit -q --allow-empty -m "Land here" -m "Pull Request resolved: https://github.com/pytorch/data/pull/1400"
git commit -q --allow-empty -m "Fix x (#1401)"
printf '[tool.release]\\nrepo-url = "https://github.com/pytorch/data"\\n' > ../cfg.toml
"""
    notes = _notes(shell, script, "--config ../cfg.toml")
    links = {e["title"]: (e["pr"], e["pr_url"]) for e in _entries(notes)}
    assert links == {
        "Fix -Wmissing-braces in a few files": (None, None),
        "Use the new API": (None, None),
        "Land here": (1400, "https://github.com/pytorch/data/pull/1400"),
        "Fix x": (1401, "https://github.com/pytorch/data/pull/1401"),
    }
    text = shell(BASE + script + "release --config ../cfg.toml notes --since v0.1.0 2>/dev/null")
    assert "pull/150802" not in text and "#150802" not in text and "#72209" not in text
    assert "[#1400](https://github.com/pytorch/data/pull/1400)" in text


# an adapted copy: the branch's commit has main's (#N) but no -x line and another patch
def test_an_adapted_copy_a_previous_final_shipped_is_not_listed_again(shell: Any) -> None:
    out = shell(
        """
git init -q -b main r && cd r && git config user.email t@e && git config user.name T
printf 'a\\nb\\nc\\n' > f && git add f && git commit -qm init && git tag v0.0.0
git switch -qc releases/v0.1.0
git switch -q main
printf 'a\\nB\\nc\\nd\\n' > f && git commit -qam "Update compatibility matrix (#3178)"
printf 'a\\nB\\nc\\nd\\ne\\n' > f && git commit -qam "Fix the loader (#3180)"
printf 'a\\nB\\nc\\nd\\ne\\nf\\n' > f && git commit -qam "Port of #3190 is elsewhere (#3191)"
git switch -q releases/v0.1.0
printf 'a\\nB\\nc\\n' > f && git commit -qam "Update compatibility matrix (#3178)"
echo x > g && git add g && git commit -qm "[v0.1.0] Fix the loader for 0.1 (#3180) (#3185)"
git tag v0.1.0
git switch -q main
release notes --since v0.1.0 --format json
""",
    )
    titles = [e["title"] for e in _entries(json.loads(out))]
    assert titles == ["Port of #3190 is elsewhere"]


def test_notes_since_an_rc_list_what_its_branch_carries(shell: Any) -> None:
    """Only a final's branch counts as shipped: since an rc, nothing is left out."""
    out = shell(
        """
git init -q -b main r && cd r && git config user.email t@e && git config user.name T
printf 'a\\nb\\nc\\n' > f && git add f && git commit -qm init
git switch -qc releases/v0.1.0 && git switch -q main
printf 'a\\nB\\nc\\nd\\n' > f && git commit -qam "Update compatibility matrix (#3178)"
git switch -q releases/v0.1.0
printf 'a\\nB\\nc\\n' > f && git commit -qam "Update compatibility matrix (#3178)" && git tag v0.1.0rc1
git switch -q main
release notes --since v0.1.0rc1 --format json
""",
    )
    assert [e["title"] for e in _entries(json.loads(out))] == ["Update compatibility matrix"]

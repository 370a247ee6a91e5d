"""The PR route end to end: ``protected = true``, a real bare remote whose pre-receive hook
declines the release branch as GitHub does (GH006), and the recording stand-in for ``gh``.

``release pick`` picks onto a branch of its own, pushes it and opens one PR into the
release branch, which never moves; re-runs, ``gh`` failures after the push and a SIGKILL
between the push and the PR's creation all converge to one PR; ``--dry-run`` prints the
``gh`` lines the real run then sends; ``status`` and ``tag`` read the open PRs.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from release.adapters.lock import process_group_alive
from release.sample import SampleEngine
from tests.conftest import repo_state, run_cli
from tests.github_support import GhStandIn

BRANCH = "releases/v0.1.0"
SCOPE = "release-picks/v0.1.0/"
REPO = "example/tinyengine"  # the sample engine's repo-url
GH006 = (
    "while read old new ref; do\n"
    '  case "$ref" in refs/heads/releases/*)\n'
    '    echo "error: GH006: Protected branch update failed for $ref." >&2\n'
    '    echo "error: Changes must be made through a pull request." >&2\n'
    "    exit 1 ;;\n"
    "  esac\n"
    "done\n"
)


def _git(engine: SampleEngine, *args: str) -> str:
    return engine.repo.out(*args)


def _remote_refs(engine: SampleEngine) -> dict[str, str]:
    text = _git(engine, "ls-remote", str(engine.remote))
    return {ref: sha for sha, ref in (line.split("\t") for line in text.splitlines())}


def _hook(git_dir: Path, name: str, body: str) -> Path:
    path = git_dir / "hooks" / name
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def protected(cut_engine_copy: SampleEngine) -> SampleEngine:
    """The cut engine with ``protected = true`` (committed and pushed before the remote
    started to protect the release branch), then the remote protecting it."""
    engine = cut_engine_copy
    path = engine.root / "pyproject.toml"
    path.write_text(
        path.read_text(encoding="utf-8") + "\n[tool.release.github]\nprotected = true\n",
        encoding="utf-8",
    )
    _git(engine, "commit", "--quiet", "-am", "Pick by pull request")
    _git(engine, "push", "--quiet", "origin", BRANCH)
    assert engine.remote is not None
    _hook(engine.remote, "pre-receive", GH006)
    return engine


def _cli(engine: SampleEngine, gh: GhStandIn, *args: str) -> subprocess.CompletedProcess[str]:
    result = run_cli(engine.root, *args, env=gh.env(os.environ))
    return subprocess.CompletedProcess(args, result.code, result.stdout, result.stderr)


def _pick_branches(engine: SampleEngine) -> list[str]:
    return _git(engine, "for-each-ref", "--format=%(refname:short)", f"refs/heads/{SCOPE}").split()


def _originals(engine: SampleEngine, branch: str) -> list[str]:
    """The main commits the pick branch carries, oldest first (its -x lines)."""
    text = _git(engine, "log", "--reverse", "--format=%B", f"{BRANCH}..{branch}")
    return re.findall(r"^\(cherry picked from commit ([0-9a-f]{40})\)$", text, re.M)


def _creates(gh: GhStandIn) -> list[list[str]]:
    return [argv for argv in gh.calls() if argv[:2] == ["pr", "create"]]


def _prs_of(gh: GhStandIn, head: str) -> list[dict[str, object]]:
    return [pr for pr in gh.prs(REPO) if pr.get("headRefName") == head]


def _one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


def test_picks_go_onto_their_own_branch_pushed_with_one_pr_and_the_release_branch_stays(
    protected: SampleEngine, gh_standin: GhStandIn
) -> None:
    engine = protected
    release_tip = _git(engine, "rev-parse", BRANCH).strip()
    remote_release = _remote_refs(engine)[f"refs/heads/{BRANCH}"]

    result = _cli(engine, gh_standin, "pick", "#109 #111", "--reason", "regression")

    assert result.returncode == 0, result.stderr
    [branch] = _pick_branches(engine)
    first = engine.shas[109]
    assert branch == f"{SCOPE}{first[:10]}"
    assert _originals(engine, branch) == [engine.shas[109], engine.shas[111]]
    assert _git(engine, "rev-parse", BRANCH).strip() == release_tip  # never moved
    assert _remote_refs(engine)[f"refs/heads/{BRANCH}"] == remote_release
    assert _remote_refs(engine)[f"refs/heads/{branch}"] == _git(engine, "rev-parse", branch).strip()
    assert engine.repo.current_branch() == BRANCH
    assert _git(engine, "status", "--porcelain") == ""

    [pr] = _prs_of(gh_standin, branch)
    assert pr["state"] == "OPEN" and pr["baseRefName"] == BRANCH
    assert pr["title"] == "Picks for v0.1.0rc1: 2 commits"
    assert [label["name"] for label in pr["labels"]] == ["cherry-pick"]  # type: ignore[index, union-attr]
    lookups = [a for a in gh_standin.calls() if a[:2] == ["pr", "list"]]
    assert lookups and all(
        f"--head={branch}" in a or ("--head" in a and branch in a) for a in lookups
    )
    assert str(pr["url"]) in result.stdout


def test_the_pr_body_names_each_pick_its_original_sha_pr_link_and_reason(
    protected: SampleEngine, gh_standin: GhStandIn
) -> None:
    result = _cli(protected, gh_standin, "pick", "#109", "--reason", "regression")

    assert result.returncode == 0, result.stderr
    [create] = _creates(gh_standin)
    body_file = create[create.index("--body-file") + 1] if "--body-file" in create else None
    assert body_file is None or not Path(body_file).exists()  # removed afterwards
    [pr] = gh_standin.prs(REPO)
    body = str(pr.get("body", ""))
    assert protected.shas[109] in body
    assert "https://github.com/example/tinyengine/pull/109" in body
    assert "reason: regression" in body
    assert pr["title"] == "[bugfix] Fix --port parsing when the value is missing (#109)"


def test_running_again_finds_the_pr_and_never_opens_a_second(
    protected: SampleEngine, gh_standin: GhStandIn
) -> None:
    assert _cli(protected, gh_standin, "pick", "#109").returncode == 0
    before = repo_state(protected.root)
    remote = _remote_refs(protected)

    again = _cli(protected, gh_standin, "pick", "#109")

    assert again.returncode == 0, again.stderr
    assert len(_creates(gh_standin)) == 1
    assert len(gh_standin.prs(REPO)) == 1
    assert "is open" in again.stdout
    assert repo_state(protected.root) == before
    assert _remote_refs(protected) == remote


def test_dry_run_prints_the_gh_lines_the_run_then_sends_and_changes_nothing(
    protected: SampleEngine, gh_standin: GhStandIn
) -> None:
    before = repo_state(protected.root)
    remote = _remote_refs(protected)

    dry = _cli(protected, gh_standin, "pick", "#109 #111", "--dry-run")

    assert dry.returncode == 0, dry.stderr
    after = repo_state(protected.root)
    kept = after["release_dir"]  # a dry pick keeps what it read in the patch cache, as ever
    # (where caches are written: never on CI, where the directory is not made at all)
    assert kept is None or (isinstance(kept, dict) and set(kept) == {"patches.cache"})
    after["release_dir"] = None
    assert after == before
    assert _remote_refs(protected) == remote
    assert gh_standin.calls() == []
    shown = [line.strip() for line in dry.stdout.splitlines() if line.strip().startswith("gh pr ")]
    assert len(shown) == 2, dry.stdout

    done = _cli(protected, gh_standin, "pick", "#109 #111")
    assert done.returncode == 0, done.stderr
    sent = gh_standin.calls()
    listed = next(a for a in sent if a[:2] == ["pr", "list"])
    [create] = _creates(gh_standin)
    assert shown[0] == "gh " + shlex.join(listed)
    at = next(i for i, a in enumerate(create) if a.startswith("--body-file"))
    body_flag = create[at]
    expected = [*create]
    expected[at : at + (1 if "=" in body_flag else 2)] = (
        ["--body-file=<body.md>"] if "=" in body_flag else ["--body-file", "<body.md>"]
    )
    assert shown[1] == "gh " + shlex.join(expected)
    [pr] = gh_standin.prs(REPO)
    for line in str(pr["body"]).splitlines():
        if line:
            assert line in dry.stdout


@pytest.mark.parametrize("kind", ["not-logged-in", "rate-limit", "network"])
def test_a_gh_failure_after_the_push_is_one_line_and_a_re_run_finishes(
    kind: str, protected: SampleEngine, gh_standin: GhStandIn
) -> None:
    gh_standin.fault("pr create", kind)

    failed = _cli(protected, gh_standin, "pick", "#109")

    line = _one_line(failed.stderr)
    assert failed.returncode not in (0, 2)
    assert {
        "not-logged-in": "gh auth login",
        "rate-limit": "rate limit",
        "network": "cannot reach",
    }[kind] in line
    [branch] = _pick_branches(protected)
    assert f"refs/heads/{branch}" in _remote_refs(protected)  # pushed before gh failed
    assert gh_standin.prs(REPO) == []

    again = _cli(protected, gh_standin, "pick", "#109")

    assert again.returncode == 0, again.stderr
    assert _pick_branches(protected) == [branch]
    [pr] = gh_standin.prs(REPO)
    assert pr["headRefName"] == branch and pr["state"] == "OPEN"


def _run_killed(engine: SampleEngine, gh: GhStandIn, *args: str) -> int:
    proc = subprocess.Popen(
        [sys.executable, "-m", "release", *args],
        cwd=engine.root,
        env=gh.env(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # the hook's kill -KILL 0 must not reach the test
    )
    code = proc.wait(timeout=60)
    deadline = time.monotonic() + 60
    while process_group_alive(proc.pid):
        assert time.monotonic() < deadline, "the killed group never ended"
        time.sleep(0.01)
    return code


KILL_AFTER_PICK_BRANCH_LANDS = (
    "while read old new ref; do\n"
    f'  case "$ref" in refs/heads/{SCOPE}*) kill -KILL 0 ;; esac\n'
    "done\n"
)


def test_a_kill_between_the_push_and_the_pr_converges_to_one_pr(
    protected: SampleEngine, gh_standin: GhStandIn
) -> None:
    assert protected.remote is not None
    # post-receive runs once the remote has the ref: the push has landed, the PR is not made
    hook = _hook(protected.remote, "post-receive", KILL_AFTER_PICK_BRANCH_LANDS)

    code = _run_killed(protected, gh_standin, "pick", "#109 #111")

    assert code == -signal.SIGKILL
    hook.unlink()
    [branch] = _pick_branches(protected)
    assert f"refs/heads/{branch}" in _remote_refs(protected)
    assert _creates(gh_standin) == []

    again = _cli(protected, gh_standin, "pick", "#109 #111")

    assert again.returncode == 0, again.stderr
    assert _pick_branches(protected) == [branch]
    assert _originals(protected, branch) == [protected.shas[109], protected.shas[111]]
    [pr] = gh_standin.prs(REPO)
    assert pr["headRefName"] == branch and pr["state"] == "OPEN"
    assert protected.repo.current_branch() == BRANCH
    assert not (protected.repo.git_dir / "release" / "pick.json").exists()


def test_a_kill_while_picking_onto_the_pick_branch_goes_on_with_it(
    protected: SampleEngine, gh_standin: GhStandIn
) -> None:
    marker = protected.root.parent / "fired"
    hook = _hook(
        protected.repo.git_dir,
        "post-commit",
        f"[ -e '{marker}' ] && exit 0\ntouch '{marker}'\nkill -KILL 0\n",
    )

    code = _run_killed(protected, gh_standin, "pick", "#109 #111")

    assert code == -signal.SIGKILL
    hook.unlink()
    assert protected.repo.current_branch().startswith(SCOPE)  # type: ignore[union-attr]

    again = _cli(protected, gh_standin, "pick", "#109 #111")

    assert again.returncode == 0, again.stderr
    [branch] = _pick_branches(protected)
    assert _originals(protected, branch) == [protected.shas[109], protected.shas[111]]
    assert len(gh_standin.prs(REPO)) == 1
    assert protected.repo.current_branch() == BRANCH


def test_a_name_holding_other_picks_is_passed_by(
    protected: SampleEngine, gh_standin: GhStandIn
) -> None:
    taken = f"{SCOPE}{protected.shas[109][:10]}"
    _git(protected, "branch", taken, BRANCH)
    _git(protected, "switch", "--quiet", taken)
    _git(protected, "cherry-pick", "-x", protected.shas[111])
    _git(protected, "switch", "--quiet", BRANCH)
    held = _git(protected, "rev-parse", taken).strip()

    result = _cli(protected, gh_standin, "pick", "#109")

    assert result.returncode == 0, result.stderr
    assert _git(protected, "rev-parse", taken).strip() == held
    assert _originals(protected, f"{taken}-2") == [protected.shas[109]]
    [pr] = gh_standin.prs(REPO)
    assert pr["headRefName"] == f"{taken}-2"


def test_a_conflict_stops_on_the_pick_branch_and_continue_opens_the_pr(
    protected: SampleEngine, gh_standin: GhStandIn
) -> None:
    stopped = _cli(protected, gh_standin, "pick", "#108")  # conflicts without #107
    assert stopped.returncode == 4, stopped.stderr
    assert protected.repo.current_branch().startswith(SCOPE)  # type: ignore[union-attr]
    assert gh_standin.calls() == []

    aborted = _cli(protected, gh_standin, "pick", "--abort")

    assert aborted.returncode == 0, aborted.stderr
    assert protected.repo.current_branch() == BRANCH
    assert _pick_branches(protected) == []  # the pick branch it made, deleted

    assert _cli(protected, gh_standin, "pick", "#108").returncode == 4
    from release.sample import RESOLVED_SCHEDULER_108

    (protected.root / "tinyengine" / "scheduler.py").write_text(RESOLVED_SCHEDULER_108)
    subprocess.run(
        ["git", "cherry-pick", "-x", protected.shas[108]],
        cwd=protected.root,
        capture_output=True,
        check=False,
    )
    (protected.root / "tinyengine" / "scheduler.py").write_text(RESOLVED_SCHEDULER_108)
    _git(protected, "add", "tinyengine/scheduler.py")

    done = _cli(protected, gh_standin, "pick", "--continue")

    assert done.returncode == 0, done.stderr
    assert protected.repo.current_branch() == BRANCH
    [branch] = _pick_branches(protected)
    assert _originals(protected, branch) == [protected.shas[108]]
    [pr] = gh_standin.prs(REPO)
    assert pr["headRefName"] == branch


def test_status_counts_open_pick_prs_as_pending_and_tag_refuses_while_they_are_open(
    protected: SampleEngine, gh_standin: GhStandIn
) -> None:
    assert _cli(protected, gh_standin, "pick", "#109 #111").returncode == 0
    [pr] = gh_standin.prs(REPO)

    status = _cli(protected, gh_standin, "status")

    assert status.returncode == 0, status.stderr
    assert "picks:    0 done, 2 pending" in status.stdout
    assert f"(in {pr['url']})" in status.stdout
    assert f"pick PR  #{pr['number']} {pr['url']} (open" in status.stdout
    assert "next:     merge the pick pull requests" in status.stdout

    before = repo_state(protected.root)
    refused = _cli(protected, gh_standin, "tag")
    line = _one_line(refused.stderr)
    assert refused.returncode == 3
    assert f"#{pr['number']}" in line and str(pr["url"]) in line
    assert repo_state(protected.root) == before

    # merged on GitHub (as the server would: the pick branch into the release branch)
    assert protected.remote is not None
    (protected.remote / "hooks" / "pre-receive").unlink()
    branch = str(pr["headRefName"])
    _git(
        protected,
        "merge",
        "--quiet",
        "--no-ff",
        "-m",
        f"Merge pull request #{pr['number']}",
        branch,
    )
    merge = _git(protected, "rev-parse", "HEAD").strip()
    gh_standin.set_pr_state(REPO, int(str(pr["number"])), "MERGED", merge_commit=merge)

    merged = _cli(protected, gh_standin, "status")

    assert "picks:    2 done, 0 pending" in merged.stdout, merged.stdout
    assert "(merged," in merged.stdout
    tagged = _cli(protected, gh_standin, "tag")
    assert tagged.returncode == 0, tagged.stderr


def test_with_no_repository_on_github_known_nothing_is_picked(
    protected: SampleEngine, gh_standin: GhStandIn
) -> None:
    path = protected.root / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('repo-url = "https://github.com/example/tinyengine"\n', ""))
    _git(protected, "commit", "--quiet", "-am", "No repo-url")  # the remote is a local path
    before = repo_state(protected.root)
    remote = _remote_refs(protected)

    refused = _cli(protected, gh_standin, "pick", "#109")

    line = _one_line(refused.stderr)
    assert refused.returncode == 3
    assert 'set repo = "OWNER/REPO" under [tool.release.github]' in line
    assert repo_state(protected.root) == before
    assert _remote_refs(protected) == remote
    assert gh_standin.calls() == []


def test_status_notes_a_gh_failure_and_tag_refuses_on_one(
    protected: SampleEngine, gh_standin: GhStandIn
) -> None:
    gh_standin.fault("pr list", "not-logged-in", times=2)

    status = _cli(protected, gh_standin, "status")

    assert status.returncode == 0, status.stderr
    assert "note:     pick pull requests not read: " in status.stdout
    assert "gh auth login" in status.stdout
    before = repo_state(protected.root)
    refused = _cli(protected, gh_standin, "tag")
    line = _one_line(refused.stderr)
    assert refused.returncode == 3 and "cannot tell whether pick pull requests" in line
    assert repo_state(protected.root) == before


def test_a_pick_branch_only_on_the_remote_still_carries_its_picks(
    protected: SampleEngine, gh_standin: GhStandIn
) -> None:
    assert _cli(protected, gh_standin, "pick", "#109").returncode == 0
    [branch] = _pick_branches(protected)
    _git(protected, "branch", "--quiet", "-D", branch)  # made on another machine, say

    again = _cli(protected, gh_standin, "pick", "#109")

    assert again.returncode == 0, again.stderr
    assert _pick_branches(protected) == []  # no second branch for the same picks
    assert len(_creates(gh_standin)) == 1
    [pr] = gh_standin.prs(REPO)
    assert pr["headRefName"] == branch and "is open" in again.stdout


def test_picks_from_a_milestone_open_a_pr_that_names_it(
    protected: SampleEngine, gh_standin: GhStandIn
) -> None:
    from tests.github_support import milestone_prs

    milestone_prs(protected, gh_standin)

    result = _cli(protected, gh_standin, "pick", "--milestone", "v0.1.1")

    assert result.returncode == 0, result.stderr
    [branch] = _pick_branches(protected)
    assert _originals(protected, branch) == [protected.shas[109], protected.shas[111]]
    [create] = _creates(gh_standin)
    assert "--milestone=v0.1.1" in create or create[create.index("--milestone") + 1] == "v0.1.1"
    [pr] = [p for p in gh_standin.prs(REPO) if str(p["headRefName"]).startswith(SCOPE)]
    assert "Milestone: v0.1.1" in str(pr["body"])

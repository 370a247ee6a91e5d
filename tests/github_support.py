"""The ``gh_standin`` fixture: a recording stand-in for GitHub's CLI (:mod:`tests.gh_standin`)
as a program named ``gh``, with the state it answers from and the calls it was run with.

Give a command the stand-in's environment (``standin.env(os.environ)``: its folder first
on PATH, ``GH_STANDIN_DIR`` set), or ``Gh(repo, env=standin.env({}))``; set pull
requests and releases (``add_pr``, ``load_pr_fixture``, ``add_release``), faults
(``fault``), and assert on what was sent (``calls``, ``sent``) and what is there now
(``prs``, ``releases``, ``asset``)."""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from release.sample import SampleEngine
from tests import gh_standin as program

STANDIN = Path(__file__).resolve().with_name("gh_standin.py")
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "github"

__all__ = [
    "FIXTURES",
    "MERGED_PR",
    "RELEASE",
    "REPO",
    "URL",
    "GhStandIn",
    "gh_standin",
    "milestone_prs",
    "pr_json",
]


class GhStandIn:
    """A ``gh`` that answers from ``state_dir`` and records every call there."""

    def __init__(self, root: Path) -> None:
        self.bin_dir = root / "bin"
        self.state_dir = root / "state"
        self.bin_dir.mkdir(parents=True)
        self.state_dir.mkdir(parents=True)
        program = self.bin_dir / "gh"
        program.write_text(
            f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(STANDIN))} "$@"\n',
            encoding="utf-8",
        )
        program.chmod(0o755)

    @property
    def executable(self) -> str:
        return str(self.bin_dir / "gh")

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        """``base`` with the stand-in first on PATH and its state folder named."""
        path = base.get("PATH", os.environ.get("PATH", os.defpath))
        return {
            **base,
            "PATH": f"{self.bin_dir}{os.pathsep}{path}",
            "GH_STANDIN_DIR": str(self.state_dir),
        }

    def _state(self) -> Any:
        return program.locked_state(self.state_dir)

    # -- what it answers from -------------------------------------------------------------

    def add_pr(self, repo_spec: str, pr_json: Mapping[str, Any]) -> None:
        with self._state() as state:
            pr = json.loads(json.dumps(pr_json))
            program.repo_state(state, program.repo_key(repo_spec))["prs"][str(pr["number"])] = pr

    def load_pr_fixture(self, name: str, repo_spec: str | None = None) -> dict[str, Any]:
        """``tests/fixtures/github/NAME.json`` (``OWNER+REPO-pr-N``) as a PR of
        ``repo_spec`` (by default the repository its name says); the PR's JSON."""
        pr: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
        if repo_spec is None:
            repo_spec = name.rsplit("-pr-", 1)[0].replace("+", "/", 1)
        self.add_pr(repo_spec, pr)
        return pr

    def set_pr_state(
        self, repo_spec: str, number: int, state: str, merge_commit: str | None = None
    ) -> None:
        """PR ``number`` OPEN, CLOSED or MERGED (then with ``merge_commit``)."""
        assert state in ("OPEN", "CLOSED", "MERGED"), state
        with self._state() as whole:
            pr = program.repo_state(whole, program.repo_key(repo_spec))["prs"][str(number)]
            pr["state"] = state
            pr["mergeCommit"] = {"oid": merge_commit} if merge_commit else None
            pr["mergedAt"] = "2026-01-01T00:00:00Z" if state == "MERGED" else None

    def add_release(self, repo_spec: str, release_json: Mapping[str, Any]) -> None:
        with self._state() as state:
            release = {"isLatest": False, **json.loads(json.dumps(release_json))}
            repo = program.repo_state(state, program.repo_key(repo_spec))
            repo["releases"][release["tagName"]] = release

    def link_remote(self, repo_spec: str, git_dir: Path) -> None:
        """Answer ``pr create`` and ``release create --verify-tag`` from a bare repository's
        branches and tags, as GitHub answers from what was pushed."""
        with self._state() as state:
            program.repo_state(state, program.repo_key(repo_spec))["remote"] = str(git_dir)

    def fault(self, match: str, kind: str, times: int = 1) -> None:
        """The next ``times`` calls whose argv, joined by spaces, holds ``match`` fail as gh
        fails: not logged in (exit 4), a 404, the API's rate limit, no network."""
        assert kind in program.FAULT_KINDS, kind
        with self._state() as state:
            state["faults"].append({"match": match, "kind": kind, "left": times})

    # -- what is there, and what was sent ----------------------------------------------------

    def prs(self, repo_spec: str) -> list[dict[str, Any]]:
        with self._state() as state:
            prs = program.repo_state(state, program.repo_key(repo_spec))["prs"]
            return [prs[key] for key in sorted(prs, key=int)]

    def releases(self, repo_spec: str) -> list[dict[str, Any]]:
        with self._state() as state:
            return list(program.repo_state(state, program.repo_key(repo_spec))["releases"].values())

    def asset(self, repo_spec: str, tag: str, name: str) -> bytes:
        """The bytes of an asset as uploaded."""
        folder = self.state_dir / "assets" / program.repo_key(repo_spec).replace("/", "+")
        return (folder / tag / name).read_bytes()

    def sent(self) -> list[dict[str, Any]]:
        """Every call: its argv and the text of the body or notes file it named."""
        path = self.state_dir / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def calls(self) -> list[list[str]]:
        """Every argv it was run with, in order, without ``gh``."""
        return [call["argv"] for call in self.sent()]


@pytest.fixture
def gh_standin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GhStandIn]:
    """A recording stand-in for ``gh`` (see :class:`GhStandIn`)."""
    yield GhStandIn(tmp_path_factory.mktemp("gh-standin"))


# -- records as gh answers them: a merged PR, a release, the sample's PRs on a milestone --

MERGED_PR: dict[str, Any] = {
    "number": 1745,
    "title": "[FIX_FOR_VLLM_LATEST] Fix for the latest upstream",
    "state": "MERGED",
    "mergeCommit": {"oid": "a" * 40},
    "baseRefName": "main",
    "headRefName": "dev/fix-latest",
    "headRefOid": "b" * 40,
    "labels": [{"id": "LA_1", "name": "bug", "description": "", "color": "d73a4a"}],
    "milestone": {"number": 3, "title": "v0.11.0", "description": "", "dueOn": None},
    "url": "https://github.com/vllm-project/vllm-gaudi/pull/1745",
    "author": {"id": "U_1", "is_bot": False, "login": "someone", "name": "Some One"},
    "mergedAt": "2025-09-01T10:00:00Z",
}
RELEASE: dict[str, Any] = {
    "tagName": "v0.11.0rc1",
    "name": "v0.11.0rc1",
    "body": "## Bug Fixes\n- a fix (#1745)\n",
    "isPrerelease": True,
    "isDraft": False,
    "assets": [{"name": "manifest.json", "size": 10, "url": "https://x/y"}],
    "url": "https://github.com/vllm-project/vllm-gaudi/releases/tag/v0.11.0rc1",
}


REPO = "example/tinyengine"
URL = f"https://github.com/{REPO}"


def pr_json(
    engine: SampleEngine,
    number: int,
    title: str,
    *,
    state: str = "MERGED",
    merge: str | None = None,
    base: str = "main",
    milestone: str | None = "v0.1.1",
    labels: tuple[str, ...] = (),
) -> dict[str, object]:
    """A PR as ``gh pr list --json`` answers it (merge: its merge commit's oid; by default
    the main commit the sample engine landed it as)."""
    oid = merge if merge is not None else engine.shas.get(number)
    merged = state == "MERGED"
    return {
        "number": number,
        "title": title,
        "state": state,
        "mergeCommit": {"oid": oid} if merged and oid else None,
        "baseRefName": base,
        "headRefName": f"fix-{number}",
        "headRefOid": "5" * 40,
        "labels": [
            {"id": f"LA_{name}", "name": name, "description": "", "color": "ededed"}
            for name in labels
        ],
        "milestone": {"number": 3, "title": milestone, "description": "", "dueOn": None}
        if milestone
        else None,
        "url": f"{URL}/pull/{number}",
        "author": {"login": "alice", "id": "U_1", "is_bot": False, "name": "Alice Chen"},
        "mergedAt": "2026-11-30T10:00:00Z" if merged else None,
    }


def milestone_prs(engine: SampleEngine, standin: GhStandIn) -> None:
    """v0.1.1: two fixes landed on main (#109 squash-merged; #111's merge commit is not
    here, its subject is), one merged before the cut (#106), one open, one closed, one
    merged into another branch."""
    fixes = [
        pr_json(
            engine,
            109,
            "[bugfix] Fix --port parsing when the value is missing",
            labels=("cherry-pick",),
        ),
        pr_json(engine, 111, "[main][CI/Build] Pin the build tools", merge="9" * 40),
        pr_json(engine, 106, "[Bugfix][V1] Handle an empty request list"),
        pr_json(engine, 113, "[Perf] Faster batching", state="OPEN", labels=("cherry-pick",)),
        pr_json(engine, 114, "[Bugfix] A fix that was dropped", state="CLOSED"),
        pr_json(engine, 115, "[Bugfix] Port to 0.0.x", merge="8" * 40, base="releases/v0.0.9"),
    ]
    for fix in fixes:
        standin.add_pr(REPO, fix)

"""``pick``: cherry-pick main commits onto the release branch, in main's order, with ``-x``.

Plan: resolve every requested ref (sha or ``#PR``) to a main commit, order by main,
skip what is already on the branch (``-x`` trailer or patch-id, as ``git cherry``
decides), refuse commits not on main, merges and feature work. Act: one
``git cherry-pick -x`` per run of commits with the same reason (git's own sequencer),
with the state in ``.git/release/pick.json`` so that a crash or a conflict can be
continued, aborted, or simply re-run. On a conflict the branch and work tree are
left as they were before the failing commit.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from release.commits import REASON_TRAILER, parse_subject
from release.config import PICK_REASONS
from release.context import ReleaseContext
from release.errors import ConflictError, RefusedError, UsageError
from release.git import short
from release.lock import StateFile, process_group_alive, repo_lock
from release.plan import Plan, Step

__all__ = [
    "Candidate",
    "PickRequest",
    "abort_pick",
    "continue_pick",
    "parse_requests",
    "pick",
    "plan_pick",
]

_PR = re.compile(r"^#(\d+)$")
_SHA = re.compile(r"^[0-9a-fA-F]{4,40}$")
_PICKED_FROM = re.compile(r"\(cherry picked from commit ([0-9a-f]{40})\)")
STATE_NAME = "pick.json"


@dataclass(frozen=True)
class PickRequest:
    ref: str
    reason: str | None = None


@dataclass(frozen=True)
class Candidate:
    request: PickRequest
    sha: str
    subject: str
    category: str
    position: int  # index in main's order since the branch point; -1 = before the cut
    parents: int = 1
    skip: str | None = None  # why it is not picked


@dataclass(frozen=True)
class PickState:
    branch: str
    head: str
    candidates: tuple[Candidate, ...]
    feature_categories: tuple[str, ...]
    allow_feature: bool = False
    notes: tuple[str, ...] = field(default=())


def parse_requests(
    commits: str | Sequence[str] = "", file_text: str | None = None, reason: str | None = None
) -> list[PickRequest]:
    """Requests from the command line (space/comma separated) and a picks file.

    A picks file has one ``<sha or #PR> [reason]`` per line; ``#`` followed by a space
    (or alone) starts a comment.
    """
    if reason is not None and reason not in PICK_REASONS:
        raise UsageError(f"--reason {reason!r} is not one of {', '.join(PICK_REASONS)}")
    tokens = commits.replace(",", " ").split() if isinstance(commits, str) else list(commits)
    requests = [PickRequest(t, reason) for t in tokens]
    if file_text is not None:
        for number, line in enumerate(file_text.splitlines(), 1):
            text = re.sub(r"(^|\s)#(\s.*)?$", "", line).strip()
            if not text:
                continue
            parts = text.split()
            if len(parts) > 2:
                raise UsageError(
                    f"picks file line {number}: expected '<sha or #PR> [reason]', got {line!r}"
                )
            line_reason = parts[1] if len(parts) == 2 else reason
            if line_reason is not None and line_reason not in PICK_REASONS:
                raise UsageError(
                    f"picks file line {number}: reason {line_reason!r} is not one of {', '.join(PICK_REASONS)}"
                )
            requests.append(PickRequest(parts[0], line_reason))
    for request in requests:
        if not (_PR.match(request.ref) or _SHA.match(request.ref)):
            raise UsageError(f"{request.ref!r} is neither a commit sha nor a #PR number")
    return requests


def plan_pick(state: PickState) -> Plan:
    """Order by main, skip what is there, refuse what must not be picked. Pure."""
    if not state.candidates:
        raise UsageError("nothing to pick: give commits (sha or #PR) or --file")
    for c in state.candidates:
        if c.skip:
            continue
        if c.parents > 1:
            raise RefusedError(
                f"{short(c.sha)} is a merge commit; pick the commits it merged instead"
            )
        if c.category in state.feature_categories and not state.allow_feature:
            raise RefusedError(
                f"{short(c.sha)} '{c.subject}' is feature work ({c.category}); release branches take "
                "fixes only (pass --allow-feature to override)"
            )
    seen: set[str] = set()
    steps: list[Step] = []
    ordered = sorted(state.candidates, key=lambda c: (c.skip is None, c.position))
    for c in ordered:
        if c.sha in seen:
            continue
        seen.add(c.sha)
        data: dict[str, Any] = {"sha": c.sha, "subject": c.subject, "reason": c.request.reason}
        if c.skip:
            steps.append(
                Step("skip", f"skip {short(c.sha)} {c.subject} ({c.skip})", {**data, "why": c.skip})
            )
        else:
            why = f" [{c.request.reason}]" if c.request.reason else ""
            steps.append(
                Step("cherry-pick", f"cherry-pick -x {short(c.sha)} {c.subject}{why}", data)
            )
    picks = sum(1 for s in steps if s.action == "cherry-pick")
    skips = len(steps) - picks
    return Plan(
        "pick",
        f"pick onto {state.branch} (at {short(state.head)}): {picks} to pick, {skips} already there",
        tuple(steps),
        {"branch": state.branch, "head": state.head},
    )


# -- reading the repository ------------------------------------------------


class _Branch:
    """What is already on the release branch, computed once."""

    def __init__(self, ctx: ReleaseContext, branch: str, main: str) -> None:
        self.ctx = ctx
        self.branch = branch
        self.main = main
        base = ctx.repo.merge_base(branch, main)
        if base is None:
            raise RefusedError(f"{branch} shares no history with {ctx.config.main_branch}")
        self.base = base
        self._order: dict[str, int] | None = None
        self._cherry: set[str] | None = None
        self._picked: set[str] | None = None

    @property
    def main_order(self) -> dict[str, int]:
        if self._order is None:
            shas = self.ctx.repo.rev_list("--reverse", "--topo-order", self.main, f"^{self.base}")
            self._order = {sha: i for i, sha in enumerate(shas)}
        return self._order

    @property
    def picked_from(self) -> set[str]:
        """Main commits named by ``-x`` trailers on the branch."""
        if self._picked is None:
            text = self.ctx.repo.log(f"{self.base}..{self.branch}", fmt="%B")
            self._picked = set(_PICKED_FROM.findall(text))
        return self._picked

    @property
    def patch_equivalent(self) -> set[str]:
        """Main commits whose patch is already on the branch (``git cherry``)."""
        if self._cherry is None:
            text = self.ctx.repo.out("cherry", self.branch, self.main, self.base)
            self._cherry = {line[2:].strip() for line in text.splitlines() if line.startswith("- ")}
        return self._cherry

    def already_there(self, sha: str) -> str | None:
        if sha in self.picked_from:
            return "already on the branch (cherry-picked)"
        if sha in self.patch_equivalent:
            return "already on the branch (same patch)"
        return None


def _resolve(
    ctx: ReleaseContext, requests: Iterable[PickRequest], info: _Branch
) -> list[Candidate]:
    requests = list(requests)
    resolved: list[tuple[PickRequest, str]] = []
    pr_requests = [r for r in requests if _PR.match(r.ref)]
    by_pr: dict[int, list[str]] = {}
    if pr_requests:
        text = ctx.repo.log(info.main, fmt="%H%x1f%s")
        wanted = {int(_PR.match(r.ref)[1]) for r in pr_requests}  # type: ignore[index]
        for line in text.splitlines():
            sha, _, subject = line.partition("\x1f")
            match = re.search(r"\(#(\d+)\)\s*$", subject)
            if match and int(match[1]) in wanted and not subject.startswith("Revert "):
                by_pr.setdefault(int(match[1]), []).append(sha)
    for request in requests:
        pr_match = _PR.match(request.ref)
        if pr_match:
            shas = by_pr.get(int(pr_match[1]), [])
            if not shas:
                raise RefusedError(
                    f"no commit on {ctx.config.main_branch} ends with '(#{pr_match[1]})'; is #{pr_match[1]} merged?"
                )
            if len(shas) > 1:
                raise RefusedError(
                    f"#{pr_match[1]} matches {len(shas)} commits on {ctx.config.main_branch} "
                    f"({', '.join(short(s) for s in shas)}); pick by sha"
                )
            resolved.append((request, shas[0]))
        else:
            found = ctx.repo.rev(request.ref) if _SHA.match(request.ref) else None
            if found is None:
                raise UsageError(f"{request.ref!r} is not a commit in this repository")
            resolved.append((request, found))
    if not resolved:
        return []
    shas = list(dict.fromkeys(sha for _, sha in resolved))
    text = ctx.repo.out("show", "-s", "--format=%H%x1f%P%x1f%s", *shas)
    meta: dict[str, tuple[int, str]] = {}
    for line in text.splitlines():
        sha, parent_list, subject = line.split("\x1f", 2)
        meta[sha] = (len(parent_list.split()), subject)
    aliases = ctx.config.alias_map()
    out: list[Candidate] = []
    for request, sha in resolved:
        parents, subject = meta[sha]
        category = parse_subject(subject, aliases)[0]
        position = info.main_order.get(sha)
        skip = None
        if position is None:
            if ctx.repo.is_ancestor(sha, info.base):
                position, skip = -1, "already on the branch (before the cut)"
            else:
                raise RefusedError(
                    f"{short(sha)} '{subject}' is not on {ctx.config.main_branch}; only merged commits are picked"
                )
        else:
            skip = info.already_there(sha)
        out.append(Candidate(request, sha, subject, category, position, parents, skip))
    return out


def read_pick_state(
    ctx: ReleaseContext, requests: list[PickRequest], allow_feature: bool
) -> tuple[PickState, _Branch]:
    branch, _ = ctx.current_release()
    info = _Branch(ctx, branch, ctx.main_sha())
    candidates = _resolve(ctx, requests, info)
    state = PickState(
        branch=branch,
        head=ctx.repo.out("rev-parse", "HEAD").strip(),
        candidates=tuple(candidates),
        feature_categories=ctx.config.feature_categories,
        allow_feature=allow_feature,
    )
    return state, info


# -- acting ----------------------------------------------------------------


def _editor_for(reason: str | None) -> str:
    if reason is None:
        return "true"
    trailer = shlex.quote(f"{REASON_TRAILER}: {reason}")
    return f"git interpret-trailers --in-place --if-exists replace --trailer {trailer}"


class _Picker:
    def __init__(self, ctx: ReleaseContext, say: Callable[[str], None]) -> None:
        self.ctx = ctx
        self.repo = ctx.repo
        self.state = StateFile(ctx.repo.git_dir, STATE_NAME)
        self.say = say

    def _save(self, data: dict[str, Any]) -> None:
        data.update(pid=os.getpid(), pgid=os.getpgid(0))
        self.state.write(data)

    def recover(self, data: dict[str, Any]) -> None:
        """Bring the work tree back to a commit boundary after a killed run."""
        pgid = int(data.get("pgid", 0))
        if pgid and pgid != os.getpgid(0) and process_group_alive(pgid):
            raise RefusedError(
                f"an interrupted pick (process group {pgid}) may still be running git here; "
                "wait for it to end and re-run"
            )
        branch = data["branch"]
        if self.repo.current_branch() != branch:
            raise RefusedError(
                f"an interrupted pick on {branch} needs recovery; git switch {branch} first"
            )
        for stale in (
            "index.lock",
            "HEAD.lock",
            f"refs/heads/{branch}.lock",
            "CHERRY_PICK_HEAD.lock",
        ):
            path = self.repo.git_dir / stale
            if path.exists():
                path.unlink()
                self.say(f"removed {stale} left by the interrupted pick")
        if self.repo.sequencer_active() or self.repo.cherry_pick_head():
            self.repo.run("cherry-pick", "--quit", mutating=True)
        self.repo.run("reset", "--hard", "--quiet", "HEAD", mutating=True)
        self.say(
            f"recovered an interrupted pick: {branch} is at {short(self.repo.out('rev-parse', 'HEAD'))}"
        )

    def run_queue(self, data: dict[str, Any]) -> list[str]:
        """Apply the queued commits; returns the lines that report them."""
        queue: list[dict[str, Any]] = list(data["queue"])
        report: list[str] = []
        while queue:
            reason = queue[0].get("reason")
            group = []
            for item in queue:
                if item.get("reason") != reason:
                    break
                group.append(item)
            data["queue"] = queue
            data["status"] = "running"
            self._save(data)
            args = ["cherry-pick", "-x", "--no-rerere-autoupdate"]
            if reason is not None:
                args.append("--edit")
            result = self.repo.run(
                *args,
                *[i["sha"] for i in group],
                check=False,
                env={"GIT_EDITOR": _editor_for(reason)},
                mutating=True,
            )
            if result.ok:
                report += [f"picked {short(i['sha'])} {i['subject']}" for i in group]
                queue = queue[len(group) :]
                continue
            stopped = self.repo.cherry_pick_head()
            if stopped is None:
                raise RefusedError(
                    f"git cherry-pick failed before applying anything: {result.stderr.strip().splitlines()[-1:]}; "
                    "re-run to retry, or --abort"
                )
            index = next((k for k, i in enumerate(group) if i["sha"] == stopped), 0)
            report += [f"picked {short(i['sha'])} {i['subject']}" for i in group[:index]]
            queue = queue[index:]
            unmerged = self.repo.unmerged_paths()
            self.repo.run("cherry-pick", "--quit", mutating=True)
            self.repo.run("reset", "--hard", "--quiet", "HEAD", mutating=True)
            current = queue[0]
            if not unmerged:
                report.append(
                    f"skipped {short(current['sha'])} {current['subject']} (its change is already on the branch)"
                )
                queue = queue[1:]
                continue
            data.update(
                queue=queue,
                status="conflict",
                conflict={"sha": current["sha"], "subject": current["subject"], "files": unmerged},
            )
            self._save(data)
            head = short(self.repo.out("rev-parse", "HEAD"))
            raise ConflictError(
                f"conflict picking {short(current['sha'])} '{current['subject']}' in {', '.join(unmerged)}; "
                f"{data['branch']} is back at {head}, before that commit, work tree clean",
                hint=(
                    f"resolve with: git cherry-pick -x {short(current['sha'])}, fix and git add the files, "
                    "then release pick --continue; or release pick --abort to undo this whole pick"
                ),
            )
        self.state.clear()
        return report


def _saved(state: StateFile) -> dict[str, Any] | None:
    """The pick in progress, checked: a damaged file is refused, never half-used."""
    data = state.read()
    if data is None:
        return None
    fields = {"branch": str, "orig_head": str, "queue": list, "status": str}
    missing = [key for key, kind in fields.items() if not isinstance(data.get(key), kind)]
    if not missing and not all(
        isinstance(i, dict) and isinstance(i.get("sha"), str) and "subject" in i
        for i in data["queue"]
    ):
        missing = ["queue entries"]
    if (
        not missing
        and data["status"] == "conflict"
        and (not isinstance(data.get("conflict"), dict) or not data["queue"])
    ):
        missing = ["conflict"]
    if missing:
        state.damaged(f"no valid {', '.join(missing)}")
    return data


def _remaining(plan: Plan) -> list[dict[str, Any]]:
    return [
        {"sha": s.data["sha"], "subject": s.data["subject"], "reason": s.data["reason"]}
        for s in plan.steps
        if s.action == "cherry-pick"
    ]


def _confirm(ctx: ReleaseContext, branch: str, shas: Iterable[str]) -> None:
    info = _Branch(ctx, branch, ctx.main_sha())
    missing = [s for s in shas if info.already_there(s) is None]
    if missing:
        raise RefusedError(
            f"after picking, {', '.join(short(s) for s in missing)} is not on {branch}; "
            "inspect with git log and re-run"
        )


def pick(
    ctx: ReleaseContext,
    requests: list[PickRequest],
    *,
    allow_feature: bool = False,
    dry_run: bool = False,
    say: Callable[[str], None] = print,
) -> tuple[Plan, list[str]]:
    saved = _saved(StateFile(ctx.repo.git_dir, STATE_NAME))
    if saved and saved.get("status") == "conflict":
        conflict = saved["conflict"]
        raise RefusedError(
            f"a pick stopped on a conflict at {short(conflict['sha'])} ('{conflict['subject']}'); "
            "resolve it and run release pick --continue, or release pick --abort"
        )
    if dry_run:
        state, _ = read_pick_state(ctx, requests, allow_feature)
        return plan_pick(state), []
    with repo_lock(ctx.repo.git_dir, "pick", notify=say):
        picker = _Picker(ctx, say)
        saved = _saved(picker.state)
        if saved:
            picker.recover(saved)
            picker.state.clear()
        ctx.require_clean()
        state, _ = read_pick_state(ctx, requests, allow_feature)
        plan = plan_pick(state)
        queue = _remaining(plan)
        report = [
            f"skipped {short(s.data['sha'])} {s.data['subject']} ({s.data['why']})"
            for s in plan.steps
            if s.action == "skip"
        ]
        if queue:
            data = {
                "branch": state.branch,
                "orig_head": state.head,
                "queue": queue,
                "status": "running",
            }
            report += picker.run_queue(data)
            _confirm(ctx, state.branch, [i["sha"] for i in queue if not _became_empty(report, i)])
        return plan, report


def _became_empty(report: list[str], item: dict[str, Any]) -> bool:
    return any(line.startswith(f"skipped {short(item['sha'])}") for line in report)


def continue_pick(ctx: ReleaseContext, *, say: Callable[[str], None] = print) -> list[str]:
    with repo_lock(ctx.repo.git_dir, "pick --continue", notify=say):
        picker = _Picker(ctx, say)
        data = _saved(picker.state)
        if not data:
            raise RefusedError("no pick in progress; nothing to continue")
        if data["status"] == "running":
            picker.recover(data)
            info = _Branch(ctx, data["branch"], ctx.main_sha())
            data["queue"] = [i for i in data["queue"] if info.already_there(i["sha"]) is None]
            return picker.run_queue(data)
        conflict = data["conflict"]
        sha = conflict["sha"]
        if ctx.repo.current_branch() != data["branch"]:
            raise RefusedError(
                f"the pick in progress is on {data['branch']}; git switch {data['branch']} first"
            )
        reason = data["queue"][0].get("reason")
        if ctx.repo.cherry_pick_head():
            unmerged = ctx.repo.unmerged_paths()
            if unmerged:
                raise RefusedError(
                    f"still unmerged: {', '.join(unmerged)}; resolve them and git add them"
                )
            ctx.repo.run("cherry-pick", "--continue", env={"GIT_EDITOR": "true"}, mutating=True)
            _ensure_pick_message(ctx, sha, reason)
        elif ctx.repo.has_staged_changes():
            _commit_resolution(ctx, sha, reason)
        info = _Branch(ctx, data["branch"], ctx.main_sha())
        if info.already_there(sha) is None:
            raise RefusedError(
                f"{short(sha)} is not on {data['branch']} yet; run git cherry-pick -x {short(sha)}, "
                "resolve, git add, then release pick --continue"
            )
        ctx.require_clean()
        report = [f"picked {short(sha)} {conflict['subject']} (resolved by hand)"]
        data["queue"] = data["queue"][1:]
        data["status"] = "running"
        data.pop("conflict", None)
        return report + picker.run_queue(data)


def _ensure_pick_message(ctx: ReleaseContext, sha: str, reason: str | None) -> None:
    """A hand-finished pick still carries the ``-x`` line and the reason trailer."""
    message = ctx.repo.out("log", "-1", "--format=%B")
    wanted = message.rstrip()
    if f"(cherry picked from commit {sha})" not in wanted:
        wanted += f"\n\n(cherry picked from commit {sha})"
    if reason and f"{REASON_TRAILER}: {reason}" not in wanted:
        wanted += f"\n{REASON_TRAILER}: {reason}"
    if wanted != message.rstrip():
        ctx.repo.run(
            "commit",
            "--amend",
            "--quiet",
            "--no-verify",
            "-F",
            "-",
            stdin=wanted + "\n",
            mutating=True,
        )


def _commit_resolution(ctx: ReleaseContext, sha: str, reason: str | None) -> None:
    """Commit a staged resolution as the pick of ``sha`` (author, message and ``-x`` kept)."""
    fields = ctx.repo.out("show", "-s", "--format=%an%x1f%ae%x1f%aI%x1f%B", sha).split("\x1f", 3)
    name, email, date, body = fields
    message = body.rstrip() + f"\n\n(cherry picked from commit {sha})\n"
    if reason:
        message += f"{REASON_TRAILER}: {reason}\n"
    ctx.repo.run(
        "commit",
        "--quiet",
        "-F",
        "-",
        f"--author={name} <{email}>",
        stdin=message,
        env={"GIT_AUTHOR_DATE": date},
        mutating=True,
    )


def abort_pick(ctx: ReleaseContext, *, say: Callable[[str], None] = print) -> str:
    with repo_lock(ctx.repo.git_dir, "pick --abort", notify=say):
        picker = _Picker(ctx, say)
        data = _saved(picker.state)
        if not data:
            raise RefusedError("no pick in progress; nothing to abort")
        branch = data["branch"]
        if ctx.repo.current_branch() != branch:
            raise RefusedError(f"the pick in progress is on {branch}; git switch {branch} first")
        if data["status"] == "running":
            picker.recover(data)
        if ctx.repo.cherry_pick_head() or ctx.repo.sequencer_active():
            ctx.repo.run("cherry-pick", "--quit", mutating=True)
        ctx.repo.run("reset", "--hard", "--quiet", data["orig_head"], mutating=True)
        picker.state.clear()
        return f"aborted: {branch} is back at {short(data['orig_head'])}"


def read_picks_file(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.exists() else None

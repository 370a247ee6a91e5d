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
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from release.core.commits import REASON_TRAILER, pr_number, subject_parser, with_pick_line
from release.core.config import PICK_REASONS
from release.flows.context import ReleaseContext
from release.errors import ConflictError, RefusedError, UsageError
from release.adapters.git import GitRead, short
from release.adapters.lock import StateFile, process_group_alive, repo_lock
from release.core.plan import Plan, Step

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
_COMMENT = re.compile(r"(^|\s)#(\s.*)?$")  # "#" then a space (or the end): a comment
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
            text = (_COMMENT.sub("", line) if "#" in line else line).strip()
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
    """What is already on the release branch, computed once.

    A main commit is there when a ``-x`` line on the branch names it, or when ``git cherry``
    finds a branch commit with the same patch. ``git cherry`` diffs every commit on both
    sides, so it is asked only when it could say yes: git matches patches only between
    commits that change the same files, so the files each commit changes (a tree diff,
    no file contents) are compared first. ``tip``, the branch's commit when the caller
    knows it, says at once that nothing is on a branch still at the merge-base.

    The reads are started together (:meth:`prefetch`) and run side by side.
    """

    def __init__(self, ctx: ReleaseContext, branch: str, main: str, tip: str | None = None) -> None:
        self.ctx = ctx
        self.branch = branch
        self.main = main
        base = ctx.repo.merge_base(branch, main)
        if base is None:
            raise RefusedError(f"{branch} shares no history with {ctx.config.main_branch}")
        self.base = base
        self._order: dict[str, int] | None = None
        self._cherry: set[str] | None = set() if tip == base else None
        self._branch_files: set[frozenset[str]] | None = None
        self._picked: set[str] | None = None
        self._pending: dict[str, GitRead] = {}
        self._asked: dict[str, frozenset[str]] = {}  # what the pending per-commit reads cover

    def moved(self) -> None:
        """The branch has new commits: forget what was read of it (main and the merge-base
        stay: the branch only gained commits)."""
        self._cherry = self._branch_files = self._picked = None
        for what in ("picked", "files", "diff"):
            self._pending.pop(what, None)

    def _command(self, what: str) -> tuple[str, ...]:
        if what == "order":  # main's commits since the branch point, in main's order
            return "rev-list", "--reverse", "--topo-order", self.main, f"^{self.base}"
        if what == "picked":
            return "log", "--format=%B", f"{self.base}..{self.branch}", "--"
        # the files changed by git cherry's other side: the branch's own non-merge commits
        return (
            "log", *_TREE_DIFF, "--no-merges", f"--format={_MARK}", "--end-of-options",
            self.branch, f"^{self.main}", "--",
        )  # fmt: skip

    def prefetch(self, shas: Iterable[str] = ()) -> None:
        """Start the reads that deciding what is on the branch takes, and (for ``shas``,
        full shas asked for) what the commits are."""
        known = {
            "order": self._order is not None,
            "picked": self._picked is not None,
            "files": self._branch_files is not None or self._cherry is not None,
        }
        for what, done in known.items():
            if not done and what not in self._pending:
                self._pending[what] = self.ctx.repo.start(*self._command(what))
        shas = list(dict.fromkeys(shas))
        if shas and "about" not in self._pending:
            self._pending["about"] = self._about(shas)

    def _read(self, what: str) -> str:
        pending = self._pending.pop(what, None)
        return pending.out() if pending else self.ctx.repo.out(*self._command(what))

    def _per_commit(self, what: str, shas: Sequence[str], start: Callable[[], GitRead]) -> str:
        """A per-commit read: the one started early if it covers ``shas`` (and worked),
        else one started now."""
        pending = self._pending.pop(what, None)
        if pending is not None and self._asked[what].issuperset(shas):
            result = pending.result()
            if result.ok:
                return result.stdout
        return start().out()

    def _about(self, shas: Sequence[str]) -> GitRead:
        self._asked["about"] = frozenset(shas)
        return self.ctx.repo.start(
            "log", "--no-walk=unsorted", "--stdin", "--format=%H%x1f%P%x1f%s",
            stdin="".join(f"{sha}\n" for sha in shas),
        )  # fmt: skip

    def about(self, shas: Sequence[str]) -> dict[str, tuple[int, str]]:
        """Commit -> (number of parents, subject), for commits that exist."""
        if not shas:
            return {}
        text = self._per_commit("about", shas, lambda: self._about(shas))
        about: dict[str, tuple[int, str]] = {}
        for line in text.split("\n") if text else ():
            sha, parent_list, subject = line.split("\x1f", 2)
            about[sha] = (len(parent_list.split()), subject)
        return about

    @property
    def main_order(self) -> dict[str, int]:
        """Main's commits since the branch point -> their position in main's order."""
        if self._order is None:
            self._order = {sha: i for i, sha in enumerate(self._read("order").split())}
        return self._order

    @property
    def picked_from(self) -> set[str]:
        """Main commits named by ``-x`` trailers on the branch."""
        if self._picked is None:
            self._picked = set(_PICKED_FROM.findall(self._read("picked")))
        return self._picked

    @property
    def patch_equivalent(self) -> set[str]:
        """Main commits whose patch is already on the branch (``git cherry``)."""
        if self._cherry is None:
            text = self.ctx.repo.out("cherry", self.branch, self.main, self.base)
            self._cherry = {line[2:].strip() for line in text.splitlines() if line.startswith("- ")}
        return self._cherry

    def _same_patch(self, shas: Sequence[str]) -> set[str]:
        """Those of ``shas`` (main commits) whose patch ``git cherry`` finds on the branch."""
        if not shas:
            return set()
        if self._cherry is None:
            if self._branch_files is None:
                text = self._read("files")
                self._branch_files = set(_files_changed(text, by_sha=False).values())
            if not self._branch_files:
                return set()
            text = self._per_commit("diff", shas, lambda: self._diff_tree(shas))
            files = _files_changed(text, by_sha=True)  # no line: nothing changed
            if all(files.get(sha, frozenset()) not in self._branch_files for sha in shas):
                return set()
        return self.patch_equivalent.intersection(shas)

    def _diff_tree(self, shas: Sequence[str]) -> GitRead:
        self._asked["diff"] = frozenset(shas)
        return self.ctx.repo.start(
            "diff-tree", "--stdin", *_TREE_DIFF, stdin="".join(f"{sha}\n" for sha in shas)
        )

    def prefetch_files(self, shas: Iterable[str]) -> None:
        """Start reading the files that these commits change, for those no ``-x`` line names
        (once the ``-x`` lines are read: that read is quick)."""
        if self._cherry is not None or "diff" in self._pending:
            return
        asked = [sha for sha in dict.fromkeys(shas) if sha not in self.picked_from]
        if asked:
            self._pending["diff"] = self._diff_tree(asked)

    def already_there(
        self, shas: Iterable[str], merges: Container[str] = ()
    ) -> dict[str, str | None]:
        """For each main commit, why it is already on the branch (``None``: it is not).

        ``merges``: those known to be merges, which git cherry never matches."""
        shas = list(dict.fromkeys(shas))
        same = self._same_patch(
            [sha for sha in shas if sha not in self.picked_from and sha not in merges]
        )
        why: dict[str, str | None] = {}
        for sha in shas:
            if sha in self.picked_from:
                why[sha] = "already on the branch (cherry-picked)"
            elif sha in same:
                why[sha] = "already on the branch (same patch)"
            else:
                why[sha] = None
        return why


# Each commit's tree diff, without file contents: every file changed (no rename pairing).
_TREE_DIFF = ("-z", "--raw", "-r", "--no-renames", "--root")
_MARK = "%x1e"
_GITLINK = "160000"


def _files_changed(text: str, *, by_sha: bool) -> dict[str, frozenset[str]]:
    """Commit -> the files it changes, from ``-z --raw`` output; commits start with their
    sha (``git diff-tree --stdin``) or with :data:`_MARK` (``git log``, keyed by count).

    The sets are what git's patch ids hash first, made coarser so that two commits git
    could match always have the same set: whitespace is dropped from file names (as git
    does), each file counts once, submodules not at all.
    """
    out: dict[str, set[str]] = {}
    current: set[str] = set()
    tokens = text.split("\0")
    index = 0
    while index < len(tokens):
        token = tokens[index].lstrip("\n")
        index += 1
        if token.startswith(":"):  # ":<mode> <mode> <sha> <sha> <status>", then its paths
            fields = token[1:].split(" ")
            paths = tokens[index : index + (2 if fields[-1][:1] in ("R", "C") else 1)]
            index += len(paths)
            if _GITLINK not in fields[:2]:
                current.update("".join(p.split()) for p in paths)
        elif by_sha and token:
            current = out.setdefault(token, set())
        elif token == "\x1e":
            current = out.setdefault(str(len(out)), set())
    return {key: frozenset(paths) for key, paths in out.items()}


def _by_pr(text: str, wanted: set[int]) -> dict[int, list[str]]:
    """Main commits whose subject ends with ``(#N)``, for each wanted N, from
    ``git log --format=%H%x1f%s`` (a revert's own number ends its subject too:
    ``Revert "..." (#N)``)."""
    by_pr: dict[int, list[str]] = {}
    for line in text.splitlines():
        sha, _, subject = line.partition("\x1f")
        found = pr_number(subject)
        if found is not None and found[0] in wanted:
            by_pr.setdefault(found[0], []).append(sha)
    return by_pr


def _resolve(
    ctx: ReleaseContext, requests: Iterable[PickRequest], info: _Branch
) -> list[Candidate]:
    requests = list(requests)
    if not requests:
        return []
    full = [r.ref.lower() for r in requests if len(r.ref) == 40 and _SHA.match(r.ref)]
    info.prefetch(full)
    info.prefetch_files(full)
    wanted = {int(number[1]) for r in requests if (number := _PR.match(r.ref))}
    pr_log = ctx.repo.start("log", "--format=%H%x1f%s", info.main, "--") if wanted else None
    order = info.main_order
    by_pr = _by_pr(pr_log.out(), wanted) if pr_log else {}
    # Full shas of main's commits are looked up here; anything else is asked of git, at once.
    asked = list(
        dict.fromkeys(
            r.ref
            for r in requests
            if _SHA.match(r.ref) and not (len(r.ref) == 40 and r.ref.lower() in order)
        )
    )
    answers = dict(zip(asked, ctx.repo.revs(asked), strict=True))
    resolved: list[tuple[PickRequest, str]] = []
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
            sha = None
            if _SHA.match(request.ref):
                ref = request.ref.lower()
                sha = ref if len(ref) == 40 and ref in order else answers[request.ref]
            if sha is None:
                raise UsageError(f"{request.ref!r} is not a commit in this repository")
            resolved.append((request, sha))
    about = info.about(list(dict.fromkeys(sha for _, sha in resolved)))
    on_main = [sha for _, sha in resolved if sha in order]
    there = info.already_there(on_main, merges={sha for sha in on_main if about[sha][0] > 1})
    category_of = subject_parser(ctx.config.alias_map())
    before_cut: dict[str, bool] = {}
    out: list[Candidate] = []
    for request, sha in resolved:
        parents, subject = about[sha]
        category = category_of(subject)[0]
        position = order.get(sha)
        skip = None
        if position is None:
            if sha not in before_cut:
                before_cut[sha] = ctx.repo.is_ancestor(sha, info.base)
            if before_cut[sha]:
                position, skip = -1, "already on the branch (before the cut)"
            else:
                raise RefusedError(
                    f"{short(sha)} '{subject}' is not on {ctx.config.main_branch}; only merged commits are picked"
                )
        else:
            skip = there[sha]
        out.append(Candidate(request, sha, subject, category, position, parents, skip))
    return out


def read_pick_state(
    ctx: ReleaseContext, requests: list[PickRequest], allow_feature: bool
) -> tuple[PickState, _Branch]:
    branch, _ = ctx.current_release()
    tip = ctx.repo.rev("HEAD")  # the branch is checked out: its tip is HEAD
    info = _Branch(ctx, branch, ctx.main_sha(), tip)
    candidates = _resolve(ctx, requests, info)
    state = PickState(
        branch=branch,
        head=tip or ctx.repo.out("rev-parse", "HEAD").strip(),
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
            # applied cleanly but not committed: git failed for another reason (hook, identity)
            uncommitted = not unmerged and self.repo.has_staged_changes()
            self.repo.run("cherry-pick", "--quit", mutating=True)
            self.repo.run("reset", "--hard", "--quiet", "HEAD", mutating=True)
            current = queue[0]
            if uncommitted:
                data.update(queue=queue, status="running")
                self._save(data)
                reason = _last_line(result.stderr) or "git cherry-pick stopped"
                raise RefusedError(
                    f"git could not commit the pick of {short(current['sha'])} "
                    f"'{current['subject']}': {reason}; {data['branch']} is at "
                    f"{short(self.repo.out('rev-parse', 'HEAD'))}, before that commit "
                    "(fix the cause, then re-run, or release pick --abort)"
                )
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


def _confirm(info: _Branch, shas: Iterable[str]) -> None:
    info.moved()
    missing = [sha for sha, why in info.already_there(shas).items() if why is None]
    if missing:
        raise RefusedError(
            f"after picking, {', '.join(short(s) for s in missing)} is not on {info.branch}; "
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
        state, info = read_pick_state(ctx, requests, allow_feature)
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
            _confirm(info, [i["sha"] for i in queue if not _became_empty(report, i)])
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
            there = info.already_there(i["sha"] for i in data["queue"])
            data["queue"] = [i for i in data["queue"] if there[i["sha"]] is None]
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
        if info.already_there([sha])[sha] is None:
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
        wanted = with_pick_line(wanted, sha).rstrip()
    if reason and f"{REASON_TRAILER}: {reason}" not in wanted:
        wanted += f"\n{REASON_TRAILER}: {reason}"
    if wanted != message.rstrip():
        ctx.repo.run(
            "commit",
            "--amend",
            "--quiet",
            "--no-verify",
            "--cleanup=whitespace",
            "-F",
            "-",
            stdin=wanted + "\n",
            mutating=True,
        )


def _commit_resolution(ctx: ReleaseContext, sha: str, reason: str | None) -> None:
    """Commit a staged resolution as the pick of ``sha`` (author, message and ``-x`` kept),
    the message as ``git cherry-pick -x`` writes it."""
    fields = ctx.repo.out("show", "-s", "--format=%an%x1f%ae%x1f%aI%x1f%B", sha).split("\x1f", 3)
    name, email, date, body = fields
    message = with_pick_line(body, sha)
    if reason:
        message += f"{REASON_TRAILER}: {reason}\n"
    ctx.repo.run(
        "commit",
        "--quiet",
        "--no-verify",
        "--cleanup=whitespace",
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


def _last_line(text: str) -> str:
    lines = [
        line.strip()
        for line in text.strip().splitlines()
        if line.strip() and not line.startswith("hint:")
    ]
    return lines[-1] if lines else ""

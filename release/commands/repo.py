"""The git side of a release: ``status``, ``cut``, ``pick`` and ``notes``."""

from __future__ import annotations

import enum
import sys
from dataclasses import dataclass
from pathlib import Path

from release.commands.common import context, notices, plan_report
from release.commands.outcome import Report, Run
from release.errors import UsageError

__all__ = [
    "CutRequest",
    "NotesFormat",
    "NotesRequest",
    "NotesView",
    "PickRequest",
    "StatusRequest",
    "cut",
    "notes",
    "pick",
    "status",
]


@dataclass(frozen=True)
class StatusRequest:
    offline: bool = False
    json: bool = False


def status(request: StatusRequest, run: Run) -> Report:
    from release.flows.status import read_status
    from release.flows.status_lines import render_status

    s = read_status(context(run), offline=request.offline)
    return Report(tuple(render_status(s)), s.to_dict())


@dataclass(frozen=True)
class CutRequest:
    version: str
    at: str | None = None
    no_switch: bool = False
    offline: bool = False
    dry_run: bool = False
    json: bool = False


def cut(request: CutRequest, run: Run) -> Report:
    from release.core.plan import StepKind
    from release.flows.cut import cut as make

    ctx = context(run)
    plan = make(
        ctx,
        request.version,
        at=request.at,
        switch=not request.no_switch,
        offline=request.offline,
        dry_run=request.dry_run,
        say=run.say,
    )
    done = [f"created {plan.info['branch']} at {plan.info['at'][:10]}"]
    done += [
        f"switched to {s.data['branch']}" if s.action is StepKind.SWITCH else s.detail
        for s in plan.steps
        if s.action in (StepKind.SWITCH, StepKind.SKIP, StepKind.BUMP_VERSION)
    ]
    outcome = plan_report(
        plan, dry_run=request.dry_run, report=None if request.dry_run else done, before=notices(ctx)
    )
    diff = tuple(plan.info.get("version_diff") or ()) if request.dry_run else ()
    return Report((*outcome.lines, *diff), outcome.data) if diff else outcome


@dataclass(frozen=True)
class PickRequest:
    commits: tuple[str, ...] = ()
    file: str | None = None
    reason: str | None = None
    allow_feature: bool = False
    repick: tuple[str, ...] = ()
    continue_: bool = False
    abort: bool = False
    dry_run: bool = False
    json: bool = False


def pick(request: PickRequest, run: Run) -> Report:
    from release.adapters.files import read_text
    from release.flows import pick as flow
    from release.flows.pick_plan import parse_requests

    ctx = context(run)
    commits = " ".join(request.commits)
    if request.continue_ or request.abort:
        if request.continue_ and request.abort:
            raise UsageError("--continue and --abort: give one of them")
        if commits or request.file or request.repick:
            raise UsageError("--continue and --abort take no commits; run them alone")
        if request.continue_:
            lines = flow.continue_pick(ctx, say=run.say)
        else:
            lines = [flow.abort_pick(ctx, say=run.say)]
        return Report(tuple(lines), {"report": list(lines)})
    picks = read_text(Path(request.file), "--file") if request.file is not None else None
    if request.file is not None and picks is None:
        raise UsageError(f"--file {request.file}: no such file")
    requests = parse_requests(commits, picks.text if picks else None, request.reason)
    again = [r.ref for r in parse_requests(" ".join(request.repick))]
    plan, report = flow.pick(
        ctx,
        requests,
        allow_feature=request.allow_feature,
        repick=again,
        dry_run=request.dry_run,
        say=run.say,
    )
    return plan_report(
        plan,
        dry_run=request.dry_run,
        report=None if request.dry_run else report,
        before=notices(ctx),
    )


class NotesFormat(enum.Enum):
    MD = "md"
    JSON = "json"


class NotesView(enum.Enum):
    RC = "rc"
    FINAL = "final"


@dataclass(frozen=True)
class NotesRequest:
    since: str | None = None
    until: str = "HEAD"
    format: NotesFormat = NotesFormat.MD
    view: NotesView = NotesView.RC
    out: str | None = None
    json: bool = False


@dataclass(frozen=True)
class NotesOutcome:
    """The notes: a document printed whole (Markdown or JSON), or written to ``--out``."""

    text_: str
    written: Path | None
    format: NotesFormat
    exit_code: int = 0

    def text(self) -> tuple[str, ...]:
        return ()

    def document(self) -> dict[str, object]:
        import json

        if self.format is NotesFormat.JSON:
            return dict(json.loads(self.text_))
        return {"markdown": self.text_}

    @property
    def whole(self) -> str | None:
        """What goes to stdout as it is (the document), when not written to a file."""
        return None if self.written else self.text_


def notes(request: NotesRequest, run: Run) -> NotesOutcome:
    from release.adapters.files import atomic_write, output_path
    from release.core.terminal_text import escaped
    from release.flows.notes_output import notes_output
    from release.flows.notes_range import default_range, given_range

    fmt = NotesFormat.JSON if request.json else request.format
    ctx = context(run)
    target = output_path(Path(request.out), "--out", tree=ctx.root) if request.out else None
    rng = (
        given_range(ctx, request.since, request.until)
        if request.since is not None
        else default_range(ctx, request.until, request.view.value)
    )
    text, guessed = notes_output(ctx, rng, fmt.value)
    for prefix, category in guessed:
        line = f"note: [{escaped(prefix)}] is no known spelling; read as {escaped(category)}"
        print(escaped(line + " (one edit away)"), file=sys.stderr, flush=True)
    if target is not None:
        atomic_write(target, text)
    return NotesOutcome(text, target, fmt)

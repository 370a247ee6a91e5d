"""The invoke collection ``release``: thin tasks that parse, call the package and print.

Exposed by the repository's root ``tasks.py`` (``inv release.cut 0.31.0``) and by the
``release`` console script (``release cut 0.31.0``) in any engine checkout.
"""

from __future__ import annotations

import json as _json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from invoke.collection import Collection
from invoke.context import Context
from invoke.exceptions import Exit
from invoke.parser.argument import Argument
from invoke.tasks import Task, task

from release.adapters.files import read_text
from release.cli.ci_tasks import bake, ci
from release.cli.console import say, show_plan
from release.cli.entry import entry
from release.cli.image_tasks import images
from release.cli.manifest_tasks import manifest, reproduce
from release.core.terminal_text import escaped
from release.errors import UsageError

__all__ = ["ns"]


def _context() -> Any:
    from release.flows.context import ReleaseContext

    return ReleaseContext(os.environ.get("RELEASE_REPO", "."))


def _print_plan(
    plan: Any, *, dry_run: bool, as_json: bool, report: list[str] | None = None
) -> None:
    if as_json:
        data = plan.to_dict()
        data["dry_run"] = dry_run
        if report is not None:
            data["report"] = report
        print(_json.dumps(data, indent=2, default=str))
        return
    if dry_run or not report:
        show_plan(plan.lines(), dry_run=dry_run)
    for line in report or []:
        say(line)


def _say_notices(ctx: Any) -> None:
    for notice in ctx.notices:
        say(f"note: {notice}")


def _made(plan: Any, done: str) -> list[str]:
    """What a tag or promote run reports: the tag made, or why nothing was (or what a
    re-run finished)."""
    if not plan.steps:
        return [plan.summary]
    return [done, "next: release push"]


@task(help={"json": "print as JSON", "offline": "do not read the remote's tags"})
@entry
def status(c: Context, json: bool = False, offline: bool = False) -> None:
    """Show the release branch, its tags, the next rc, picks done and pending, and what to run next."""
    from release.flows.status import read_status, render_status

    s = read_status(_context(), offline=offline)
    if json:
        print(s.to_json())
    else:
        for line in render_status(s):
            say(line)


@task(
    help={
        "version": "the release, X.Y.Z",
        "at": "main commit to cut at (default: tip of main)",
        "no-switch": "create the branch without switching to it",
        "offline": "do not ask the remote whether the branch or tag exists there",
        "dry-run": "print the plan, change nothing",
        "json": "print the plan as JSON",
    }
)
@entry
def cut(
    c: Context,
    version: str,
    at: str | None = None,
    no_switch: bool = False,
    offline: bool = False,
    dry_run: bool = False,
    json: bool = False,
) -> None:
    """Create the release branch (releases/vX.Y.Z) at the tip of main or --at a main commit."""
    from release.flows.cut import cut as run

    ctx = _context()
    plan = run(ctx, version, at=at, switch=not no_switch, offline=offline, dry_run=dry_run, say=say)
    _say_notices(ctx)
    report = [f"created {plan.info['branch']} at {plan.info['at'][:10]}"]
    report += [
        f"switched to {s.data['branch']}" if s.action == "switch" else s.detail
        for s in plan.steps
        if s.action in ("switch", "skip")
    ]
    _print_plan(plan, dry_run=dry_run, as_json=json, report=None if dry_run else report)


class _CommitsArgument(Argument):
    """pick's positional commits, optional once --continue, --abort or --file is given."""

    others: Sequence[Argument] = ()

    @property
    def value(self) -> Any:
        if self._value is None and any(a.got_value for a in self.others):
            return ""
        return self._value if self._value is not None else self.default

    @value.setter
    def value(self, arg: str) -> None:
        self.set_value(arg, cast=True)


class _PickTask(Task):  # type: ignore[type-arg]
    def get_arguments(self, ignore_unknown_help: bool | None = None) -> list[Argument]:
        args = super().get_arguments(ignore_unknown_help)
        by_name = {a.name: a for a in args}
        commits = by_name["commits"]
        commits.__class__ = _CommitsArgument
        commits.others = [by_name[n] for n in ("continue_", "abort", "file", "repick")]  # type: ignore[attr-defined]
        return args


@task(
    klass=_PickTask,
    help={
        "commits": "shas and/or #PR numbers: several arguments, or one separated by spaces or commas",
        "file": "a picks file: one '<sha or #PR> [reason]' per line",
        "reason": "why: regression, critical, fix-new-feature, docs or release-only",
        "allow-feature": "pick feature work too (refused by default)",
        "repick": "pick this commit (sha or #PR) even though it is likely backported already "
        "(held back by default); repeat it or separate by commas for several",
        "continue": "go on after you resolved a conflict",
        "abort": "undo the whole pick in progress",
        "dry-run": "print the plan, change nothing",
        "json": "print the plan as JSON",
    },
    positional=["commits"],
    iterable=["repick"],
)
@entry
def pick(
    c: Context,
    commits: str | None = None,
    file: str | None = None,
    reason: str | None = None,
    allow_feature: bool = False,
    repick: list[str] | None = None,
    continue_: bool = False,
    abort: bool = False,
    dry_run: bool = False,
    json: bool = False,
) -> None:
    """Cherry-pick main commits (-x) onto the release branch, in main's order, skipping what is there."""
    from release.flows import pick as flow
    from release.flows.pick_plan import parse_requests

    ctx = _context()
    if continue_ or abort:
        if commits or file or repick:
            raise UsageError("--continue and --abort take no commits; run them alone")
        lines = flow.continue_pick(ctx, say=say) if continue_ else [flow.abort_pick(ctx, say=say)]
        for line in lines:
            say(line)
        return
    picks = read_text(Path(file), "--file") if file is not None else None
    if file is not None and picks is None:
        raise UsageError(f"--file {file}: no such file")
    requests = parse_requests(commits or "", picks.text if picks else None, reason)
    again = [r.ref for r in parse_requests(" ".join(repick or ()))]
    plan, report = flow.pick(
        ctx, requests, allow_feature=allow_feature, repick=again, dry_run=dry_run, say=say
    )
    _say_notices(ctx)
    _print_plan(plan, dry_run=dry_run, as_json=json, report=None if dry_run else report)


@task(
    help={
        "version": "rc or post version to tag (default: the next rc)",
        "sign": "sign the tag (GPG or SSH, as git config says)",
        "offline": "use local tags only to choose the next rc",
        "dry-run": "print the plan and the tag message, change nothing",
        "json": "print the plan as JSON",
    },
)
@entry
def tag(
    c: Context,
    version: str | None = None,
    sign: bool = False,
    offline: bool = False,
    dry_run: bool = False,
    json: bool = False,
) -> None:
    """Tag the next rc (vX.Y.ZrcN) on the release branch tip, notes in its message and CHANGELOG.md."""
    from release.flows.tagging import tag as run

    plan = run(_context(), version, sign=sign, offline=offline, dry_run=dry_run, say=say)
    _print_plan(
        plan,
        dry_run=dry_run,
        as_json=json,
        report=None if dry_run else _made(plan, f"tagged {plan.info.get('tag')}"),
    )
    if dry_run and not json and "message" in plan.info:
        say("")
        say(plan.info["message"])


@task(
    help={
        "version": "the final X.Y.Z (default: the release of the current branch)",
        "sign": "sign the tag",
        "offline": "use local tags only",
        "dry-run": "print the plan, change nothing",
        "json": "print the plan as JSON",
    },
)
@entry
def promote(
    c: Context,
    version: str | None = None,
    sign: bool = False,
    offline: bool = False,
    dry_run: bool = False,
    json: bool = False,
) -> None:
    """Tag the final vX.Y.Z on the last rc's commit (no rebuild); fold the rc changelog sections."""
    from release.flows.tagging import promote as run

    ctx = _context()
    plan = run(ctx, version, sign=sign, offline=offline, dry_run=dry_run, say=say)
    report = (
        None
        if dry_run
        else _made(plan, f"tagged {plan.info.get('tag')} on {plan.info.get('from_rc')}")
    )
    then = [line for line in report or [] if line.startswith("next: ")]
    _print_plan(
        plan,
        dry_run=dry_run,
        as_json=json,
        report=None if report is None else [line for line in report if line not in then],
    )
    if ctx.config.matrix is not None and not dry_run and plan.info.get("from_rc"):
        _promote_images(ctx, plan.info["tag"], plan.info["version"], plan.info["from_rc"])
    for line in then if not json else ():
        say(line)


def _promote_images(ctx: Any, final: str, version: str, rc: str) -> None:
    """The rc's images as the final's, by id (see :mod:`release.images.promote`); the git
    side stands whatever happens here, and a re-run of promote does this again."""
    from release.adapters.engine import ContainerEngine
    from release.errors import EngineError, GitError, ReleaseError
    from release.flows.manifest_store import published
    from release.images.promote import promote_images

    commit = ctx.repo.rev(rc)
    if commit is None:
        raise GitError(f"{rc} does not name a commit here")
    if published(ctx.repo, rc, commit) is None:
        say(f"images: not promoted: {rc} has no manifest (no images were recorded for it)")
        return
    say(f"images of {rc} as {final}, by image id (no rebuild):")
    try:
        promote_images(
            ctx,
            ContainerEngine.detect(),
            final_tag=final,
            final_version=version,
            rc_tag=rc,
            commit=commit,
            say=say,
        )
    except (EngineError, ReleaseError) as err:
        say(f"images not promoted: {err.one_line()}")
        say("  (re-run release promote where the rc's images and manifest are)")
        raise Exit(code=err.exit_code) from None


@task(help={"dry-run": "print the refs that would be pushed", "json": "print the plan as JSON"})
@entry
def push(c: Context, dry_run: bool = False, json: bool = False) -> None:
    """Push the release branch and its new tags in one atomic push."""
    from release.flows.push import push as run

    plan = run(_context(), dry_run=dry_run, say=say)
    report = (
        None
        if dry_run
        else (
            [f"pushed {len(plan.steps)} ref(s) to {plan.info['remote']}"]
            if plan.steps
            else [plan.summary]
        )
    )
    _print_plan(plan, dry_run=dry_run, as_json=json, report=report)


@task(
    help={
        "since": "start (exclusive); default: the previous rc or final",
        "until": "end (inclusive), default HEAD",
        "format": "md or json",
        "view": "rc (since the previous rc) or final (since the last final)",
        "output": "write to this file instead of stdout",
    }
)
@entry
def notes(
    c: Context,
    since: str | None = None,
    until: str = "HEAD",
    format: str = "md",
    view: str = "rc",
    output: str | None = None,
) -> None:
    """Release notes grouped by category, PRs linked, authors credited, reverts cancelled."""
    from release.adapters.files import atomic_write, output_path
    from release.flows.history import NotesRange, default_range
    from release.flows.notes_output import notes_output

    if format not in ("md", "json"):
        raise UsageError(f"--format {format!r}: use md or json")
    if view not in ("rc", "final"):
        raise UsageError(f"--view {view!r}: use rc or final")
    ctx = _context()
    target = output_path(Path(output), "--output", tree=ctx.root) if output else None
    rng = NotesRange(since, until) if since is not None else default_range(ctx, until, view)
    text, guessed = notes_output(ctx, rng, format)
    for prefix, category in guessed:
        line = f"note: [{escaped(prefix)}] is no known spelling; read as {escaped(category)}"
        say(line + " (one edit away)", stream=sys.stderr)
    if target is not None:
        atomic_write(target, text)
    else:  # a document to a pipe or a file; to a terminal, with its controls escaped
        sys.stdout.write(escaped(text, keep_newlines=True) if sys.stdout.isatty() else text)


@task(
    help={
        "keep": "keep the sandbox directory and the image tags it made; print where",
        "workdir": "make the sandbox here",
    }
)
@entry
def rehearse(c: Context, keep: bool = False, workdir: str | None = None) -> None:
    """The v0.31.0rc1 story on the bundled sample engine, in a sandbox: picks, rcs, images,
    a tester's reproduce, the final, a drift on purpose (image steps need a Docker Engine)."""
    from release.sample.rehearse import rehearse as run

    ok = run(keep=keep, workdir=workdir, say=say)
    if not ok:
        raise Exit(code=1)


ns = Collection(
    "release", status, cut, pick, tag, promote, push, notes, manifest, reproduce, rehearse, bake, ci
)
ns.add_collection(images)

"""Tags and what leaves the machine: ``tag``, ``promote`` (git, then the rc's images) and
``push``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from release.commands.common import context, plan_report
from release.commands.outcome import Report, Run

if TYPE_CHECKING:
    from release.core.plan import Plan
    from release.flows.context import ReleaseContext

__all__ = [
    "PromoteRequest",
    "PushRequest",
    "TagRequest",
    "promote",
    "promote_rc_images",
    "push",
    "tag",
]


def _made(plan: Plan, done: str) -> list[str]:
    """What a tag or promote run reports: the tag made, or why nothing was (or what a
    re-run finished)."""
    if not plan.steps:
        return [plan.summary]
    return [done, "next: release push"]


@dataclass(frozen=True)
class TagRequest:
    version: str | None = None
    sign: bool = False
    offline: bool = False
    dry_run: bool = False
    json: bool = False


def tag(request: TagRequest, run: Run) -> Report:
    from release.flows.tagging import tag as make

    plan = make(
        context(run),
        request.version,
        sign=request.sign,
        offline=request.offline,
        dry_run=request.dry_run,
        say=run.say,
    )
    done = None if request.dry_run else _made(plan, f"tagged {plan.info.get('tag')}")
    outcome = plan_report(plan, dry_run=request.dry_run, report=done)
    if request.dry_run and "message" in plan.info:
        return Report((*outcome.lines, "", plan.info["message"]), outcome.data)
    return outcome


@dataclass(frozen=True)
class PromoteRequest:
    version: str | None = None
    sign: bool = False
    offline: bool = False
    dry_run: bool = False
    json: bool = False


def promote(request: PromoteRequest, run: Run) -> Report:
    """The final tag on the last rc's commit; then, where the rc has a manifest, the rc's
    images given the final's tags by image id. The git side stands whatever the image side
    does, and a re-run of promote does the image side again."""
    from release.flows.tagging import promote as make

    ctx = context(run)
    plan = make(
        ctx,
        request.version,
        sign=request.sign,
        offline=request.offline,
        dry_run=request.dry_run,
        say=run.say,
    )
    rc = plan.info.get("from_rc")
    done = None if request.dry_run else _made(plan, f"tagged {plan.info.get('tag')} on {rc}")
    then = [line for line in done or [] if line.startswith("next: ")]
    outcome = plan_report(
        plan,
        dry_run=request.dry_run,
        report=None if done is None else [line for line in done if line not in then],
    )
    if ctx.config.matrix is not None and not request.dry_run and rc:
        for line in outcome.lines:  # said before the images' progress, in order
            run.say(line)
        images = promote_rc_images(ctx, plan.info["tag"], plan.info["version"], rc, run)
        if images is not None:
            return Report(tuple(then), outcome.data, images)
        return Report(tuple(then), outcome.data)
    return Report((*outcome.lines, *then), outcome.data)


def promote_rc_images(
    ctx: ReleaseContext, final: str, version: str, rc: str, run: Run
) -> int | None:
    """The rc's images as the final's: by digest in the registry where the rc was published
    (:mod:`release.images.promote_registry`), else by image id here
    (:mod:`release.images.promote`); an exit code when they could not be (the git side
    stands), else None."""
    from release.adapters.engine import ContainerEngine
    from release.errors import EngineError, ReleaseError
    from release.flows.manifest_store import published_manifest
    from release.images.promote import promote_images
    from release.images.promote_registry import is_published, promote_in_registry

    commit = ctx.repo.rev(rc)
    found = None if commit is None else published_manifest(ctx.repo, rc, commit)
    manifest = None if found is None else found.document
    if commit is None or manifest is None:
        run.say(f"images: not promoted: {rc} has no manifest (no images were recorded for it)")
        return None
    if is_published(manifest):
        run.say(f"images of {rc} as {final}, by digest in the registry (no pull, no rebuild):")
        try:
            promote_in_registry(
                ctx, manifest, final_tag=final, final_version=version, commit=commit, say=run.say
            )
        except (EngineError, ReleaseError) as err:
            run.say(f"images not promoted: {err.one_line()}")
            run.say("  (re-run release promote: what is in the registry already is kept)")
            return err.exit_code
        return None
    run.say(f"images of {rc} as {final}, by image id (no rebuild):")
    try:
        promote_images(
            ctx,
            ContainerEngine.detect(),
            final_tag=final,
            final_version=version,
            rc_tag=rc,
            commit=commit,
            say=run.say,
        )
    except (EngineError, ReleaseError) as err:
        run.say(f"images not promoted: {err.one_line()}")
        run.say("  (re-run release promote where the rc's images and manifest are)")
        return err.exit_code
    return None


@dataclass(frozen=True)
class PushRequest:
    dry_run: bool = False
    json: bool = False


def push(request: PushRequest, run: Run) -> Report:
    from release.flows.push import push as send

    plan = send(context(run), dry_run=request.dry_run, say=run.say)
    done = (
        None
        if request.dry_run
        else (
            [f"pushed {len(plan.steps)} ref(s) to {plan.info['remote']}"]
            if plan.steps
            else [plan.summary]
        )
    )
    return plan_report(plan, dry_run=request.dry_run, report=done)

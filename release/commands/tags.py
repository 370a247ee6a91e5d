"""Tags and what leaves the machine: ``tag``, ``promote`` (git, then the rc's images) and
``push``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from release.commands.common import context
from release.commands.outcome import Run
from release.commands.plan_outcome import PromoteOutcome, PushOutcome, TagOutcome

if TYPE_CHECKING:
    from release.core.plan import Plan, Step
    from release.flows.context import ReleaseContext
    from release.flows.tag_apply import ImagesFor, TagPlanInfo
    from release.images.image_signing import ImageSigning

__all__ = [
    "PromoteRequest",
    "PushRequest",
    "TagRequest",
    "promote",
    "push",
    "rc_images",
    "tag",
]


def _made(plan: Plan[TagPlanInfo], done: str) -> tuple[str, ...]:
    """What a tag run reports: the tag made, or why nothing was."""
    if not plan.steps:
        return (plan.summary,)
    return (done, "next: release push")


@dataclass(frozen=True)
class TagRequest:
    version: str | None = None
    sign: bool = False
    offline: bool = False
    dry_run: bool = False
    json: bool = False


def tag(request: TagRequest, run: Run) -> TagOutcome:
    from release.flows.tagging import tag as make

    plan = make(
        context(run),
        request.version,
        sign=request.sign,
        offline=request.offline,
        dry_run=request.dry_run,
        say=run.say,
    )
    done = None if request.dry_run else _made(plan, f"tagged {plan.info.tag}")
    after: tuple[str, ...] = ()
    if request.dry_run and plan.info.message is not None:
        after = (*(plan.info.version_diff or ()), "", plan.info.message)
    return TagOutcome(plan, request.dry_run, report=done, after=after)


@dataclass(frozen=True)
class PromoteRequest:
    version: str | None = None
    sign: bool = False
    offline: bool = False
    no_images: bool = False
    dry_run: bool = False
    json: bool = False


def promote(request: PromoteRequest, run: Run) -> PromoteOutcome:
    """The final tag on the last rc's commit, its changelog, and, where the rc has a
    manifest, the rc's images given the final's tags: one transaction. Whatever the image
    side would refuse is found before git changes; a run stopped anywhere is finished by
    the next (:mod:`release.flows.tag_apply`), which says when the final is tagged."""
    from release.flows.tagging import promote as make

    ctx = context(run)
    images = None if request.no_images or ctx.config.matrix is None else rc_images(ctx, run)
    plan = make(
        ctx,
        request.version,
        sign=request.sign,
        offline=request.offline,
        dry_run=request.dry_run,
        say=run.say,
        images=images,
    )
    if request.dry_run:
        return PromoteOutcome(plan, True)
    finished = plan.info.finished
    if not plan.steps and not finished:
        return PromoteOutcome(plan, False, report=(plan.summary,))
    done = [plan.summary] if finished else []
    if request.no_images and ctx.config.matrix is not None:
        done.append(
            f"images: not promoted (--no-images): release images.promote --tag "
            f"{plan.info.tag}, in a checkout of it, gives them"
        )
    return PromoteOutcome(plan, False, report=(*done, "next: release push"))


@dataclass(frozen=True)
class NoImages:
    """An image side with nothing to do, and why (said where the images would be)."""

    why: str
    steps: tuple[Step, ...] = ()

    def apply(self, say: Callable[[str], None]) -> None:
        say(f"images: not promoted: {self.why}")


def rc_images(ctx: ReleaseContext, run: Run, signing: ImageSigning | None = None) -> ImagesFor:
    """Promote's image side for a final and its rc: by digest in the registry where the rc
    was published (:mod:`release.images.promote_registry`; the final's tags signed where
    ``signing`` is given), else by image id in this engine (:mod:`release.images.promote`);
    None where the rc has no manifest. Made only when nothing refuses: what it reads, it
    reads before the first change."""
    from release.flows.tag_apply import ImageSide, Promotion

    def side(promotion: Promotion) -> ImageSide | None:
        from release.adapters.engine import ContainerEngine
        from release.errors import EngineError
        from release.flows.manifest_store import published_manifest
        from release.images.promote import check_engine_promotion
        from release.images.promote_registry import check_registry_promotion, is_published

        found = published_manifest(ctx.repo, promotion.rc, promotion.commit)
        if found is None:
            return NoImages(f"{promotion.rc} has no manifest (no images were recorded for it)")
        manifest = found.manifest
        final, version, commit = promotion.final, promotion.version, promotion.commit
        try:
            if is_published(manifest):
                return check_registry_promotion(
                    ctx,
                    manifest,
                    final_tag=final,
                    final_version=version,
                    commit=commit,
                    signing=signing,
                )
            return check_engine_promotion(
                ctx,
                ContainerEngine.detect(),
                manifest,
                final_tag=final,
                final_version=version,
                commit=commit,
            )
        except EngineError as err:  # skopeo, the registry or docker cannot be had here
            err.hint = err.hint or (
                "or release promote --no-images: the final's tag and changelog now, its "
                "images later with release images.promote"
            )
            raise

    return side


@dataclass(frozen=True)
class PushRequest:
    dry_run: bool = False
    json: bool = False


def push(request: PushRequest, run: Run) -> PushOutcome:
    from release.flows.push import push as send

    plan = send(context(run), dry_run=request.dry_run, say=run.say)
    done = (
        None
        if request.dry_run
        else (
            (f"pushed {len(plan.steps)} ref(s) to {plan.info.remote}",)
            if plan.steps
            else (plan.summary,)
        )
    )
    return PushOutcome(plan, request.dry_run, report=done)

"""``images.promote``: a final tag's images, made in CI when the final tag is pushed: the
last rc's images, published to the release registry, given the final's tags there by
digest (no pull, no rebuild), and the final's manifest recorded as its note (and, with
``--push``, sent to the remote). What ``release promote`` does on the image side, for a
checkout of the final tag with no release branch: the promote job of ``release ci``.

The rc is the newest rc of the final's version on the final's commit (``release promote``
tags the final on the last rc's commit); its manifest is read here, else fetched from the
remote. A final with no such rc, or an rc with no manifest, is refused: nothing says which
images the final is.
"""

from __future__ import annotations

from dataclasses import dataclass

from release.commands.common import context
from release.commands.outcome import JSONValue, OutcomeDefaults, Run
from release.errors import ConfigError, ExitCode, RefusedError, UsageError

__all__ = ["ImagePromoteOutcome", "ImagePromoteRequest", "promote"]


@dataclass(frozen=True)
class ImagePromoteRequest:
    tag: str | None = None
    push: bool = False
    sign_with: str | None = None
    signatures: str | None = None
    json: bool = False


@dataclass(frozen=True)
class ImagePromoteOutcome(OutcomeDefaults):
    """``images.promote``: the final given its rc's images; ``pushed``: whether its
    manifest went to ``remote`` (False: it was there already; None: ``--push`` not given)."""

    tag: str
    rc: str
    signed_by: str | None
    remote: str
    pushed: bool | None = None

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.OK

    def text(self) -> tuple[str, ...]:
        from release.adapters.git_notes import notes_ref

        if self.pushed is None:
            return ()
        return (
            f"{'pushed' if self.pushed else 'already on'} {self.remote}: {notes_ref(self.tag)}",
        )

    def document(self) -> dict[str, JSONValue]:
        return {
            "tag": self.tag,
            "from": self.rc,
            "pushed": bool(self.pushed),
            "signed_by": self.signed_by,
        }


def promote(request: ImagePromoteRequest, run: Run) -> ImagePromoteOutcome:
    from release.adapters.git_notes import fetch_note, notes_ref
    from release.commands.tags import rc_images
    from release.core.terminal_text import escaped
    from release.flows.manifest_store import published_manifest
    from release.flows.tag_apply import Promotion
    from release.images.image_signing import image_signing
    from release.images.manifest import push_manifest

    signing = image_signing(request.sign_with, request.signatures)  # before anything
    ctx = context(run)
    if ctx.config.matrix is None:
        raise ConfigError("[tool.release.images] is missing: no images to promote")
    tags = ctx.tags(offline=True)
    if request.tag:
        final = next((t for t in tags if t.name == request.tag), None)
        if final is None:
            raise UsageError(
                f"{escaped(request.tag)} is not a release tag here "
                f"(tag = {escaped(ctx.config.tag.template)}; fetch the tags first)"
            )
    else:
        head = ctx.repo.head()
        at_head = [t for t in tags if t.commit == head and t.version.is_final]
        if not at_head:
            raise UsageError("no final tag at HEAD: pass --tag or check out the final's tag")
        final = at_head[-1]
    if not final.version.is_final:
        raise UsageError(
            f"{final.name} is not a final: an rc or a post release is built and published "
            "(release images.publish), not promoted"
        )
    head = ctx.repo.head()
    if head != final.commit:
        raise RefusedError(
            f"HEAD ({head[:12]}) is not {final.name}'s commit ({final.commit[:12]}): the "
            f"images and their configuration are read from a checkout of the final; "
            f"git checkout {final.name} first (nothing was promoted)"
        )
    rcs = [t for t in ctx.release_tags(final.version, tags) if t.version.is_rc]
    on_commit = [t for t in rcs if t.commit == final.commit]
    if not on_commit:
        last = f" (the last is {rcs[-1].name}, on another commit)" if rcs else ""
        raise RefusedError(
            f"no rc of {final.version} is on {final.name}'s commit{last}: a final's images are "
            "its last rc's, and release promote tags the final on that rc's commit"
        )
    rc = on_commit[-1]
    manifest = published_manifest(ctx.repo, rc.name, rc.commit)
    if manifest is None and fetch_note(ctx.repo, ctx.config.remote, rc.name):
        manifest = published_manifest(ctx.repo, rc.name, rc.commit)
    if manifest is None:
        raise RefusedError(
            f"{rc.name} has no manifest ({notes_ref(rc.name)}, here or on "
            f"{ctx.config.remote}): nothing says which images it is, so none are promoted"
        )
    made = rc_images(ctx, run, signing)
    side = made(Promotion(final.name, str(final.version), rc.name, rc.commit))
    if side is not None:
        side.apply(run.say)
    pushed = None
    if request.push:
        pushed = push_manifest(ctx.repo, ctx.config.remote, final.name, final.commit)
    signed_by = signing.key if signing else None
    return ImagePromoteOutcome(final.name, rc.name, signed_by, ctx.config.remote, pushed)

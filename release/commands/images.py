"""The image side: ``images.*``, ``manifest`` and ``reproduce``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from release.commands.common import context, ids, opened, registry_option
from release.commands.image_outcomes import (
    BuildOutcome,
    MatrixOutcome,
    PublishOutcome,
    PullOutcome,
    ReproduceOutcome,
    SmokeOutcome,
    SnapshotOutcome,
    TransferOutcome,
)
from release.commands.outcome import JSONValue, Run
from release.errors import UsageError

if TYPE_CHECKING:
    from release.images.workspace import Workspace

__all__ = [
    "BuildRequest",
    "MatrixRequest",
    "PublishRequest",
    "ReproduceRequest",
    "SmokeRequest",
    "SnapshotRequest",
    "TransferRequest",
    "build",
    "matrix",
    "publish",
    "pull",
    "push",
    "reproduce",
    "smoke",
    "snapshot",
]


def _workspace(
    run: Run,
    version: str | None,
    allow_dirty: bool = False,
    allow_shallow: bool = False,
    *,
    inspect: bool = False,
) -> Workspace:
    from release.images.workspace import Workspace

    return Workspace.open(
        opened(run),
        version,
        allow_dirty=allow_dirty,
        allow_shallow=allow_shallow,
        inspect=inspect,
    )


@dataclass(frozen=True)
class BuildRequest:
    variant: str | None = None
    jobs: int = 1
    keep_going: bool = False
    version: str | None = None
    force: bool = False
    no_cache: bool = False
    cache_from: str | None = None
    allow_dirty: bool = False
    allow_shallow: bool = False
    json: bool = False


def build(request: BuildRequest, run: Run) -> BuildOutcome:
    from release.images import workspace
    from release.images.build_cache import cache_registry

    if request.jobs < 1:
        raise UsageError(f"--jobs {request.jobs}: give 1 or more")
    cache = cache_registry(request.cache_from)
    ws = _workspace(run, request.version, request.allow_dirty, request.allow_shallow, inspect=True)
    results = workspace.build(
        ws,
        ids(request.variant),
        jobs=request.jobs,
        keep_going=request.keep_going,
        force=request.force,
        no_cache=request.no_cache,
        say=run.say,
        live=run.live,
        cache=cache,
    )
    return BuildOutcome(ws.source.version, tuple(results))


@dataclass(frozen=True)
class SmokeRequest:
    variant: str | None = None
    version: str | None = None
    allow_dirty: bool = False
    allow_shallow: bool = False
    json: bool = False


def smoke(request: SmokeRequest, run: Run) -> SmokeOutcome:
    from release.images import workspace

    ws = _workspace(run, request.version, request.allow_dirty, request.allow_shallow, inspect=True)
    reports = workspace.smoke(ws, ids(request.variant), say=run.say, live=run.live)
    failed = workspace.smoke_failed(reports)
    return SmokeOutcome(ws.source.version, tuple(reports), failed.one_line() if failed else None)


@dataclass(frozen=True)
class SnapshotRequest:
    variant: str | None = None
    version: str | None = None
    baseline: str | None = None
    dry_run: bool = False
    allow_dirty: bool = False
    allow_shallow: bool = False
    json: bool = False


def snapshot(request: SnapshotRequest, run: Run) -> SnapshotOutcome:
    from release.images import workspace

    ws = _workspace(
        run,
        request.version,
        request.allow_dirty,
        request.allow_shallow,
        inspect=not request.dry_run,
    )
    chosen = ids(request.variant) or list(ws.matrix.snapshot_ids())
    if request.dry_run:
        workspace.snapshot_plan(ws, chosen, say=run.say)
        return SnapshotOutcome(ws.source.version, dry_run=True, chosen=tuple(chosen))
    baseline = Path(request.baseline) if request.baseline else None
    reports = workspace.snapshot(ws, chosen, baseline=baseline, say=run.say, live=run.live)
    return SnapshotOutcome(ws.source.version, tuple(reports))


@dataclass(frozen=True)
class TransferRequest:
    variant: str | None = None
    registry: str | None = None
    version: str | None = None
    json: bool = False


def push(request: TransferRequest, run: Run) -> TransferOutcome:
    from release.images.transfer import push_images

    registry = registry_option(request.registry)
    ws = _workspace(run, request.version)
    sent = push_images(ws, ids(request.variant), registry, say=run.say)
    return TransferOutcome(tuple(sent))


@dataclass(frozen=True)
class PublishRequest:
    variant: str | None = None
    registry: str | None = None
    version: str | None = None
    from_: str | None = None
    sign_with: str | None = None
    signatures: str | None = None
    dry_run: bool = False
    json: bool = False


def publish(request: PublishRequest, run: Run) -> PublishOutcome:
    """Publish the images, or (dry) say what would be; a document per variant."""
    from release.adapters.registry import Registry
    from release.images.image_signing import image_signing
    from release.images.publish import Origin, publish_images
    from release.images.workspace import Workspace

    registry = registry_option(request.registry)
    source = registry_option(request.from_, "--from")
    signing = image_signing(request.sign_with, request.signatures)
    reg = Registry()
    origin: Origin | None = None  # this engine's images
    if source:  # images from the registry they travelled through: no engine is asked
        from release.images.publish_registry import RegistryOrigin

        ws = Workspace.open(opened(run), request.version, engine=False)
        origin = RegistryOrigin(ws, source, reg)
    else:
        ws = _workspace(run, request.version)
    done = publish_images(
        ws,
        ids(request.variant),
        registry,
        dry_run=request.dry_run,
        say=run.say,
        reg=reg,
        signing=signing,
        origin=origin,
    )
    signed_by = signing.key if signing and not request.dry_run else None
    return PublishOutcome(ws.source.version, tuple(done), request.dry_run, signed_by)


def pull(request: TransferRequest, run: Run) -> PullOutcome:
    from release.images.transfer import pull_images

    registry = registry_option(request.registry)
    ws = _workspace(run, request.version)
    got = pull_images(ws, ids(request.variant), registry, say=run.say)
    return PullOutcome(tuple(got))


@dataclass(frozen=True)
class MatrixRequest:
    json: bool = False


def matrix(request: MatrixRequest, run: Run) -> MatrixOutcome:
    return MatrixOutcome(context(run).config.matrix)


@dataclass(frozen=True)
class ReproduceRequest:
    tag: str
    variant: str | None = None
    allow_host: tuple[str, ...] = ()
    allow_host_signed_by: tuple[str, ...] = ()
    trust: tuple[str, ...] = ()
    require_signed: bool = False
    image_key: str | None = None
    image_signatures: str | None = None
    standin: bool = False
    keep: bool = False
    cache: bool = False
    jobs: int = 1
    json: bool = False


def reproduce(request: ReproduceRequest, run: Run) -> ReproduceOutcome:
    """Rebuild the tag's images and compare; exit 1 on drift."""
    from release.images.image_signing import image_trust
    from release.images.reproduce import reproduce as rebuild
    from release.images.reproduce_trust import Trusting

    found = rebuild(
        opened(run),
        request.tag,
        variants=[v for v in (request.variant or "").split(",") if v],
        standin=request.standin,
        keep=request.keep,
        cache=request.cache,
        jobs=request.jobs,
        allow_host=request.allow_host,
        trust=Trusting(request.trust, request.require_signed, request.allow_host_signed_by),
        image_trust=image_trust(
            run.repo, request.image_key, request.image_signatures, request.require_signed
        ),
        say=run.say,
        live=run.live,
    )
    outcome = ReproduceOutcome(found)
    _keep_verdict(run, found.tag, outcome.document())
    return outcome


def _keep_verdict(run: Run, tag: str, data: Mapping[str, JSONValue]) -> None:
    """The verdict as ``--json`` prints it, kept for the rc page (``release report``):
    ``<git dir>/release/reproduce/<tag>.json``, replaced by the next run."""
    from release.adapters.files import atomic_write
    from release.flows.rc_page import reproduce_record_path

    path = reproduce_record_path(context(run).repo.git_dir, tag)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, indent=2, sort_keys=True) + "\n")

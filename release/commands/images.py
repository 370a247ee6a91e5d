"""The image side: ``images.*``, ``manifest`` and ``reproduce``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from release.commands.common import as_json, context, ids, registry_option
from release.commands.outcome import JSONValue, Report, Run
from release.errors import ExitCode, ReleaseError, UsageError

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
        run.repo,
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


def build(request: BuildRequest, run: Run) -> Report:
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
    return Report(
        (),
        {
            "version": ws.source.version,
            "variants": [
                {
                    "variant": r.variant,
                    "status": str(r.status.value if hasattr(r.status, "value") else r.status),
                    "tags": list(r.tags),
                    "image_id": r.image_id,
                    "seconds": round(r.seconds, 3),
                }
                for r in results
            ],
        },
    )


@dataclass(frozen=True)
class SmokeRequest:
    variant: str | None = None
    version: str | None = None
    allow_dirty: bool = False
    allow_shallow: bool = False
    json: bool = False


def smoke(request: SmokeRequest, run: Run) -> Report:
    from release.images import workspace

    ws = _workspace(run, request.version, request.allow_dirty, request.allow_shallow, inspect=True)
    documents: list[str] = []
    try:
        workspace.smoke(
            ws,
            ids(request.variant),
            say=documents.append,
            as_json=True,
            note=run.say,
            live=run.live,
        )
    except ReleaseError as err:
        if not documents:
            raise
        return Report((), _document(documents), err.exit_code, err.one_line())
    return Report((), _document(documents))


def _document(said: list[str]) -> dict[str, JSONValue]:
    data = json.loads(said[-1])
    assert isinstance(data, dict)
    return data


@dataclass(frozen=True)
class SnapshotRequest:
    variant: str | None = None
    version: str | None = None
    baseline: str | None = None
    dry_run: bool = False
    allow_dirty: bool = False
    allow_shallow: bool = False
    json: bool = False


def snapshot(request: SnapshotRequest, run: Run) -> Report:
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
        return Report((), {"dry_run": True, "variants": list(chosen)})
    baseline = Path(request.baseline) if request.baseline else None
    reports = workspace.snapshot(ws, chosen, baseline=baseline, say=run.say, live=run.live)
    return Report(
        (),
        {
            "version": ws.source.version,
            "variants": [
                {"variant": r.variant, "record": as_json(r.record), "path": str(r.path)}
                for r in reports
            ],
        },
    )


@dataclass(frozen=True)
class TransferRequest:
    variant: str | None = None
    registry: str | None = None
    version: str | None = None
    json: bool = False


def push(request: TransferRequest, run: Run) -> Report:
    from release.images.transfer import push_images

    registry = registry_option(request.registry)
    ws = _workspace(run, request.version)
    sent = push_images(ws, ids(request.variant), registry, say=run.say)
    return Report((), {"pushed": list(sent)})


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


def publish(request: PublishRequest, run: Run) -> Report:
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

        ws = Workspace.open(run.repo, request.version, engine=False)
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
    lines = tuple(
        f"{'would publish' if request.dry_run else 'published'} {p.group}: "
        f"{p.digest or '(index not made yet)'} as {', '.join(p.refs)}"
        for p in done
    )
    return Report(
        ("dry run, nothing pushed:", *lines) if request.dry_run else lines,
        {
            "dry_run": request.dry_run,
            "version": ws.source.version,
            "variants": [
                {
                    "variant": p.group,
                    "index": {"digest": p.digest, "tags": list(p.refs), "written": list(p.written)},
                    "signed_by": signing.key if signing and not request.dry_run else None,
                    "platforms": [
                        {
                            "row": i.row,
                            "platform": i.platform,
                            "image_id": i.image_id,
                            "digest": i.digest,
                            "tag": i.ref,
                            "pushed": i.pushed,
                            "from": i.source,
                        }
                        for i in p.images
                    ],
                }
                for p in done
            ],
        },
    )


def pull(request: TransferRequest, run: Run) -> Report:
    from release.images.transfer import pull_images

    registry = registry_option(request.registry)
    ws = _workspace(run, request.version)
    got = pull_images(ws, ids(request.variant), registry, say=run.say)
    return Report((), {"pulled": list(got)})


@dataclass(frozen=True)
class MatrixRequest:
    json: bool = False


def matrix(request: MatrixRequest, run: Run) -> Report:
    from release.images.workspace import matrix_json

    m = context(run).config.matrix
    if m is None:
        return Report(("no [tool.release.images] in this repository",), {"variants": []})
    data = json.loads(matrix_json(m))
    width = max(8, *(len(v.id) for v in m.variants))
    tags = max(40, *(len(m.tag(v, "v{version}")) for v in m.variants))
    lines = tuple(
        f"{v.id:{width}} {v.accelerator.label:13}{m.tag(v, 'v{version}'):{tags}} "
        f"{'snapshot' if m.has_snapshot(v) else 'no snapshot':12} base {v.base_image}"
        + (f" ({v.platform})" if v.platform else "")
        for v in m.variants
    )
    return Report(lines, data if isinstance(data, dict) else {"matrix": data})


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


def reproduce(request: ReproduceRequest, run: Run) -> Report:
    """Rebuild the tag's images and compare; exit 1 on drift."""
    from release.images.image_signing import image_trust
    from release.images.reproduce import reproduce as rebuild
    from release.images.reproduce_trust import Trusting

    found = rebuild(
        run.repo,
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
    data: dict[str, JSONValue] = {
        "tag": found.tag,
        "drifted": list(found.drifted),
        "verdicts": {
            variant: [as_json(_field(f)) for f in fields]
            for variant, fields in found.verdicts.items()
        },
        "notices": list(found.notices),
        "against": found.against,
        "signatures": as_json(found.signatures),
        "host_allowed_by": found.host_allowed_by,
        "image_signatures": [as_json(c.to_dict()) for c in found.image_signatures],
        "provenance_signatures": {
            row: as_json(c.to_dict()) for row, c in found.provenance_signatures.items()
        },
    }
    _keep_verdict(run, found.tag, data)
    return Report((found.summary(),), data, ExitCode.FAILED if found.drifted else ExitCode.OK)


def _keep_verdict(run: Run, tag: str, data: dict[str, JSONValue]) -> None:
    """The verdict as ``--json`` prints it, kept for the rc page (``release report``):
    ``<git dir>/release/reproduce/<tag>.json``, replaced by the next run."""
    from release.adapters.files import atomic_write
    from release.flows.rc_page import reproduce_record_path

    path = reproduce_record_path(context(run).repo.git_dir, tag)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def _field(verdict: object) -> object:
    import dataclasses

    return dataclasses.asdict(verdict) if dataclasses.is_dataclass(verdict) else str(verdict)  # type: ignore[arg-type]

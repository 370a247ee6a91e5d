"""Image workflows as the entry points call them: build, smoke and snapshot per variant.

``smoke`` and ``snapshot`` build first when the image is missing. Results are printed
and returned; a failure of any variant raises :class:`ImagesFailed` (exit 1) after
every requested variant has been reported. A build of a dirty work tree or in a shallow
clone is refused unless allowed (``allow_dirty``, ``allow_shallow``:
:mod:`release.images.source`); smoke and snapshot refuse up front, before any variant
runs, when an image they would have to build first is refused.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from release.adapters.engine import ContainerEngine
from release.adapters.files import atomic_write
from release.adapters.image_info import ImageInfo
from release.adapters.state import image_state_dir
from release.core.accelerator import accelerator_fields
from release.core.json_text import JSONValue
from release.core.matrix import ImageMatrix, Variant
from release.core.say import Say
from release.core.versions import image_tag_for
from release.errors import ConfigError, ExitCode, RefusedError, ReleaseError
from release.flows.context import ReleaseContext
from release.images.build import BuildResult, BuildStatus, build_images
from release.images.manifest import record_builds, smoke_data, snapshot_data, write_part
from release.images.source import BuildSource, given_version, read_source

if TYPE_CHECKING:  # imported where used: a build needs neither
    from release.images.smoke_checks import SmokeReport
    from release.images.snapshot import SnapshotReport

__all__ = [
    "ImagesFailed",
    "Workspace",
    "build",
    "matrix_document",
    "matrix_json",
    "smoke",
    "smoke_failed",
    "snapshot",
    "snapshot_plan",
]


class ImagesFailed(ReleaseError):
    exit_code = ExitCode.FAILED


@dataclass
class Workspace:
    ctx: ReleaseContext
    matrix: ImageMatrix
    source: BuildSource
    found_engine: ContainerEngine | None  # None: not asked for yet (see :attr:`engine`)

    @property
    def engine(self) -> ContainerEngine:
        """The engine, found when first asked for: a task that needs none (a publish from
        a registry) runs where there is none."""
        if self.found_engine is None:
            self.found_engine = ContainerEngine.detect()
        return self.found_engine

    @classmethod
    def open(
        cls,
        ctx: ReleaseContext,
        version: str | None = None,
        *,
        allow_dirty: bool = False,
        allow_shallow: bool = False,
        inspect: bool = False,
        engine: bool = True,
    ) -> Workspace:
        """The image workflows' view of ``ctx`` (the repository the command floor opened,
        with the run's main branch and configuration). ``inspect``: the task's first
        question to the engine is about the matrix's bases and tags (build, smoke,
        snapshot): asked at once, answered while git reads. ``engine`` false: no engine is
        looked for unless the task asks for one. ``version`` is parsed here, once for the
        run; the source read from it carries it on."""
        matrix = ctx.config.matrix
        if matrix is None:
            raise ConfigError("[tool.release.images] is missing: no image matrix to build")
        given = given_version(version) if version is not None else None
        if not engine:
            source = read_source(ctx, given, allow_dirty=allow_dirty, allow_shallow=allow_shallow)
            return cls(ctx, matrix, source, None)
        found = ContainerEngine.detect()
        if inspect and given is not None:  # the tags are known
            tagged = image_tag_for(given.pep440)
            found.inspect_ahead(
                [v.base_image for v in matrix.variants]
                + [matrix.tag(v, tagged) for v in matrix.variants]
            )
        source = read_source(ctx, given, allow_dirty=allow_dirty, allow_shallow=allow_shallow)
        return cls(ctx, matrix, source, found)

    @property
    def state_dir(self) -> Path:
        return image_state_dir(self.ctx.repo.git_dir)

    def variants(self, ids: Sequence[str] | None) -> list[Variant]:
        return self.matrix.select(ids)

    def image(self, variant: Variant) -> str:
        return self.matrix.tag(variant, self.source.image_version)


def build(
    ws: Workspace,
    ids: Sequence[str] | None = None,
    *,
    jobs: int = 1,
    keep_going: bool = False,
    force: bool = False,
    no_cache: bool = False,
    say: Say = print,
    live: bool = False,
    cache: str | None = None,
) -> list[BuildResult]:
    """Build ``ids`` of the workspace (all when None), recording each variant's manifest
    part as it is done, then a summary; ``live``: a live line per build when stdout is a
    terminal."""
    variants = ws.variants(ids)
    results = build_images(
        ws.engine,
        ws.matrix,
        variants,
        ws.source,
        logs=ws.state_dir / "logs",
        jobs=jobs,
        keep_going=keep_going,
        force=force,
        no_cache=no_cache,
        say=say,
        live=live,
        cache=cache,
        # each variant's part as soon as it is built, while the others still build; a
        # failure of one build keeps the parts of the others
        after=lambda result: record_builds(ws, ws.engine, [result]),
    )
    failed = [r.variant for r in results if r.status is BuildStatus.FAILED]
    not_run = [r.variant for r in results if r.status is BuildStatus.NOT_RUN]
    say("summary:")
    for r in results:
        say("  " + r.line())
        for line in r.tail_lines():  # a failed build: what its log said last
            say(line)
    said = [f"{len(failed)} of {len(results)} variant(s) failed to build: {', '.join(failed)}"]
    if not_run:  # a platform this host cannot run is not built, never taken as built
        said.append(f"not built here (no emulation for their platform): {', '.join(not_run)}")
    if failed or not_run:
        raise ImagesFailed("; ".join(said[0 if failed else 1 :]))
    return results


def _inspect(ws: Workspace, variants: Sequence[Variant]) -> dict[str, ImageInfo | None]:
    """Every variant's image in one query (also the check that an engine answers)."""
    return ws.engine.inspect_images([ws.image(v) for v in variants])


def _refuse_building(ws: Workspace, missing: Sequence[str]) -> None:
    """Refuse before anything runs when images that must be built first may not be."""
    if missing and ws.source.refusal:
        raise RefusedError(f"{', '.join(missing)} must be built first, but {ws.source.refusal}")


def _ensure_built(
    ws: Workspace, variant: Variant, say: Say, inspected: ImageInfo | None
) -> ImageInfo | None:
    """The image's inspect data (None once built here: look it up again)."""
    if inspected is None:
        say(f"{ws.image(variant)} is missing; building it first")
        build(ws, [variant.id], say=say)
    return inspected


def smoke(
    ws: Workspace,
    ids: Sequence[str] | None = None,
    *,
    say: Say = print,
    live: bool = False,
) -> list[SmokeReport]:
    """Smoke each variant, every one also when another failed: the reports, passed or not
    (:func:`smoke_failed` says which failed). ``live``: a live line for the running check,
    on a terminal."""
    from release.images.smoke import run_smoke

    variants = ws.variants(ids)
    found = _inspect(ws, variants)
    _refuse_building(ws, [image for image, data in found.items() if data is None])
    reports = []
    for variant in variants:
        image = ws.image(variant)
        report = run_smoke(
            ws.engine,
            ws.matrix,
            variant,
            ws.source,
            image,
            say=say,
            inspected=_ensure_built(ws, variant, say, found[image]),
            live=live,
        )
        reports.append(report)
        out = ws.state_dir / "smoke" / ws.source.version / f"{variant.id}.json"
        atomic_write(out, json.dumps(report.to_dict(), indent=2) + "\n")
        write_part(ws, variant.id, "smoke", smoke_data(report))
        say(report.verdict())
    return reports


def smoke_failed(reports: Sequence[SmokeReport]) -> ImagesFailed | None:
    """The failure of a smoke run where a variant failed, else None."""
    failed = [r.variant for r in reports if not r.passed]
    return ImagesFailed(f"smoke failed for {', '.join(failed)}") if failed else None


def snapshot(
    ws: Workspace,
    ids: Sequence[str] | None = None,
    *,
    baseline: Path | None = None,
    say: Say = print,
    live: bool = False,
) -> list[SnapshotReport]:
    """The snapshot round trip of each variant its rule applies to, recorded as a part;
    ``live``: a live line while each runs, on a terminal."""
    from release.images.snapshot import run_snapshot

    variants = ws.variants(ids)
    found = _inspect(ws, variants)
    built_first = [v for v in variants if ws.matrix.has_snapshot(v) and found[ws.image(v)] is None]
    _refuse_building(ws, [ws.image(v) for v in built_first])
    reports = []
    for variant in variants:
        image = ws.image(variant)
        data = (
            _ensure_built(ws, variant, say, found[image])
            if ws.matrix.has_snapshot(variant)
            else found[image]
        )
        report = run_snapshot(
            ws.engine,
            ws.matrix,
            variant,
            ws.source,
            image,
            store=ws.state_dir / "snapshots",
            baseline=baseline,
            say=say,
            inspected=data,
            live=live,
        )
        reports.append(report)
        write_part(ws, variant.id, "snapshot", snapshot_data(report))
        for line in report.lines():
            say(line)
    failed = [r.variant for r in reports if r.failed]
    if failed:
        raise ImagesFailed(f"snapshot runtime check failed for {', '.join(failed)}")
    return reports


def snapshot_plan(ws: Workspace, ids: Sequence[str] | None = None, *, say: Say = print) -> None:
    """What ``snapshot`` would do for each variant: nothing is built or run."""
    from release.images.roundtrip import plan_lines

    rule = ws.matrix.snapshot
    variants = ws.variants(ids)
    found = _inspect(ws, variants)
    say("dry run, nothing run: the snapshot round trip would be")
    for variant in variants:
        image = ws.image(variant)
        if rule is None or not ws.matrix.has_snapshot(variant):
            spec = rule.selector.keyed if rule else "(no snapshot rule)"
            say(f"snapshot({variant.id}): none ({variant.accelerator.label}, rule {spec})")
            continue
        built = "" if found[image] is not None else " (not built yet: it would be built first)"
        say(f"snapshot({variant.id}): {image}{built}")
        known = found[image]
        for line in plan_lines(rule, image, known.command if known else []):
            say(line)


def matrix_json(matrix: ImageMatrix, image_version: str = "v{version}") -> str:
    """The matrix as data (for CI fan-out): :func:`matrix_document` as JSON text."""
    return json.dumps(matrix_document(matrix, image_version), indent=2)


def matrix_document(matrix: ImageMatrix, image_version: str = "v{version}") -> dict[str, JSONValue]:
    """The matrix as data: one row per variant, its sessions as nox and the CI pipelines
    have them (:meth:`ImageMatrix.session_ids`)."""
    sessions = matrix.session_ids()
    rows: list[JSONValue] = [
        {
            "id": v.id,
            **accelerator_fields(v.accelerator),
            "base_image": v.base_image,
            "dockerfile": matrix.dockerfile_of(v),
            "context": matrix.context_of(v),
            "target": matrix.target_of(v),
            "platform": v.platform,
            "tag": matrix.tag(v, image_version),
            "snapshot": matrix.has_snapshot(v),
            "build_args": dict[str, JSONValue](matrix.build_args_for(v)),
            "sessions": [f"{kind}({v.id})" for kind, ids in sessions.items() if v.id in ids],
        }
        for v in matrix.variants
    ]
    return {"image": matrix.name, "default_variant": matrix.default_variant, "variants": rows}

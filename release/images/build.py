"""``build``: one image per variant through the engine's CLI, skipped when its inputs are unchanged.

Per variant: make sure the base exists (or a stand-in), compute the input digest
(:mod:`release.images.inputs`), and build only when no image with that digest is tagged
already. Builds run in parallel (``jobs``, longest first: :mod:`release.images.schedule`);
the image is built untagged and tagged by id only once complete, so an interrupted or
failed build leaves no half-tagged image; one a killed run finished but never tagged is
removed by the next build of the variant (its iid file, named with its owner, is left in
the logs dir). A dirty work tree or a shallow clone is built
only when allowed (:mod:`release.images.source`), and the image's labels say so
(:mod:`release.images.labels`). The image a rebuilt tag pointed at before is
removed once nothing uses it. One ``docker image inspect`` answers for every base and
target tag up front (it is also the check that an engine answers). A failed build's error
and its log's last lines are the builder's words: they are shown as single-line fields,
control characters escaped (:mod:`release.core.terminal_text`).
"""

from __future__ import annotations

import contextlib
import enum
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from release.adapters.emulation import emulation_problem
from release.adapters.engine import ContainerEngine
from release.adapters.image_content import image_content_digest
from release.adapters.image_info import ImageInfo
from release.adapters.leftovers import left_by_dead, owned_name
from release.adapters.process import last_line
from release.adapters.registry import Registry
from release.core.matrix import ImageMatrix, Variant, platform_slug
from release.core.terminal_text import escaped
from release.errors import EngineError, RefusedError, ReleaseError
from release.images.build_cache import INLINE_CACHE, find_cache
from release.images.heartbeat import heartbeat_interval, log_tail
from release.images.inputs import DIGEST_LABEL, HASHES, HashCache, build_paths, input_digest
from release.images.labels import labels_for
from release.images.progress import Progress, flushing
from release.images.schedule import read_durations, record_durations, schedule
from release.images.source import BuildSource
from release.images.standin import BaseImage, ensure_base

__all__ = ["TAIL_LINES", "BuildResult", "BuildStatus", "build_images"]

TAIL_LINES = 10  # of a failed build's log, shown under its summary line


class BuildStatus(enum.Enum):
    BUILT = "built"
    UNCHANGED = "unchanged, not rebuilt"
    FAILED = "FAILED"
    NOT_RUN = "not run"  # a platform this host cannot run (no emulation): said why
    NOT_STARTED = "not started (an earlier variant failed; --keep-going builds the rest)"


@dataclass(frozen=True)
class BuildResult:
    variant: str
    status: BuildStatus
    tags: tuple[str, ...] = ()
    image_id: str | None = None
    digest: str | None = None
    seconds: float = 0.0
    standin_base: bool = False
    log: Path | None = None
    error: str | None = None
    base: BaseImage | None = None  # the base it was built on (or found built on)
    build_args: Mapping[str, str] = field(default_factory=dict)
    log_tail: tuple[str, ...] = ()  # a failed build's last log lines, read as it failed
    recipe: Mapping[str, str] = field(default_factory=dict)  # Dockerfile, context, target

    def tail_lines(self) -> list[str]:
        """The log's last lines as shown under the summary line (the builder's words)."""
        return [f"      {escaped(line)}" for line in self.log_tail]

    def line(self) -> str:
        text = f"build({self.variant}): {self.status.value}"
        if self.status in (BuildStatus.BUILT, BuildStatus.UNCHANGED):
            text += f" -> {', '.join(self.tags)}"
            if self.status is BuildStatus.BUILT:
                text += f" in {self.seconds:.1f}s"
            if self.standin_base:
                text += " [on a stand-in base]"
        elif self.status is BuildStatus.NOT_RUN:
            text += f": {escaped(str(self.error))}"
        elif self.status is BuildStatus.FAILED:
            text += f": {escaped(str(self.error))}"
            text += f" (log: {escaped(str(self.log))})" if self.log else ""
        return text


@dataclass
class _Run:
    engine: ContainerEngine
    matrix: ImageMatrix
    source: BuildSource
    logs: Path
    force: bool
    progress: Progress
    paths: Mapping[str, tuple[Path, Path]]  # per variant: its context and Dockerfile, checked
    no_cache: bool = False
    cache: str | None = None  # REGISTRY/PATH of the layer cache (build_cache)
    keep_going: bool = False
    inspected: Mapping[str, ImageInfo | None] = field(default_factory=dict)
    hashes: HashCache | None = None
    build_seconds: dict[str, float] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)
    interrupted: threading.Event = field(default_factory=threading.Event)
    after_failed: list[Exception] = field(default_factory=list)  # what ``after`` raised

    def image(self, ref: str) -> ImageInfo | None:
        """``ref``'s inspect data from the up-front query, else asked now."""
        if ref in self.inspected:
            return self.inspected[ref]
        return self.engine.inspect_image(ref)

    def check_interrupted(self) -> None:
        if self.interrupted.is_set():
            raise EngineError("interrupted")


def _build_one(run: _Run, variant: Variant) -> BuildResult:
    if run.stop.is_set():
        return BuildResult(variant.id, BuildStatus.NOT_STARTED)
    started = time.perf_counter()
    engine, matrix, source = run.engine, run.matrix, run.source
    tags = (matrix.tag(variant, source.image_version),)
    log = run.logs / f"build-{variant.id}.log"
    building = False  # the log is this run's once the build step started
    try:
        emulated = _emulated(engine, variant)
        if emulated is not None and emulated.startswith("no "):
            result = BuildResult(variant.id, BuildStatus.NOT_RUN, tags, error=emulated)
            run.progress.update(variant.id, result.line().split(": ", 1)[1], final=True)
            return result
        run.progress.update(variant.id, f"base {variant.base_image}")
        base = ensure_base(
            engine,
            variant.base_image,
            variant.accelerator,
            lambda line: run.progress.update(variant.id, line),
            inspected=run.inspected.get(variant.base_image),
            platform=variant.platform,
        )
        # a base made here has no registry digest: its content stands for it on every machine
        base = replace(base, content=image_content_digest(engine, base.id).digest)
        args = matrix.build_args_for(variant, source.version)
        labels = labels_for(variant, source, base)
        context, dockerfile = run.paths[variant.id]
        target = matrix.target_of(variant)
        recipe = {
            "dockerfile": matrix.dockerfile_of(variant),
            "context": matrix.context_of(variant),
        }
        recipe.update({"target": target} if target else {})
        digest = input_digest(
            context,
            dockerfile,
            args,
            base.identity,
            labels,
            variant.platform,
            run.hashes,
            target=target,
        )
        existing = run.image(tags[0])
        _discard_killed(engine, run.logs, variant, existing.id if existing else None)
        if existing and not run.force:
            have = existing.labels.get(DIGEST_LABEL)
            if have == digest:
                result = BuildResult(
                    variant.id,
                    BuildStatus.UNCHANGED,
                    tags,
                    existing.id,
                    digest,
                    time.perf_counter() - started,
                    base.standin,
                    base=base,
                    build_args=args,
                    recipe=recipe,
                )
                run.progress.update(variant.id, result.line().split(": ", 1)[1], final=True)
                return result
        building = True
        on = (" on a stand-in base" if base.standin else "") + (
            f" ({emulated})" if emulated else ""
        )
        run.progress.update(variant.id, "building" + on, log=log)
        iid = _iid(run.logs, variant)
        iid.unlink(missing_ok=True)
        cache = find_cache(run.cache, matrix, variant, Registry()) if run.cache else None
        if cache is not None:
            run.progress.update(variant.id, cache.said)
        # with a cache the image carries its record (the next build's cache); the arg is
        # neither an input (the digest above) nor recorded (the result's args below)
        given = {**args, INLINE_CACHE: "1"} if cache else args
        run.check_interrupted()
        outcome = engine.build(
            context=context,
            dockerfile=dockerfile,
            # a base kept under a local name for its platform: FROM names that
            build_args={**given, "BASE_IMAGE": base.build_ref} if base.build_ref else given,
            labels={**labels, DIGEST_LABEL: digest},
            iidfile=iid,
            platform=variant.platform,
            log=log,
            no_cache=run.no_cache,
            target=target,
            cache_from=cache.ref if cache else None,
        )
        if not outcome.ok or not iid.exists():
            said = last_line(log.read_text(errors="replace"))
            raise EngineError(said or f"docker build exited {outcome.status}")
        image_id = iid.read_text().strip()
        run.build_seconds[variant.id] = outcome.seconds
        run.check_interrupted()  # a build that finished as Ctrl-C came is discarded, not tagged
        engine.tag(image_id, tags)
        iid.unlink()  # tagged: no longer a build to discard
        previous = existing.id if existing and existing.id != image_id else None
        now = engine.inspect_images([tags[0], *([previous] if previous else [])])
        if (found := now.get(tags[0])) is None or found.id != image_id:
            raise EngineError(f"{tags[0]} does not point at the image just built")
        if previous:  # the tag moved: its old image is left untagged unless something uses it
            engine.remove_if_dangling(previous, now.get(previous))
        result = BuildResult(
            variant.id,
            BuildStatus.BUILT,
            tags,
            image_id,
            digest,
            time.perf_counter() - started,
            base.standin,
            log,
            base=base,
            build_args=args,
            recipe=recipe,
        )
    except ReleaseError as err:
        result = BuildResult(
            variant.id,
            BuildStatus.FAILED,
            tags,
            seconds=time.perf_counter() - started,
            log=log if building and log.exists() else None,
            error=err.one_line(),
            log_tail=tuple(log_tail(log, TAIL_LINES)) if building else (),
        )
        if (
            not run.keep_going
        ):  # here, not in the caller: a free worker takes the next variant at once
            run.stop.set()
    run.progress.update(variant.id, result.line().split(": ", 1)[1], final=True)
    return result


def _emulated(engine: ContainerEngine, variant: Variant) -> str | None:
    """None for a row of the engine's own platform; else how it runs here: "emulated
    (linux/arm64 on linux/amd64)", or "no arm64 emulation: <why>" (it cannot)."""
    if variant.platform is None or variant.platform == engine.platform():
        return None
    problem = emulation_problem(variant.platform)
    if problem is not None:
        return f"no {platform_slug(variant.platform)} emulation: {problem}"
    return f"emulated, {variant.platform} on {engine.platform()}"


def variant_paths(
    root: Path, matrix: ImageMatrix, variants: Iterable[Variant]
) -> dict[str, tuple[Path, Path]]:
    """Each variant's build context and Dockerfile (its own, else the matrix's), checked
    to lie inside the tree (:func:`build_paths`), each pair once."""
    checked: dict[tuple[str, str], tuple[Path, Path]] = {}
    out = {}
    for v in variants:
        pair = (matrix.context_of(v), matrix.dockerfile_of(v))
        if pair not in checked:
            checked[pair] = build_paths(root, *pair)
        out[v.id] = checked[pair]
    return out


def _hash_ahead(hashes: HashCache, context: Path, dockerfile: Path) -> None:
    with contextlib.suppress(Exception):
        hashes.context_part(context, dockerfile)


def build_images(
    engine: ContainerEngine,
    matrix: ImageMatrix,
    variants: Iterable[Variant],
    source: BuildSource,
    *,
    logs: Path,
    jobs: int = 1,
    keep_going: bool = False,
    force: bool = False,
    no_cache: bool = False,
    say: Callable[[str], None] = print,
    after: Callable[[BuildResult], object] | None = None,
    live: bool = False,
    cache: str | None = None,
) -> list[BuildResult]:
    """Build ``variants`` of ``source``; a source that may not be built (a dirty tree or a
    shallow clone without the flag that allows it) is refused before anything is done.
    ``after`` is called with each variant
    built or found unchanged, in its worker as soon as it is done (recording one variant
    overlaps the builds still running); what it raises is raised once all have ended.
    ``live``: a live line per variant while stdout is a terminal (plain lines otherwise)."""
    if source.refusal:
        raise RefusedError(source.refusal)
    chosen = list(variants)
    paths = variant_paths(source.root, matrix, chosen)  # inside the tree
    heartbeat = heartbeat_interval(matrix.heartbeat)  # a bad RELEASE_HEARTBEAT stops it here
    said = flushing(say)
    tags = [matrix.tag(v, source.image_version) for v in chosen]
    hashes = HashCache(logs / HASHES)
    # the context is walked and hashed while docker answers (what fails here fails again,
    # and is told, in the first build worker)
    for pair in dict.fromkeys(paths.values()):
        threading.Thread(
            target=_hash_ahead,
            args=(hashes, *pair),
            name="hash-ahead",
            daemon=True,
        ).start()
    # one query for every base and tag; it also raises the clear error when no engine answers
    inspected = engine.inspect_images([*(v.base_image for v in chosen), *tags])
    said(f"builder: {engine.description}")
    for line in source.lines():
        said(line)
    logs.mkdir(parents=True, exist_ok=True)
    with Progress([v.id for v in chosen], say, heartbeat=heartbeat, live=live) as progress:
        run = _Run(
            engine,
            matrix,
            source,
            logs,
            force or no_cache,
            progress,
            paths,
            no_cache=no_cache,
            cache=cache,
            keep_going=keep_going,
            inspected=inspected,
            hashes=hashes,
        )
        order = schedule(matrix, chosen, read_durations(logs)) if jobs > 1 else chosen
        futures: dict[str, Future[BuildResult]] = {}
        pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="build")
        try:
            for variant in order:
                futures[variant.id] = pool.submit(_build_then, run, variant, after)
            results: list[BuildResult] = []
            for variant in chosen:
                result = futures[variant.id].result()
                if result.status is BuildStatus.FAILED and not keep_going:
                    run.stop.set()
                results.append(result)
        except BaseException:
            progress.quiet()  # no heartbeat of builds being stopped
            run.interrupted.set()
            run.stop.set()
            engine.kill_all()
            pool.shutdown(wait=True, cancel_futures=True)
            _discard_untagged(engine, logs, chosen)
            raise
        pool.shutdown(wait=True)
    if run.hashes is not None:
        run.hashes.save()
    record_durations(
        logs,
        {
            r.variant: run.build_seconds[r.variant]
            for r in results
            if r.status is BuildStatus.BUILT and r.variant in run.build_seconds
        },
    )
    if run.after_failed:
        raise run.after_failed[0]
    return results


def _build_then(
    run: _Run, variant: Variant, after: Callable[[BuildResult], object] | None
) -> BuildResult:
    result = _build_one(run, variant)
    if after is not None and result.status in (BuildStatus.BUILT, BuildStatus.UNCHANGED):
        try:
            after(result)
        except Exception as err:  # raised once every build has ended, as before
            run.after_failed.append(err)
    return result


def _discard_untagged(engine: ContainerEngine, logs: Path, variants: Sequence[Variant]) -> None:
    """After an interrupt: remove images that were built but never tagged."""
    for variant in variants:
        iid = _iid(logs, variant)
        if iid.exists():
            image = iid.read_text().strip()
            data = engine.inspect_image(image)
            if data is not None and not data.repo_tags:
                engine.remove_image(image)
            iid.unlink(missing_ok=True)


def _iid(logs: Path, variant: Variant) -> Path:
    """Where this run's build of ``variant`` writes the image id: named with this process,
    so that the file of a killed run is known by its owner; removed once it is tagged."""
    return logs / f"{owned_name(f'build-{variant.id}')}.iid"


def _discard_killed(
    engine: ContainerEngine, logs: Path, variant: Variant, tagged: str | None
) -> None:
    """Images that killed runs' builds of ``variant`` finished but never tagged (their iid
    files are left): removed when untagged, managed and unused. No engine call unless one
    is left."""
    for left in left_by_dead(logs, f"build-{variant.id}"):
        with contextlib.suppress(OSError):
            image = left.read_text().strip()
            if image and image != tagged:
                engine.remove_if_dangling(image)
            left.unlink()

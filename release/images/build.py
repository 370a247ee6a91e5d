"""``build``: one image per variant through the engine's CLI, skipped when its inputs are unchanged.

Per variant: make sure the base exists (or a stand-in), compute an input digest
(context files honouring ``.dockerignore``, the Dockerfile, build args, base image id,
labels, platform), and build only when no image with that digest is tagged already.
Builds run in parallel (``jobs``); the image is built untagged and tagged by id only
once complete, so an interrupted or failed build leaves no half-tagged image. The image a
rebuilt tag pointed at before is removed once nothing uses it.

One ``docker image inspect`` answers for every base and target tag up front (it is also
the check that an engine answers). With ``jobs`` > 1 the longest build is started first:
each variant's last build time is kept in ``durations.json`` beside the build logs; with
no record, variants with the snapshot step (the heavy one) go first. Each context file's
sha256 is kept in ``hashes.json`` there too, so an unchanged re-run reads no file whose
size, mtime and inode are as they were.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import enum
import hashlib
import json
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from release.adapters.engine import MANAGED_LABEL, ContainerEngine
from release.errors import EngineError, ReleaseError
from release.core.matrix import ImageMatrix, Variant
from release.images.source import BuildSource
from release.images.standin import ensure_base

__all__ = [
    "BuildResult",
    "BuildStatus",
    "HashCache",
    "build_images",
    "context_files",
    "input_digest",
    "schedule",
]

DIGEST_LABEL = "org.release.input-digest"
_STATE_DIR = ".git/release/"  # logs and records, when the context includes .git
DURATIONS = "durations.json"  # in the logs dir: each variant's last build time, in seconds
HASHES = "hashes.json"  # in the logs dir: each context file's sha256, by path/size/mtime/inode
_RACY_NS = 2_000_000_000  # a file modified this recently may change again within its mtime


class BuildStatus(enum.Enum):
    BUILT = "built"
    UNCHANGED = "unchanged, not rebuilt"
    FAILED = "FAILED"
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

    def line(self) -> str:
        text = f"build({self.variant}): {self.status.value}"
        if self.status in (BuildStatus.BUILT, BuildStatus.UNCHANGED):
            text += f" -> {', '.join(self.tags)}"
            if self.status is BuildStatus.BUILT:
                text += f" in {self.seconds:.1f}s"
            if self.standin_base:
                text += " [on a stand-in base]"
        elif self.status is BuildStatus.FAILED:
            text += f": {self.error}" + (f" (log: {self.log})" if self.log else "")
        return text


# -- inputs -------------------------------------------------------------------


def _ignore_patterns(context: Path) -> list[tuple[re.Pattern[str], bool]]:
    path = context / ".dockerignore"
    if not path.exists():
        return []
    rules: list[tuple[re.Pattern[str], bool]] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line[1:].strip() if negate else line
        pattern = pattern.strip("/").removeprefix("./")
        regex = ""
        i = 0
        while i < len(pattern):
            if pattern.startswith("**", i):
                i += 2
                if pattern.startswith("/", i):
                    regex += "(?:.*/)?"
                    i += 1
                else:
                    regex += ".*"
                continue
            ch = pattern[i]
            regex += "[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch)
            i += 1
        rules.append((re.compile(f"^{regex}(?:/.*)?$"), negate))
    return rules


def context_files(context: Path, dockerfile: Path | None = None) -> list[Path]:
    """Files docker would send as the build context (``.dockerignore`` applied)."""
    rules = _ignore_patterns(context)
    out: list[Path] = []
    for path in sorted(context.rglob("*")):
        if not path.is_file() and not path.is_symlink():
            continue
        rel = path.relative_to(context).as_posix()
        excluded = False
        for pattern, negate in rules:
            if pattern.match(rel):
                excluded = not negate
        if not excluded or (dockerfile is not None and path == dockerfile):
            out.append(path)
    return out


class HashCache:
    """Context files' sha256 by relative path, trusted while (size, mtime_ns, inode) match.

    Loaded from ``path`` (a missing or corrupt file is an empty cache), shared by the
    threads of one run, and written back atomically by :meth:`save` with only the files
    seen in this run. A file modified within the last couple of seconds is hashed but not
    kept: it could change again without its mtime moving."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._old = _read_hashes(path) if path is not None else {}
        self._new: dict[str, tuple[int, int, int, str]] = {}
        # the variants of a run share their context: it is walked once per run
        self._listing_lock = threading.Lock()
        self._listings: dict[tuple[Path, Path], list[bytes]] = {}

    def context_part(self, context: Path, dockerfile: Path) -> list[bytes]:
        """What :func:`input_digest` hashes for the context's files, computed once."""
        with self._listing_lock:
            key = (context, dockerfile)
            if key not in self._listings:
                self._listings[key] = _context_part(context, dockerfile, self)
            return self._listings[key]

    def sha256(self, path: Path, rel: str, st: os.stat_result) -> bytes:
        key = (st.st_size, st.st_mtime_ns, st.st_ino)
        with self._lock:
            entry = self._new.get(rel) or self._old.get(rel)
        if entry is not None and entry[:3] == key:
            with self._lock:
                self._new[rel] = entry
            return bytes.fromhex(entry[3])
        digest = hashlib.sha256(path.read_bytes()).digest()
        after = path.stat()
        if (after.st_size, after.st_mtime_ns, after.st_ino) == key and (
            time.time_ns() - st.st_mtime_ns > _RACY_NS
        ):
            with self._lock:
                self._new[rel] = (*key, digest.hex())
        return digest

    def save(self) -> None:
        """Write the files seen back (atomically; a failure to write is not an error)."""
        with self._lock:
            if self.path is None or self._new == self._old:
                return
            data = {"version": 1, "files": {k: list(v) for k, v in sorted(self._new.items())}}
        _write_json(self.path, data, prefix=".hashes-")


def _read_hashes(path: Path) -> dict[str, tuple[int, int, int, str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) and data.get("version") == 1 else None
    if not isinstance(files, dict):
        return {}
    out: dict[str, tuple[int, int, int, str]] = {}
    for rel, entry in files.items():
        if (
            isinstance(entry, list)
            and len(entry) == 4
            and all(isinstance(n, int) and not isinstance(n, bool) for n in entry[:3])
            and isinstance(entry[3], str)
            and re.fullmatch("[0-9a-f]{64}", entry[3])
        ):
            out[str(rel)] = (entry[0], entry[1], entry[2], entry[3])
    return out


def _context_part(context: Path, dockerfile: Path, cache: HashCache | None) -> list[bytes]:
    parts: list[bytes] = []
    for path in context_files(context, dockerfile):
        rel = path.relative_to(context).as_posix()
        if rel.startswith(_STATE_DIR):  # our own logs: writing them changes no input
            continue
        st = path.stat()
        parts.append(f"file {rel} {st.st_mode & 0o111:o}\n".encode())
        if path.is_symlink():
            parts.append(str(path.readlink()).encode())
        elif cache is not None:
            parts.append(cache.sha256(path, rel, st))
        else:
            parts.append(hashlib.sha256(path.read_bytes()).digest())
    return parts


def input_digest(
    context: Path,
    dockerfile: Path,
    build_args: dict[str, str],
    base_id: str,
    labels: dict[str, str],
    platform: str | None,
    cache: HashCache | None = None,
) -> str:
    """The digest of every build input. ``cache`` spares reading unchanged files (and
    walking the context again for each variant of a run); it never changes the result."""
    h = hashlib.sha256()
    parts = (
        cache.context_part(context, dockerfile)
        if cache is not None
        else _context_part(context, dockerfile, None)
    )
    for part in parts:
        h.update(part)
    h.update(b"dockerfile\n" + dockerfile.read_bytes())
    for key, value in sorted(build_args.items()):
        h.update(f"arg {key}={value}\n".encode())
    for key, value in sorted(labels.items()):
        h.update(f"label {key}={value}\n".encode())
    h.update(f"base {base_id}\nplatform {platform}\n".encode())
    return "sha256:" + h.hexdigest()


def labels_for(matrix: ImageMatrix, variant: Variant, source: BuildSource) -> dict[str, str]:
    created = _dt.datetime.fromtimestamp(source.epoch, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    labels = {
        "org.opencontainers.image.version": source.version,
        "org.opencontainers.image.revision": source.revision,
        "org.opencontainers.image.created": created,
        "org.release.variant": variant.id,
        "org.release.cuda": variant.cuda_text,
        MANAGED_LABEL: "true",
    }
    if source.url:
        labels["org.opencontainers.image.source"] = source.url
    return labels


# -- progress -----------------------------------------------------------------


class Progress:
    """Plain lines when piped; a live line per variant on a terminal."""

    def __init__(self, variants: Sequence[str], say: Callable[[str], None]) -> None:
        import sys

        self.say = say
        self._lock = threading.Lock()
        self._live = None
        self._tasks: dict[str, object] = {}
        if sys.stdout.isatty() and say is print:
            from rich.progress import Progress as RichProgress
            from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

            self._live = RichProgress(
                SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn()
            )
            for v in variants:
                self._tasks[v] = self._live.add_task(f"build({v}): waiting", total=None)

    def __enter__(self) -> Progress:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()

    def update(self, variant: str, text: str, *, final: bool = False) -> None:
        with self._lock:
            if self._live is not None:
                self._live.update(self._tasks[variant], description=f"build({variant}): {text}")  # type: ignore[arg-type]
                if final:
                    self._live.stop_task(self._tasks[variant])  # type: ignore[arg-type]
            else:
                self.say(f"build({variant}): {text}")
                _flush()


def _flush() -> None:
    """Progress lines reach a pipe (a CI log) as they are said, not when the run ends."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def _flushing(say: Callable[[str], None]) -> Callable[[str], None]:
    def said(line: str) -> None:
        say(line)
        _flush()

    return said


# -- scheduling ---------------------------------------------------------------


def read_durations(logs: Path) -> dict[str, float]:
    """Each variant's last build time (seconds) as recorded under ``logs``; {} when none."""
    try:
        data = json.loads((logs / DURATIONS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(k): float(v)
        for k, v in data.items()
        if isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
    }


def record_durations(logs: Path, seconds: Mapping[str, float]) -> None:
    """Merge ``seconds`` into the record (atomically; a failure to write is not an error)."""
    if not seconds:
        return
    merged = {**read_durations(logs), **{k: round(v, 3) for k, v in seconds.items()}}
    _write_json(logs / DURATIONS, merged, prefix=".durations-")


def _write_json(path: Path, data: object, *, prefix: str) -> None:
    """Replace ``path`` atomically; a failure to write is not an error."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=prefix, dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2, sort_keys=True)
                handle.write("\n")
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError:
        pass


def schedule(
    matrix: ImageMatrix, variants: Sequence[Variant], durations: Mapping[str, float]
) -> list[Variant]:
    """The order to start builds in: longest first (LPT). Variants with no recorded time
    come first (a first build is a cold one); then by last build time, longest first. Ties
    go to the variants with the snapshot step, then to the matrix order. Pure."""

    def key(item: tuple[int, Variant]) -> tuple[bool, float, bool, int]:
        index, variant = item
        seconds = durations.get(variant.id)
        return (
            seconds is not None,
            -(seconds or 0.0),
            not matrix.has_snapshot(variant),
            index,
        )

    return [variant for _, variant in sorted(enumerate(variants), key=key)]


# -- building -----------------------------------------------------------------


@dataclass
class _Run:
    engine: ContainerEngine
    matrix: ImageMatrix
    source: BuildSource
    logs: Path
    force: bool
    progress: Progress
    no_cache: bool = False
    keep_going: bool = False
    inspected: Mapping[str, dict[str, Any] | None] = field(default_factory=dict)
    hashes: HashCache | None = None
    build_seconds: dict[str, float] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)
    interrupted: threading.Event = field(default_factory=threading.Event)

    def image(self, ref: str) -> dict[str, Any] | None:
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
    try:
        run.progress.update(variant.id, f"base {variant.base_image}")
        base = ensure_base(
            engine,
            variant.base_image,
            variant.cuda_text,
            lambda line: run.progress.update(variant.id, line),
            inspected=run.inspected.get(variant.base_image),
        )
        args = matrix.build_args_for(variant, source.version)
        labels = labels_for(matrix, variant, source)
        context = source.root / matrix.context
        dockerfile = source.root / matrix.dockerfile
        digest = input_digest(
            context, dockerfile, args, base.id, labels, variant.platform, run.hashes
        )
        existing = run.image(tags[0])
        if existing and not run.force:
            have = ((existing.get("Config") or {}).get("Labels") or {}).get(DIGEST_LABEL)
            if have == digest:
                result = BuildResult(
                    variant.id,
                    BuildStatus.UNCHANGED,
                    tags,
                    existing["Id"],
                    digest,
                    time.perf_counter() - started,
                    base.standin,
                )
                run.progress.update(variant.id, result.line().split(": ", 1)[1], final=True)
                return result
        run.progress.update(
            variant.id, "building" + (" on a stand-in base" if base.standin else "")
        )
        iid = run.logs / f"build-{variant.id}.iid"
        iid.unlink(missing_ok=True)
        run.check_interrupted()
        outcome = engine.build(
            context=context,
            dockerfile=dockerfile,
            build_args=args,
            labels={**labels, DIGEST_LABEL: digest},
            iidfile=iid,
            platform=variant.platform,
            log=log,
            no_cache=run.no_cache,
        )
        if not outcome.ok or not iid.exists():
            tail = [line for line in log.read_text(errors="replace").splitlines() if line.strip()][
                -1:
            ]
            raise EngineError(tail[0].strip() if tail else f"docker build exited {outcome.status}")
        image_id = iid.read_text().strip()
        run.build_seconds[variant.id] = outcome.seconds
        run.check_interrupted()  # a build that finished as Ctrl-C came is discarded, not tagged
        engine.tag(image_id, tags)
        previous = str(existing["Id"]) if existing and existing.get("Id") != image_id else None
        now = engine.inspect_images([tags[0], *([previous] if previous else [])])
        if (now.get(tags[0]) or {}).get("Id") != image_id:
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
        )
    except ReleaseError as err:
        result = BuildResult(
            variant.id,
            BuildStatus.FAILED,
            tags,
            seconds=time.perf_counter() - started,
            log=log if log.exists() else None,
            error=err.one_line(),
        )
        if (
            not run.keep_going
        ):  # here, not in the caller: a free worker takes the next variant at once
            run.stop.set()
    run.progress.update(variant.id, result.line().split(": ", 1)[1], final=True)
    return result


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
) -> list[BuildResult]:
    chosen = list(variants)
    said = _flushing(say)
    tags = [matrix.tag(v, source.image_version) for v in chosen]
    # one query for every base and tag; it also raises the clear error when no engine answers
    inspected = engine.inspect_images([*(v.base_image for v in chosen), *tags])
    said(f"builder: {engine.description}")
    said(
        f"version {source.version} ({'tag' if source.tagged else 'untagged build'}), revision {source.revision[:10]}"
    )
    logs.mkdir(parents=True, exist_ok=True)
    with Progress([v.id for v in chosen], say) as progress:
        run = _Run(
            engine,
            matrix,
            source,
            logs,
            force or no_cache,
            progress,
            no_cache=no_cache,
            keep_going=keep_going,
            inspected=inspected,
            hashes=HashCache(logs / HASHES),
        )
        order = schedule(matrix, chosen, read_durations(logs)) if jobs > 1 else chosen
        futures: dict[str, Future[BuildResult]] = {}
        pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="build")
        try:
            for variant in order:
                futures[variant.id] = pool.submit(_build_one, run, variant)
            results: list[BuildResult] = []
            for variant in chosen:
                result = futures[variant.id].result()
                if result.status is BuildStatus.FAILED and not keep_going:
                    run.stop.set()
                results.append(result)
        except BaseException:
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
    return results


def _discard_untagged(engine: ContainerEngine, logs: Path, variants: Sequence[Variant]) -> None:
    """After an interrupt: remove images that were built but never tagged."""
    for variant in variants:
        iid = logs / f"build-{variant.id}.iid"
        if iid.exists():
            image = iid.read_text().strip()
            data = engine.inspect_image(image)
            if data is not None and not data.get("RepoTags"):
                engine.remove_image(image)
            iid.unlink(missing_ok=True)

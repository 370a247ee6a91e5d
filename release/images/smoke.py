"""``smoke``: run one variant's smoke checks (:mod:`release.images.smoke_checks`) with
container-structure-test.

Each check that runs a command runs as its own container-structure-test invocation with
its own timeout (a hung container is killed and removed); the checks that run nothing in
a container (metadata, file contents), which cannot hang, share one invocation and are
still reported one by one. ``serve`` checks start the image's server and ask it
(:mod:`release.images.serve_check`). Checks that need a GPU run only where one is usable
and are reported as *not run* otherwise. Each check is told as it finishes.
container-structure-test is given the image as a tag that names this process
(:func:`release.adapters.leftovers.owned_ref`), so the containers it makes say whose they
are: those of a killed run are removed by the next.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from release.adapters.devices import DeviceAccess, device_access
from release.adapters.engine import ContainerEngine, RunResult
from release.adapters.image_info import ImageInfo
from release.adapters.leftovers import owned_ref, record_images, scratch
from release.adapters.process import last_line
from release.adapters.structure_test import structure_test
from release.core.devices import device_of
from release.core.matrix import ImageMatrix, Variant
from release.errors import EngineError
from release.images.progress import live_step
from release.images.serve_check import run_serve_check
from release.images.smoke_checks import (
    CheckResult,
    CheckStatus,
    SmokeCheck,
    SmokeReport,
    shares_a_run,
    smoke_checks,
)
from release.images.source import BuildSource
from release.images.standin import STANDIN_LABEL

__all__ = ["run_check", "run_shared", "run_smoke"]

_SETTLE = 0.3  # seconds for a container creation already asked of the engine to finish


def _cst(
    engine: ContainerEngine,
    image: str,
    configs: Sequence[Path],
    report: Path,
    timeout: float,
    platform: str | None,
) -> tuple[RunResult, float]:
    """One container-structure-test run; after a timeout or Ctrl-C, what it left is removed."""
    report.unlink(missing_ok=True)
    before = _made_from(engine, image)
    started = time.perf_counter()
    try:
        proc = structure_test(engine, image, configs, report, timeout=timeout, platform=platform)
    except BaseException:  # Ctrl-C: the killed tool leaves its container and image behind
        _remove_new(engine, image, before)
        raise
    if proc.timed_out:
        _remove_new(engine, image, before)
    return proc, time.perf_counter() - started


def _verdict(
    check: SmokeCheck,
    results: Sequence[Mapping[str, Any]],
    failed: bool,
    stdout: str,
    seconds: float,
) -> CheckResult:
    failures = [r for r in results if not r.get("Pass")]
    if failures or failed:
        errors = "; ".join(e for r in failures for e in (r.get("Errors") or [])) or last_line(
            stdout, "no output"
        )
        one_line = errors.strip().replace("\n", "\\n")
        return CheckResult(check.name, CheckStatus.FAILED, seconds, one_line)
    return CheckResult(check.name, CheckStatus.PASSED, seconds)


def run_check(
    engine: ContainerEngine,
    image: str,
    check: SmokeCheck,
    workdir: Path,
    platform: str | None = None,
) -> CheckResult:
    config = workdir / "check.json"
    report = workdir / "report.json"
    config.write_text(json.dumps(check.config), encoding="utf-8")
    proc, seconds = _cst(engine, image, [config], report, check.timeout, platform)
    if proc.timed_out:
        return CheckResult(
            check.name, CheckStatus.TIMED_OUT, seconds, f"no answer within {check.timeout:.0f}s"
        )
    if not report.exists():
        return CheckResult(
            check.name,
            CheckStatus.FAILED,
            seconds,
            last_line(proc.stderr or proc.stdout, "no output"),
        )
    data = json.loads(report.read_text(encoding="utf-8"))
    return _verdict(check, data.get("Results", []), bool(data.get("Fail")), proc.stdout, seconds)


def run_shared(
    engine: ContainerEngine,
    image: str,
    checks: Sequence[SmokeCheck],
    workdir: Path,
    platform: str | None = None,
) -> list[CheckResult] | None:
    """Checks that run nothing in a container, in one container-structure-test run (one
    ``--config`` each; its results come back in config order, one per check). Each gets an
    equal share of the run's time. None when the run cannot be read back check by check
    (then each check runs on its own, as any other)."""
    if len(checks) < 2:
        return None
    configs = []
    for index, check in enumerate(checks):
        config = workdir / f"static-{index}.json"
        config.write_text(json.dumps(check.config), encoding="utf-8")
        configs.append(config)
    report = workdir / "static-report.json"
    proc, seconds = _cst(engine, image, configs, report, max(c.timeout for c in checks), platform)
    if proc.timed_out or not report.exists():
        return None
    try:
        results = json.loads(report.read_text(encoding="utf-8")).get("Results") or []
        if [r.get("Name") for r in results] != [shares_a_run(c) for c in checks]:
            return None
    except (ValueError, AttributeError):
        return None
    share = seconds / len(checks)
    return [
        _verdict(check, [result], False, proc.stdout, share)
        for check, result in zip(checks, results, strict=True)
    ]


def _made_from(engine: ContainerEngine, image: str) -> tuple[set[str], set[str]]:
    """Containers of ``image`` and untagged images made after it (candidates for the images
    container-structure-test commits from ``image`` and removes only when it ends normally)."""
    return set(engine.containers_of(image)), set(engine.untagged_since(image))


def _remove_new(engine: ContainerEngine, image: str, before: tuple[set[str], set[str]]) -> None:
    """After a check was killed: remove the containers and committed images it left. The
    containers are looked for twice: one the killed tool asked for just before may be
    made by the engine after the first look."""
    containers, images = _made_from(engine, image)
    for leftover in containers - before[0]:
        engine.remove_container(leftover)
    time.sleep(_SETTLE)
    for leftover in set(engine.containers_of(image)) - before[0] - containers:
        engine.remove_container(leftover)
    parent = image if image.startswith("sha256:") else engine.image_id(image)  # a tag: its id
    for candidate in images - before[1]:
        data = engine.inspect_image(candidate)
        if data is not None and data.parent == parent and not data.repo_tags:
            engine.remove_image(candidate)


@contextlib.contextmanager
def _owned(engine: ContainerEngine, data: ImageInfo, tmp: Path) -> Iterator[str]:
    """The image as container-structure-test is given it: a tag that names this process,
    so the containers it makes say whose they are (a killed run's are removed by the next,
    with the tag, recorded in the scratch dir ``tmp``); the id where this process is no
    owner or the image has no tag of its own (untagging the last would remove it)."""
    ref = owned_ref(data.id)
    if ref is None or not data.repo_tags:
        yield data.id
        return
    record_images(tmp, [ref])
    engine.tag(data.id, [ref])
    try:
        yield ref
    finally:
        engine.remove_image(ref)


def run_smoke(
    engine: ContainerEngine,
    matrix: ImageMatrix,
    variant: Variant,
    source: BuildSource,
    image: str,
    *,
    say: Callable[[str], None] = print,
    inspected: ImageInfo | None = None,
    live: bool = False,
) -> SmokeReport:
    """``inspected``: the image's inspect data when the caller has it already. ``live``: a
    live line for the check that is running, on a terminal."""
    data = inspected if inspected is not None else engine.inspect_image(image)
    if data is None:
        raise EngineError(f"image {image} does not exist; build it first")
    labels = data.labels
    checks = smoke_checks(matrix, variant, source, data.entrypoint)
    kind = variant.accelerator.kind
    device = device_access(engine, kind, device_of(kind, matrix.smoke.gpu_command))
    results: dict[int, CheckResult] = {}
    standin = labels.get(STANDIN_LABEL) == "true"
    platform = data.platform  # container-structure-test's default is linux/amd64
    say(SmokeReport(variant.id, image, data.id, standin, (), variant.accelerator).head())

    def done(at: int, result: CheckResult) -> None:  # each check is told as it finishes
        results[at] = result
        for line in result.lines():
            say(line)

    with scratch("smoke") as tmp, _owned(engine, data, tmp) as tested:
        static_at = [i for i, c in enumerate(checks) if shares_a_run(c) is not None]
        together = f"smoke({variant.id}): {len(static_at)} checks in one container"
        with live_step(together, live=live and bool(static_at)):
            shared = run_shared(engine, tested, [checks[i] for i in static_at], tmp, platform)
        static = dict(zip(static_at, shared, strict=True)) if shared is not None else {}
        for index, check in enumerate(checks):
            if index in static:
                done(index, static[index])
            elif check.gpu and not device.usable:
                done(index, CheckResult(check.name, CheckStatus.NOT_RUN, 0.0, device.reason))
            else:
                with live_step(f"smoke({variant.id}): {check.name}", live=live):
                    result = _run_one(engine, data.id, tested, check, tmp, platform, device)
                done(index, result)
    ordered = tuple(results[i] for i in sorted(results))
    return SmokeReport(variant.id, image, data.id, standin, ordered, variant.accelerator)


def _run_one(
    engine: ContainerEngine,
    image_id: str,
    tested: str,
    check: SmokeCheck,
    tmp: Path,
    platform: str,
    device: DeviceAccess,
) -> CheckResult:
    """One check that does not share a run: served, on the device, or alone in a
    container."""
    if check.serve is not None:
        return run_serve_check(engine, image_id, check.serve, device)
    if check.gpu:
        started = time.perf_counter()
        run = engine.run_container(
            image_id,
            list(check.argv[1:]),
            entrypoint=check.argv[0],
            timeout=check.timeout,
            gpus=device.gpus,
            extra=device.options,
        )
        status = (
            CheckStatus.TIMED_OUT
            if run.timed_out
            else (CheckStatus.PASSED if run.ok else CheckStatus.FAILED)
        )
        return CheckResult(
            check.name,
            status,
            time.perf_counter() - started,
            "" if run.ok else last_line(run.stderr or run.stdout, "no output"),
        )
    return run_check(engine, tested, check, tmp, platform)

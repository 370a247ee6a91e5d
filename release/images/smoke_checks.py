"""Smoke checks as data: what to check in one variant's image, and how results read. Pure.

:func:`smoke_checks` says what is checked: the engine imports and reports the version
being built; ``CUDA_VERSION`` and ``/usr/local/cuda/version.json`` match the variant;
labels and env are right; the entrypoint answers ``--help``; plus the checks in
``[tool.release.images.smoke]``. Each check is one container-structure-test config, but
for ``serve`` checks (:mod:`release.images.serve_check`), which start the image's server.
A check that needs a GPU and has none is *not run*, never passed. A result's lines show
its name, detail and log lines as single-line fields, their control characters escaped
(:mod:`release.core.terminal_text`): a check name is the config's, a detail and a log
are the container's.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from release.core.matrix import Check, ImageMatrix, Variant
from release.core.terminal_text import escaped
from release.images.source import BuildSource

__all__ = [
    "CheckResult",
    "CheckStatus",
    "SmokeCheck",
    "SmokeReport",
    "shares_a_run",
    "smoke_checks",
]


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
    serve: Check | None = None  # a kind = "serve" check: the image served and asked


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: CheckStatus
    seconds: float
    detail: str = ""
    log: tuple[str, ...] = ()  # the container's last lines, when it failed

    def lines(self) -> list[str]:
        failed = self.status is not CheckStatus.PASSED
        detail = f" - {escaped(self.detail)}" if self.detail and failed else ""
        out = [f"  {self.status.value:9} {escaped(self.name)} ({self.seconds:.1f}s){detail}"]
        if self.log and failed:
            out.append("            its last log lines:")
            out += [f"            | {escaped(line)}" for line in self.log]
        return out


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
                    **({"log": list(r.log)} if r.log else {}),
                }
                for r in self.results
            ],
        }

    def head(self) -> str:
        marker = (
            " [on a stand-in base: CUDA layout only, no CUDA libraries]"
            if self.standin_base
            else ""
        )
        return f"smoke({self.variant}): {self.image}{marker}"

    def verdict(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        counts = {s: sum(1 for r in self.results if r.status is s) for s in CheckStatus}
        return f"smoke({self.variant}): {verdict}: " + ", ".join(
            f"{n} {s.value}" for s, n in counts.items() if n
        )

    def lines(self) -> list[str]:
        return [self.head(), *(line for r in self.results for line in r.lines()), self.verdict()]


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
        {"key": "org.opencontainers.image.revision", "value": source.revision_label},
        {"key": "org.release.variant", "value": variant.id},
        {"key": "org.release.cuda", "value": cuda},
    ]
    machine = _UNAME.get(variant.platform or "")
    if variant.platform:
        labels.append({"key": "org.release.platform", "value": variant.platform})
    if machine:  # the binaries are the platform's, run natively or under its emulator
        checks.append(
            SmokeCheck(
                f"runs as {variant.platform} (uname -m: {machine})",
                _config(
                    commandTests=[
                        {
                            "name": "platform",
                            "command": "uname",
                            "args": ["-m"],
                            "exitCode": 0,
                            "expectedOutput": [f"^{re.escape(machine)}\\s*$"],
                        }
                    ]
                ),
                timeout,
            )
        )
    checks.append(
        SmokeCheck(
            "labels: version, revision, variant, CUDA" + (", platform" if variant.platform else ""),
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
        if check.kind == "serve":
            checks.append(SmokeCheck(check.name, {}, check.timeout, gpu=check.gpu, serve=check))
            continue
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


# what ``uname -m`` says in a container of the platform (natively or under qemu-user)
_UNAME = {
    "linux/amd64": "x86_64",
    "linux/arm64": "aarch64",
    "linux/arm64/v8": "aarch64",
    "linux/arm/v7": "armv7l",
    "linux/ppc64le": "ppc64le",
    "linux/s390x": "s390x",
    "linux/riscv64": "riscv64",
}

_STATIC_KINDS = {"metadataTest": "Metadata Test", "fileContentTests": "File Content Test"}


def shares_a_run(check: SmokeCheck) -> str | None:
    """The result name container-structure-test gives a check that runs nothing in a
    container and holds exactly one test (a metadata test, or one file content test);
    None for any other check. Such a check cannot hang, so it can share an invocation."""
    if check.gpu or check.serve is not None:
        return None
    kinds = [key for key in check.config if key != "schemaVersion"]
    if kinds == ["metadataTest"]:
        return _STATIC_KINDS["metadataTest"]
    if kinds == ["fileContentTests"] and len(check.config["fileContentTests"]) == 1:
        return f"{_STATIC_KINDS['fileContentTests']}: {check.config['fileContentTests'][0]['name']}"
    return None

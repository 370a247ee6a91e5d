"""Smoke checks as data: what to check in one variant's image, and how results read. Pure.

:func:`smoke_checks` says what is checked: the engine imports and reports the version
being built; the accelerator's layout in the image matches the variant
(:func:`layout_checks`: CUDA's ``CUDA_VERSION`` and ``/usr/local/cuda/version.json``,
ROCm's ``/opt/rocm/.info/version``, CANN's ``ASCEND_HOME_PATH`` and its toolkit's
``ascend_toolkit_install.info``, Gaudi's ``HABANA_SCAL_BIN_PATH``); labels and env are right; the entrypoint answers ``--help``; plus the checks in
``[tool.release.images.smoke]``. Each check is one container-structure-test config, but
for ``serve`` checks (:mod:`release.images.serve_check`), which start the image's server.
A check that needs the variant's device (:mod:`release.core.devices`) where none is here
is *not run*, never passed; a CPU variant has no device check. A result's lines show
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

from release.core.accelerator import Accelerator
from release.core.devices import device_of
from release.core.matrix import Check, ImageMatrix, Variant
from release.core.terminal_text import escaped
from release.images.source import BuildSource

__all__ = [
    "CheckResult",
    "CheckStatus",
    "SmokeCheck",
    "SmokeReport",
    "layout_checks",
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
    accelerator: Accelerator = field(default_factory=lambda: Accelerator("cuda"))

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
        name = self.accelerator.name
        marker = (
            ""
            if not self.standin_base
            else " [on a stand-in base: a Debian rootfs, not the real base]"
            if self.accelerator.kind == "cpu"
            else f" [on a stand-in base: {name} layout only, no {name} libraries]"
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
    accelerator = variant.accelerator
    checks += layout_checks(accelerator, timeout)
    labels = [
        {"key": "org.opencontainers.image.version", "value": source.version},
        {"key": "org.opencontainers.image.revision", "value": source.revision_label},
        {"key": "org.release.variant", "value": variant.id},
        {"key": f"org.release.{accelerator.kind}", "value": accelerator.version or "true"},
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
            f"labels: version, revision, variant, {accelerator.name}"
            + (", platform" if variant.platform else ""),
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
    device = device_of(accelerator.kind, smoke.gpu_command)
    if device is not None:
        checks.append(
            SmokeCheck(
                f"{device.what} visible (" + " ".join(device.command) + ")",
                {},
                timeout,
                gpu=True,
                argv=device.command,
            )
        )
    return checks


def _env_is(key: str, value: str, name: str, timeout: float) -> SmokeCheck:
    """``key`` is set in the image's config to ``value`` (a regex), as the check ``name``."""
    test = {"key": key, "value": value, "isRegex": True}
    return SmokeCheck(name, _config(metadataTest={"envVars": [test]}), timeout)


def _file_says(path: str, pattern: str, name: str, timeout: float) -> SmokeCheck:
    test = {"name": path.rsplit("/", 1)[-1], "path": path, "expectedContents": [pattern]}
    return SmokeCheck(name, _config(fileContentTests=[test]), timeout)


def layout_checks(accelerator: Accelerator, timeout: float) -> list[SmokeCheck]:
    """What the accelerator's images carry, checked against the variant's version. Read
    from the vendors' own base images: ``nvidia/cuda`` sets ``CUDA_VERSION`` and writes
    ``/usr/local/cuda/version.json``; ROCm's packages write ``/opt/rocm/.info/version``
    (``6.4.1-120``: the version and a build number); CANN's images set
    ``ASCEND_HOME_PATH`` to the toolkit, whose ``<arch>-linux/ascend_toolkit_install.info``
    says ``version=8.1.RC1`` (compared without case: tags write ``8.1.rc1``); Gaudi's set
    ``HABANA_SCAL_BIN_PATH`` (no version file). TPU, XPU, Neuron and CPU images carry no
    layout known to be reliable: none is checked."""
    version, kind = accelerator.version, accelerator.kind
    if kind == "cuda":
        return [
            _env_is("CUDA_VERSION", _exact(version), f"CUDA_VERSION is {version}", timeout),
            _file_says(
                "/usr/local/cuda/version.json",
                '"version"\\s*:\\s*"' + re.escape(version) + '"',
                f"/usr/local/cuda/version.json says {version}",
                timeout,
            ),
        ]
    if kind == "rocm":
        path = "/opt/rocm/.info/version"
        pattern = "(?m)^" + re.escape(version) + "(-[0-9]+)?\\s*$"
        return [_file_says(path, pattern, f"{path} says {version}", timeout)]
    if kind == "cann":
        info = '"$ASCEND_HOME_PATH/$(uname -m)-linux/ascend_toolkit_install.info"'
        test = {
            "name": "ascend_toolkit_install.info",
            "command": "sh",
            "args": ["-c", f"cat {info}"],
            "exitCode": 0,
            "expectedOutput": ["(?mi)^version=" + re.escape(version) + "\\s*$"],
        }
        return [
            _env_is("ASCEND_HOME_PATH", "^/.+", "ASCEND_HOME_PATH is set", timeout),
            SmokeCheck(
                f"ascend_toolkit_install.info says {version}",
                _config(commandTests=[test]),
                timeout,
            ),
        ]
    if kind == "hpu":
        return [_env_is("HABANA_SCAL_BIN_PATH", "^/.+", "HABANA_SCAL_BIN_PATH is set", timeout)]
    return []


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

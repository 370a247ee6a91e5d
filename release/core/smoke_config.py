"""``[tool.release.images.smoke]`` as data: the declarative smoke checks of every image
(a command run in the image, or the image served and asked). Pure."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from release.core.serving import (
    Request,
    Serving,
    parse_requests,
    parse_serving,
    refuse_unknown,
)
from release.core.table_values import argv_value, seconds_value, string_value
from release.errors import ConfigError

__all__ = ["Check", "SmokeConfig", "parse_smoke"]

PREFIX = "[tool.release.images]"
_SERVING_KEYS = ("port", "health", "startup-timeout", "run-options")
_SMOKE_KEYS = ("package", "entrypoint-help", "timeout", "env", "checks", "gpu-command")
_CHECK_KEYS = ("name", "kind", "command", "expect-output", "expect-exit", "timeout", "gpu",
               "requests", *_SERVING_KEYS)  # fmt: skip
_KINDS = ("command", "serve")


@dataclass(frozen=True)
class Check:
    """One declarative smoke check: a command run in the image (``kind = "command"``), or
    the image served and asked (``kind = "serve"``: ``serving`` and ``requests``)."""

    name: str
    command: tuple[str, ...]
    expect_output: str | None = None  # a regex the output must match
    expect_exit: int = 0
    timeout: float = 60.0
    gpu: bool = False
    kind: str = "command"
    serving: Serving | None = None
    requests: tuple[Request, ...] = ()


@dataclass(frozen=True)
class SmokeConfig:
    package: str | None = None  # the engine package; imports and reports the version
    entrypoint_help: bool = True
    timeout: float = 60.0
    env: Mapping[str, str] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    gpu_command: tuple[str, ...] = ("nvidia-smi",)


def parse_smoke(raw: object) -> SmokeConfig:
    """Validate ``[tool.release.images.smoke]``."""
    where = f"{PREFIX} smoke"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected a table")
    refuse_unknown(raw, _SMOKE_KEYS, where)
    checks = []
    names: set[str] = set()
    for index, item in enumerate(raw.get("checks", [])):
        cw = f"{where}.checks[{index}]"
        if not isinstance(item, Mapping):
            raise ConfigError(f"{cw}: expected a table")
        refuse_unknown(item, _CHECK_KEYS, cw)
        name = string_value(item, "name", f"{cw}.name", required=True) or ""
        if name in names:
            raise ConfigError(f"{cw}.name: duplicate check {name!r}")
        names.add(name)
        expect = string_value(item, "expect-output", f"{cw}.expect-output")
        if expect is not None:
            try:
                re.compile(expect)
            except re.error as err:
                raise ConfigError(f"{cw}.expect-output: bad regex {expect!r}: {err}") from None
        exit_code = item.get("expect-exit", 0)
        if not isinstance(exit_code, int) or isinstance(exit_code, bool):
            raise ConfigError(f"{cw}.expect-exit: expected an integer")
        kind = item.get("kind", "command")
        if kind not in _KINDS:
            raise ConfigError(f"{cw}.kind: expected one of {', '.join(_KINDS)}, got {kind!r}")
        timeout = seconds_value(
            item, "timeout", f"{cw}.timeout", seconds_value(raw, "timeout", where, 60.0)
        )
        if kind == "command":
            for key in ("requests", *_SERVING_KEYS):
                if key in item:
                    raise ConfigError(f'{cw}.{key}: only a kind = "serve" check takes it')
            checks.append(
                Check(
                    name,
                    argv_value(item.get("command"), f"{cw}.command"),
                    expect,
                    exit_code,
                    timeout,
                    bool(item.get("gpu", False)),
                )
            )
            continue
        for key in ("expect-output", "expect-exit"):
            if key in item:
                raise ConfigError(
                    f"{cw}.{key}: a serve check says what it expects per request "
                    "(expect-status, expect-json, expect-output in [[...requests]])"
                )
        command = argv_value(item["command"], f"{cw}.command") if "command" in item else ()
        checks.append(
            Check(
                name,
                command,
                timeout=timeout,
                gpu=bool(item.get("gpu", False)),
                kind="serve",
                serving=parse_serving(item, cw, command),
                requests=parse_requests(item.get("requests"), f"{cw}.requests", required=True),
            )
        )
    env = raw.get("env", {})
    if not isinstance(env, Mapping) or not all(isinstance(v, str) for v in env.values()):
        raise ConfigError(f'{where}.env: expected a table of NAME = "value"')
    package = string_value(raw, "package", f"{where}.package")
    if package is not None and not re.match(r"^[A-Za-z_][A-Za-z0-9_.]*$", package):
        raise ConfigError(f"{where}.package: {package!r} is not an importable module name")
    return SmokeConfig(
        package=package,
        entrypoint_help=bool(raw.get("entrypoint-help", True)),
        timeout=seconds_value(raw, "timeout", f"{where}.timeout", 60.0),
        env=dict(env),
        checks=tuple(checks),
        gpu_command=argv_value(raw["gpu-command"], f"{where}.gpu-command")
        if "gpu-command" in raw
        else ("nvidia-smi",),
    )

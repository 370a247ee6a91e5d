"""The image matrix: ``[tool.release.images]`` as data, one row per CUDA variant. Pure.

The snapshot rule is one entry, a ``packaging`` specifier on the CUDA version: the same
predicate decides whether a variant's image gets the snapshot-runtime build step and
whether its ``snapshot`` session exists (:meth:`ImageMatrix.has_snapshot`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from release.core.references import IMAGE_NAME, IMAGE_REFERENCE, IMAGE_TAG, registry_prefix
from release.core.serving import (
    Request,
    Serving,
    parse_requests,
    parse_serving,
    parse_timeout,
    refuse_unknown,
)
from release.core.tree_paths import tree_relative
from release.errors import ConfigError

__all__ = [
    "Check",
    "ImageMatrix",
    "SmokeConfig",
    "SnapshotRule",
    "Variant",
    "parse_images",
]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_ARG = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

PREFIX = "[tool.release.images]"


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


@dataclass(frozen=True)
class SnapshotRule:
    """Which variants get the snapshot runtime, and its round trip: ``runtime`` is the
    in-image command that holds, starts, dumps and restores the server (its four
    subcommands); ``serving`` says how the server runs and the container options the
    runtime needs; ``warm`` requests go before the checkpoint, ``carried`` ones after the
    restore (they check the state came along)."""

    cuda: SpecifierSet
    build_args: Mapping[str, str] = field(default_factory=dict)
    runtime: tuple[str, ...] = ()
    serving: Serving = field(default_factory=Serving)
    warm: tuple[Request, ...] = ()
    carried: tuple[Request, ...] = ()
    timeout: float = 120.0

    def applies(self, cuda: Version) -> bool:
        return self.cuda.contains(cuda, prereleases=True)


@dataclass(frozen=True)
class Variant:
    id: str
    cuda: Version
    base_image: str
    python: str | None = None
    platform: str | None = None
    build_args: Mapping[str, str] = field(default_factory=dict)

    @property
    def cuda_text(self) -> str:
        return str(self.cuda)


@dataclass(frozen=True)
class ImageMatrix:
    name: str
    dockerfile: str
    context: str
    default_variant: str
    variants: tuple[Variant, ...]
    snapshot: SnapshotRule | None
    smoke: SmokeConfig = field(default_factory=SmokeConfig)
    build_args: Mapping[str, str] = field(default_factory=dict)
    version_arg: str | None = None
    moving_tag: str = "latest"  # moved to each final's images (never an rc's); "" for none
    heartbeat: float = 60.0  # seconds between the lines a build not on a terminal prints
    ci_registry: str = ""  # where CI jobs pass images (REGISTRY/NAME:TAG); "" for artifacts

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(v.id for v in self.variants)

    def variant(self, variant_id: str) -> Variant:
        for v in self.variants:
            if v.id == variant_id:
                return v
        raise ConfigError(f"no image variant {variant_id!r}; variants: {', '.join(self.ids)}")

    def has_snapshot(self, variant: Variant) -> bool:
        """The one rule: the snapshot build step and the snapshot session exist together."""
        return self.snapshot is not None and self.snapshot.applies(variant.cuda)

    def snapshot_ids(self) -> tuple[str, ...]:
        return tuple(v.id for v in self.variants if self.has_snapshot(v))

    def session_ids(self) -> dict[str, tuple[str, ...]]:
        """The image sessions, in the order nox lists them: each name with its variants
        (``build`` and ``smoke`` for every one, ``snapshot`` where the rule applies). The nox
        sessions and the generated CI pipelines are both made from this."""
        return {"build": self.ids, "smoke": self.ids, "snapshot": self.snapshot_ids()}

    def tag(self, variant: Variant, image_version: str) -> str:
        """``NAME:v0.31.0rc1`` for the default variant, ``NAME:v0.31.0rc1-cu129`` otherwise."""
        suffix = "" if variant.id == self.default_variant else f"-{variant.id}"
        return f"{self.name}:{image_version}{suffix}"

    def build_args_for(self, variant: Variant, version: str | None = None) -> dict[str, str]:
        args = {"CUDA_VERSION": variant.cuda_text, "BASE_IMAGE": variant.base_image}
        if variant.python:
            args["PYTHON_VERSION"] = variant.python
        args.update(self.build_args)
        args.update(variant.build_args)
        if self.snapshot is not None and self.has_snapshot(variant):
            args.update(self.snapshot.build_args)
        if self.version_arg and version is not None:
            args[self.version_arg] = version
        return dict(sorted(args.items()))


# -- validation -------------------------------------------------------------


def _where(variant: str | None, key: str) -> str:
    return f"{PREFIX} variants[{variant}].{key}" if variant else f"{PREFIX} {key}"


def _string(
    table: Mapping[str, Any], key: str, where: str, *, required: bool = False
) -> str | None:
    if key not in table:
        if required:
            raise ConfigError(f"{where}: missing (required)")
        return None
    value = table[key]
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: expected a non-empty string, got {value!r}")
    return value


def _tree_path(table: Mapping[str, Any], key: str, default: str) -> str:
    """The context or the Dockerfile: a path in the work tree, relative to its root."""
    where = _where(None, key)
    return tree_relative(where, _string(table, key, where) or default)


def _args(table: Mapping[str, Any], key: str, where: str) -> dict[str, str]:
    raw = table.get(key, {})
    if not isinstance(raw, Mapping):
        raise ConfigError(f'{where}: expected a table of NAME = "value"')
    out: dict[str, str] = {}
    for name, value in raw.items():
        if not _ARG.match(name):
            raise ConfigError(f"{where}: {name!r} is not a valid build-arg name")
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ConfigError(f"{where}.{name}: expected a string, got {value!r}")
        out[name] = str(value)
    return out


def _command(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a non-empty list of strings (argv)")
    return tuple(value)


def _number(table: Mapping[str, Any], key: str, where: str, default: float) -> float:
    return parse_timeout(table.get(key, default), where)


_IMAGE_KEYS = (
    "name",
    "dockerfile",
    "context",
    "default-variant",
    "variants",
    "snapshot",
    "smoke",
    "build-args",
    "version-arg",
    "moving-tag",
    "heartbeat",
    "ci-registry",
)
_VARIANT_KEYS = ("id", "cuda", "base-image", "python", "platform", "build-args")
_SERVING_KEYS = ("port", "health", "startup-timeout", "run-options")
_SNAPSHOT_KEYS = ("cuda", "build-args", "runtime", "serve", "warm", "carried", "timeout",
                  *_SERVING_KEYS)  # fmt: skip
_SMOKE_KEYS = ("package", "entrypoint-help", "timeout", "env", "checks", "gpu-command")
_CHECK_KEYS = ("name", "kind", "command", "expect-output", "expect-exit", "timeout", "gpu",
               "requests", *_SERVING_KEYS)  # fmt: skip
_KINDS = ("command", "serve")


def _variant(raw: Any, index: int) -> Variant:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{PREFIX} variants[{index}]: expected a table")
    vid = raw.get("id")
    if not isinstance(vid, str) or not _ID.match(vid):
        raise ConfigError(
            f"{PREFIX} variants[{index}].id: {vid!r} is not a valid variant id (letters, digits, . _ -)"
        )
    refuse_unknown(raw, _VARIANT_KEYS, f"{PREFIX} variants[{vid}]")
    cuda_text = _string(raw, "cuda", _where(vid, "cuda"), required=True)
    try:
        cuda = Version(cuda_text or "")
    except InvalidVersion:
        raise ConfigError(
            f'{_where(vid, "cuda")}: {cuda_text!r} is not a version (e.g. "12.9.1")'
        ) from None
    base = _string(raw, "base-image", _where(vid, "base-image"), required=True) or ""
    if not IMAGE_REFERENCE.match(base):
        raise ConfigError(
            f"{_where(vid, 'base-image')}: {base!r} is not an image reference docker accepts"
        )
    platform = _string(raw, "platform", _where(vid, "platform"))
    if platform is not None and not re.match(r"^[a-z0-9]+/[a-z0-9_]+(/[a-z0-9]+)?$", platform):
        raise ConfigError(
            f"{_where(vid, 'platform')}: {platform!r} is not os/arch (e.g. linux/amd64)"
        )
    return Variant(
        id=vid,
        cuda=cuda,
        base_image=base,
        python=_string(raw, "python", _where(vid, "python")),
        platform=platform,
        build_args=_args(raw, "build-args", _where(vid, "build-args")),
    )


def _smoke(raw: Any) -> SmokeConfig:
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
        name = _string(item, "name", f"{cw}.name", required=True) or ""
        if name in names:
            raise ConfigError(f"{cw}.name: duplicate check {name!r}")
        names.add(name)
        expect = _string(item, "expect-output", f"{cw}.expect-output")
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
        timeout = _number(item, "timeout", f"{cw}.timeout", _number(raw, "timeout", where, 60.0))
        if kind == "command":
            for key in ("requests", *_SERVING_KEYS):
                if key in item:
                    raise ConfigError(f'{cw}.{key}: only a kind = "serve" check takes it')
            checks.append(
                Check(
                    name,
                    _command(item.get("command"), f"{cw}.command"),
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
        command = _command(item["command"], f"{cw}.command") if "command" in item else ()
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
    package = _string(raw, "package", f"{where}.package")
    if package is not None and not re.match(r"^[A-Za-z_][A-Za-z0-9_.]*$", package):
        raise ConfigError(f"{where}.package: {package!r} is not an importable module name")
    return SmokeConfig(
        package=package,
        entrypoint_help=bool(raw.get("entrypoint-help", True)),
        timeout=_number(raw, "timeout", f"{where}.timeout", 60.0),
        env=dict(env),
        checks=tuple(checks),
        gpu_command=_command(raw["gpu-command"], f"{where}.gpu-command")
        if "gpu-command" in raw
        else ("nvidia-smi",),
    )


def parse_images(table: Mapping[str, Any]) -> ImageMatrix | None:
    """Validate ``[tool.release.images]``; None when the table is absent or empty."""
    if not table:
        return None
    refuse_unknown(table, _IMAGE_KEYS, PREFIX)
    name = _string(table, "name", _where(None, "name"), required=True) or ""
    if not IMAGE_NAME.match(name):
        raise ConfigError(
            f"{PREFIX} name: {name!r} is not an image name docker accepts (lowercase, e.g. org/engine)"
        )
    raw_variants = table.get("variants")
    if not isinstance(raw_variants, list) or not raw_variants:
        raise ConfigError(
            f"{PREFIX} variants: expected at least one [[tool.release.images.variants]]"
        )
    variants = [_variant(raw, i) for i, raw in enumerate(raw_variants)]
    seen: set[str] = set()
    for v in variants:
        if v.id in seen:
            raise ConfigError(f"{PREFIX} variants[{v.id}].id: duplicate variant id {v.id!r}")
        seen.add(v.id)
    default = _string(table, "default-variant", _where(None, "default-variant")) or variants[-1].id
    if default not in seen:
        raise ConfigError(
            f"{PREFIX} default-variant: {default!r} is not a variant ({', '.join(sorted(seen))})"
        )
    for v in variants:
        example = f"{name}:v0.0.0rc1{'' if v.id == default else '-' + v.id}"
        if not IMAGE_TAG.match(example.rsplit(":", 1)[1]):
            raise ConfigError(
                f"{_where(v.id, 'id')}: image tags like {example!r} would be rejected by docker"
            )
    snapshot = None
    if "snapshot" in table:
        raw = table["snapshot"]
        where = f"{PREFIX} snapshot"
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{where}: expected a table")
        if "command" in raw:
            raise ConfigError(
                f"{where}.command: replaced by runtime (an in-image command with the "
                "subcommands hold, start, dump and restore: a real checkpoint and restore)"
            )
        refuse_unknown(raw, _SNAPSHOT_KEYS, where)
        spec_text = _string(raw, "cuda", f"{where}.cuda", required=True) or ""
        try:
            spec = SpecifierSet(spec_text)
        except InvalidSpecifier:
            raise ConfigError(
                f'{where}.cuda: {spec_text!r} is not a version specifier (e.g. "!=12.*")'
            ) from None
        runtime = _command(raw["runtime"], f"{where}.runtime") if "runtime" in raw else ()
        serve = _command(raw["serve"], f"{where}.serve") if "serve" in raw else ()
        if not runtime:
            for key in ("serve", "warm", "carried", *_SERVING_KEYS):
                if key in raw:
                    raise ConfigError(f"{where}.{key}: needs runtime (the round trip's command)")
        snapshot = SnapshotRule(
            cuda=spec,
            build_args=_args(raw, "build-args", f"{where}.build-args"),
            runtime=runtime,
            serving=parse_serving(raw, where, serve),
            warm=parse_requests(raw.get("warm"), f"{where}.warm"),
            carried=parse_requests(raw.get("carried"), f"{where}.carried"),
            timeout=_number(raw, "timeout", f"{where}.timeout", 120.0),
        )
    version_arg = _string(table, "version-arg", _where(None, "version-arg"))
    if version_arg is not None and not _ARG.match(version_arg):
        raise ConfigError(f"{PREFIX} version-arg: {version_arg!r} is not a valid build-arg name")
    moving = table.get("moving-tag")
    if moving is not None and not isinstance(moving, str):
        raise ConfigError(f'{PREFIX} moving-tag: expected a string ("" for none), got {moving!r}')
    if moving and not IMAGE_TAG.match(moving):
        raise ConfigError(f"{PREFIX} moving-tag: {moving!r} is not an image tag docker accepts")
    return ImageMatrix(
        name=name,
        dockerfile=_tree_path(table, "dockerfile", "Dockerfile"),
        context=_tree_path(table, "context", "."),
        default_variant=default,
        variants=tuple(variants),
        snapshot=snapshot,
        smoke=_smoke(table.get("smoke", {})),
        build_args=_args(table, "build-args", _where(None, "build-args")),
        version_arg=version_arg,
        moving_tag="latest" if moving is None else moving,
        heartbeat=_number(table, "heartbeat", _where(None, "heartbeat"), 60.0),
        ci_registry=registry_prefix(table.get("ci-registry", ""), _where(None, "ci-registry")),
    )

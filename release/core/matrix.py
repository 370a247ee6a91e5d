"""The image matrix: ``[tool.release.images]`` as data, one row per image built. Pure.

A variant (``[[tool.release.images.variants]]``) builds for one platform (the engine's own
unless ``platform`` or ``platforms`` names one) or for several: then it is one row per
platform, each an image of its own with its own id (``cu129-arm64``), tag
(``NAME:v0.31.0rc1-cu129-arm64``), input digest, labels, sessions and manifest entry, as
cibuildwheel makes one build identifier per platform. ``Variant.group`` is the id as
configured; publishing joins a group's rows into one multi-arch index
(``NAME:v0.31.0rc1-cu129``). A variant of one platform is one row whose id and tag are
the variant's own.

A variant names one accelerator (:mod:`release.core.accelerator`: ``cuda = "12.9.1"``,
``rocm = "6.4.1"``, ``cpu = true``) and may give its own ``dockerfile``, ``context``,
``target`` (the build stage) and ``tag-suffix`` (its part of the tag, the id by default);
what it does not give is the matrix's.

The snapshot rule is one entry, a selector over the accelerators (``cuda = "!=12.*"``): the
same predicate decides whether a variant's image gets the snapshot-runtime build step and
whether its ``snapshot`` session exists (:meth:`ImageMatrix.has_snapshot`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from release.core.accelerator import (
    SELECTOR_KEYS,
    Accelerator,
    Selector,
    parse_selector,
)
from release.core.references import IMAGE_NAME, IMAGE_TAG, registry_prefix
from release.core.serving import (
    Request,
    Serving,
    parse_requests,
    parse_serving,
    refuse_unknown,
)
from release.core.smoke_config import Check, SmokeConfig, parse_smoke
from release.core.table_values import argv_value, seconds_value, string_value
from release.core.tree_paths import tree_relative
from release.core.variant import (
    PLATFORM,
    Variant,
    build_args_table,
    parse_platforms,
    parse_variant,
    platform_slug,
    stage_name,
)
from release.errors import ConfigError

__all__ = [
    "PLATFORM",
    "Accelerator",
    "Check",
    "ImageMatrix",
    "SmokeConfig",
    "SnapshotRule",
    "Variant",
    "parse_images",
    "platform_slug",
]

_ARG = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

PREFIX = "[tool.release.images]"


@dataclass(frozen=True)
class SnapshotRule:
    """Which variants get the snapshot runtime, and its round trip: ``runtime`` is the
    in-image command that holds, starts, dumps and restores the server (its four
    subcommands); ``serving`` says how the server runs and the container options the
    runtime needs; ``warm`` requests go before the checkpoint, ``carried`` ones after the
    restore (they check the state came along)."""

    selector: Selector
    build_args: Mapping[str, str] = field(default_factory=dict)
    runtime: tuple[str, ...] = ()
    serving: Serving = field(default_factory=Serving)
    warm: tuple[Request, ...] = ()
    carried: tuple[Request, ...] = ()
    timeout: float = 120.0

    def applies(self, accelerator: Accelerator) -> bool:
        return self.selector.applies(accelerator)


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
    registry: str = ""  # where images.publish publishes them (REGISTRY/PATH); "" for none
    target: str = ""  # the build stage every variant builds unless it names its own

    def dockerfile_of(self, variant: Variant) -> str:
        return variant.dockerfile or self.dockerfile

    def context_of(self, variant: Variant) -> str:
        return variant.context or self.context

    def target_of(self, variant: Variant) -> str:
        return self.target if variant.target is None else variant.target

    def suffix_of(self, group: str) -> str:
        """The variant's part of its tags: its ``tag-suffix``, else its id."""
        rows = self.rows_of(group)
        return (rows[0].tag_suffix if rows else "") or group

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(v.id for v in self.variants)

    @property
    def groups(self) -> tuple[str, ...]:
        """The variants as configured, in order (a group's rows are its platforms)."""
        return tuple(dict.fromkeys(v.group for v in self.variants))

    def rows_of(self, group: str) -> tuple[Variant, ...]:
        return tuple(v for v in self.variants if v.group == group)

    def variant(self, variant_id: str) -> Variant:
        for v in self.variants:
            if v.id == variant_id:
                return v
        raise ConfigError(f"no image variant {variant_id!r}; variants: {', '.join(self.ids)}")

    def select(self, ids: Sequence[str] | None) -> list[Variant]:
        """The rows ``ids`` name (all when None or empty): a row's id, or a variant's as
        configured for all of its platforms; each row once, in the order asked."""
        if not ids:
            return list(self.variants)
        chosen: dict[str, Variant] = {}
        for wanted in ids:
            rows = self.rows_of(wanted) if wanted in self.groups else (self.variant(wanted),)
            chosen.update((v.id, v) for v in rows)
        return list(chosen.values())

    def has_snapshot(self, variant: Variant) -> bool:
        """The one rule: the snapshot build step and the snapshot session exist together."""
        return self.snapshot is not None and self.snapshot.applies(variant.accelerator)

    def snapshot_ids(self) -> tuple[str, ...]:
        return tuple(v.id for v in self.variants if self.has_snapshot(v))

    def session_ids(self) -> dict[str, tuple[str, ...]]:
        """The image sessions, in the order nox lists them: each name with its variants
        (``build`` and ``smoke`` for every one, ``snapshot`` where the rule applies). The nox
        sessions and the generated CI pipelines are both made from this."""
        return {"build": self.ids, "smoke": self.ids, "snapshot": self.snapshot_ids()}

    def tag(self, variant: Variant, image_version: str) -> str:
        """``NAME:v0.31.0rc1`` for the default variant, ``NAME:v0.31.0rc1-cu129`` otherwise;
        a row of a variant built for several platforms adds its platform
        (``NAME:v0.31.0rc1-cu129-arm64``, ``NAME:v0.31.0rc1-arm64``)."""
        suffix = (
            "" if variant.group == self.default_variant else f"-{self.suffix_of(variant.group)}"
        )
        if variant.slug:
            suffix += f"-{variant.slug}"
        return f"{self.name}:{image_version}{suffix}"

    def cache_tag(self, variant: Variant) -> str:
        """``NAME:cache-<row>``: the row's build cache image, a moving tag kept where
        images travel between CI jobs (:mod:`release.images.build_cache`)."""
        return f"{self.name}:cache-{re.sub(r'[^A-Za-z0-9_.-]', '-', variant.id)}"

    def platform_tag(self, variant: Variant, image_version: str, platform: str) -> str:
        """The tag a row's image is published under, per platform: the row's own where its
        variant has several (``NAME:v0.31.0rc1-cu129-arm64``), else the variant's with the
        platform added (``NAME:v0.31.0rc1-cu128-amd64``), as vLLM's per-arch tags."""
        tag = self.tag(variant, image_version)
        return tag if variant.slug else f"{tag}-{platform_slug(platform)}"

    def index_tags(self, group: str, image_version: str) -> tuple[str, ...]:
        """The tags a variant's multi-arch index is published under: ``NAME:VERSION-ID``,
        and for the default variant ``NAME:VERSION`` first (what users pull)."""
        tags = [f"{self.name}:{image_version}-{self.suffix_of(group)}"]
        if group == self.default_variant:
            tags.insert(0, f"{self.name}:{image_version}")
        return tuple(tags)

    def build_args_for(self, variant: Variant, version: str | None = None) -> dict[str, str]:
        args = {"BASE_IMAGE": variant.base_image}
        if variant.version_arg:
            args[variant.version_arg] = variant.accelerator.version
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


def _tree_path(table: Mapping[str, object], key: str, default: str) -> str:
    """The context or the Dockerfile: a path in the work tree, relative to its root."""
    where = _where(None, key)
    return tree_relative(where, string_value(table, key, where) or default)


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
    "registry",
    "platforms",
    "target",
)
_SERVING_KEYS = ("port", "health", "startup-timeout", "run-options")
_SNAPSHOT_KEYS = (*SELECTOR_KEYS, "build-args", "runtime", "serve", "warm", "carried", "timeout",
                  *_SERVING_KEYS)  # fmt: skip


def parse_images(table: Mapping[str, object]) -> ImageMatrix | None:
    """Validate ``[tool.release.images]``; None when the table is absent or empty."""
    if not table:
        return None
    refuse_unknown(table, _IMAGE_KEYS, PREFIX)
    name = string_value(table, "name", _where(None, "name"), required=True) or ""
    if not IMAGE_NAME.fullmatch(name):
        raise ConfigError(
            f"{PREFIX} name: {name!r} is not an image name docker accepts (lowercase, e.g. org/engine)"
        )
    raw_variants = table.get("variants")
    if not isinstance(raw_variants, list) or not raw_variants:
        raise ConfigError(
            f"{PREFIX} variants: expected at least one [[tool.release.images.variants]]"
        )
    everywhere = parse_platforms(table, PREFIX)
    variants = [v for i, raw in enumerate(raw_variants) for v in parse_variant(raw, i, everywhere)]
    groups: list[str] = []
    for v in variants:
        if v.group == v.id and v.id in groups:
            raise ConfigError(f"{PREFIX} variants[{v.id}].id: duplicate variant id {v.id!r}")
        if v.group not in groups:
            groups.append(v.group)
    seen: set[str] = set()
    for v in variants:
        if v.id in seen or (v.id != v.group and v.id in groups):
            raise ConfigError(
                f"{PREFIX} variants[{v.group}]: its {v.platform} image would be {v.id!r}, "
                "which another variant is called"
            )
        seen.add(v.id)
    default = string_value(table, "default-variant", _where(None, "default-variant")) or groups[-1]
    if default not in groups:
        raise ConfigError(
            f"{PREFIX} default-variant: {default!r} is not a variant ({', '.join(sorted(groups))})"
        )
    probe = ImageMatrix(name, "Dockerfile", ".", default, tuple(variants), None)
    suffixes: dict[str, str] = {}
    for group in groups:
        other = suffixes.setdefault(probe.suffix_of(group), group)
        if other != group:
            raise ConfigError(
                f"{_where(group, 'tag-suffix')}: its tags would be variant {other!r}'s "
                f"(both end in -{probe.suffix_of(group)})"
            )
    for v in variants:
        example = probe.tag(v, "v0.0.0rc1")
        if not IMAGE_TAG.fullmatch(example.rsplit(":", 1)[1]):
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
        selector = parse_selector(raw, where)
        runtime = argv_value(raw["runtime"], f"{where}.runtime") if "runtime" in raw else ()
        serve = argv_value(raw["serve"], f"{where}.serve") if "serve" in raw else ()
        if not runtime:
            for key in ("serve", "warm", "carried", *_SERVING_KEYS):
                if key in raw:
                    raise ConfigError(f"{where}.{key}: needs runtime (the round trip's command)")
        snapshot = SnapshotRule(
            selector=selector,
            build_args=build_args_table(raw, "build-args", f"{where}.build-args"),
            runtime=runtime,
            serving=parse_serving(raw, where, serve),
            warm=parse_requests(raw.get("warm"), f"{where}.warm"),
            carried=parse_requests(raw.get("carried"), f"{where}.carried"),
            timeout=seconds_value(raw, "timeout", f"{where}.timeout", 120.0),
        )
    version_arg = string_value(table, "version-arg", _where(None, "version-arg"))
    if version_arg is not None and not _ARG.fullmatch(version_arg):
        raise ConfigError(f"{PREFIX} version-arg: {version_arg!r} is not a valid build-arg name")
    moving = table.get("moving-tag")
    if moving is not None and not isinstance(moving, str):
        raise ConfigError(f'{PREFIX} moving-tag: expected a string ("" for none), got {moving!r}')
    if moving and not IMAGE_TAG.fullmatch(moving):
        raise ConfigError(f"{PREFIX} moving-tag: {moving!r} is not an image tag docker accepts")
    return ImageMatrix(
        name=name,
        dockerfile=_tree_path(table, "dockerfile", "Dockerfile"),
        context=_tree_path(table, "context", "."),
        default_variant=default,
        variants=tuple(variants),
        snapshot=snapshot,
        smoke=parse_smoke(table.get("smoke", {})),
        build_args=build_args_table(table, "build-args", _where(None, "build-args")),
        version_arg=version_arg,
        moving_tag="latest" if moving is None else moving,
        heartbeat=seconds_value(table, "heartbeat", _where(None, "heartbeat"), 60.0),
        ci_registry=registry_prefix(table.get("ci-registry", ""), _where(None, "ci-registry")),
        registry=registry_prefix(table.get("registry", ""), _where(None, "registry")),
        target=stage_name(
            string_value(table, "target", _where(None, "target")), _where(None, "target")
        ),
    )

"""One row of the image matrix, and how a ``[[tool.release.images.variants]]`` table
becomes its rows (one per platform). Pure.

A variant's table names its accelerator (:func:`release.core.accelerator.parse_accelerator`),
its base, and optionally its own ``dockerfile``, ``context`` and ``target`` (the build
stage: vLLM's CUDA image is ``vllm-openai``), and ``tag-suffix`` (its part of the tags, its
id by default: vllm-ascend's ``-310p`` images are a variant ``ascend-310p`` with
``tag-suffix = "310p"``). An empty value means "the matrix's".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from release.core.accelerator import KINDS, Accelerator, parse_accelerator
from release.core.references import IMAGE_REFERENCE, IMAGE_TAG
from release.core.serving import refuse_unknown
from release.core.table_values import string_value
from release.core.tree_paths import tree_relative
from release.errors import ConfigError

__all__ = [
    "PLATFORM",
    "VARIANT_KEYS",
    "Variant",
    "build_args_table",
    "parse_platforms",
    "parse_variant",
    "platform_slug",
    "stage_name",
]

PREFIX = "[tool.release.images]"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_ARG = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_STAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")  # a Dockerfile stage name (FROM ... AS x)
VARIANT_KEYS = ("id", *KINDS, "base-image", "python", "platform", "platforms", "build-args",
                "dockerfile", "context", "target", "tag-suffix")  # fmt: skip


def _where(variant: str | None, key: str) -> str:
    return f"{PREFIX} variants[{variant}].{key}" if variant else f"{PREFIX} {key}"


PLATFORM = re.compile(r"^[a-z0-9]+/[a-z0-9_]+(/[a-z0-9]+)?$")  # os/arch[/variant]


def platform_slug(platform: str) -> str:
    """The part of a row's id and tags that names its platform: ``linux/arm64`` is
    ``arm64``, ``linux/arm/v7`` ``armv7``, ``windows/amd64`` ``windows-amd64``."""
    os_name, _, rest = platform.partition("/")
    arch = rest.replace("/", "")
    return arch if os_name == "linux" else f"{os_name}-{arch}"


@dataclass(frozen=True)
class Variant:
    """One row of the matrix: one image, of one variant on one platform."""

    id: str
    accelerator: Accelerator
    base_image: str
    python: str | None = None
    platform: str | None = None  # os/arch; None: the engine's own
    build_args: Mapping[str, str] = field(default_factory=dict)
    group: str = ""  # the variant's id as configured ("": the row's own id)
    slug: str = ""  # the platform's part of id and tags where the variant has several
    dockerfile: str = ""  # "": the matrix's
    context: str = ""  # "": the matrix's
    target: str | None = None  # the build stage; None: the matrix's; "": the Dockerfile's last
    tag_suffix: str = ""  # the variant's part of its tags; "": its id as configured

    def __post_init__(self) -> None:
        if not self.group:
            object.__setattr__(self, "group", self.id)

    @property
    def version_arg(self) -> str:
        """The build arg that carries the accelerator's version: ``CUDA_VERSION``,
        ``ROCM_VERSION``, ``CANN_VERSION``; "" for a CPU variant."""
        kind = self.accelerator.kind
        return "" if kind == "cpu" else f"{kind.upper()}_VERSION"


def build_args_table(table: Mapping[str, object], key: str, where: str) -> dict[str, str]:
    raw = table.get(key, {})
    if not isinstance(raw, Mapping):
        raise ConfigError(f'{where}: expected a table of NAME = "value"')
    out: dict[str, str] = {}
    for name, value in raw.items():
        if not _ARG.fullmatch(name):
            raise ConfigError(f"{where}: {name!r} is not a valid build-arg name")
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ConfigError(f"{where}.{name}: expected a string, got {value!r}")
        out[name] = str(value)
    return out


def stage_name(value: str | None, where: str) -> str:
    """A build target (a Dockerfile stage), "" where none is given."""
    if value is None:
        return ""
    if not _STAGE.fullmatch(value):
        raise ConfigError(f"{where}: {value!r} is not a Dockerfile stage name")
    return value


def _own_build(raw: Mapping[str, object], vid: str) -> dict[str, str]:
    """What a variant gives of its own build: Dockerfile, context, target, tag suffix."""
    out: dict[str, str] = {}
    for key in ("dockerfile", "context"):
        value = string_value(raw, key, _where(vid, key))
        if value is not None:
            out[key] = tree_relative(_where(vid, key), value)
    if raw.get("target") == "":  # the Dockerfile's last stage, whatever the matrix names
        out["target"] = ""
    elif "target" in raw:
        where = _where(vid, "target")
        out["target"] = stage_name(string_value(raw, "target", where), where)
    suffix = string_value(raw, "tag-suffix", _where(vid, "tag-suffix"))
    if suffix is not None and not IMAGE_TAG.fullmatch(suffix):
        raise ConfigError(
            f"{_where(vid, 'tag-suffix')}: {suffix!r} is not a tag part docker accepts"
        )
    out["tag_suffix"] = suffix or ""
    return out


def parse_platforms(raw: Mapping[str, object], where: str) -> tuple[str, ...] | None:
    """``platforms = ["linux/amd64", "linux/arm64"]`` (or one ``platform``) as written;
    None where neither is given."""
    if "platform" in raw and "platforms" in raw:
        raise ConfigError(f"{where}.platform: give platform or platforms, not both")
    if "platform" in raw:
        value: object = [raw["platform"]]
        key = "platform"
    elif "platforms" in raw:
        value, key = raw["platforms"], "platforms"
    else:
        return None
    if not isinstance(value, list) or not value:
        raise ConfigError(f'{where}.{key}: expected a list of os/arch, e.g. ["linux/amd64"]')
    for item in value:
        if not isinstance(item, str) or not PLATFORM.fullmatch(item):
            raise ConfigError(f"{where}.{key}: {item!r} is not os/arch (e.g. linux/amd64)")
    if len(set(value)) != len(value):
        raise ConfigError(f"{where}.{key}: a platform is named twice")
    slugs = [platform_slug(p) for p in value]
    if len(set(slugs)) != len(slugs):
        raise ConfigError(f"{where}.{key}: two platforms would share a tag ({', '.join(value)})")
    return tuple(value)


def parse_variant(
    raw: object, index: int, default_platforms: tuple[str, ...] | None
) -> list[Variant]:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{PREFIX} variants[{index}]: expected a table")
    vid = raw.get("id")
    if not isinstance(vid, str) or not _ID.fullmatch(vid):
        raise ConfigError(
            f"{PREFIX} variants[{index}].id: {vid!r} is not a valid variant id (letters, digits, . _ -)"
        )
    refuse_unknown(raw, VARIANT_KEYS, f"{PREFIX} variants[{vid}]")
    accelerator = parse_accelerator(raw, f"{PREFIX} variants[{vid}]")
    base = string_value(raw, "base-image", _where(vid, "base-image"), required=True) or ""
    if not IMAGE_REFERENCE.fullmatch(base):
        raise ConfigError(
            f"{_where(vid, 'base-image')}: {base!r} is not an image reference docker accepts"
        )
    own = _own_build(raw, vid)
    platforms = parse_platforms(raw, f"{PREFIX} variants[{vid}]") or default_platforms or (None,)
    several = len(platforms) > 1
    return [
        Variant(
            id=f"{vid}-{platform_slug(p)}" if several and p else vid,
            accelerator=accelerator,
            base_image=base,
            python=string_value(raw, "python", _where(vid, "python")),
            platform=p,
            build_args=build_args_table(raw, "build-args", _where(vid, "build-args")),
            group=vid,
            slug=platform_slug(p) if several and p else "",
            **own,
        )
        for p in platforms
    ]

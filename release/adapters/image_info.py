"""What ``docker image inspect`` says of an image, as a record: made once, where the engine
adapter reads docker's answer (:meth:`~release.adapters.engine.ContainerEngine.inspect_image`),
and passed whole; callers read attributes, never docker's JSON.

Only what the tool reads is kept. A field docker leaves out, sets to ``null`` or gives
another type than it documents reads as empty (``""``, ``()``, ``{}``): docker's answer
is narrowed here, not trusted, so no caller meets a ``None`` where a list was meant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["ImageInfo"]


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _texts(value: object) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _labels(value: object) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, str)}


@dataclass(frozen=True)
class ImageInfo:
    """One image: its id, the names and digests that point at it, its parent (a classic
    build's intermediate images have one), its labels, what it runs, its platform."""

    id: str
    repo_tags: tuple[str, ...] = ()
    repo_digests: tuple[str, ...] = ()  # ``nvidia/cuda@sha256:...``: where it was pulled from
    parent: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    os: str = ""
    architecture: str = ""
    variant: str = ""
    layers: tuple[str, ...] = ()  # the diff ids of its filesystem's layers, bottom first

    @classmethod
    def of(cls, data: Mapping[str, object]) -> ImageInfo:
        """The record of one entry of docker's answer (a JSON object)."""
        config = data.get("Config")
        config = config if isinstance(config, Mapping) else {}
        return cls(
            id=_text(data.get("Id")),
            repo_tags=_texts(data.get("RepoTags")),
            repo_digests=_texts(data.get("RepoDigests")),
            parent=_text(data.get("Parent")),
            labels=_labels(config.get("Labels")),
            entrypoint=_texts(config.get("Entrypoint")),
            cmd=_texts(config.get("Cmd")),
            os=_text(data.get("Os")),
            architecture=_text(data.get("Architecture")),
            variant=_text(data.get("Variant")),
            layers=_texts(rootfs.get("Layers"))
            if isinstance(rootfs := data.get("RootFS"), Mapping)
            else (),
        )

    @property
    def platform(self) -> str:
        """``os/arch[/variant]``, as ``--platform`` spells it."""
        return "/".join(p for p in (self.os, self.architecture, self.variant) if p)

    @property
    def command(self) -> list[str]:
        """What the image runs when started as it is: its entrypoint, then its command."""
        return [*self.entrypoint, *self.cmd]

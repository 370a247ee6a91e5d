"""The labels an image is built with: OCI's (version, revision, created, source, base,
``ref.name``, and from the engine's ``[project]`` title, description, licenses, url and
vendor) and the project's (variant, accelerator version: ``org.release.cuda``,
``org.release.rocm``, ``org.release.cpu=true``, and whether it was built from more or
less than a commit).

``ref.name`` is the release tag the image was built as (``v0.31.0rc1``), left out of an
untagged or dirty build; a final promoted from an rc is that rc's image, so it names the
rc. On a stand-in base (:mod:`release.images.standin`) ``base.name`` says it is one and
which image it stands in for, in words no tool can pull as that image's reference.

``org.opencontainers.image.revision`` names the commit alone only when the image is that
commit: a build of a dirty work tree (``--allow-dirty``) says ``<sha>-dirty`` and carries
``org.release.dirty=true``; an untagged build in a shallow clone, whose version could not be
counted, carries ``org.release.shallow=true``. The source label is the repository's URL,
never a local path (left out when there is none: :mod:`release.images.source` says why).
"""

from __future__ import annotations

import datetime as _dt

from release.adapters.engine import MANAGED_LABEL
from release.core.matrix import Variant
from release.core.references import qualified_reference
from release.images.inputs import SOURCE_LABEL
from release.images.source import BuildSource
from release.images.standin import BaseImage

__all__ = [
    "BASE_DIGEST_LABEL",
    "BASE_NAME_LABEL",
    "DIRTY_LABEL",
    "REF_NAME_LABEL",
    "SHALLOW_LABEL",
    "base_name",
    "labels_for",
]

BASE_NAME_LABEL = "org.opencontainers.image.base.name"
BASE_DIGEST_LABEL = "org.opencontainers.image.base.digest"
DIRTY_LABEL = "org.release.dirty"
SHALLOW_LABEL = "org.release.shallow"
REF_NAME_LABEL = "org.opencontainers.image.ref.name"


def base_name(base: BaseImage) -> str:
    """``org.opencontainers.image.base.name``: the base's reference, or, for a stand-in
    made here, that it is one (it has no reference anywhere but this engine)."""
    name = qualified_reference(base.ref)
    return f"local stand-in for {name}" if base.standin else name


def labels_for(variant: Variant, source: BuildSource, base: BaseImage) -> dict[str, str]:
    """Every label of ``variant``'s image. Pure."""
    created = _dt.datetime.fromtimestamp(source.epoch, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    labels = {
        **source.project.labels(),
        "org.opencontainers.image.version": source.version,
        "org.opencontainers.image.revision": source.revision_label,
        "org.opencontainers.image.created": created,
        BASE_NAME_LABEL: base_name(base),
        "org.release.variant": variant.id,
        f"org.release.{variant.accelerator.kind}": variant.accelerator.version or "true",
        MANAGED_LABEL: "true",
    }
    if source.tag:
        labels[REF_NAME_LABEL] = source.tag
    if variant.platform:
        labels["org.release.platform"] = variant.platform
    if base.digest:
        labels[BASE_DIGEST_LABEL] = base.digest
    if source.url:
        labels[SOURCE_LABEL] = source.url
    if source.dirty:
        labels[DIRTY_LABEL] = "true"
    if source.uncounted:
        labels[SHALLOW_LABEL] = "true"
    return labels

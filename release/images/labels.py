"""The labels an image is built with: OCI's (version, revision, created, source, base) and
the project's (variant, accelerator version: ``org.release.cuda``, ``org.release.rocm``,
``org.release.cpu=true``, and whether it was built from more or less than a
commit).

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
    "SHALLOW_LABEL",
    "labels_for",
]

BASE_NAME_LABEL = "org.opencontainers.image.base.name"
BASE_DIGEST_LABEL = "org.opencontainers.image.base.digest"
DIRTY_LABEL = "org.release.dirty"
SHALLOW_LABEL = "org.release.shallow"


def labels_for(variant: Variant, source: BuildSource, base: BaseImage) -> dict[str, str]:
    """Every label of ``variant``'s image. Pure."""
    created = _dt.datetime.fromtimestamp(source.epoch, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    labels = {
        "org.opencontainers.image.version": source.version,
        "org.opencontainers.image.revision": source.revision_label,
        "org.opencontainers.image.created": created,
        BASE_NAME_LABEL: qualified_reference(base.ref),
        "org.release.variant": variant.id,
        f"org.release.{variant.accelerator.kind}": variant.accelerator.version or "true",
        MANAGED_LABEL: "true",
    }
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

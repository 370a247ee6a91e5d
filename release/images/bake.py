"""A ``docker buildx bake`` file for the image matrix (its JSON form), for builds on buildx
and its remote builders.

One target per variant, all in the ``default`` group. A target's ``args`` and ``tags`` are
what ``release images.build`` uses (:meth:`ImageMatrix.build_args_for`,
:meth:`ImageMatrix.tag`), and its ``labels`` are :func:`labels_for`'s less what depends on
the base as the builder resolves it: the base's name and digest, and the input digest a
build here adds. Paths are the matrix's, relative to the repository root (where bake is
run), each variant's own where it gives them, with its build stage (``target``); the
Dockerfile is given relative to the context, as bake reads it. Pure.
"""

from __future__ import annotations

import json
import posixpath
import re

from release.core.json_text import JSONOut
from release.core.matrix import ImageMatrix, Variant
from release.errors import ConfigError
from release.images.labels import BASE_DIGEST_LABEL, BASE_NAME_LABEL, labels_for
from release.images.source import BuildSource
from release.images.standin import BaseImage

__all__ = ["UNSET_LABELS", "bake_document", "bake_json", "static_labels", "target_name"]

UNSET_LABELS = (BASE_NAME_LABEL, BASE_DIGEST_LABEL)  # known only once the base is resolved
_TARGET = re.compile(r"[^A-Za-z0-9_-]")  # bake's target names: letters, digits, _ and -


def target_name(variant: Variant) -> str:
    return _TARGET.sub("_", variant.id)


def static_labels(variant: Variant, source: BuildSource) -> dict[str, str]:
    """The labels a build of ``variant`` gives its image that need no resolved base."""
    unresolved = BaseImage(ref=variant.base_image, id="", standin=False, how="unresolved")
    labels = labels_for(variant, source, unresolved)
    return {k: v for k, v in labels.items() if k not in UNSET_LABELS}


def _dockerfile(matrix: ImageMatrix, variant: Variant) -> str:
    return posixpath.relpath(
        posixpath.normpath(matrix.dockerfile_of(variant)),
        posixpath.normpath(matrix.context_of(variant)),
    )


def _target(matrix: ImageMatrix, variant: Variant, source: BuildSource) -> dict[str, JSONOut]:
    target: dict[str, JSONOut] = {
        "context": matrix.context_of(variant),
        "dockerfile": _dockerfile(matrix, variant),
        "args": matrix.build_args_for(variant, source.version),
        "tags": [matrix.tag(variant, source.image_version)],
        "labels": static_labels(variant, source),
    }
    if variant.platform:
        target["platforms"] = [variant.platform]
    if matrix.target_of(variant):
        target["target"] = matrix.target_of(variant)
    return target


def bake_document(matrix: ImageMatrix, source: BuildSource) -> dict[str, JSONOut]:
    """The bake file as data: ``group.default.targets`` and a ``target`` per variant."""
    targets: dict[str, JSONOut] = {}
    for variant in matrix.variants:
        name = target_name(variant)
        if name in targets:
            raise ConfigError(
                f"variant {variant.id!r}: its bake target {name!r} is another variant's too"
            )
        targets[name] = _target(matrix, variant, source)
    return {"group": {"default": {"targets": list(targets)}}, "target": targets}


def bake_json(matrix: ImageMatrix, source: BuildSource) -> str:
    return json.dumps(bake_document(matrix, source), indent=2) + "\n"

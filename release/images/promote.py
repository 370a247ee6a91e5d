"""The final's images: the last rc's images given the final's tags, by image id, with no
rebuild, and the final's manifest recording which rc and which image ids it came from.

The rc's manifest (its published note) says which image each variant is. Each gets the
final's tags (``NAME:v0.31.0``, ``NAME:v0.31.0-cu129``) and the moving tag
(``moving-tag`` in ``[tool.release.images]``, default ``latest``: ``NAME:latest``,
``NAME:latest-cu129``), which moves on a final only, never on an rc. Re-running does the
same again: tags already on the image stay, the manifest already recorded is left as is.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from release.adapters.engine import ContainerEngine
from release.adapters.git_notes import notes_ref, write_note
from release.core.manifest import ManifestError, check, missing, variant_rules
from release.core.matrix import ImageMatrix
from release.flows.context import ReleaseContext
from release.flows.manifest_store import published_manifest

__all__ = ["Promoted", "final_manifest", "promote_images"]

Say = Callable[[str], None]


@dataclass(frozen=True)
class Promoted:
    final: str
    rc: str
    tags: dict[str, list[str]]  # variant -> tags given to its rc image
    image_ids: dict[str, str]


def final_manifest(
    rc_manifest: dict[str, Any], matrix: ImageMatrix, final_tag: str, final_version: str
) -> dict[str, Any]:
    """The final's manifest: the rc's, as the final, with each variant's final tags and
    where it came from. Pure."""
    out = copy.deepcopy(rc_manifest)
    out["version"], out["tag"] = final_version, final_tag
    image_ids: dict[str, str] = {}
    for variant in matrix.variants:
        build = out["variants"][variant.id]["build"]
        build["tags"] = final_tags(matrix, variant.id, final_tag)
        image_ids[variant.id] = build["image_id"]
    out["promoted_from"] = {
        "tag": rc_manifest["tag"],
        "commit": rc_manifest["commit"],
        "image_ids": image_ids,
    }
    return check(out, f"the manifest of {final_tag}")


def final_tags(matrix: ImageMatrix, variant_id: str, final_tag: str) -> list[str]:
    variant = matrix.variant(variant_id)
    tags = [matrix.tag(variant, final_tag)]
    if matrix.moving_tag:
        tags.append(matrix.tag(variant, matrix.moving_tag))
    return tags


def promote_images(
    ctx: ReleaseContext,
    engine: ContainerEngine,
    *,
    final_tag: str,
    final_version: str,
    rc_tag: str,
    commit: str,
    say: Say = print,
) -> Promoted:
    """Tag each variant's rc image as the final (by id) and record the final's manifest."""
    matrix = ctx.config.matrix
    if matrix is None:
        raise ManifestError("[tool.release.images] is missing: no images to promote")
    rc_read = published_manifest(ctx.repo, rc_tag, commit)
    if rc_read is None:
        raise ManifestError(
            f"{rc_tag} has no manifest ({notes_ref(rc_tag)}): nothing says which images it "
            "is; build, smoke and snapshot it, then release manifest"
        )
    rc_manifest = rc_read.document
    gaps = missing(rc_manifest, variant_rules(matrix))
    if gaps:
        raise ManifestError(f"the manifest of {rc_tag} is incomplete: " + "; ".join(gaps))
    final = final_manifest(rc_manifest, matrix, final_tag, final_version)
    ids = final["promoted_from"]["image_ids"]
    found = engine.inspect_images(list(ids.values()))
    absent = [v for v, image in ids.items() if found.get(image) is None]
    if absent:
        raise ManifestError(
            f"the images of {rc_tag} for {', '.join(absent)} are not in this engine "
            f"({', '.join(ids[v][7:19] for v in absent)}); promote where they are"
        )
    tags: dict[str, list[str]] = {}
    for variant_id, image in ids.items():
        tags[variant_id] = final["variants"][variant_id]["build"]["tags"]
        engine.tag(image, tags[variant_id])
        say(f"  {variant_id}: {image[7:19]} -> {', '.join(tags[variant_id])}")
    text = json.dumps(final, indent=2, sort_keys=True) + "\n"
    recorded = write_note(ctx.repo, final_tag, commit, text)
    say(
        f"{'recorded' if recorded else 'already recorded'} the manifest of {final_tag} "
        f"({notes_ref(final_tag)}), from {rc_tag}"
    )
    return Promoted(final_tag, rc_tag, tags, ids)

"""The final's images: the last rc's images given the final's tags, by image id, with no
rebuild, and the final's manifest recording which rc and which image ids it came from.

The rc's manifest (its published note) says which image each variant is. Each gets the
final's tags (``NAME:v0.31.0``, ``NAME:v0.31.0-cu129``) and the moving tag
(``moving-tag`` in ``[tool.release.images]``, default ``latest``: ``NAME:latest``,
``NAME:latest-cu129``), which moves on a final only, never on an rc. Re-running does the
same again: tags already on the image stay, the manifest already recorded is left as is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import cast

from release.adapters.engine import ContainerEngine
from release.adapters.git import GitRepo
from release.adapters.git_notes import notes_ref, write_note
from release.core.manifest import ManifestError, check, missing, variant_rules
from release.core.manifest_records import Manifest, PromotedFrom
from release.core.matrix import ImageMatrix
from release.core.plan import Step, StepKind
from release.core.plan_steps import ImageTagging, RefData
from release.core.say import Say
from release.flows.context import ReleaseContext

__all__ = [
    "EnginePromotion",
    "check_engine_promotion",
    "final_manifest",
]


def final_manifest(
    rc: Manifest, matrix: ImageMatrix, final_tag: str, final_version: str
) -> Manifest:
    """The final's manifest: the rc's, as the final, with each variant's final tags and
    where it came from (checked against the schema). Pure."""
    variants = dict(rc.variants)
    image_ids: dict[str, str] = {}
    for variant in matrix.variants:
        entry = variants[variant.id]
        if entry.build is None:
            raise ManifestError(f"the manifest of {rc.tag} has no build of {variant.id}")
        tags = tuple(final_tags(matrix, variant.id, final_tag))
        variants[variant.id] = replace(entry, build=replace(entry.build, tags=tags))
        image_ids[variant.id] = entry.build.image_id
    came = PromotedFrom(cast(str, rc.tag), rc.commit, image_ids)
    final = replace(rc, version=final_version, tag=final_tag, variants=variants, promoted_from=came)
    check(final.document(), f"the manifest of {final_tag}")
    return final


def final_tags(matrix: ImageMatrix, variant_id: str, final_tag: str) -> list[str]:
    variant = matrix.variant(variant_id)
    tags = [matrix.tag(variant, final_tag)]
    if matrix.moving_tag:
        tags.append(matrix.tag(variant, matrix.moving_tag))
    return tags


@dataclass(frozen=True)
class EnginePromotion:
    """The final's tags in this engine, checked (:func:`check_engine_promotion`: every rc
    image is here); :meth:`apply` tags each and records the final's manifest. Run again,
    it does the same: tags already on an image stay, a recorded manifest is left as is."""

    engine: ContainerEngine
    repo: GitRepo
    rc: str
    final: str
    commit: str
    tags: Mapping[str, list[str]]  # variant -> the final's tags for its rc image
    image_ids: Mapping[str, str]
    note: str  # the final's manifest, as it is recorded

    @property
    def steps(self) -> tuple[Step, ...]:
        tagged = tuple(
            Step(
                StepKind.TAG_IMAGE,
                f"tag {variant}'s image {self.image_ids[variant][7:19]} as {', '.join(tags)}",
                ImageTagging(variant, self.image_ids[variant], tuple(tags)),
            )
            for variant, tags in self.tags.items()
        )
        record = f"record the manifest of {self.final} ({notes_ref(self.final)})"
        return (*tagged, Step(StepKind.RECORD_MANIFEST, record, RefData(notes_ref(self.final))))

    def apply(self, say: Say) -> None:
        say(f"images of {self.rc} as {self.final}, by image id (no rebuild):")
        for variant_id, image in self.image_ids.items():
            self.engine.tag(image, self.tags[variant_id])
            say(f"  {variant_id}: {image[7:19]} -> {', '.join(self.tags[variant_id])}")
        recorded = write_note(self.repo, self.final, self.commit, self.note)
        say(
            f"{'recorded' if recorded else 'already recorded'} the manifest of {self.final} "
            f"({notes_ref(self.final)}), from {self.rc}"
        )


def check_engine_promotion(
    ctx: ReleaseContext,
    engine: ContainerEngine,
    rc_manifest: Manifest,
    *,
    final_tag: str,
    final_version: str,
    commit: str,
) -> EnginePromotion:
    """What the engine could refuse, read before anything changes: the rc's manifest
    complete, and every image it names here."""
    matrix = ctx.config.matrix
    if matrix is None:
        raise ManifestError("[tool.release.images] is missing: no images to promote")
    rc_tag = str(rc_manifest.tag)
    gaps = missing(rc_manifest, variant_rules(matrix))
    if gaps:
        raise ManifestError(f"the manifest of {rc_tag} is incomplete: " + "; ".join(gaps))
    final = final_manifest(rc_manifest, matrix, final_tag, final_version)
    assert final.promoted_from is not None
    ids = dict(final.promoted_from.image_ids)
    found = engine.inspect_images(list(ids.values()))
    absent = [v for v, image in ids.items() if found.get(image) is None]
    if absent:
        raise ManifestError(
            f"the images of {rc_tag} for {', '.join(absent)} are not in this engine "
            f"({', '.join(ids[v][7:19] for v in absent)}); promote where they are"
        )
    tags = {v: list(built.tags) for v in ids if (built := final.entry(v).build) is not None}
    text = json.dumps(final.document(), indent=2, sort_keys=True) + "\n"
    return EnginePromotion(engine, ctx.repo, rc_tag, final_tag, commit, tags, ids, text)

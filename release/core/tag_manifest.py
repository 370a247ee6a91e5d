"""A published manifest held to its tag. Pure.

A tag's manifest is a git note that anyone with push rights can write, apart from the tag,
so before a command shows or uses one it is judged against what the tag itself says: the
tag and commit it names (:func:`of_tag`), the version its images were built as
(:func:`built_as`: the tag's own, or for a final the rc of its version it was promoted
from), and what building the tag with its own configuration would record
(:func:`not_built_so`: the version, the commit's time, the image name, no variant the
configuration lacks, and per variant the accelerator and its version, the base and the build args, and
where it was published: a registry path with no credentials, the configured registry
where there is one, tags only in that registry's repository of the image). A
note that fails is refused in one line that reads the same whichever command read it
(:func:`not_built`).

Only ``reproduce`` also asks that every variant the tag builds is recorded
(:func:`not_recorded`): elsewhere a variant with no record is what is still to do
(``status`` says it is missing, ``promote`` that the manifest is incomplete).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from release.core.manifest import ManifestError
from release.core.references import IMAGE_REFERENCE, registry_prefix
from release.core.verdict import dict_changes
from release.errors import ConfigError

if TYPE_CHECKING:
    from release.core.manifest_records import Manifest, PublishRecord, Recipe
    from release.core.matrix import ImageMatrix, Variant
    from release.core.versions import ReleaseVersion, TagTemplate

__all__ = ["built_as", "not_built", "not_built_so", "not_recorded", "of_tag"]


def of_tag(manifest: Manifest, tag: str, commit: str, what: str) -> Manifest:
    """``manifest`` when it says it is ``tag``'s, on ``commit`` (and, for a final, promoted
    from an rc on that commit); else :class:`ManifestError` saying what it names instead."""
    said = []
    if manifest.tag != tag:
        said.append(f"tag {manifest.tag!r}")
    if manifest.commit != commit:
        said.append(f"commit {manifest.commit[:12]}")
    came = manifest.promoted_from
    if came is not None and came.commit != commit:
        said.append(f"promoted from {came.tag!r} at {came.commit[:12]}")
    if said:
        raise ManifestError(
            f"{what} names another release ({', '.join(said)}; {tag} is {commit[:12]}): it is "
            f"not {tag}'s manifest"
        )
    return manifest


def built_as(
    manifest: Manifest, version: ReleaseVersion, template: TagTemplate, what: str
) -> ReleaseVersion:
    """The version ``manifest``'s images were built as: ``version`` (the tag's), or for a
    final, that of the rc it was promoted from (``promote`` gives the rc's images the
    final's tags, so they say the rc's version). Only a final is promoted, and only from an
    rc of its own version: anything else is :class:`ManifestError`."""
    came = manifest.promoted_from
    if came is None:
        return version
    if not version.is_final:
        raise ManifestError(
            f"{what} says it was promoted from {came.tag!r}, but {version.pep440()} is not "
            "a final: only a final is promoted"
        )
    rc = template.parse_any(came.tag)
    if rc is None or rc.base != version.base or not rc.is_rc:
        raise ManifestError(
            f"{what} says it was promoted from {came.tag!r}, which is not an rc of "
            f"{version.pep440()}"
        )
    return rc


def not_built_so(
    manifest: Manifest, matrix: ImageMatrix, *, version: str, build: str, epoch: int
) -> list[str]:
    """What ``manifest`` records that building its tag with ``matrix`` would not give, one
    phrase each ([] when nothing): its version (``version``: the tag's), the commit's time
    (``epoch``), the image name, a variant the matrix does not have, and per variant the
    accelerator and its version, the base and the build args (of ``build``: the tag's version, or for a
    final the rc's it was promoted from, whose images it is)."""
    out = []
    if manifest.version != version:
        out.append(f"version {manifest.version!r}, the tag's is {version}")
    if manifest.source_date_epoch != epoch:
        out.append(f"source_date_epoch {manifest.source_date_epoch}, the commit's time is {epoch}")
    if manifest.image != matrix.name:
        out.append(f"image {manifest.image!r}, the tag's is {matrix.name}")
    recorded = manifest.variants
    if any(v not in matrix.ids for v in recorded):
        out.append(_variants(recorded, matrix.ids))
    for variant in matrix.variants:
        row = manifest.entry(variant.id)
        entry = row.build
        if entry is None:
            continue
        recorded_on = entry.recorded_accelerator
        if recorded_on != variant.accelerator:
            out.append(
                f"{variant.id}: {recorded_on.label!r}, the tag's is {variant.accelerator.label}"
            )
        if entry.base.ref != variant.base_image:
            out.append(f"{variant.id}: base {entry.base.ref!r}, the tag's is {variant.base_image}")
        out += _other_recipe(variant.id, entry.recipe, matrix, variant)
        changes = dict_changes(entry.build_args, matrix.build_args_for(variant, build))
        if changes:
            out.append(f"{variant.id}: build args {'; '.join(changes)} (recorded -> the tag's)")
        published = row.publish
        if published is not None:
            out += _not_published_so(variant.id, published, matrix)
    return out


def _other_recipe(
    row: str, recipe: Recipe | None, matrix: ImageMatrix, variant: Variant
) -> list[str]:
    """A recorded Dockerfile, context or target (manifests since per-variant builds) the
    tag's configuration would not build."""
    if recipe is None:
        return []
    ours = {
        "dockerfile": (recipe.dockerfile, matrix.dockerfile_of(variant)),
        "context": (recipe.context, matrix.context_of(variant)),
        "target": (recipe.target or "", matrix.target_of(variant)),
    }
    return [
        f"{row}: {key} {said!r}, the tag's is {tags!r}"
        for key, (said, tags) in ours.items()
        if said != tags
    ]


def _not_published_so(row: str, published: PublishRecord, matrix: ImageMatrix) -> list[str]:
    """What a row's publish record names that the tag's configuration would not: a
    registry that is no registry path (its credentials never shown), another registry than
    the configured one, a tag outside that registry's repository of the image. A note's
    registry and tags reach skopeo as arguments."""
    try:
        registry = registry_prefix(published.registry, f"{row}: publish registry")
    except ConfigError as err:
        return [err.message]
    if matrix.registry and registry != matrix.registry:
        return [f"{row}: publish registry {registry}, the tag's is {matrix.registry}"]
    under = f"{registry}/{matrix.name}:"
    refs = [*published.tags, *published.index.tags]
    wrong = [r for r in refs if not (r.startswith(under) and IMAGE_REFERENCE.fullmatch(r))]
    if wrong:
        return [f"{row}: publish tags outside {under}* ({len(wrong)} of {len(refs)})"]
    return []


def not_recorded(manifest: Manifest, matrix: ImageMatrix) -> list[str]:
    """The variants ``matrix`` builds that ``manifest`` has no record of, said as
    :func:`not_built_so` says its variants ([] when every one is recorded)."""
    recorded = manifest.variants
    return [_variants(recorded, matrix.ids)] if any(v not in recorded for v in matrix.ids) else []


def not_built(what: str, disagree: Sequence[str]) -> ManifestError:
    """The refusal of a manifest that records what its tag does not build (``disagree``:
    :func:`not_built_so`'s phrases)."""
    return ManifestError(
        f"{what} records what the tag does not build: {'; '.join(disagree)}. It is not this "
        "tag's manifest, or it was changed after it was published"
    )


def _variants(recorded: Iterable[str], ids: Sequence[str]) -> str:
    return f"variants {', '.join(map(repr, recorded))}, the tag's are {', '.join(ids) or 'none'}"

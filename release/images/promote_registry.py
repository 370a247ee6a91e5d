"""The final's images in the release registry: the last rc's published digests given the
final's tags, copied by digest inside the registry (no pull, no rebuild, no blob upload),
each read back, and recorded in the final's manifest.

The rc's manifest says, per row, its platform image's digest and its variant's index
digest, and the registry they were published to. The final's tags are the rc's spelt for
the final: per platform (``REG/NAME:v0.31.0-cu129-arm64``), per index (``REG/NAME:v0.31.0-cu129``,
and ``REG/NAME:v0.31.0`` for the default variant), and the moving tag's index tags
(``moving-tag``, default ``latest``: ``REG/NAME:latest``, ``REG/NAME:latest-cu130``). Every
final tag is read first: one that serves the rc's digest is kept, one that serves another
is refused with both digests (exit 3) before anything is copied; only the moving tags
move. A re-run converges: what is there is read back, what is missing is copied.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from release.adapters.git_notes import notes_ref, write_note
from release.adapters.registry import Registry, RegistryError, Served
from release.core.manifest import ManifestError, check, missing, variant_rules
from release.core.matrix import ImageMatrix
from release.core.references import repository
from release.errors import RefusedError
from release.flows.context import ReleaseContext
from release.images.promote import final_manifest
from release.images.transfer import registry_ref

__all__ = ["Copy", "is_published", "promote_in_registry"]

Say = Callable[[str], None]


@dataclass(frozen=True)
class Copy:
    """One final tag and the digest it gets."""

    ref: str
    digest: str
    moving: bool = False  # a moving tag (``latest``): it may serve another digest before


def is_published(manifest: Mapping[str, Any]) -> bool:
    """Whether a manifest's images were published to a registry (its rows have digests)."""
    return any("publish" in entry for entry in manifest["variants"].values())


def final_copies(
    manifest: Mapping[str, Any], matrix: ImageMatrix, final_tag: str
) -> tuple[list[Copy], dict[str, dict[str, Any]]]:
    """Every final tag with the digest it gets (platform images first, then indexes, then
    the moving tags), and each row's publish record as the final's manifest holds it. Pure."""
    platform_copies: list[Copy] = []
    records: dict[str, dict[str, Any]] = {}
    indexes: dict[str, tuple[str, str]] = {}  # variant -> (registry, index digest)
    for row_id, entry in manifest["variants"].items():
        published = entry.get("publish")
        if published is None:
            raise ManifestError(
                f"{row_id} of {manifest['tag']} was not published (release images.publish "
                "at the rc, then release manifest)"
            )
        row = matrix.variant(row_id)
        registry, digest = published["registry"], published["index"]["digest"]
        platform_ref = registry_ref(
            registry, matrix.platform_tag(row, final_tag, published["platform"])
        )
        platform_copies.append(Copy(platform_ref, published["digest"]))
        indexes.setdefault(row.group, (registry, digest))
        index_refs = [registry_ref(registry, t) for t in matrix.index_tags(row.group, final_tag)]
        records[row_id] = {
            **published,
            "tags": [platform_ref],
            "index": {"digest": digest, "tags": index_refs},
        }
    index_copies, moving = [], []
    for group, (registry, digest) in indexes.items():
        for tag in matrix.index_tags(group, final_tag):
            index_copies.append(Copy(registry_ref(registry, tag), digest))
        if matrix.moving_tag:
            for tag in matrix.index_tags(group, matrix.moving_tag):
                moving.append(Copy(registry_ref(registry, tag), digest, moving=True))
    return [*platform_copies, *index_copies, *moving], records


def _read_all(reg: Registry, refs: list[str]) -> dict[str, Served | None]:
    """What each tag serves, asked of the registry a few at a time."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=4, thread_name_prefix="registry") as pool:
        return dict(zip(refs, pool.map(reg.served, refs), strict=True))


def promote_in_registry(
    ctx: ReleaseContext,
    rc_manifest: Mapping[str, Any],
    *,
    final_tag: str,
    final_version: str,
    commit: str,
    say: Say = print,
    reg: Registry | None = None,
) -> list[Copy]:
    """Copy the rc's published digests to the final's tags, read each back, and record
    the final's manifest; what was copied (or found there already)."""
    matrix = ctx.config.matrix
    if matrix is None:
        raise ManifestError("[tool.release.images] is missing: no images to promote")
    rules = [replace(r, publish=True) for r in variant_rules(matrix)]
    gaps = missing(rc_manifest, rules)
    if gaps:
        raise ManifestError(
            f"the manifest of {rc_manifest['tag']} is incomplete: " + "; ".join(gaps)
        )
    reg = reg or Registry()
    copies, records = final_copies(rc_manifest, matrix, final_tag)
    served = _read_all(reg, [c.ref for c in copies])  # every tag read before any copy
    for c in copies:
        found = served[c.ref]
        if found is not None and found.digest != c.digest and not c.moving:
            raise RefusedError(
                f"{c.ref} is published already with another image: the registry serves "
                f"{found.digest}, the rc's is {c.digest}; a published tag is not moved"
            )
    copied = []
    for c in copies:
        found = served[c.ref]
        if found is not None and found.digest == c.digest:
            say(f"  {c.ref} is there: {c.digest}")
            continue
        reg.copy(f"{repository(c.ref)}@{c.digest}", c.ref)
        copied.append(c)
    back = _read_all(reg, [c.ref for c in copied])  # then every copy read back
    for c in copied:
        got = back[c.ref]
        if got is None or got.digest != c.digest:
            shown = "nothing" if got is None else got.digest
            raise RegistryError(
                f"{c.ref} does not read back as copied: it serves {shown}, not {c.digest}"
            )
        say(f"  {c.ref} -> {c.digest}" + (" (moved)" if served[c.ref] is not None else ""))
    final = final_manifest(dict(rc_manifest), matrix, final_tag, final_version)
    for row_id, record in records.items():
        final["variants"][row_id]["publish"] = record
    text = json.dumps(check(final, f"the manifest of {final_tag}"), indent=2, sort_keys=True)
    recorded = write_note(ctx.repo, final_tag, commit, text + "\n")
    say(
        f"{'recorded' if recorded else 'already recorded'} the manifest of {final_tag} "
        f"({notes_ref(final_tag)}), from {rc_manifest['tag']}"
    )
    return copies

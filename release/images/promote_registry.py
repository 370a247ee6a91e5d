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
move. Every manifest the copies come from is read first too, by digest: one the registry
no longer has, one whose bytes are not true to their digest, an image whose config is not
the image id the rc recorded, or an index that does not list the rc's platform images is
refused (exit 3) before anything is copied. A re-run converges: what is there is read
back, what is missing is copied.

Where a signing key is given (``images.promote --sign-with FPR --signatures DIR``, as
``images.publish`` takes them), the final's own tags are signed too, once every copy reads
back and before the manifest is recorded: each platform image for its final tag and its
index's final tags, each index for its final tags (skopeo's simple signing,
:mod:`release.images.image_signing`), so a pull of the final's tag under a ``signedBy``
policy is accepted. The moving tags are not signed: a signature binds a digest to a name
for good, and would still vouch for an old final after ``latest`` moved on. A re-run signs
only what is not signed yet; the final's manifest records the key (``signed_by``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace

from release.adapters.git import GitRepo
from release.adapters.git_notes import notes_ref, write_note
from release.adapters.registry import Registry, RegistryError, Served
from release.core.manifest import ManifestError, check, missing, variant_rules
from release.core.manifest_records import Index, Manifest, PublishRecord
from release.core.matrix import ImageMatrix
from release.core.plan import Step, StepKind
from release.core.plan_steps import ImageCopy, RefData
from release.core.references import repository
from release.core.say import Say
from release.errors import RefusedError
from release.flows.context import ReleaseContext
from release.images.image_signing import ImageSigning, sign_published
from release.images.promote import final_manifest
from release.images.transfer import registry_ref

__all__ = [
    "Copy",
    "RegistryPromotion",
    "SignedFinals",
    "Source",
    "check_registry_promotion",
    "is_published",
    "promote_in_registry",
    "rc_sources",
]


@dataclass(frozen=True)
class Copy:
    """One final tag and the digest it gets."""

    ref: str
    digest: str
    moving: bool = False  # a moving tag (``latest``): it may serve another digest before


def is_published(manifest: Manifest) -> bool:
    """Whether a manifest's images were published to a registry (its rows have digests)."""
    return any(entry.publish for entry in manifest.variants.values())


def final_copies(
    manifest: Manifest, matrix: ImageMatrix, final_tag: str
) -> tuple[list[Copy], dict[str, PublishRecord]]:
    """Every final tag with the digest it gets (platform images first, then indexes, then
    the moving tags), and each row's publish record as the final's manifest holds it. Pure."""
    platform_copies: list[Copy] = []
    records: dict[str, PublishRecord] = {}
    indexes: dict[str, tuple[str, str]] = {}  # variant -> (registry, index digest)
    for row_id, entry in manifest.variants.items():
        published = entry.publish
        if published is None:
            raise ManifestError(
                f"{row_id} of {manifest.tag} was not published (release images.publish "
                "at the rc, then release manifest)"
            )
        row = matrix.variant(row_id)
        registry, digest = published.registry, published.index.digest
        platform_ref = registry_ref(
            registry, matrix.platform_tag(row, final_tag, published.platform)
        )
        platform_copies.append(Copy(platform_ref, published.digest))
        indexes.setdefault(row.group, (registry, digest))
        index_refs = [registry_ref(registry, t) for t in matrix.index_tags(row.group, final_tag)]
        records[row_id] = replace(
            published, tags=(platform_ref,), index=Index(digest, tuple(index_refs))
        )
    index_copies, moving = [], []
    for group, (registry, digest) in indexes.items():
        for tag in matrix.index_tags(group, final_tag):
            index_copies.append(Copy(registry_ref(registry, tag), digest))
        if matrix.moving_tag:
            for tag in matrix.index_tags(group, matrix.moving_tag):
                moving.append(Copy(registry_ref(registry, tag), digest, moving=True))
    return [*platform_copies, *index_copies, *moving], records


@dataclass(frozen=True)
class Source:
    """One of the rc's published manifests, named by digest, and what it must be."""

    ref: str  # REGISTRY/NAME@sha256:...
    what: str  # "the platform image of cu129 (linux/arm64)", "the index of cu129"
    config: str | None = None  # a platform image's config digest: its image id
    lists: tuple[str, ...] = ()  # an index: the platform digests it must list


def rc_sources(manifest: Manifest, copies: list[Copy]) -> list[Source]:
    """Every manifest the final's tags are copied from, with what the rc's manifest says
    it is (every row published: :func:`final_copies` refused one that is not). Pure."""
    published = {k: e.publish for k, e in manifest.variants.items() if e.publish is not None}
    by_digest: dict[str, list[PublishRecord]] = {}
    for record in published.values():
        by_digest.setdefault(record.index.digest, []).append(record)
    sources: dict[str, Source] = {}
    for row_id, record in published.items():
        platform = next(c for c in copies if c.digest == record.digest and not c.moving)
        ref = f"{repository(platform.ref)}@{record.digest}"
        what = f"the platform image of {row_id} ({record.platform})"
        sources.setdefault(ref, Source(ref, what, config=record.image_id))
    for c in copies:
        rows = by_digest.get(c.digest)
        ref = f"{repository(c.ref)}@{c.digest}"
        if rows is not None and ref not in sources:
            listed = tuple(dict.fromkeys(r.digest for r in rows))
            sources[ref] = Source(ref, "an index of its platform images", lists=listed)
    return list(sources.values())


def _refuse_source(source: Source, found: Served | None, rc: str) -> None:
    """Refuse a source the registry does not serve as the rc published it."""
    if found is None:
        raise RefusedError(
            f"{source.ref} is not in the registry: {rc}'s {source.what.removeprefix('the ')} "
            "is gone, so nothing can be copied from it; publish the rc again "
            "(release images.publish in a checkout of it) and re-run"
        )
    digest = source.ref.rsplit("@", 1)[1]
    if found.digest != digest:
        raise RefusedError(
            f"the registry serves other bytes under {source.ref} (their digest is "
            f"{found.digest}): not {rc}'s {source.what.removeprefix('the ')}; nothing is copied"
        )
    if source.config is not None and found.config != source.config:
        raise RefusedError(
            f"{source.ref} is not the image {rc}'s manifest records (its config is "
            f"{found.config}, the manifest's image id {source.config}); nothing is copied"
        )
    missing_platforms = set(source.lists) - {digest for _, digest in found.platforms}
    if source.lists and (not found.is_index or missing_platforms):
        raise RefusedError(
            f"{source.ref} is not the index {rc} published: it does not list "
            f"{', '.join(sorted(missing_platforms)) or 'platform images'}; nothing is copied"
        )


@dataclass(frozen=True)
class SignedFinals:
    """A variant's final tags, as signing takes them: each platform image (its final tag,
    its digest) and the index (its digest, its final tags)."""

    group: str
    images: tuple[tuple[str, str], ...]
    index: tuple[str, tuple[str, ...]]


def _final_signed(
    records: Mapping[str, PublishRecord], matrix: ImageMatrix
) -> tuple[SignedFinals, ...]:
    """What signing the final's own tags signs, per variant, from the final's publish
    records (the moving tags are not among them). Pure."""
    groups: dict[str, list[PublishRecord]] = {}
    for row_id, record in records.items():
        groups.setdefault(matrix.variant(row_id).group, []).append(record)
    return tuple(
        SignedFinals(
            group,
            tuple((r.tags[0], r.digest) for r in rows),
            (rows[0].index.digest, rows[0].index.tags),
        )
        for group, rows in groups.items()
    )


@dataclass(frozen=True)
class RegistryPromotion:
    """The final's tags in the registry, checked (:func:`check_registry_promotion`): every
    rc manifest there and true to its digest, every final tag free or serving the rc's
    digest already. :meth:`apply` copies what is missing, reads each copy back and records
    the final's manifest; run again, it copies nothing."""

    repo: GitRepo
    reg: Registry
    rc: str
    final: str
    commit: str
    copies: tuple[Copy, ...]
    served: Mapping[str, Served | None]  # what each final tag served when checked
    note: str  # the final's manifest, as it is recorded
    signing: ImageSigning | None = None
    signed: tuple[SignedFinals, ...] = ()  # each variant's final tags, signed where a key is given

    def _there(self, c: Copy) -> bool:
        found = self.served[c.ref]
        return found is not None and found.digest == c.digest

    @property
    def steps(self) -> tuple[Step, ...]:
        out = []
        for c in self.copies:
            if self._there(c):
                out.append(Step(StepKind.SKIP, f"{c.ref} is there: {c.digest}", RefData(c.ref)))
            else:
                source = f"{repository(c.ref)}@{c.digest}"
                out.append(
                    Step(
                        StepKind.COPY_IMAGE,
                        f"copy {source} to {c.ref}",
                        ImageCopy(c.ref, c.digest),
                    )
                )
        record = f"record the manifest of {self.final} ({notes_ref(self.final)})"
        return (*out, Step(StepKind.RECORD_MANIFEST, record, RefData(notes_ref(self.final))))

    def apply(self, say: Say) -> None:
        say(
            f"images of {self.rc} as {self.final}, by digest in the registry (no pull, no rebuild):"
        )
        copied = []
        for c in self.copies:
            if self._there(c):
                say(f"  {c.ref} is there: {c.digest}")
                continue
            self.reg.copy(f"{repository(c.ref)}@{c.digest}", c.ref)
            copied.append(c)
        back = self.reg.served_all([c.ref for c in copied])  # then every copy read back
        for c in copied:
            got = back[c.ref]
            if got is None or got.digest != c.digest:
                shown = "nothing" if got is None else got.digest
                raise RegistryError(
                    f"{c.ref} does not read back as copied: it serves {shown}, not {c.digest}"
                )
            say(f"  {c.ref} -> {c.digest}" + (" (moved)" if self.served[c.ref] is not None else ""))
        if self.signing is not None:
            for group in self.signed:
                sign_published(
                    self.signing, group.group, group.images, group.index, say, step="promote"
                )
        recorded = write_note(self.repo, self.final, self.commit, self.note)
        say(
            f"{'recorded' if recorded else 'already recorded'} the manifest of {self.final} "
            f"({notes_ref(self.final)}), from {self.rc}"
        )


def check_registry_promotion(
    ctx: ReleaseContext,
    rc_manifest: Manifest,
    *,
    final_tag: str,
    final_version: str,
    commit: str,
    reg: Registry | None = None,
    signing: ImageSigning | None = None,
) -> RegistryPromotion:
    """Everything the registry could refuse, read before anything changes: the rc's
    manifests (present, their bytes true to their digests, what the rc's manifest says
    they are), and every final tag (free, or serving the rc's digest; only a moving tag
    may serve another). Reads only."""
    matrix = ctx.config.matrix
    if matrix is None:
        raise ManifestError("[tool.release.images] is missing: no images to promote")
    rules = [replace(r, publish=True) for r in variant_rules(matrix)]
    gaps = missing(rc_manifest, rules)
    if gaps:
        raise ManifestError(f"the manifest of {rc_manifest.tag} is incomplete: " + "; ".join(gaps))
    reg = reg or Registry()
    rc_records = rc_manifest
    copies, records = final_copies(rc_records, matrix, final_tag)
    sources = rc_sources(rc_records, copies)
    served = reg.served_all([c.ref for c in copies] + [s.ref for s in sources])
    rc = str(rc_records.tag)
    for source in sources:
        _refuse_source(source, served[source.ref], rc)
    for c in copies:
        found = served[c.ref]
        if found is not None and found.digest != c.digest and not c.moving:
            raise RefusedError(
                f"{c.ref} is published already with another image: the registry serves "
                f"{found.digest}, the rc's is {c.digest}; a published tag is not moved"
            )
    final = final_manifest(rc_records, matrix, final_tag, final_version)
    if signing is not None:
        key = signing.key
        records = {
            row: replace(r, signed_by=key, index=replace(r.index, signed_by=key))
            for row, r in records.items()
        }
    variants = {**final.variants}
    for row_id, record in records.items():
        variants[row_id] = replace(variants[row_id], publish=record)
    final = replace(final, variants=variants)
    text = json.dumps(
        check(final.document(), f"the manifest of {final_tag}"), indent=2, sort_keys=True
    )
    return RegistryPromotion(
        ctx.repo,
        reg,
        rc,
        final_tag,
        commit,
        tuple(copies),
        {c.ref: served[c.ref] for c in copies},
        text + "\n",
        signing,
        _final_signed(records, matrix),
    )


def promote_in_registry(
    ctx: ReleaseContext,
    rc_manifest: Manifest,
    *,
    final_tag: str,
    final_version: str,
    commit: str,
    say: Say = print,
    reg: Registry | None = None,
    signing: ImageSigning | None = None,
) -> list[Copy]:
    """Check, then copy the rc's published digests to the final's tags, read each back,
    sign the final's tags where ``signing`` is given, and record the final's manifest;
    what was copied (or found there already)."""
    promotion = check_registry_promotion(
        ctx,
        rc_manifest,
        final_tag=final_tag,
        final_version=final_version,
        commit=commit,
        reg=reg,
        signing=signing,
    )
    promotion.apply(say)
    return list(promotion.copies)

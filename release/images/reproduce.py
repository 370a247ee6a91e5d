"""``release reproduce <tag>``: an rc tester's check that the published images are what the
tag's sources make.

The tag, its note and its tree come from a remote anyone with push rights can write, so
all three are untrusted (the design's trust model):

1. The tag and its manifest (``refs/notes/release/<tag>``) are read from the remote
   (:mod:`release.flows.published_tag`): their objects are fetched, and no ref, file or
   setting of this repository changes; a local tag that differs from the remote's is
   refused.
2. The tagged commit is checked out in a temporary clone that reads this repository's
   objects (``alternates``, a shallow clone's boundary too), where the tag and note refs
   are made: this checkout, its branch, index and work tree are never touched, and the
   clone's remote URL is this one's, so the image says the same source.
3. The tag's commit is the only source of what is built: its ``[tool.release.images]``
   gives the args, base and version (for a final, those of the rc it was promoted from,
   whose images it is). The manifest is evidence to compare with: one that names another
   tag or commit, or records a version, a commit time, an image, variants, bases or build
   args the tag's configuration does not give, is refused before anything is built, as
   every command that reads it refuses it
   (:func:`~release.flows.manifest_store.published_manifest`); so is one here that lacks
   a variant the tag builds.
4. The tag's and its manifest's signatures are verified in the clone, against trust roots
   the tester holds (:mod:`release.flows.signatures`): one that does not verify, or with
   ``require_signed`` none that does, is refused before anything is pulled or built.
   Container options from the tag that reach into this host (``--privileged``, devices,
   GPUs, added capabilities, seccomp or AppArmor off: :mod:`release.core.host_access`)
   are refused before anything is built unless the tester allows each (``allow_host``),
   or trusts the signer the tag verifies as (``allow_host_signed_by``), said and recorded.
   Each published image and index is checked, in the same words, against the tester's
   image key (``image_trust``: :mod:`release.images.image_signing`) before anything is
   pulled, and so is each attested row's signed provenance
   (:mod:`release.images.provenance_trust`). These checks are
   :mod:`release.images.reproduce_trust`'s.
5. Each variant is rebuilt without the build cache (``cache`` allows it), under
   ``<name>-reproduce-<run>:<tag>[-<variant>]``, a name of this run's own: the rc's tags
   never move, and two runs at once do not share an image. The recorded base is used when
   this engine has it or can pull it; a stand-in is made only when the rc was built on one,
   or when asked (``standin``), and the verdict says so.
6. Smoke runs on each rebuild, and the snapshot where the tag's rule gives one.
7. The verdict, field by field (:mod:`release.core.verdict`); where the images were
   published and attested, the registry's fields and the attached provenance's and SBOM's
   (:mod:`release.images.attest_check`). Any drift fails the run.

The temporary clone and the rebuilt images are removed afterwards (Ctrl-C and SIGTERM
included) unless ``keep``; after SIGKILL, by the next run that makes a container
(:mod:`release.adapters.leftovers`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from release.adapters import leftovers
from release.adapters.engine import ContainerEngine
from release.adapters.git import GitRepo
from release.adapters.git_notes import notes_ref
from release.core.host_access import consent
from release.core.image_signing import ImageCheck
from release.core.manifest import ManifestError, omitted_snapshot, variant_rules
from release.core.manifest_records import SmokeRecord, SnapshotRecord, VariantEntry
from release.core.matrix import ImageMatrix, Variant
from release.core.say import Say
from release.core.tag_manifest import not_built, not_recorded
from release.core.terminal_text import escaped
from release.core.verdict import FieldVerdict, State, compare_variant, table
from release.errors import RefusedError, ReleaseError, UsageError
from release.flows.context import ReleaseContext
from release.flows.manifest_store import PublishedManifest, published_manifest
from release.flows.published_tag import PublishedTag, pin, read_published
from release.images.attest_check import attestation_verdicts
from release.images.build import BuildStatus, build_images
from release.images.image_signing import ImageTrust, check_published
from release.images.manifest import built_data, smoke_data, snapshot_data
from release.images.provenance_trust import check_provenance
from release.images.registry_check import TAG_FIELD as REGISTRY_TAG
from release.images.registry_check import registry_verdicts
from release.images.reproduce_trust import Trusting, allowed_by, verified
from release.images.source import BuildSource, GivenVersion, read_source

__all__ = ["Reproduction", "reproduce"]

SUFFIX = "-reproduce"  # the rebuilt images' repository: NAME-reproduce-<run>:<tag>[-<variant>]


@dataclass
class Reproduction:
    """What ``reproduce`` found: the verdict per variant, and what the reader must know
    about how it was reached (a stand-in base, a remote that did not answer)."""

    tag: str
    verdicts: dict[str, list[FieldVerdict]] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    signatures: Mapping[str, object] = field(default_factory=dict)
    host_allowed_by: str | None = None  # the signer whose host options were allowed
    image_signatures: list[ImageCheck] = field(default_factory=list)
    provenance_signatures: dict[str, ImageCheck] = field(default_factory=dict)  # by row

    @property
    def drifted(self) -> list[str]:
        return [v for v, fields in self.verdicts.items() if any(f.drift for f in fields)]

    @property
    def against(self) -> str:
        """What the rebuilds were compared with: the manifest, and the registry where a
        variant's images were published."""
        registry = any(f.name == REGISTRY_TAG for fields in self.verdicts.values() for f in fields)
        return "the manifest and the registry" if registry else "the manifest"

    def summary(self) -> str:
        if self.drifted:
            return (
                f"reproduce {escaped(self.tag)}: DRIFT in {escaped(', '.join(self.drifted))} "
                f"(against {self.against})"
            )
        return (
            f"reproduce {escaped(self.tag)}: match ({len(self.verdicts)} variant(s), against "
            f"{self.against})"
        )


@dataclass(frozen=True)
class _Rebuild:
    """What the tag's own configuration says to build, once the manifest agrees with it."""

    matrix: ImageMatrix  # the tag's, under this run's image name
    source: BuildSource  # the checkout, at the version whose images the manifest records
    variants: tuple[Variant, ...]
    recorded: Mapping[str, VariantEntry]  # the manifest's variants


@contextmanager
def _clone(ctx: ReleaseContext, tag: PublishedTag, keep: bool, say: Say) -> Iterator[GitRepo]:
    """A clean temporary checkout of ``tag`` that reads this repository's objects (a
    shallow clone's included), with the tag and its note as they were read; its scratch
    directory (the clone's parent) holds the rest of the run's files."""
    top = leftovers.scratch_dir("reproduce")  # a killed run's is removed by the next
    if keep:
        leftovers.keep(top)
    try:
        clone = ctx.repo.borrowing(top / "src")
        pin(clone, tag)
        clone.run("checkout", "--quiet", "--detach", tag.commit)
        url = ctx.repo.remotes.url(ctx.config.remote)
        if url:
            clone.run("remote", "add", ctx.config.remote, url)
        yield clone
    finally:
        if keep:
            say(f"kept the checkout at {top / 'src'}")
        else:
            shutil.rmtree(top, ignore_errors=True)


def _rebuild_of(
    here: ReleaseContext, manifest: PublishedManifest, variants: Sequence[str]
) -> _Rebuild:
    """What to build: the tag's configuration, which ``manifest`` was read against; the
    manifest refused where it lacks a variant that configuration builds."""
    tag, matrix = manifest.tag, manifest.matrix
    absent = not_recorded(manifest.manifest, matrix)
    if absent:
        raise not_built(manifest.name, absent)
    source = read_source(here, GivenVersion.of(manifest.built_as), allow_shallow=True)
    recorded = manifest.manifest.variants
    unknown = [v for v in variants if v not in recorded]
    if unknown:
        raise UsageError(
            f"the manifest of {tag} has no variant {', '.join(unknown)} "
            f"(it has: {', '.join(recorded)})"
        )
    run = f"{matrix.name}{SUFFIX}-{secrets.token_hex(4)}"
    chosen = tuple(matrix.select(variants or list(recorded)))
    return _Rebuild(replace(matrix, name=run), source, chosen, recorded)


def _check_bases(
    engine: ContainerEngine,
    variants: Sequence[Variant],
    recorded: Mapping[str, VariantEntry],
    standin: bool,
) -> list[str]:
    """Refuse before building when a recorded base can be neither found nor pulled and
    a stand-in was not asked for; the notices of stand-ins that will be made."""
    notices = []
    found = engine.inspect_images([v.base_image for v in variants])
    for variant in variants:
        built = recorded[variant.id].build
        if found.get(variant.base_image) is not None or built is None:  # (a manifest has one)
            continue
        if not os.environ.get("RELEASE_NO_PULL") and engine.pull(variant.base_image):
            continue
        base = built.base
        if base.standin:
            notices.append(
                f"{variant.id}: the rc was built on a stand-in for {escaped(base.ref)}; one is made "
                "here the same way (the base row compares their content)"
            )
        elif standin:
            notices.append(
                f"{variant.id}: the recorded base {escaped(base.ref)} cannot be had here: built on "
                "a stand-in, as asked (--standin); its base row says how it differs"
            )
        else:
            raise RefusedError(
                f"the recorded base of {variant.id}, {escaped(base.ref)} (content "
                f"{escaped(base.content_digest[:19])}), is not here and cannot be pulled: load it "
                "(docker load), or pass --standin to build on a stand-in, which the verdict "
                "will show"
            )
    return notices


def _rebuilt(
    engine: ContainerEngine,
    matrix: ImageMatrix,
    variant: Variant,
    source: BuildSource,
    image: str,
    store: Path,
    say: Say,
    live: bool = False,
) -> tuple[SmokeRecord, SnapshotRecord]:
    from release.images.smoke import run_smoke
    from release.images.snapshot import run_snapshot

    smoke = run_smoke(engine, matrix, variant, source, image, say=say, live=live)
    say(smoke.verdict())  # its head and checks were said as they ran
    if matrix.has_snapshot(variant):
        snap = run_snapshot(engine, matrix, variant, source, image, store=store, say=say, live=live)
        for line in snap.lines():
            say(line)
        return smoke_data(smoke), snapshot_data(snap)
    rule = next(r for r in variant_rules(matrix) if r.id == variant.id)
    return smoke_data(smoke), omitted_snapshot(rule)


def reproduce(
    ctx: ReleaseContext,
    tag: str,
    *,
    variants: Sequence[str] = (),
    standin: bool = False,
    keep: bool = False,
    cache: bool = False,
    jobs: int = 1,
    allow_host: Sequence[str] = (),
    trust: Trusting | None = None,
    image_trust: ImageTrust | None = None,
    say: Say = print,
    live: bool = False,
) -> Reproduction:
    """Rebuild ``tag``'s images from its sources and compare them with its manifest.
    ``allow_host``: the host-reaching container options the tester allows (``--allow-host``
    values); every one the tag asks for must be among them. ``live``: a live line per
    rebuild when stdout is a terminal."""
    allowed = consent(allow_host)
    trust = trust or Trusting()
    remote = ctx.config.remote
    found = read_published(ctx.repo, remote, tag)
    outcome = Reproduction(tag)
    _notice(outcome, found.notices, say)
    if not found.notices:
        say(f"read {tag} and its manifest ({notes_ref(tag)}) from {remote}; nothing here changed")
    if found.note is None:
        raise ManifestError(
            f"{tag} has no manifest ({notes_ref(tag)}), here or on {remote}: it "
            "was not published (release manifest --push records it)"
        )
    with _clone(ctx, found, keep, say) as clone:
        outcome.signatures, signer = verified(ctx, clone, found, trust, say)
        manifest = published_manifest(clone, tag, found.commit)
        if manifest is None:
            raise ManifestError(
                f"{notes_ref(tag)} has no note on {tag}'s commit {found.commit[:12]}"
            )
        rebuild = _rebuild_of(ctx.elsewhere(clone.root), manifest, variants)
        notice = allowed_by(rebuild.matrix, rebuild.variants, tag, allowed, signer)
        if notice is not None:
            outcome.host_allowed_by = signer
            _notice(outcome, [notice], say)
        if image_trust is not None:  # before anything is pulled or built
            rows = rebuild.recorded  # as the manifest's codec read them: checked
            outcome.image_signatures = check_published(rows, image_trust, say)
            outcome.provenance_signatures = check_provenance(rows, image_trust, say)
        engine = ContainerEngine.detect()
        _notice(outcome, _check_bases(engine, rebuild.variants, rebuild.recorded, standin), say)
        _verdicts(
            engine,
            rebuild,
            outcome,
            clone.root.parent,
            jobs=jobs,
            cache=cache,
            keep=keep,
            say=say,
            live=live,
        )
    for line in table(outcome.verdicts):
        say(line)
    return outcome


def _notice(outcome: Reproduction, notices: Sequence[str], say: Say) -> None:
    """What the reader must know about how the verdict is reached, said as it is known."""
    outcome.notices += notices
    for notice in notices:
        say(notice)


def _verdicts(
    engine: ContainerEngine,
    rebuild: _Rebuild,
    outcome: Reproduction,
    top: Path,
    *,
    jobs: int,
    cache: bool,
    keep: bool,
    say: Say,
    live: bool = False,
) -> None:
    """Build, smoke and snapshot each variant, and compare it with what was recorded."""
    matrix, source = rebuild.matrix, rebuild.source
    # every tag this run may make, removed afterwards whether or not it got that far
    images = [matrix.tag(v, source.image_version) for v in rebuild.variants]
    leftovers.record_images(top, images)  # a killed run's are removed by the next run
    try:
        results = build_images(
            engine,
            matrix,
            rebuild.variants,
            source,
            logs=top / "logs",
            jobs=jobs,
            keep_going=True,
            force=True,
            no_cache=not cache,
            say=say,
            live=live,
        )
        for variant, result in zip(rebuild.variants, results, strict=True):
            if result.status is not BuildStatus.BUILT or result.image_id is None:
                why = result.error or result.status.value
                outcome.verdicts[variant.id] = [FieldVerdict("build", State.DRIFT, (why,))]
                continue
            built = built_data(engine, result, variant.accelerator)
            smoked, snapshot = _rebuilt(
                engine, matrix, variant, source, result.tags[0], top / "snapshots", say, live
            )
            recorded = rebuild.recorded[variant.id]
            published = recorded.publish
            outcome.verdicts[variant.id] = (
                compare_variant(
                    recorded,
                    VariantEntry(built, smoked, snapshot),
                    config_args=matrix.build_args_for(variant, source.version),
                )
                + registry_verdicts(engine, published, built.content)
                + attestation_verdicts(
                    recorded,
                    built,
                    commit=source.revision,
                    rebuilt_image=str(result.image_id),
                    signature=outcome.provenance_signatures.get(variant.id),
                )
            )
    finally:
        if keep:
            say(f"kept the rebuilt images: {', '.join(images)}")
        else:
            for image in images:
                _remove(engine, image)


def _remove(engine: ContainerEngine, image: str) -> None:
    """A rebuilt image, and any container of it (only ``reproduce`` makes them: one a
    check's tool was still creating when Ctrl-C came is found here too)."""
    with contextlib.suppress(ReleaseError):
        for container in engine.containers_of(image, mine=True):
            engine.remove_container(container)
        engine.remove_image(image)

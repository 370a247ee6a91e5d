"""The release manifest in a checkout: parts written by ``build``, ``smoke`` and
``snapshot`` (where: :mod:`release.flows.manifest_store`), merged by ``release
manifest`` (also the parts of several CI jobs, ``--parts DIR``), and published as the
tag's git note in ``refs/notes/release/<tag>`` (:mod:`release.adapters.git_notes`),
checked against the schema when written and when read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from release import __version__
from release.adapters.engine import ContainerEngine
from release.adapters.files import atomic_write
from release.adapters.git import GitRepo
from release.adapters.git_notes import notes_ref, read_note, remote_note, write_note
from release.adapters.image_content import image_content_digest
from release.core.accelerator import Accelerator
from release.core.json_text import JSONValue, parse_json
from release.core.manifest import (
    ManifestError,
    Release,
    check,
    merged,
    part_document,
    variant_rules,
)
from release.core.manifest_records import (
    Base,
    BuildRecord,
    Content,
    Manifest,
    Part,
    Recipe,
    Record,
    SmokeEntry,
    SmokeRecord,
    SnapshotRecord,
)
from release.core.matrix import ImageMatrix
from release.errors import ConfigError, RefusedError
from release.flows.context import ReleaseContext
from release.flows.manifest_store import parts_root, read_parts
from release.images.build import BuildResult, BuildStatus
from release.images.inventory import inventory_of, probe_state
from release.images.source import BuildSource, given_version, read_source

if TYPE_CHECKING:  # the reports are made where smoke and snapshot run
    from release.images.smoke_checks import SmokeReport
    from release.images.snapshot import SnapshotReport


__all__ = [
    "ManifestCheckout",
    "ManifestSource",
    "assemble",
    "build_data",
    "part_path",
    "parts_dir",
    "publish",
    "push_manifest",
    "record_builds",
    "release_of",
    "smoke_data",
    "snapshot_data",
    "tag_at_head",
    "write_part",
]


class ManifestSource(Protocol):
    """What the manifest needs of a checkout: :class:`Checkout`, or the image workflows'
    :class:`release.images.workspace.Workspace`."""

    @property
    def ctx(self) -> ReleaseContext: ...
    @property
    def matrix(self) -> ImageMatrix: ...
    @property
    def source(self) -> BuildSource: ...


@dataclass(frozen=True)
class ManifestCheckout:
    """A checkout with an image matrix, as ``release manifest`` reads it: no container
    engine needed (the job that merges CI's parts may have none)."""

    ctx: ReleaseContext
    matrix: ImageMatrix
    source: BuildSource

    @classmethod
    def open(cls, ctx: ReleaseContext, version: str | None = None) -> ManifestCheckout:
        if ctx.config.matrix is None:
            raise ConfigError("[tool.release.images] is missing: this engine has no image matrix")
        given = given_version(version) if version is not None else None  # once, here
        return cls(ctx, ctx.config.matrix, read_source(ctx, given))


def parts_dir(ws: ManifestSource) -> Path:
    """Where this checkout writes its parts (``$RELEASE_MANIFEST_DIR`` or under ``.git``)."""
    return parts_root(ws.ctx.repo.git_dir)


def tag_at_head(ws: ManifestSource) -> str | None:
    """The release tag on the commit being built whose version is the build's; None for
    an untagged build (or a ``--version`` no tag carries). Found when the source was read
    (:attr:`BuildSource.head_tag`): the tags are not listed again for each part."""
    return ws.source.head_tag or None


def release_of(ws: ManifestSource) -> Release:
    source = ws.source
    return Release(
        source.version, tag_at_head(ws), source.revision, source.epoch, ws.matrix.name, __version__
    )


def part_path(ws: ManifestSource, variant: str, part: str) -> Path:
    return parts_dir(ws) / ws.source.version / f"{variant}.{part}.json"


def write_part(ws: ManifestSource, variant: str, part: str, record: Record) -> Path:
    """One variant's part (its record), checked, written atomically (a re-run replaces it)."""
    document = part_document(release_of(ws), variant, part, record.document())
    path = part_path(ws, variant, part)
    atomic_write(path, json.dumps(document, indent=2, sort_keys=True) + "\n")
    return path


def build_data(
    result: BuildResult,
    accelerator: Accelerator,
    content: Mapping[str, JSONValue],
    inventory: Mapping[str, JSONValue],
) -> BuildRecord:
    """A built variant as its build part records it. Pure."""
    base = result.base
    if base is None or result.image_id is None or result.digest is None:
        raise ManifestError(f"build({result.variant}) made no image to record")
    return BuildRecord(
        build_args=dict(result.build_args),
        base=Base(base.ref, base.id, cast(str, base.content), base.standin),  # checked as written
        image_id=result.image_id,
        tags=tuple(result.tags),
        input_digest=result.digest,
        content=Content.of(content, f"the content of {result.variant}"),
        inventory=dict(inventory),
        accelerator=accelerator,
        # CUDA's version as the field records had before there were other accelerators
        cuda=accelerator.version if accelerator.kind == "cuda" else None,
        recipe=Recipe.of(result.recipe, f"the recipe of {result.variant}")
        if result.recipe
        else None,
    )


def built_data(
    engine: ContainerEngine, result: BuildResult, accelerator: Accelerator, *, timeout: float = 120
) -> BuildRecord:
    """:func:`build_data` of an image in ``engine``: its content digest (cached by image
    id) and its inventory (the runtime probe, run in a throwaway container)."""
    image = str(result.image_id)
    content = image_content_digest(engine, image).to_dict()
    state = probe_state(engine, image, timeout=timeout, what=f"build({result.variant})")
    return build_data(result, accelerator, content, inventory_of(state))


def _recorded_image(path: Path) -> str | None:
    """The image a build part written here records; None where there is none to read."""
    try:
        part = Part.of(parse_json(path.read_text(encoding="utf-8")), str(path))
        return BuildRecord.of(part.data, str(path)).image_id
    except (OSError, ValueError, ManifestError):
        return None


def record_builds(
    ws: ManifestSource, engine: ContainerEngine, results: Sequence[BuildResult]
) -> list[Path]:
    """The build part of each variant built (or found unchanged); a part that records the
    same image already is kept as it is, so an unchanged re-run asks the engine nothing."""
    written = []
    for result in results:
        if result.status not in (BuildStatus.BUILT, BuildStatus.UNCHANGED):
            continue
        path = part_path(ws, result.variant, "build")
        if result.image_id and _recorded_image(path) == result.image_id:
            continue
        accelerator = ws.matrix.variant(result.variant).accelerator
        written.append(
            write_part(ws, result.variant, "build", built_data(engine, result, accelerator))
        )
    return written


def smoke_data(report: SmokeReport) -> SmokeRecord:
    """A smoke run as its part records it. Pure."""
    checks = (
        SmokeEntry(r.name, r.status.value, r.detail, round(r.seconds, 3)) for r in report.results
    )
    return SmokeRecord(report.image_id, report.passed, tuple(checks))


def snapshot_data(report: SnapshotReport) -> SnapshotRecord:
    """A snapshot run as its part records it (the runtime record whole, where it ran). Pure."""
    if report.not_run is not None:
        return SnapshotRecord("not run", report.not_run, report.image_id)
    status = "passed" if report.passed else "failed"
    return SnapshotRecord(status, report.runtime_output, report.image_id, report.record)


def assemble(ws: ManifestSource, dirs: Sequence[Path] = (), *, partial: bool = False) -> Manifest:
    """The manifest of the build's version from its parts (here, and in ``dirs``)."""
    root = parts_dir(ws)
    sources = [*dirs] or [root]
    if not dirs and not root.is_dir():
        raise ManifestError(
            f"no manifest parts for {ws.source.version} (looked in {root}): "
            "release images build, smoke and snapshot write them"
        )
    parts = read_parts(sources, ws.source.version)
    if not parts:
        raise ManifestError(
            f"no manifest parts for {ws.source.version} in {', '.join(map(str, sources))}"
        )
    return merged(parts, variant_rules(ws.matrix), partial=partial)


def publish(ws: ManifestSource, manifest: Manifest) -> bool:
    """The manifest as its tag's note on the tagged commit; False when it was already."""
    tag = manifest.tag
    if not tag:
        raise ManifestError(
            f"{manifest.version} is an untagged build: only a tag's manifest is published"
        )
    text = json.dumps(
        check(manifest.document(), f"the manifest of {tag}"), indent=2, sort_keys=True
    )
    return write_note(ws.ctx.repo, tag, manifest.commit, text + "\n")


def push_manifest(repo: GitRepo, remote: str, tag: str, commit: str) -> bool:
    """Send ``tag``'s manifest to the remote on its own (a CI job that merged the parts, or
    promoted a final); False when the remote has it already. A note the remote has for
    the tag with the same text is taken as it is (a job run again: this clone's notes ref
    is a new commit of the same note); one with other text is never overwritten."""
    ref = notes_ref(tag)
    local = repo.rev(ref)
    if local is None:
        raise ManifestError(f"{tag} has no manifest here to push (release manifest writes it)")
    theirs = remote_note(repo, remote, tag, commit)
    if theirs is not None:
        sha, text = theirs
        if text != read_note(repo, tag, commit):
            raise RefusedError(
                f"{remote} has another manifest of {tag} ({ref}): a manifest written "
                "elsewhere is never overwritten (see release manifest show "
                f"{tag}, after git fetch {remote} '+{ref}:{ref}')"
            )
        if sha != local:
            repo.run("update-ref", ref, sha, local, mutating=True)  # the remote's, same note
        return False
    result = repo.remotes.push_atomic(remote, [f"{ref}:{ref}"])
    if not result.ok:
        said = (result.stderr or result.stdout).strip().splitlines()
        raise RefusedError(
            f"pushing the manifest of {tag} to {remote} failed: {said[-1] if said else '?'} "
            "(a manifest written elsewhere is never overwritten)"
        )
    return "[up to date]" not in result.stdout

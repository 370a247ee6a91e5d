"""The release manifest in a checkout: parts written by ``build``, ``smoke`` and
``snapshot``, merged by ``release manifest``, published as the tag's git note.

Parts live under ``<git dir>/release/manifest/<version>/<variant>.<part>.json``, or under
``$RELEASE_MANIFEST_DIR/<version>/`` where that is set (CI: a directory each job uploads,
so nothing is written under ``.git``). ``release manifest --parts DIR`` merges the parts
of several jobs. The published manifest is the note on the tagged commit in
``refs/notes/release/<tag>`` (:mod:`release.adapters.git_notes`), checked against the
schema when written and when read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from release import __version__
from release.adapters.git_notes import read_note, write_note
from release.adapters.process import atomic_write
from release.core.manifest import (
    PART_SCHEMA,
    ManifestError,
    Release,
    VariantRule,
    check,
    loads,
    merge,
    part_document,
)
from release.core.matrix import ImageMatrix
from release.flows.context import ReleaseContext
from release.images.source import BuildSource

if TYPE_CHECKING:  # the reports are made where smoke and snapshot run
    from release.images.smoke_checks import SmokeReport
    from release.images.snapshot import SnapshotReport


class Workspace(Protocol):
    """What the manifest needs of a checkout (:class:`release.images.workspace.Workspace`)."""

    ctx: ReleaseContext
    matrix: ImageMatrix
    source: BuildSource

    @property
    def state_dir(self) -> Path: ...

__all__ = [
    "MANIFEST_DIR_ENV",
    "Workspace",
    "assemble",
    "parts_root",
    "publish",
    "published",
    "read_parts",
    "release_of",
    "rules_of",
    "smoke_data",
    "snapshot_data",
    "write_part",
]

MANIFEST_DIR_ENV = "RELEASE_MANIFEST_DIR"


def parts_root(ws: Workspace) -> Path:
    env = os.environ.get(MANIFEST_DIR_ENV)
    return Path(env) if env else ws.state_dir / "manifest"


def tag_at_head(ws: Workspace) -> str | None:
    """The release tag on the commit being built whose version is the build's; None for
    an untagged build (or a ``--version`` no tag carries)."""
    for tag in ws.ctx.tags(remote=False):
        if tag.commit == ws.source.revision and tag.version.pep440() == ws.source.version:
            return tag.name
    return None


def release_of(ws: Workspace) -> Release:
    source = ws.source
    return Release(
        source.version, tag_at_head(ws), source.revision, source.epoch, ws.matrix.name, __version__
    )


def rules_of(matrix: ImageMatrix) -> list[VariantRule]:
    rule = str(matrix.snapshot.cuda) if matrix.snapshot is not None else "(no snapshot rule)"
    return [VariantRule(v.id, v.cuda_text, matrix.has_snapshot(v), rule) for v in matrix.variants]


def write_part(ws: Workspace, variant: str, part: str, data: Mapping[str, Any]) -> Path:
    """One variant's part, checked, written atomically (a re-run replaces it)."""
    document = part_document(release_of(ws), variant, part, data)
    path = parts_root(ws) / ws.source.version / f"{variant}.{part}.json"
    atomic_write(path, json.dumps(document, indent=2, sort_keys=True) + "\n")
    return path


def smoke_data(report: SmokeReport) -> dict[str, Any]:
    return {
        "image_id": report.image_id,
        "passed": report.passed,
        "checks": [
            {
                "name": r.name,
                "status": r.status.value,
                "reason": r.detail,
                "seconds": round(r.seconds, 3),
            }
            for r in report.results
        ],
    }


def snapshot_data(report: SnapshotReport) -> dict[str, Any]:
    return {
        "status": "passed" if report.passed else "failed",
        "reason": report.runtime_output,
        "image_id": report.record["image_id"],
        "record": report.record,
    }


def read_parts(dirs: Iterable[Path], version: str) -> list[dict[str, Any]]:
    """Every part of ``version`` under ``dirs``: in ``<dir>/<version>/`` as written here, or
    anywhere below ``dir`` (CI artifacts unpacked as they come), checked one by one."""
    found: list[dict[str, Any]] = []
    seen: set[Path] = set()
    for top in dirs:
        if not top.is_dir():
            raise ManifestError(f"--parts {top}: not a directory")
        for path in sorted(top.rglob("*.json")):
            if path.resolve() in seen:
                continue
            seen.add(path.resolve())
            try:
                text = path.read_text(encoding="utf-8")
                head = json.loads(text)
            except (OSError, ValueError, UnicodeDecodeError) as err:
                raise ManifestError(f"{path}: not a readable JSON part ({err})") from None
            if not isinstance(head, dict) or head.get("schema") != PART_SCHEMA:
                continue  # other files of the artifact
            if head.get("version") != version:
                continue
            found.append(check(head, str(path)))
    return found


def assemble(ws: Workspace, dirs: Sequence[Path] = (), *, partial: bool = False) -> dict[str, Any]:
    """The manifest of the build's version from its parts (here, and in ``dirs``)."""
    root = parts_root(ws)
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
    return merge(parts, rules_of(ws.matrix), partial=partial)


def publish(ws: Workspace, manifest: Mapping[str, Any]) -> bool:
    """The manifest as its tag's note on the tagged commit; False when it was already."""
    tag = manifest.get("tag")
    if not tag:
        raise ManifestError(
            f"{manifest['version']} is an untagged build: only a tag's manifest is published"
        )
    text = json.dumps(check(dict(manifest), f"the manifest of {tag}"), indent=2, sort_keys=True)
    return write_note(ws.ctx.repo, str(tag), str(manifest["commit"]), text + "\n")


def published(ws: Workspace, tag: str, commit: str) -> dict[str, Any] | None:
    """``tag``'s published manifest, checked; None when it has none."""
    text = read_note(ws.ctx.repo, tag, commit)
    if text is None:
        return None
    return loads(text, f"the manifest of {tag} (refs/notes/release/{tag})")

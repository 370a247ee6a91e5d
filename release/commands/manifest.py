"""The release manifest: ``manifest`` merges a release's parts and records it with its tag,
signed where git's signing is configured (:mod:`release.flows.signatures`); ``manifest
show TAG`` prints a tag's published manifest (what an rc tester reads)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from release.commands.common import as_json, context, opened
from release.commands.outcome import JSONValue, OutcomeDefaults, Run
from release.errors import ExitCode, RefusedError, UsageError

if TYPE_CHECKING:
    from release.core.manifest_records import Manifest

__all__ = ["ManifestOutcome", "ManifestRequest", "manifest", "show"]

ACTIONS = ("show",)


def _summary(manifest: Manifest) -> list[str]:
    """A manifest in a few lines, its fields escaped (parts and notes come from elsewhere)."""
    from release.core.manifest import variant_summary
    from release.core.terminal_text import escaped

    tag = manifest.tag or "(untagged)"
    of, at = escaped(manifest.version), escaped(manifest.commit[:10])
    lines = [f"manifest of {of} {escaped(tag)} at {at}"]
    if manifest.promoted_from:
        lines.append(f"  promoted from {escaped(manifest.promoted_from.tag)}")
    for variant, entry in manifest.variants.items():
        row = {k: escaped(v) for k, v in variant_summary(entry).items()}
        lines.append(
            f"  {escaped(variant)}: built {row['built']}, smoke {row['smoked']}, "
            f"snapshot {row['snapshot']}"
        )
        published = entry.publish
        if published:
            lines.append(
                f"    {escaped(published.platform)} {escaped(published.digest)}, index "
                f"{escaped(published.index.digest)}: "
                + ", ".join(escaped(t) for t in published.index.tags)
            )
    return lines


@dataclass(frozen=True)
class ManifestOutcome(OutcomeDefaults):
    """``manifest``: the release manifest, as the document it is (its records are the
    manifest's own, :mod:`release.core.manifest`), and what was done with it: the gaps of a
    partial one, where it was recorded and pushed, or why it was not."""

    manifest: Mapping[str, JSONValue]
    said: tuple[str, ...] = ()
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> tuple[str, ...]:
        return self.said

    def document(self) -> Mapping[str, JSONValue]:
        return self.manifest


@dataclass(frozen=True)
class ManifestRequest:
    action: str | None = None  # "show": print a tag's published manifest
    tag: str | None = None
    parts: str | None = None
    version: str | None = None
    partial: bool = False
    json: bool = False
    out: str | None = None
    push: bool = False
    no_record: bool = False


def manifest(request: ManifestRequest, run: Run) -> ManifestOutcome:
    """Merge the parts, show or write the manifest, and record it as the tag's note. The
    summary shows the manifest's fields escaped (parts come from CI artifacts)."""
    from release.adapters.files import atomic_write, output_path
    from release.adapters.git_notes import notes_ref
    from release.core.manifest import missing, variant_rules
    from release.core.terminal_text import escaped
    from release.flows.signatures import record_signed
    from release.images.manifest import ManifestCheckout, assemble, publish, push_manifest

    if request.action or request.tag:  # invoke gives "" for one left out
        return show(request, run)
    if request.no_record and request.push:
        raise UsageError("--no-record and --push: a manifest not recorded cannot be pushed")
    ws = ManifestCheckout.open(opened(run), request.version)
    target = output_path(Path(request.out), "--out", tree=ws.ctx.root) if request.out else None
    dirs = [Path(p) for p in (request.parts or "").split(",") if p]
    merged = assemble(ws, dirs, partial=request.partial)
    document = merged.document()
    if target is not None:
        atomic_write(target, json.dumps(document, indent=2, sort_keys=True) + "\n")
    data = as_json(document)
    assert isinstance(data, dict)
    said = run.say
    if not request.json:
        for line in _summary(merged):
            said(line)
    if request.partial:
        gaps = [f"missing: {escaped(gap)}" for gap in missing(merged, variant_rules(ws.matrix))]
        return ManifestOutcome(data, tuple(gaps))
    tag = merged.tag
    if not tag:
        return ManifestOutcome(
            data,
            ("untagged build: the manifest is complete but not recorded (only tags have one)",),
        )
    if request.no_record:
        return ManifestOutcome(
            data,
            (
                f"complete; not recorded (--no-record): release manifest records it as "
                f"{notes_ref(tag)}",
            ),
        )
    recorded, signed = record_signed(ws.ctx.repo, tag, merged.commit, lambda: publish(ws, merged))
    lines = [
        f"{'recorded' if recorded else 'already recorded'} as {notes_ref(tag)}"
        + ("" if request.push else "; release push sends it with the tag")
    ]
    lines.append(signed or "unsigned (no signing configured: user.signingKey or tag.gpgSign)")
    if request.push:
        sent = push_manifest(ws.ctx.repo, ws.ctx.config.remote, tag, merged.commit)
        lines.append(
            f"{'pushed' if sent else 'already on'} {ws.ctx.config.remote}: {notes_ref(tag)}"
        )
    return ManifestOutcome(data, tuple(lines))


def show(request: ManifestRequest, run: Run) -> ManifestOutcome:
    """``manifest show TAG``: the tag's published manifest, checked as every command checks
    it (its schema, its tag, what the tag builds), as text or (``--json``) the document
    itself."""
    from release.adapters.git_notes import notes_ref
    from release.flows.manifest_store import published_manifest

    if request.action not in ACTIONS:
        raise UsageError(f"release manifest {request.action}: no such action; did you mean show?")
    if not request.tag:
        raise UsageError("release manifest show needs a tag: release manifest show v0.31.0rc1")
    ctx = context(run)
    commit = ctx.repo.rev(f"refs/tags/{request.tag}")
    if commit is None:
        raise RefusedError(
            f"no tag {request.tag} here (git fetch {ctx.config.remote} --tags, or check its name)"
        )
    found = published_manifest(ctx.repo, request.tag, commit)
    if found is None:
        remote = ctx.config.remote
        raise RefusedError(
            f"{request.tag} has no manifest here ({notes_ref(request.tag)}): fetch it with "
            f"git fetch {remote} 'refs/notes/release/*:refs/notes/release/*'"
        )
    data = as_json(found.document)
    assert isinstance(data, dict)
    return ManifestOutcome(data, () if request.json else tuple(_summary(found.manifest)))

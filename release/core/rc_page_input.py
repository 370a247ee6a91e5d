"""The rc page's values (:mod:`release.core.rc_page`), made from what the page shows. Pure.

- The tag's release manifest arrives checked against its schema (its shape is known), but
  its values are still untrusted text: they are kept as they are, for the page to escape.
  The snapshot record inside it is free-form: only numbers are taken as timings.
- A row's variant and platform come from the image matrix where it has the row; where it
  does not (a row of an older config), the row is its own variant and the publish part
  says the platform; with neither, the image was built for the engine's own.
- A reproduce record is untrusted JSON of unknown shape: it is read whole, and anything
  unexpected is a ``ValueError`` saying what, never half a verdict. A row is *drift*
  when reproduce says so of it or of any of its fields, *match* when at least one field
  matched and none drifted, and *not compared* otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from release.core.accelerator import Accelerator
from release.core.manifest_records import Manifest, PublishRecord, VariantEntry
from release.core.rc_page import (
    NOT_REPRODUCED,
    Figure,
    Published,
    RcPage,
    Reproduced,
    ReproduceState,
    Row,
    Smoke,
    SmokeResult,
    Snapshot,
)
from release.core.rc_page_evidence import attested_of
from release.core.terminal_text import escaped

if TYPE_CHECKING:
    from release.core.matrix import ImageMatrix, Variant

__all__ = ["ReproduceRecord", "page_of", "reproduce_of"]


@dataclass(frozen=True)
class ReproduceRecord:
    """What a ``release reproduce TAG`` run on this machine said, per row."""

    rows: Mapping[str, Reproduced]
    notices: tuple[str, ...] = ()


def page_of(
    manifest: Manifest,
    *,
    matrix: ImageMatrix | None = None,
    notes: str | None = None,
    reproduce: ReproduceRecord | None = None,
    notices: Sequence[str] = (),
) -> RcPage:
    """The page of the tag whose (checked) ``manifest`` this is."""
    variants = manifest.variants
    known = [i for i in (matrix.ids if matrix else ()) if i in variants]
    order = [*known, *sorted(set(variants) - set(known))]
    verdicts = reproduce.rows if reproduce else {}
    rows = tuple(
        _row(row_id, variants[row_id], _configured(matrix, row_id), verdicts.get(row_id))
        for row_id in order
    )
    came = manifest.promoted_from
    return RcPage(
        image=manifest.image,
        tag=manifest.tag or "",
        version=manifest.version,
        commit=manifest.commit,
        source_date_epoch=manifest.source_date_epoch,
        rows=rows,
        promoted_from=came.tag if came else None,
        notes=notes,
        reproduced=reproduce is not None,
        notices=(*(reproduce.notices if reproduce else ()), *notices),
        tool_version=manifest.tool_version,
    )


def _configured(matrix: ImageMatrix | None, row_id: str) -> Variant | None:
    return next((v for v in matrix.variants if v.id == row_id), None) if matrix else None


def _row(
    row_id: str,
    entry: VariantEntry,
    configured: Variant | None,
    verdict: Reproduced | None,
) -> Row:
    build, publish, smoke, snapshot = entry.build, entry.publish, entry.smoke, entry.snapshot
    assert build is not None and smoke is not None and snapshot is not None  # a manifest's
    platform = configured.platform if configured else None
    return Row(
        id=row_id,
        group=configured.group if configured else row_id,
        platform=platform or (publish.platform if publish else None),
        accelerator=(build.accelerator or Accelerator("cuda", build.cuda or "")).label,
        image_id=build.image_id,
        base_ref=build.base.ref,
        standin_base=build.base.standin,
        smoke=Smoke(
            smoke.passed, tuple(SmokeResult(c.name, c.status, c.reason) for c in smoke.checks)
        ),
        snapshot=Snapshot(snapshot.status, snapshot.reason, _figures(snapshot.record)),
        publish=_published(publish) if publish else None,
        reproduce=verdict or NOT_REPRODUCED,
        attest=attested_of(entry.attest),
    )


def _published(publish: PublishRecord) -> Published:
    return Published(
        registry=publish.registry,
        platform=publish.platform,
        digest=publish.digest,
        tags=publish.tags,
        index_digest=publish.index.digest,
        index_tags=publish.index.tags,
        signed_by=publish.signed_by,
        index_signed_by=publish.index.signed_by,
    )


def _figures(record: object) -> tuple[Figure, ...]:
    """The round trip's timings in a snapshot record (``snapshot_runtime.figures``): the
    finite numbers only."""
    runtime = record.get("snapshot_runtime") if isinstance(record, Mapping) else None
    figures = runtime.get("figures") if isinstance(runtime, Mapping) else None
    if not isinstance(figures, Mapping):
        return ()
    return tuple(
        Figure(str(name), float(value))
        for name, value in figures.items()
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    )


def reproduce_of(document: object, tag: str) -> ReproduceRecord:
    """The verdicts of a reproduce record (``release reproduce TAG --json``'s document);
    ``ValueError`` saying what is wrong when it is not one of ``tag``."""
    if not isinstance(document, Mapping):
        raise ValueError("not a JSON object")
    if document.get("tag") != tag:
        raise ValueError(f"it is a record of {escaped(repr(document.get('tag')))[:80]}, not {tag}")
    verdicts, drifted = document.get("verdicts"), document.get("drifted", [])
    notices = document.get("notices", [])
    if not isinstance(verdicts, Mapping):
        raise ValueError("it has no verdicts")
    for name, value in (("drifted", drifted), ("notices", notices)):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"its {name} is not a list of strings")
    rows = {str(row): _verdict(row, fields, row in drifted) for row, fields in verdicts.items()}
    rows.update({row: Reproduced(ReproduceState.DRIFT) for row in drifted if row not in rows})
    return ReproduceRecord(rows, tuple(notices))


def _verdict(row: object, fields: object, drifted: bool) -> Reproduced:
    if not isinstance(fields, list) or not all(
        isinstance(f, Mapping)
        and isinstance(f.get("name"), str)
        and isinstance(f.get("state"), str)
        for f in fields
    ):
        raise ValueError(f"the verdict of {escaped(str(row))[:80]} is not a list of fields")
    states = [_state(f["state"]) for f in fields]
    drift = tuple(f["name"] for f, s in zip(fields, states, strict=True) if s == "drift")
    if drift or drifted:
        return Reproduced(ReproduceState.DRIFT, drift)
    if "match" in states:
        return Reproduced(ReproduceState.MATCH)
    return Reproduced(ReproduceState.NOT_COMPARED)


def _state(said: str) -> str:
    """A field's state as reproduce spells it: ``match``, or the enum's name as a JSON
    encoder that falls back to ``str`` writes it (``State.MATCH``)."""
    return said.removeprefix("State.").lower().replace("_", " ")

"""Which build starts first: longest first (LPT), from each variant's last build time.

Each variant's last build time is kept in ``durations.json`` beside the build logs; with
no record, variants with the snapshot step (the heavy one) go first.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from release.adapters.files import atomic_write
from release.core.json_text import parse_json
from release.core.matrix import ImageMatrix, Variant

__all__ = ["DURATIONS", "read_durations", "record_durations", "schedule"]

DURATIONS = "durations.json"  # in the logs dir: each variant's last build time, in seconds


def read_durations(logs: Path) -> dict[str, float]:
    """Each variant's last build time (seconds) as recorded under ``logs``; {} when none."""
    try:
        data = parse_json((logs / DURATIONS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(k): float(v)
        for k, v in data.items()
        if isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
    }


def record_durations(logs: Path, seconds: Mapping[str, float]) -> None:
    """Merge ``seconds`` into the record (atomically; a failure to write is not an error)."""
    if not seconds:
        return
    merged = {**read_durations(logs), **{k: round(v, 3) for k, v in seconds.items()}}
    with contextlib.suppress(OSError):
        atomic_write(logs / DURATIONS, json.dumps(merged, indent=2, sort_keys=True) + "\n")


def schedule(
    matrix: ImageMatrix, variants: Sequence[Variant], durations: Mapping[str, float]
) -> list[Variant]:
    """The order to start builds in: longest first (LPT). Variants with no recorded time
    come first (a first build is a cold one); then by last build time, longest first. Ties
    go to the variants with the snapshot step, then to the matrix order. Pure."""

    def key(item: tuple[int, Variant]) -> tuple[bool, float, bool, int]:
        index, variant = item
        seconds = durations.get(variant.id)
        return (
            seconds is not None,
            -(seconds or 0.0),
            not matrix.has_snapshot(variant),
            index,
        )

    return [variant for _, variant in sorted(enumerate(variants), key=key)]

"""``snapshot`` (only where the snapshot rule applies): a real checkpoint and restore of the
image's server with the snapshot runtime it installed (:mod:`release.images.roundtrip`),
the runtime state recorded as JSON with the round trip's figures, and a diff against a
baseline.

The record is kept under ``.git/release/snapshots/<version>/<variant>.json``; the
baseline is a file given, else the record of the highest earlier version of the
same variant. What the runtime and the probe said (the round trip's reason and log, the
state's values and keys) is shown as single-line fields, control characters escaped
(:mod:`release.core.terminal_text`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from release.adapters.engine import ContainerEngine
from release.adapters.files import atomic_write
from release.adapters.image_info import ImageInfo
from release.core.accelerator import accelerator_fields
from release.core.json_text import JSONValue, parse_json
from release.core.matrix import ImageMatrix, Variant
from release.core.terminal_text import escaped
from release.errors import EngineError, UsageError
from release.images.inventory import probe_state
from release.images.progress import live_step
from release.images.roundtrip import RoundTrip, round_trip
from release.images.source import BuildSource
from release.images.standin import STANDIN_LABEL

__all__ = ["SnapshotReport", "diff_states", "find_baseline", "run_snapshot"]


@dataclass(frozen=True)
class SnapshotReport:
    """A snapshot run: the record written (the runtime's state and the round trip's figures,
    as the probe gave them: the manifest keeps it whole), where, and the diff."""

    variant: str
    record: Mapping[str, JSONValue]
    path: Path
    trip: RoundTrip
    baseline: Path | None = None
    diff: list[str] = field(default_factory=list)
    not_run: str | None = None  # why no round trip ran (an emulated platform): never passed

    @property
    def passed(self) -> bool:
        return self.trip.passed

    @property
    def failed(self) -> bool:
        return self.not_run is None and not self.trip.passed

    @property
    def image_id(self) -> str:
        """The image snapshotted (its id, as the record says)."""
        return str(self.record["image_id"])

    @property
    def runtime_output(self) -> str:
        return self.trip.reason

    def lines(self, limit: int = 40) -> list[str]:
        marker = " [on a stand-in base]" if self.record.get("standin_base") else ""
        out = [f"snapshot({self.variant}): {self.record['image']}{marker}"]
        if self.not_run is not None:
            return [*out, f"  checkpoint/restore round trip: not run: {self.not_run}"]
        out.append(
            f"  checkpoint/restore round trip: {'passed' if self.passed else 'FAILED'}"
            + (f" - {escaped(self.trip.reason)}" if self.trip.reason else "")
        )
        if self.trip.log and not self.passed:
            out += [f"    | {escaped(line)}" for line in self.trip.log]
        state = _object(self.record.get("state"))
        found = _object(state.get("cuda")).get("version.json")
        cuda = f"CUDA {escaped(str(found))}, " if found is not None else ""  # a CUDA image's
        libraries, packages = state.get("libraries"), _object(state.get("python")).get("packages")
        out.append(
            f"  recorded: {_count(libraries)} shared libraries, "
            f"{_count(packages)} Python packages, {cuda}"
            f"driver: {escaped(str(state.get('driver')))} -> {escaped(str(self.path))}"
        )
        if self.baseline is None:
            out.append("  baseline: none (first record of this variant)")
        elif not self.diff:
            out.append(f"  no change against {escaped(str(self.baseline))}")
        else:
            out.append(f"  {len(self.diff)} change(s) against {escaped(str(self.baseline))}:")
            out += [f"    {line}" for line in self.diff[:limit]]
            if len(self.diff) > limit:
                out.append(f"    ... {len(self.diff) - limit} more")
        return out


def _object(value: JSONValue | None) -> Mapping[str, JSONValue]:
    """An object of the probe's state; {} for anything else."""
    return value if isinstance(value, dict) else {}


def _count(value: JSONValue | None) -> int:
    return len(value) if isinstance(value, dict | list) else 0


def _flatten(data: Mapping[str, object], prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def diff_states(old: Mapping[str, object], new: Mapping[str, object]) -> list[str]:
    """What changed between two runtime states, one line per key. Pure."""
    before, after = _flatten(old), _flatten(new)
    lines = []
    for key in sorted(before.keys() | after.keys()):
        was, now = escaped(str(before.get(key))), escaped(str(after.get(key)))
        if key not in after:
            lines.append(f"removed {escaped(key)} (was {was})")
        elif key not in before:
            lines.append(f"added   {escaped(key)} = {now}")
        elif before[key] != after[key]:
            lines.append(f"changed {escaped(key)}: {was} -> {now}")
    return lines


def find_baseline(store: Path, variant: str, version: str) -> Path | None:
    """The record of the highest version below ``version`` for ``variant``."""
    if not store.exists():
        return None
    try:
        current = Version(version)
    except InvalidVersion:
        return None
    candidates = []
    for directory in store.iterdir():
        try:
            seen = Version(directory.name)
        except InvalidVersion:
            continue
        if seen < current and (directory / f"{variant}.json").exists():
            candidates.append((seen, directory / f"{variant}.json"))
    return max(candidates)[1] if candidates else None


def run_snapshot(
    engine: ContainerEngine,
    matrix: ImageMatrix,
    variant: Variant,
    source: BuildSource,
    image: str,
    *,
    store: Path,
    baseline: Path | None = None,
    say: Callable[[str], None] = print,
    inspected: ImageInfo | None = None,
    live: bool = False,
) -> SnapshotReport:
    """``inspected``: the image's inspect data when the caller has it already. ``live``: a
    live line while the round trip runs, on a terminal."""
    if not matrix.has_snapshot(variant) or matrix.snapshot is None:
        spec = matrix.snapshot.selector.keyed if matrix.snapshot else "(no snapshot rule)"
        raise UsageError(
            f"variant {variant.id} ({variant.accelerator.label}) has no snapshot: "
            f"the snapshot rule {spec} leaves it out"
        )
    data = inspected if inspected is not None else engine.inspect_image(image)
    if data is None:
        raise EngineError(f"image {image} does not exist; build it first")
    rule = matrix.snapshot
    if variant.platform is not None and variant.platform != engine.platform():
        why = (
            f"emulated platform ({variant.platform} on {engine.platform()}: CRIU does not "
            "run under qemu-user; the round trip runs where the platform is native)"
        )
        said: dict[str, JSONValue] = {
            "variant": variant.id, "image": image, "image_id": data.id, "not_run": why,
        }  # fmt: skip
        return SnapshotReport(variant.id, said, Path(), RoundTrip(False, why), not_run=why)
    say(f"snapshot({variant.id}): {image}: serve, warm, checkpoint, restore in a fresh container")
    with live_step(f"snapshot({variant.id}): round trip", live=live):
        trip = round_trip(
            engine,
            data.id,
            rule,
            default_command=data.command,
            labels={"org.release.snapshot": variant.id},
        )
    state = probe_state(
        engine,
        data.id,
        timeout=rule.timeout,
        labels={"org.release.snapshot": variant.id},
        what=image,
    )
    labels = data.labels
    record: dict[str, JSONValue] = {
        "schema": 1,
        "variant": variant.id,
        **accelerator_fields(variant.accelerator),
        "image": image,
        "image_id": data.id,
        "version": source.version,
        "revision": source.revision,
        "standin_base": labels.get(STANDIN_LABEL) == "true",
        "snapshot_runtime": {
            "runtime": list(rule.runtime),
            "run_options": list(rule.serving.run_options),
            **trip.to_dict(),
        },
        "state": state,
    }
    path = store / source.version / f"{variant.id}.json"
    atomic_write(path, json.dumps(record, indent=2, sort_keys=True) + "\n")
    base_path = (
        baseline if baseline is not None else find_baseline(store, variant.id, source.version)
    )
    diff: list[str] = []
    if base_path is not None:
        if not base_path.exists():
            raise UsageError(f"--baseline {base_path}: no such file")
        try:
            old = parse_json(base_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:  # not UTF-8, not JSON, nested too deeply
            raise UsageError(f"--baseline {base_path}: not a snapshot record ({err})") from None
        diff = diff_states(old.get("state", old), state)
    return SnapshotReport(variant.id, record, path, trip, base_path, diff)

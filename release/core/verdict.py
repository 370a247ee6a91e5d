"""``reproduce``'s verdict: a rebuilt variant against the manifest, field by field. Pure.

Each field is a *match* or a *drift*, with the differences. Image ids are the exception:
Docker Engine 20.10's builder stamps every layer with the time it was made, whatever
``SOURCE_DATE_EPOCH`` says, so two builds of the same sources get two ids. A different
id is then *expected*, not drift, and the content digest (the filesystem with timestamps
normalized) is what says whether the image is the same.

Every name, key and value in the lines made here is a single-line field with its control
characters escaped (:mod:`release.core.terminal_text`): a manifest or a rebuild's check
name cannot print a line of its own, such as a forged ``reproduce ...: match``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from release.core.json_text import JSONValue
from release.core.manifest_records import Base, SmokeRecord, SnapshotRecord, VariantEntry
from release.core.terminal_text import escaped

__all__ = ["IMAGE_ID_NOTE", "FieldVerdict", "State", "compare_variant", "dict_changes", "table"]

IMAGE_ID_NOTE = (
    "expected: this engine's builder stamps layer times, so ids differ between builds; "
    "the content digest compares the filesystems"
)


class State(enum.Enum):
    MATCH = "match"
    DRIFT = "drift"
    EXPECTED = "differs (expected)"
    NOT_COMPARED = "not compared"


@dataclass(frozen=True)
class FieldVerdict:
    name: str
    state: State
    differences: tuple[str, ...] = field(default=())

    @property
    def drift(self) -> bool:
        return self.state is State.DRIFT


def dict_changes(
    old: Mapping[str, object], new: Mapping[str, object], limit: int = 12
) -> list[str]:
    """``+ key value``, ``- key value`` and ``~ key old -> new``, sorted by key, at most
    ``limit`` lines (then how many more)."""
    lines = []
    for key in sorted(old.keys() | new.keys()):
        if key not in new:
            lines.append(f"- {escaped(key)} {_short(old[key])}")
        elif key not in old:
            lines.append(f"+ {escaped(key)} {_short(new[key])}")
        elif old[key] != new[key]:
            lines.append(f"~ {escaped(key)} {_short(old[key])} -> {_short(new[key])}")
    if len(lines) > limit:
        lines = [*lines[:limit], f"... {len(lines) - limit} more"]
    return lines


def _short(value: object) -> str:
    text = escaped(str(value))
    if text.startswith("sha256:"):
        return text[7:19]
    return text[:12] if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else text


def _equal(name: str, old: object, new: object) -> FieldVerdict:
    if old == new:
        return FieldVerdict(name, State.MATCH)
    return FieldVerdict(name, State.DRIFT, (f"recorded {_short(old)}, rebuilt {_short(new)}",))


def _mapping(name: str, old: Mapping[str, object], new: Mapping[str, object]) -> FieldVerdict:
    changes = dict_changes(old, new)
    return FieldVerdict(name, State.DRIFT if changes else State.MATCH, tuple(changes))


def _check_runs(
    name: str,
    old: SmokeRecord | SnapshotRecord | None,
    new: SmokeRecord | SnapshotRecord | None,
) -> FieldVerdict:
    """Smoke and snapshot: the rebuild must do as well as the rc did (a check the rc passed
    and the rebuild failed is drift; one not run on either side is said)."""
    if old is None or new is None:
        return FieldVerdict(name, State.NOT_COMPARED, ("not run on the rebuild",) if old else ())
    if isinstance(old, SmokeRecord) and isinstance(new, SmokeRecord):
        before = {c.name: c.status for c in old.checks}
        after = {c.name: c.status for c in new.checks}
        return _mapping(name, before, after)
    assert isinstance(old, SnapshotRecord) and isinstance(new, SnapshotRecord)
    return _equal(name, old.status, new.status)


def _base(old: Base, new: Base) -> FieldVerdict:
    """The base, by content: what the rc was built on against what the rebuild used."""
    verdict = _equal("base", old.content_digest, new.content_digest)
    if not verdict.drift:
        return verdict

    def said(base: Base) -> str:
        return f"{escaped(base.ref)}{' (stand-in)' if base.standin else ''}"

    if said(old) == said(new):
        return verdict
    return FieldVerdict(
        "base", State.DRIFT, (*verdict.differences, f"recorded {said(old)}, rebuilt {said(new)}")
    )


def _table(inventory: Mapping[str, JSONValue], key: str) -> Mapping[str, object]:
    found = inventory.get(key)
    return found if isinstance(found, dict) else {}


def compare_variant(
    recorded: VariantEntry,
    rebuilt: VariantEntry,
    *,
    ids_reproducible: bool = False,
    config_args: Mapping[str, str] | None = None,
) -> list[FieldVerdict]:
    """Field by field: the base (by content), build args (recorded, against what the tag's
    configuration gives: ``config_args``), input digest, content digest (by part), Python
    packages, shared libraries, CUDA version, image id, then smoke and snapshot results."""
    old, new = recorded.build, rebuilt.build
    assert old is not None and new is not None  # a manifest's row, and a build's
    args = (
        _mapping("build args", old.build_args, config_args)
        if config_args is not None
        else FieldVerdict("build args", State.NOT_COMPARED)
    )
    content = _equal("content digest", old.content.digest, new.content.digest)
    if content.drift:
        parts = dict_changes(old.content.parts, new.content.parts)
        content = FieldVerdict(content.name, State.DRIFT, (*content.differences, *parts))
    image = _equal("image id", old.image_id, new.image_id)
    if image.drift and not ids_reproducible:
        image = FieldVerdict("image id", State.EXPECTED, (IMAGE_ID_NOTE,))
    was, now = old.inventory, new.inventory
    return [
        _base(old.base, new.base),
        args,
        _equal("input digest", old.input_digest, new.input_digest),
        content,
        _mapping("Python packages", _table(was, "python_packages"), _table(now, "python_packages")),
        _mapping("shared libraries", _table(was, "libraries"), _table(now, "libraries")),
        _equal("CUDA version", was.get("cuda"), now.get("cuda")),
        image,
        _check_runs("smoke", recorded.smoke, rebuilt.smoke),
        _check_runs("snapshot", recorded.snapshot, rebuilt.snapshot),
    ]


def table(verdicts: Mapping[str, Sequence[FieldVerdict]], limit: int = 8) -> list[str]:
    """The verdict per variant, a field a line, differences indented under it."""
    lines = []
    for variant, fields in verdicts.items():
        names = [escaped(f.name) for f in fields]
        drifted = [name for name, f in zip(names, fields, strict=True) if f.drift]
        head = f"DRIFT in {', '.join(drifted)}" if drifted else "match"
        lines.append(f"{escaped(variant)}: {head}")
        width = max(map(len, names))
        for name, f in zip(names, fields, strict=True):
            lines.append(f"  {name:<{width}}  {f.state.value}")
            lines += [f"  {'':<{width}}    {escaped(d)}" for d in f.differences[:limit]]
            if len(f.differences) > limit:
                lines.append(f"  {'':<{width}}    ... {len(f.differences) - limit} more")
    return lines

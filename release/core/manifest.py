"""The release manifest: one JSON document per rc and per final, checked against the
schema in ``manifest.schema.json`` on write and on read. Pure.

A manifest is assembled from *parts*: each ``build``, ``smoke`` and ``snapshot`` run
(and ``publish``, where the images go to a registry: their digests there) writes one
part per variant (a CI job per variant writes only its own), and
:func:`merge` puts the parts of one release together, refusing parts that disagree on
what was released (version, commit) or on the image (a smoke run on another image than
the one built). :func:`missing` says what a manifest still lacks for the matrix: every
variant built and smoked, and snapshotted where the snapshot rule says so; where it does
not, the snapshot is recorded as omitted, with the rule (:func:`omitted_snapshot`).
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from typing import TYPE_CHECKING, cast

from release.core.json_text import JSONValue, TooDeep, parse_json
from release.core.manifest_codec import ManifestError
from release.core.manifest_records import (
    AttestRecord,
    Index,
    Manifest,
    Part,
    PublishRecord,
    SmokeRecord,
    SnapshotRecord,
    VariantEntry,
)

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

    from release.core.matrix import ImageMatrix

__all__ = [
    "MANIFEST_SCHEMA",
    "MAX_DEPTH",
    "PARTS",
    "PART_SCHEMA",
    "REQUIRED_PARTS",
    "ManifestError",
    "Release",
    "VariantRule",
    "check",
    "loads",
    "merge",
    "merged",
    "missing",
    "omitted_snapshot",
    "part_document",
    "read_manifest",
    "variant_rules",
    "variant_summary",
]

MANIFEST_SCHEMA = "release-manifest/1"
PART_SCHEMA = "release-manifest-part/1"
REQUIRED_PARTS = ("build", "smoke", "snapshot")  # of every variant, for a complete manifest
PARTS = (*REQUIRED_PARTS, "publish", "attest")  # only where the images go to a registry
# levels of arrays and objects: a manifest has about a dozen (its snapshot records'
# included); one deeper is refused as read, before the schema's messages, a copy or a
# dump recurse through it
MAX_DEPTH = 64


@dataclass(frozen=True)
class Release:
    """What every part and the manifest say first: which release this is."""

    version: str  # PEP 440
    tag: str | None  # None for an untagged build
    commit: str
    source_date_epoch: int
    image: str  # the image name of the matrix
    tool_version: str

    def header(self) -> dict[str, JSONValue]:
        return {
            "version": self.version,
            "tag": self.tag,
            "commit": self.commit,
            "source_date_epoch": self.source_date_epoch,
            "tool": {"name": "release", "version": self.tool_version},
            "image": self.image,
        }


@dataclass(frozen=True)
class VariantRule:
    """A variant of the matrix as completeness sees it."""

    id: str
    accelerator: str  # as prose names it: "CUDA 12.9.1", "ROCm 6.4.1", "CPU"
    snapshot: bool  # the snapshot rule applies (the runtime step is built in)
    rule: str  # the rule as written, e.g. "!=12.*"
    publish: bool = False  # a release registry is configured: the row must be published
    group: str = ""  # the variant as configured; its rows share one index


def variant_rules(matrix: ImageMatrix) -> list[VariantRule]:
    """The matrix's variants as completeness sees them."""
    rule = matrix.snapshot.selector.text if matrix.snapshot is not None else "(no snapshot rule)"
    return [
        VariantRule(
            v.id, v.accelerator.label, matrix.has_snapshot(v), rule, bool(matrix.registry), v.group
        )
        for v in matrix.variants
    ]


@functools.cache
def _validator() -> Validator:
    import jsonschema  # loaded when a manifest is read or written, not at start-up

    text = (resources.files("release.core") / "manifest.schema.json").read_text(encoding="utf-8")
    # the shipped schema is checked against the metaschema by the tests, not on every run
    return jsonschema.Draft202012Validator(json.loads(text))


def check(document: object, what: str) -> dict[str, JSONValue]:
    """``document`` if the schema admits it, else :class:`ManifestError` in one line naming
    where (``variants.cu129.build.image_id``) and what is wrong."""
    errors = sorted(_validator().iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        # oneOf (manifest or part) hides the cause: report the deepest error of the kind
        # the document says it is
        error = _cause(errors[0], document)
        where = ".".join(str(p) for p in error.absolute_path) or "(top level)"
        message = error.message if len(error.message) <= 160 else error.message[:157] + "..."
        raise ManifestError(f"{what}: not a valid release manifest: {where}: {message}")
    return cast("dict[str, JSONValue]", document)  # the schema admits objects only


def _cause(error: ValidationError, document: object) -> ValidationError:
    kind = document.get("schema") if isinstance(document, Mapping) else None
    wanted = "part" if kind == PART_SCHEMA else "manifest"
    if error.context:
        ours = [e for e in error.context if f"/$defs/{wanted}" in "/".join(map(str, e.schema_path))]
        branch = 1 if wanted == "part" else 0  # the top level's oneOf: manifest, then part
        ours = ours or [e for e in error.context if list(e.schema_path)[:1] == [branch]]
        ours = ours or list(error.context)
        deepest = max(ours, key=lambda e: len(e.absolute_path))
        return _cause(deepest, document)
    return error


def _unique_keys(pairs: list[tuple[str, JSONValue]]) -> dict[str, JSONValue]:
    """An object whose keys are each there once: JSON readers disagree on which of two
    values of one key counts (Python keeps the last), so a document with two is refused."""
    document = dict(pairs)
    if len(document) != len(pairs):
        twice = next(key for key, n in Counter(k for k, _ in pairs).items() if n > 1)
        raise ManifestError(f"the key {twice!r} is there twice")
    return document


def loads(text: str, what: str) -> dict[str, JSONValue]:
    """A manifest or part read back: JSON (every key of an object once, nested no deeper
    than :data:`MAX_DEPTH`), then the schema."""
    try:
        document = parse_json(text, object_pairs_hook=_unique_keys, max_depth=MAX_DEPTH)
    except ManifestError as err:
        raise ManifestError(f"{what}: not a valid release manifest: {err.message}") from None
    except TooDeep:
        raise ManifestError(f"{what}: not a release manifest (nested too deep to read)") from None
    except ValueError as err:
        raise ManifestError(f"{what}: not JSON ({err})") from None
    return check(document, what)


def read_manifest(text: str, what: str) -> Manifest:
    """A manifest (not a part) read back (:func:`loads`) and made records, once."""
    document = loads(text, what)
    if document.get("schema") != MANIFEST_SCHEMA:
        raise ManifestError(f"{what}: a part of a release manifest, not a manifest")
    return Manifest.of(document)


def part_document(
    release: Release, variant: str, part: str, data: Mapping[str, JSONValue]
) -> dict[str, JSONValue]:
    """One variant's build, smoke or snapshot result as a part, checked."""
    document = {
        "schema": PART_SCHEMA,
        **release.header(),
        "variant": variant,
        "part": part,
        "data": dict(data),
    }
    return check(document, f"the {part} part of {variant}")


def omitted_snapshot(variant: VariantRule) -> SnapshotRecord:
    """The snapshot of a variant the rule leaves out, as the manifest records it."""
    return SnapshotRecord("omitted", f"{variant.accelerator}, rule `{variant.rule}`")


_SAME = ("version", "commit", "source_date_epoch", "image")


def merge(
    parts: Iterable[Mapping[str, JSONValue]], rules: Sequence[VariantRule], *, partial: bool = False
) -> dict[str, JSONValue]:
    """The document of the manifest the part documents make (:func:`merged`)."""
    return merged([Part.of(p, "a part") for p in parts], rules, partial=partial).document()


def merged(
    parts: Iterable[Part], rules: Sequence[VariantRule], *, partial: bool = False
) -> Manifest:
    """The manifest the ``parts`` make. Parts must agree on the release; one (variant, part)
    written twice must be the same document. Variants the rule leaves without a snapshot
    get the omitted record. With ``partial``, what is missing is left out; without it,
    a missing part is an error (see :func:`missing`)."""
    first: Part | None = None
    found: dict[tuple[str, str], Part] = {}
    known = {r.id: r for r in rules}
    tag: str | None = None
    for part in parts:
        first = first or part
        for key in _SAME:
            if getattr(part, key) != getattr(first, key):
                raise ManifestError(
                    f"parts disagree on the {key}: {getattr(first, key)!r} and "
                    f"{getattr(part, key)!r} ({part.variant} {part.part}); they are not of one "
                    "release"
                )
        tag = tag if tag is not None else part.tag
        if part.variant not in known:
            raise ManifestError(
                f"a {part.part} part for variant {part.variant!r}, which the matrix does "
                f"not have (variants: {', '.join(known)})"
            )
        slot = (part.variant, part.part)
        if slot in found and found[slot].data != part.data:
            raise ManifestError(
                f"two different {slot[1]} parts for {slot[0]}: the variant was "
                f"{'built' if slot[1] == 'build' else 'checked'} twice; keep one"
            )
        found[slot] = part
    if first is None:
        raise ManifestError("no parts: build, smoke and snapshot write them (release images build)")
    variants: dict[str, VariantEntry] = {}
    for rule in rules:
        data = {name: found[(rule.id, name)].data for name in PARTS if (rule.id, name) in found}
        entry = VariantEntry.of(data, f"the parts of {rule.id}")
        if not rule.snapshot:
            if entry.snapshot is not None and entry.snapshot.status != "omitted":
                raise ManifestError(
                    f"a snapshot part for {rule.id}, which the rule `{rule.rule}` leaves out"
                )
            entry = replace(entry, snapshot=omitted_snapshot(rule))
        _same_image(rule.id, entry)
        if data.keys() - {"snapshot"} or partial:
            variants[rule.id] = entry
    _one_index(variants, rules)
    manifest = Manifest(
        schema=MANIFEST_SCHEMA,
        version=first.version,
        tag=tag,
        commit=first.commit,
        source_date_epoch=first.source_date_epoch,
        tool=first.tool,
        image=first.image,
        variants=variants,
    )
    gaps = missing(manifest, rules)
    if gaps and not partial:
        raise ManifestError("the manifest is incomplete: " + "; ".join(gaps))
    if not partial:
        check(manifest.document(), "the merged manifest")
    return manifest


def _same_image(variant: str, entry: VariantEntry) -> None:
    built = entry.build.image_id if entry.build is not None else None
    for name in ("smoke", "snapshot", "publish", "attest"):
        part: SmokeRecord | SnapshotRecord | PublishRecord | AttestRecord | None
        part = getattr(entry, name)
        other = part.image_id if part is not None else None
        if built and other and other != built:
            raise ManifestError(
                f"{name}({variant}) ran on image {other[:19]}, not on the one built "
                f"({built[:19]}): run it again on the build's image"
            )


def _one_index(variants: Mapping[str, VariantEntry], rules: Sequence[VariantRule]) -> None:
    """The rows of one variant were published as one index: their publish parts agree."""
    seen: dict[str, tuple[str, Index]] = {}
    for rule in rules:
        published = variants[rule.id].publish if rule.id in variants else None
        if published is None:
            continue
        index = published.index
        first = seen.setdefault(rule.group or rule.id, (rule.id, index))
        if first[1] != index:
            raise ManifestError(
                f"publish({rule.id}) names the index {index.digest}, publish({first[0]}) "
                f"{first[1].digest}: the variant's platforms were published apart; "
                "publish them together (release images.publish)"
            )


def _how(name: str, rule: VariantRule) -> str:
    if name == "publish":
        return f"release images.publish --variant {rule.group or rule.id}"
    return f'nox -s "{name}({rule.id})"'


def missing(manifest: Manifest | None, rules: Sequence[VariantRule]) -> list[str]:
    """What the manifest lacks for the matrix (None: no manifest at all), one phrase per
    variant; [] when complete."""
    out = []
    for rule in rules:
        entry = manifest.entry(rule.id) if manifest is not None else VariantEntry()
        needed = (*REQUIRED_PARTS, "publish") if rule.publish else REQUIRED_PARTS
        lacking = [name for name in needed if getattr(entry, name) is None]
        if lacking:
            out.append(
                f"{rule.id}: no {' / '.join(lacking)} (run "
                + ", ".join(_how(name, rule) for name in lacking)
                + ")"
            )
    return out


def variant_summary(entry: VariantEntry | None) -> dict[str, str]:
    """Built / smoked / snapshot, each as a short word, for ``status`` and the rehearsal."""
    entry = entry or VariantEntry()
    build, smoke, snap = entry.build, entry.smoke, entry.snapshot
    return {
        "built": f"yes ({build.image_id[7:19]})" if build else "no",
        "smoked": ("passed" if smoke.passed else "FAILED") if smoke else "no",
        "snapshot": (
            f"omitted ({snap.reason})"
            if snap and snap.status == "omitted"
            else (snap.status if snap else "no")
        ),
    }

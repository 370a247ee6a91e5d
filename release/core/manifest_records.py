"""The release manifest as values: a :class:`Manifest` made once from a document its
schema admitted (:func:`release.core.manifest.check`), then passed whole; each variant's
parts are records (build, smoke, snapshot, publish, attest), and so is each part a job
writes (:class:`Part`). Pure. Each record declares its fields once; the codec
(:mod:`release.core.manifest_codec`) reads and writes them by those declarations.
Invariant: ``Manifest.of(document).document() == document`` for every document the schema
admits, so what is written back (``json.dumps(..., sort_keys=True)``) is the text read,
byte for byte. A key the schema makes optional is ``None`` here when the document leaves
it out, and left out again; parts shaped by another tool (a snapshot's runtime record, the
image's inventory) are kept as the JSON they are."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Self

from release.core.accelerator import Accelerator
from release.core.json_text import JSONValue
from release.core.manifest_codec import decode, encode

__all__ = [
    "AttestRecord",
    "Base",
    "BuildRecord",
    "Content",
    "Index",
    "JSONObject",
    "Manifest",
    "Part",
    "PromotedFrom",
    "Provenance",
    "PublishRecord",
    "Recipe",
    "Record",
    "Sbom",
    "SmokeEntry",
    "SmokeRecord",
    "SnapshotRecord",
    "Tool",
    "VariantEntry",
]

JSONObject = Mapping[str, JSONValue]


class Record:
    """A record of the manifest: made from its JSON document and written back as it, by
    the fields it declares (:mod:`release.core.manifest_codec`)."""

    @classmethod
    def of(cls, document: Mapping[str, object], what: str = "the manifest") -> Self:
        """The record of ``document``; :class:`ManifestError` naming where it is not one."""
        return decode(cls, document, what)

    def document(self) -> dict[str, JSONValue]:
        """The JSON document of the record (see the module's invariant)."""
        return encode(self)


@dataclass(frozen=True)
class Base(Record):
    ref: str
    id: str
    content_digest: str
    standin: bool


@dataclass(frozen=True)
class Content(Record):
    digest: str
    parts: Mapping[str, str]
    files: int


@dataclass(frozen=True)
class Recipe(Record):
    dockerfile: str
    context: str
    target: str | None = None


@dataclass(frozen=True)
class BuildRecord(Record):
    """A variant's build: its args, base, image and the digests it is compared by."""

    build_args: Mapping[str, str]
    base: Base
    image_id: str
    tags: tuple[str, ...]
    input_digest: str
    content: Content
    inventory: JSONObject  # the runtime inventory (:mod:`release.images.inventory`)
    accelerator: Accelerator | None = None
    cuda: str | None = None  # manifests written before accelerators were
    recipe: Recipe | None = None

    @property
    def recorded_accelerator(self) -> Accelerator:
        """The accelerator built for; a record written before accelerators had kinds has
        only ``cuda``."""
        return self.accelerator or Accelerator("cuda", self.cuda or "")


@dataclass(frozen=True)
class SmokeEntry(Record):
    """One smoke check as recorded: passed, failed, timed out or not run (``reason``)."""

    name: str
    status: str
    reason: str
    seconds: float | None = None


@dataclass(frozen=True)
class SmokeRecord(Record):
    image_id: str
    passed: bool
    checks: tuple[SmokeEntry, ...]


@dataclass(frozen=True)
class SnapshotRecord(Record):
    status: str  # passed, failed, omitted, not run
    reason: str
    image_id: str | None = None
    record: JSONObject | None = None  # the runtime's state as the probe gave it


@dataclass(frozen=True)
class Index(Record):
    """The multi-arch index a platform image was published in."""

    digest: str
    tags: tuple[str, ...]
    signed_by: str | None = None


@dataclass(frozen=True)
class PublishRecord(Record):
    registry: str
    platform: str
    image_id: str
    digest: str
    tags: tuple[str, ...]
    index: Index
    signed_by: str | None = None


@dataclass(frozen=True)
class Sbom(Record):
    tag: str
    digest: str
    media_type: str
    packages: int
    tool: str


@dataclass(frozen=True)
class Provenance(Record):
    tag: str
    digest: str
    predicate_type: str
    signed: bool
    signed_by: str | None = None


@dataclass(frozen=True)
class AttestRecord(Record):
    image_id: str
    subject: str
    sbom: Sbom
    provenance: Provenance


@dataclass(frozen=True)
class VariantEntry(Record):
    """What the manifest records of one variant (of one platform row); a part not made
    yet is None (only a partial manifest lacks build or smoke)."""

    build: BuildRecord | None = None
    smoke: SmokeRecord | None = None
    snapshot: SnapshotRecord | None = None
    publish: PublishRecord | None = None
    attest: AttestRecord | None = None


@dataclass(frozen=True)
class PromotedFrom(Record):
    """A final's manifest: the rc it was promoted from, and that rc's image ids."""

    tag: str
    commit: str
    image_ids: Mapping[str, str]


@dataclass(frozen=True)
class Tool(Record):
    """The tool that wrote a manifest or part, and its version."""

    name: str
    version: str


@dataclass(frozen=True)
class Manifest(Record):
    """A release's manifest: which release, made by which tool, and per variant (row id)
    what was built, smoked, snapshotted, published and attested."""

    schema: str
    version: str  # PEP 440
    tag: str | None  # None for an untagged build
    commit: str
    source_date_epoch: int
    tool: Tool
    image: str  # the image name of the matrix
    variants: Mapping[str, VariantEntry]
    promoted_from: PromotedFrom | None = None

    @property
    def tool_name(self) -> str:
        return self.tool.name

    @property
    def tool_version(self) -> str:
        return self.tool.version

    def entry(self, variant: str) -> VariantEntry:
        """What the manifest records of ``variant``; an empty entry when nothing."""
        return self.variants.get(variant) or VariantEntry()


@dataclass(frozen=True)
class Part(Record):
    """One variant's build, smoke, snapshot, publish or attest result as the job that made
    it wrote it: which release, then the part's own record as JSON (``data``: read as the
    record ``part`` names when the parts are merged)."""

    schema: str
    version: str  # PEP 440
    tag: str | None
    commit: str
    source_date_epoch: int
    tool: Tool
    image: str
    variant: str
    part: str  # build, smoke, snapshot, publish, attest
    data: JSONObject

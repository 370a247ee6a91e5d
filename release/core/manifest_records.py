"""The release manifest as values: a :class:`Manifest` made once from a document its
schema admitted (:func:`release.core.manifest.check`), then passed whole; each variant's
parts are records (build, smoke, snapshot, publish, attest). Pure. Invariant:
``Manifest.of(document).document() == document`` for every document the schema admits, so
what is written back (``json.dumps(..., sort_keys=True)``) is the text read, byte for byte.
A key the schema makes optional is ``None`` here when the document leaves it out, and left
out again; parts shaped by another tool (a snapshot's runtime record, the image's
inventory) are kept as the JSON they are."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from release.core.accelerator import Accelerator
from release.core.json_text import JSONValue

__all__ = [
    "AttestRecord",
    "Base",
    "BuildRecord",
    "Content",
    "Index",
    "JSONObject",
    "Manifest",
    "PromotedFrom",
    "Provenance",
    "PublishRecord",
    "Recipe",
    "Sbom",
    "SmokeEntry",
    "SmokeRecord",
    "SnapshotRecord",
    "VariantEntry",
]

JSONObject = Mapping[str, JSONValue]


# The schema admitted the document: its values are of the types these say.
def _obj(value: JSONValue) -> dict[str, JSONValue]:
    return cast("dict[str, JSONValue]", value)


def _strs(value: JSONValue) -> tuple[str, ...]:
    return tuple(cast("list[str]", value))


def _table(value: JSONValue) -> dict[str, str]:
    return dict(cast("dict[str, str]", value))


def _opt(out: dict[str, JSONValue], key: str, value: JSONValue) -> None:
    """``key`` written only when it has a value (the schema's optional keys)."""
    if value is not None:
        out[key] = value


def _accelerator(d: JSONObject) -> Accelerator:
    return Accelerator(cast(str, d["kind"]), cast(str, d["version"]))


@dataclass(frozen=True)
class Base:
    ref: str
    id: str
    content_digest: str
    standin: bool

    @classmethod
    def of(cls, d: JSONObject) -> Base:
        return cls(
            cast(str, d["ref"]), cast(str, d["id"]), cast(str, d["content_digest"]),
            cast(bool, d["standin"]),
        )  # fmt: skip

    def document(self) -> dict[str, JSONValue]:
        return {
            "ref": self.ref, "id": self.id, "content_digest": self.content_digest,
            "standin": self.standin,
        }  # fmt: skip


@dataclass(frozen=True)
class Content:
    digest: str
    parts: Mapping[str, str]
    files: int

    @classmethod
    def of(cls, d: JSONObject) -> Content:
        return cls(cast(str, d["digest"]), _table(d["parts"]), cast(int, d["files"]))

    def document(self) -> dict[str, JSONValue]:
        return {"digest": self.digest, "parts": dict(self.parts), "files": self.files}


@dataclass(frozen=True)
class Recipe:
    dockerfile: str
    context: str
    target: str | None = None

    @classmethod
    def of(cls, d: JSONObject) -> Recipe:
        return cls(
            cast(str, d["dockerfile"]), cast(str, d["context"]), cast("str | None", d.get("target"))
        )

    def document(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {"dockerfile": self.dockerfile, "context": self.context}
        _opt(out, "target", self.target)
        return out


@dataclass(frozen=True)
class BuildRecord:
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

    @classmethod
    def of(cls, d: JSONObject) -> BuildRecord:
        accelerator, recipe = d.get("accelerator"), d.get("recipe")
        return cls(
            build_args=_table(d["build_args"]),
            base=Base.of(_obj(d["base"])),
            image_id=cast(str, d["image_id"]),
            tags=_strs(d["tags"]),
            input_digest=cast(str, d["input_digest"]),
            content=Content.of(_obj(d["content"])),
            inventory=_obj(d["inventory"]),
            accelerator=_accelerator(_obj(accelerator)) if accelerator is not None else None,
            cuda=cast("str | None", d.get("cuda")),
            recipe=Recipe.of(_obj(recipe)) if recipe is not None else None,
        )

    def document(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {
            "build_args": dict(self.build_args),
            "base": self.base.document(),
            "image_id": self.image_id,
            "tags": list(self.tags),
            "input_digest": self.input_digest,
            "content": self.content.document(),
            "inventory": dict(self.inventory),
        }
        if (given := self.accelerator) is not None:
            out["accelerator"] = {"kind": given.kind, "version": given.version}
        _opt(out, "cuda", self.cuda)
        _opt(out, "recipe", self.recipe.document() if self.recipe else None)
        return out


@dataclass(frozen=True)
class SmokeEntry:
    """One smoke check as recorded: passed, failed, timed out or not run (``reason``)."""

    name: str
    status: str
    reason: str
    seconds: float | None = None

    @classmethod
    def of(cls, d: JSONObject) -> SmokeEntry:
        return cls(
            cast(str, d["name"]), cast(str, d["status"]), cast(str, d["reason"]),
            cast("float | None", d.get("seconds")),
        )  # fmt: skip

    def document(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {"name": self.name, "status": self.status}
        out["reason"] = self.reason
        _opt(out, "seconds", self.seconds)
        return out


@dataclass(frozen=True)
class SmokeRecord:
    image_id: str
    passed: bool
    checks: tuple[SmokeEntry, ...]

    @classmethod
    def of(cls, d: JSONObject) -> SmokeRecord:
        checks = cast("list[JSONObject]", d["checks"])
        return cls(
            cast(str, d["image_id"]), cast(bool, d["passed"]), tuple(map(SmokeEntry.of, checks))
        )

    def document(self) -> dict[str, JSONValue]:
        return {
            "image_id": self.image_id,
            "passed": self.passed,
            "checks": [c.document() for c in self.checks],
        }


@dataclass(frozen=True)
class SnapshotRecord:
    status: str  # passed, failed, omitted, not run
    reason: str
    image_id: str | None = None
    record: JSONObject | None = None  # the runtime's state as the probe gave it

    @classmethod
    def of(cls, d: JSONObject) -> SnapshotRecord:
        record = d.get("record")
        return cls(
            cast(str, d["status"]), cast(str, d["reason"]), cast("str | None", d.get("image_id")),
            _obj(record) if record is not None else None,
        )  # fmt: skip

    def document(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {"status": self.status, "reason": self.reason}
        _opt(out, "image_id", self.image_id)
        _opt(out, "record", dict(self.record) if self.record is not None else None)
        return out


@dataclass(frozen=True)
class Index:
    """The multi-arch index a platform image was published in."""

    digest: str
    tags: tuple[str, ...]
    signed_by: str | None = None

    @classmethod
    def of(cls, d: JSONObject) -> Index:
        return cls(cast(str, d["digest"]), _strs(d["tags"]), cast("str | None", d.get("signed_by")))

    def document(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {"digest": self.digest, "tags": list(self.tags)}
        _opt(out, "signed_by", self.signed_by)
        return out


@dataclass(frozen=True)
class PublishRecord:
    registry: str
    platform: str
    image_id: str
    digest: str
    tags: tuple[str, ...]
    index: Index
    signed_by: str | None = None

    @classmethod
    def of(cls, d: JSONObject) -> PublishRecord:
        return cls(
            cast(str, d["registry"]), cast(str, d["platform"]), cast(str, d["image_id"]),
            cast(str, d["digest"]), _strs(d["tags"]), Index.of(_obj(d["index"])),
            cast("str | None", d.get("signed_by")),
        )  # fmt: skip

    def document(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {
            "registry": self.registry, "platform": self.platform, "image_id": self.image_id,
            "digest": self.digest, "tags": list(self.tags), "index": self.index.document(),
        }  # fmt: skip
        _opt(out, "signed_by", self.signed_by)
        return out


@dataclass(frozen=True)
class Sbom:
    tag: str
    digest: str
    media_type: str
    packages: int
    tool: str

    @classmethod
    def of(cls, d: JSONObject) -> Sbom:
        return cls(
            cast(str, d["tag"]), cast(str, d["digest"]), cast(str, d["media_type"]),
            cast(int, d["packages"]), cast(str, d["tool"]),
        )  # fmt: skip

    def document(self) -> dict[str, JSONValue]:
        return {
            "tag": self.tag, "digest": self.digest, "media_type": self.media_type,
            "packages": self.packages, "tool": self.tool,
        }  # fmt: skip


@dataclass(frozen=True)
class Provenance:
    tag: str
    digest: str
    predicate_type: str
    signed: bool
    signed_by: str | None = None

    @classmethod
    def of(cls, d: JSONObject) -> Provenance:
        return cls(
            cast(str, d["tag"]), cast(str, d["digest"]), cast(str, d["predicate_type"]),
            cast(bool, d["signed"]), cast("str | None", d.get("signed_by")),
        )  # fmt: skip

    def document(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {
            "tag": self.tag, "digest": self.digest, "predicate_type": self.predicate_type,
            "signed": self.signed,
        }  # fmt: skip
        _opt(out, "signed_by", self.signed_by)
        return out


@dataclass(frozen=True)
class AttestRecord:
    image_id: str
    subject: str
    sbom: Sbom
    provenance: Provenance

    @classmethod
    def of(cls, d: JSONObject) -> AttestRecord:
        return cls(
            cast(str, d["image_id"]), cast(str, d["subject"]), Sbom.of(_obj(d["sbom"])),
            Provenance.of(_obj(d["provenance"])),
        )  # fmt: skip

    def document(self) -> dict[str, JSONValue]:
        return {
            "image_id": self.image_id, "subject": self.subject, "sbom": self.sbom.document(),
            "provenance": self.provenance.document(),
        }  # fmt: skip


@dataclass(frozen=True)
class VariantEntry:
    """What the manifest records of one variant (of one platform row); a part not made
    yet is None (only a partial manifest lacks build or smoke)."""

    build: BuildRecord | None = None
    smoke: SmokeRecord | None = None
    snapshot: SnapshotRecord | None = None
    publish: PublishRecord | None = None
    attest: AttestRecord | None = None

    @classmethod
    def of(cls, d: JSONObject) -> VariantEntry:
        def part(name: str) -> JSONObject | None:
            value = d.get(name)
            return _obj(value) if value is not None else None

        build, smoke, snapshot = part("build"), part("smoke"), part("snapshot")
        publish, attest = part("publish"), part("attest")
        return cls(
            BuildRecord.of(build) if build is not None else None,
            SmokeRecord.of(smoke) if smoke is not None else None,
            SnapshotRecord.of(snapshot) if snapshot is not None else None,
            PublishRecord.of(publish) if publish is not None else None,
            AttestRecord.of(attest) if attest is not None else None,
        )

    def document(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {}
        for name, part in (
            ("build", self.build), ("smoke", self.smoke), ("snapshot", self.snapshot),
            ("publish", self.publish), ("attest", self.attest),
        ):  # fmt: skip
            _opt(out, name, part.document() if part is not None else None)
        return out


@dataclass(frozen=True)
class PromotedFrom:
    """A final's manifest: the rc it was promoted from, and that rc's image ids."""

    tag: str
    commit: str
    image_ids: Mapping[str, str]

    @classmethod
    def of(cls, d: JSONObject) -> PromotedFrom:
        return cls(cast(str, d["tag"]), cast(str, d["commit"]), _table(d["image_ids"]))

    def document(self) -> dict[str, JSONValue]:
        return {"tag": self.tag, "commit": self.commit, "image_ids": dict(self.image_ids)}


@dataclass(frozen=True)
class Manifest:
    """A release's manifest: which release, made by which tool, and per variant (row id)
    what was built, smoked, snapshotted, published and attested."""

    schema: str
    version: str  # PEP 440
    tag: str | None  # None for an untagged build
    commit: str
    source_date_epoch: int
    tool_name: str
    tool_version: str
    image: str  # the image name of the matrix
    variants: Mapping[str, VariantEntry]
    promoted_from: PromotedFrom | None = None

    @classmethod
    def of(cls, document: JSONObject) -> Manifest:
        """The records of a manifest the schema admitted."""
        tool = _obj(document["tool"])
        promoted = document.get("promoted_from")
        variants = _obj(document["variants"])
        return cls(
            schema=cast(str, document["schema"]),
            version=cast(str, document["version"]),
            tag=cast("str | None", document["tag"]),
            commit=cast(str, document["commit"]),
            source_date_epoch=cast(int, document["source_date_epoch"]),
            tool_name=cast(str, tool["name"]),
            tool_version=cast(str, tool["version"]),
            image=cast(str, document["image"]),
            variants={k: VariantEntry.of(_obj(v)) for k, v in variants.items()},
            promoted_from=PromotedFrom.of(_obj(promoted)) if promoted is not None else None,
        )

    def document(self) -> dict[str, JSONValue]:
        """The JSON document these records were made from (see the module's invariant)."""
        out: dict[str, JSONValue] = {
            "schema": self.schema,
            "version": self.version,
            "tag": self.tag,
            "commit": self.commit,
            "source_date_epoch": self.source_date_epoch,
            "tool": {"name": self.tool_name, "version": self.tool_version},
            "image": self.image,
            "variants": {k: v.document() for k, v in self.variants.items()},
        }
        _opt(out, "promoted_from", self.promoted_from.document() if self.promoted_from else None)
        return out

    def entry(self, variant: str) -> VariantEntry:
        """What the manifest records of ``variant``; an empty entry when nothing."""
        return self.variants.get(variant) or VariantEntry()

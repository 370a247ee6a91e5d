"""The manifest's codec: every record read from real manifests and written back as the
very document it was read from, and a document the records do not admit refused in the
words the schema's checker uses."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

import pytest

from release.core.manifest import ManifestError, check, read_manifest
from release.core.manifest_codec import decode, encode, json_key
from release.core.manifest_records import (
    AttestRecord,
    Manifest,
    PromotedFrom,
    Record,
    VariantEntry,
)
from tests.manifest_support import complete_parts, every_optional_key

pytestmark = pytest.mark.no_git

# manifests as the image tests' jobs wrote them: a published rc with a snapshot's record,
# and one whose every snapshot the rule omits
REAL = sorted((Path(__file__).parent.parent / "fixtures" / "manifests").glob("*.json"))


def _records(value: object, at: str) -> Iterator[tuple[str, Record]]:
    """Every record inside ``value``, with where it is."""
    if isinstance(value, Record):
        yield at, value
    if is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            yield from _records(getattr(value, f.name), f"{at}.{f.name}")
    elif isinstance(value, tuple):
        for i, item in enumerate(value):
            yield from _records(item, f"{at}.{i}")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _records(item, f"{at}.{key}")


def test_the_fixtures_are_real_manifests() -> None:
    assert [p.name for p in REAL] == [
        "rc-published-snapshot-omitted.json",
        "rc-published-with-snapshot.json",
    ]


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.stem)
def test_every_record_of_a_real_manifest_round_trips_through_the_codec(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    manifest = read_manifest(text, path.name)
    assert json.dumps(manifest.document(), indent=2, sort_keys=True) + "\n" == text
    seen = set()
    for at, record in _records(manifest, "manifest"):
        document = record.document()
        again = type(record).of(document)
        assert again == record, at
        assert encode(again) == document, at
        assert json.loads(json.dumps(document)) == document, at  # JSON, nothing else
        seen.add(type(record).__name__)
    wanted = {"Manifest", "Tool", "VariantEntry", "BuildRecord", "Base", "Content"}
    wanted |= {"SmokeRecord", "SmokeEntry", "SnapshotRecord", "PublishRecord", "Index"}
    assert wanted <= seen


def test_the_record_types_no_real_manifest_has_round_trip_too() -> None:
    """attest, promoted_from, an accelerator, a recipe: the manifest that uses every key
    the schema makes optional."""
    manifest = Manifest.of(every_optional_key())
    row = manifest.entry("cu130")
    assert isinstance(row.attest, AttestRecord) and isinstance(manifest.promoted_from, PromotedFrom)
    for at, record in _records(manifest, "manifest"):
        assert type(record).of(record.document()) == record, at
    assert manifest.document() == every_optional_key()


def _unchecked() -> dict[str, Any]:
    return copy.deepcopy(json.loads(REAL[1].read_text(encoding="utf-8")))


def _schemas_message(document: object) -> str:
    with pytest.raises(ManifestError) as refused:
        check(document, "the manifest")
    return refused.value.message


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (
            lambda d: d["variants"]["cu129"]["build"].__setitem__("extra", 1),
            "variants.cu129.build: Additional properties are not allowed ('extra' was unexpected)",
        ),
        (
            lambda d: d["variants"]["cu129"]["smoke"].__setitem__("passed", "yes"),
            "variants.cu129.smoke.passed: 'yes' is not of type 'boolean'",
        ),
        (
            lambda d: d["variants"]["cu129"]["build"]["content"].__setitem__("files", True),
            "variants.cu129.build.content.files: True is not of type 'integer'",
        ),
        (
            lambda d: d["variants"]["cu129"]["build"].__setitem__("tags", "one"),
            "variants.cu129.build.tags: 'one' is not of type 'array'",
        ),
        (
            lambda d: d["variants"]["cu129"]["publish"]["index"].pop("digest"),
            "variants.cu129.publish.index: 'digest' is a required property",
        ),
        (
            lambda d: d.__setitem__("tool", ["release"]),
            "tool: ['release'] is not of type 'object'",
        ),
        (
            lambda d: d["variants"]["cu129"]["publish"].__setitem__("signed_by", None),
            "variants.cu129.publish.signed_by: None is not of type 'string'",
        ),
    ],
    ids=[
        "unknown key",
        "not a boolean",
        "true as a count",
        "not an array",
        "no digest",
        "tool",
        "null for a key left out",
    ],
)
def test_a_document_the_records_do_not_admit_is_refused_as_the_schema_refuses_it(
    damage: Any, said: str
) -> None:
    document = _unchecked()
    damage(document)
    expected = f"the manifest: not a valid release manifest: {said}"
    assert _schemas_message(document) == expected  # the edge, as read_manifest meets it
    with pytest.raises(ManifestError) as refused:
        Manifest.of(document)  # the codec, where a document did not pass the edge
    assert refused.value.message == expected
    with pytest.raises(ManifestError, match="not a valid release manifest"):
        read_manifest(json.dumps(document), "the manifest")


def test_a_part_is_refused_by_the_codec_as_a_manifest() -> None:
    with pytest.raises(ManifestError, match=r"\(top level\): .*\('variant', 'part', 'data' were"):
        Manifest.of(complete_parts()[0])


def test_an_entry_of_another_type_is_refused_where_it_is() -> None:
    with pytest.raises(ManifestError, match=r"a row: .*: build: 5 is not of type 'object'"):
        VariantEntry.of({"build": 5}, "a row")


@dataclass(frozen=True)
class _Renamed(Record):
    """A record whose JSON keys differ from its fields' names."""

    image_id: str = field(metadata=json_key("image-id"))
    seconds: float | None = field(default=None, metadata=json_key("took"))
    names: tuple[str, ...] = ()


def test_a_field_is_written_under_its_json_key_and_read_from_it() -> None:
    record = _Renamed("sha256:1", 2.5, ("a",))
    assert record.document() == {"image-id": "sha256:1", "took": 2.5, "names": ["a"]}
    assert _Renamed.of({"image-id": "sha256:1", "names": []}) == _Renamed("sha256:1")
    assert "took" not in _Renamed("x").document()
    with pytest.raises(ManifestError, match=r"\('image_id' was unexpected\)"):
        _Renamed.of({"image_id": "sha256:1", "names": []})


def test_an_integer_where_a_number_is_declared_is_written_back_an_integer() -> None:
    record = decode(_Renamed, {"image-id": "x", "took": 3, "names": []}, "t")
    assert record.seconds == 3 and isinstance(record.seconds, int)
    assert json.dumps(record.document()) == '{"image-id": "x", "took": 3, "names": []}'

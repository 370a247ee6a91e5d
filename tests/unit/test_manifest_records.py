"""The release manifest as records: made once from a checked document, read by attribute,
and written back as the very text that was read."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from release.core.accelerator import Accelerator
from release.core.manifest import ManifestError, check, merge, read_manifest
from release.core.manifest_records import Manifest, VariantEntry
from tests.manifest_support import COMMIT, RULES, complete_parts, every_optional_key, sha


def _text(document: object) -> str:
    return json.dumps(document, indent=2, sort_keys=True) + "\n"  # as manifests are written


@pytest.mark.parametrize(
    "make",
    [lambda: merge(complete_parts(), RULES), every_optional_key],
    ids=["an rc's manifest", "every optional key"],
)
def test_the_records_write_back_the_text_they_were_read_from(make: Any) -> None:
    text = _text(make())
    manifest = read_manifest(text, "test")
    assert _text(manifest.document()) == text
    assert Manifest.of(manifest.document()) == manifest


def test_the_records_hold_the_documents_values() -> None:
    manifest = read_manifest(_text(every_optional_key()), "test")
    assert (manifest.version, manifest.tag, manifest.commit) == ("0.31.0rc1", "v0.31.0rc1", COMMIT)
    row = manifest.entry("cu130")
    assert row.build is not None and row.build.image_id == sha("2")
    assert row.build.accelerator == Accelerator("rocm", "6.4.1") and row.build.cuda is None
    assert row.build.recipe is not None and row.build.recipe.target == "final"
    assert row.smoke is not None and row.smoke.checks[-1].seconds == 2.5
    assert row.publish is not None and row.publish.index.signed_by == "B" * 40
    assert row.attest is not None and row.attest.provenance.signed_by == "C" * 40
    assert manifest.promoted_from is not None and manifest.promoted_from.tag == "v0.31.0rc1"
    omitted = manifest.entry("cu128").snapshot
    assert omitted is not None and omitted.status == "omitted" and omitted.record is None
    assert manifest.entry("cu999") == VariantEntry()


@pytest.mark.parametrize(
    "drop",
    [
        ("variants", "cu130", "build", "recipe", "target"),
        ("variants", "cu130", "publish", "signed_by"),
        ("variants", "cu130", "publish", "index", "signed_by"),
        ("variants", "cu130", "attest", "provenance", "signed_by"),
        ("variants", "cu130", "snapshot", "record"),
        ("variants", "cu130", "snapshot", "image_id"),
        ("promoted_from",),
    ],
    ids=lambda path: ".".join(path),
)
def test_a_key_left_out_is_left_out_again(drop: tuple[str, ...]) -> None:
    document = copy.deepcopy(every_optional_key())
    inner = document
    for key in drop[:-1]:
        inner = inner[key]
    del inner[drop[-1]]
    text = _text(check(document, "test"))
    assert _text(read_manifest(text, "test").document()) == text


def test_a_part_is_not_read_as_a_manifest() -> None:
    with pytest.raises(ManifestError, match="a part of a release manifest, not a manifest"):
        read_manifest(_text(complete_parts()[0]), "the part")

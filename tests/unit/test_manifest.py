"""The release manifest: parts merged into one document per release, checked against the
schema on write and on read, complete only with every variant built, smoked and
snapshotted (or the snapshot omitted by the rule). Pure: no git, no engine."""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

import jsonschema
import pytest

from release.core.manifest import (
    ManifestError,
    Release,
    check,
    loads,
    merge,
    missing,
    part_document,
    variant_summary,
)
from release.core.manifest_records import Manifest
from tests.manifest_support import (
    COMMIT,
    RELEASE,
    RULES,
    build,
    complete_parts,
    sha,
    smoke,
    snapshot,
)


def test_the_schema_is_a_draft_2020_12_schema() -> None:
    """Checked here, once: a run reads manifests with the shipped schema as it is."""
    text = (resources.files("release.core") / "manifest.schema.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    broken = schema | {"$defs": schema["$defs"] | {"part": {"type": "no such type"}}}
    with pytest.raises(jsonschema.SchemaError):
        jsonschema.Draft202012Validator.check_schema(broken)


def test_complete_parts_merge_into_a_valid_manifest() -> None:
    manifest = merge(complete_parts(), RULES)
    assert manifest["schema"] == "release-manifest/1"
    assert (manifest["tag"], manifest["commit"], manifest["version"]) == (
        "v0.31.0rc1",
        COMMIT,
        "0.31.0rc1",
    )
    assert manifest["variants"]["cu128"]["snapshot"] == {
        "status": "omitted",
        "reason": "CUDA 12.8.1, rule `!=12.*`",
    }
    assert manifest["variants"]["cu130"]["snapshot"]["status"] == "passed"
    assert missing(Manifest.of(manifest), RULES) == []
    assert loads(json.dumps(manifest), "read back") == manifest  # valid on read too
    assert variant_summary(Manifest.of(manifest).entry("cu128")) == {
        "built": "yes (111111111111)",
        "smoked": "passed",
        "snapshot": "omitted (CUDA 12.8.1, rule `!=12.*`)",
    }


def test_parts_arrive_in_any_order_and_twice_when_equal() -> None:
    parts = complete_parts()
    assert merge([*reversed(parts), parts[0]], RULES) == merge(parts, RULES)


@pytest.mark.parametrize(
    ("drop", "said"),
    [
        (4, 'cu130: no snapshot (run nox -s "snapshot(cu130)")'),
        (1, 'cu128: no smoke (run nox -s "smoke(cu128)")'),
        (2, 'cu130: no build (run nox -s "build(cu130)")'),
    ],
)
def test_an_incomplete_manifest_is_refused_naming_what_is_missing(drop: int, said: str) -> None:
    parts = complete_parts()
    del parts[drop]
    with pytest.raises(ManifestError) as info:
        merge(parts, RULES)
    assert said in info.value.one_line() and "incomplete" in info.value.one_line()
    assert info.value.exit_code == 7
    partial = merge(parts, RULES, partial=True)
    assert said in "; ".join(missing(Manifest.of(partial), RULES))


def test_parts_of_two_releases_do_not_merge() -> None:
    other = Release("0.31.0rc2", "v0.31.0rc2", "b" * 40, 1764100000, "example/tinyengine", "0.1.0")
    parts = [*complete_parts()[:4], part_document(other, "cu130", "snapshot", snapshot(sha("2")))]
    with pytest.raises(ManifestError, match="parts disagree on the version"):
        merge(parts, RULES)


def test_a_variant_built_twice_differently_is_refused() -> None:
    parts = [*complete_parts(), part_document(RELEASE, "cu128", "build", build(sha("9")))]
    with pytest.raises(ManifestError, match="two different build parts for cu128"):
        merge(parts, RULES)


def test_smoke_on_another_image_than_the_build_is_refused() -> None:
    parts = complete_parts()
    parts[1] = part_document(RELEASE, "cu128", "smoke", smoke(sha("7")))
    with pytest.raises(ManifestError, match=r"smoke\(cu128\) ran on image sha256:777"):
        merge(parts, RULES)


def test_a_snapshot_part_where_the_rule_omits_it_is_refused() -> None:
    parts = [*complete_parts(), part_document(RELEASE, "cu128", "snapshot", snapshot(sha("1")))]
    with pytest.raises(ManifestError, match=r"which the rule `!=12.\*` leaves out"):
        merge(parts, RULES)


def test_a_part_for_a_variant_the_matrix_lacks_is_refused() -> None:
    parts = [*complete_parts(), part_document(RELEASE, "cu999", "build", build(sha("3")))]
    with pytest.raises(ManifestError, match="variant 'cu999', which the matrix does not have"):
        merge(parts, RULES)


def corrupt(manifest: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(manifest)
    *parents, last = path.split(".")
    node = out
    for key in parents:
        node = node[key]
    if value is KeyError:
        del node[last]
    else:
        node[last] = value
    return out


@pytest.mark.parametrize(
    ("path", "value", "said"),
    [
        ("variants.cu130.build.image_id", "not-a-digest", "variants.cu130.build.image_id"),
        ("variants.cu130.smoke.checks", [], "variants.cu130.smoke.checks"),
        ("commit", "abc", "commit"),
        ("variants.cu128.snapshot.status", "skipped", "variants.cu128.snapshot.status"),
        ("variants.cu130.build.base", KeyError, "variants.cu130.build"),
        ("schema", "release-manifest/0", "schema"),
        ("variants.cu130.extra", {}, "variants.cu130"),
    ],
)
def test_a_corrupt_manifest_is_refused_in_one_line(path: str, value: Any, said: str) -> None:
    bad = corrupt(merge(complete_parts(), RULES), path, value)
    with pytest.raises(ManifestError) as info:
        loads(json.dumps(bad), "the manifest of v0.31.0rc1")
    line = info.value.one_line()
    assert "\n" not in line
    assert line.startswith("the manifest of v0.31.0rc1: not a valid release manifest: " + said)


def test_text_that_is_not_json_is_refused_in_one_line() -> None:
    with pytest.raises(ManifestError, match=r"^note: not JSON \(Expecting value"):
        loads('{"schema": ', "note")
    with pytest.raises(ManifestError, match=r"^note: not JSON"):
        loads("", "note")


def test_a_part_is_checked_when_written() -> None:
    with pytest.raises(
        ManifestError, match="the build part of cu130: not a valid release manifest: data"
    ):
        part_document(RELEASE, "cu130", "build", {**build(sha("2")), "image_id": "latest"})
    assert check(part_document(RELEASE, "cu130", "smoke", smoke(sha("2"))), "x")["part"] == "smoke"


def test_the_probe_counts_each_library_once_on_a_merged_usr(tmp_path, monkeypatch) -> None:
    """On merged-/usr images ``/lib`` is a link to ``usr/lib``: one library, one entry."""
    from release.images import snapshot_probe

    usr_lib = tmp_path / "usr" / "lib"
    usr_lib.mkdir(parents=True)
    (usr_lib / "libtiny.so.1").write_bytes(b"\x7fELF tiny")
    (usr_lib / "libtiny.so").symlink_to("libtiny.so.1")  # links are not libraries
    (tmp_path / "lib").symlink_to("usr/lib")
    monkeypatch.setattr(snapshot_probe, "LIB_DIRS", (str(tmp_path / "lib"), str(usr_lib)))
    found = snapshot_probe.libraries()
    assert list(found) == [str(usr_lib / "libtiny.so.1")]


def test_the_finals_manifest_is_the_rcs_with_final_tags_and_where_it_came_from() -> None:
    from release.core.manifest_records import Manifest
    from release.core.matrix import parse_images
    from release.images.promote import final_manifest

    matrix = parse_images(
        {
            "name": "example/tinyengine",
            "default-variant": "cu130",
            "variants": [
                {"id": "cu128", "cuda": "12.8.1", "base-image": "nvidia/cuda:12.8.1-base"},
                {"id": "cu130", "cuda": "13.0.1", "base-image": "nvidia/cuda:13.0.1-base"},
            ],
            "snapshot": {"cuda": "!=12.*"},
        }
    )
    assert matrix is not None
    rc = merge(complete_parts(), RULES)
    final = final_manifest(Manifest.of(rc), matrix, "v0.31.0", "0.31.0").document()
    assert (final["tag"], final["version"], final["commit"]) == ("v0.31.0", "0.31.0", COMMIT)
    assert final["promoted_from"] == {
        "tag": "v0.31.0rc1",
        "commit": COMMIT,
        "image_ids": {"cu128": sha("1"), "cu130": sha("2")},
    }
    assert final["variants"]["cu130"]["build"]["tags"] == [
        "example/tinyengine:v0.31.0",
        "example/tinyengine:latest",
    ]
    assert final["variants"]["cu128"]["build"]["tags"] == [
        "example/tinyengine:v0.31.0-cu128",
        "example/tinyengine:latest-cu128",
    ]
    assert rc["variants"]["cu128"]["build"]["tags"] == [
        "example/tinyengine:v0.31.0rc1"
    ]  # untouched
    no_moving = parse_images({**_table(matrix), "moving-tag": ""})
    assert no_moving is not None and no_moving.moving_tag == ""
    no_moving_final = final_manifest(Manifest.of(rc), no_moving, "v0.31.0", "0.31.0")
    assert no_moving_final.entry("cu130").build.tags == ("example/tinyengine:v0.31.0",)  # type: ignore[union-attr]


def _table(matrix) -> dict[str, Any]:
    return {
        "name": matrix.name,
        "default-variant": matrix.default_variant,
        "variants": [
            {"id": v.id, "cuda": v.accelerator.version, "base-image": v.base_image}
            for v in matrix.variants
        ],
        "snapshot": matrix.snapshot.selector.to_dict(),
    }

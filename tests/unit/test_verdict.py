"""``reproduce``'s verdict, field by field. Pure."""

from __future__ import annotations

import copy
from typing import Any

from release.core.manifest_records import VariantEntry
from release.core.verdict import (
    IMAGE_ID_NOTE,
    FieldVerdict,
    State,
    compare_variant,
    dict_changes,
    table,
)
from tests.manifest_support import entry, sha


def compare(old: dict[str, Any], new: dict[str, Any], **options: Any) -> list[FieldVerdict]:
    """The verdict of a manifest's row against a rebuild's, each read as records."""
    return compare_variant(VariantEntry.of(old), VariantEntry.of(new), **options)


def states(fields) -> dict[str, str]:
    return {f.name: f.state.value for f in fields}


def test_the_same_sources_rebuilt_match_and_a_new_image_id_is_expected() -> None:
    old = entry(sha("1"))
    fields = compare(old, entry(sha("2")), config_args=old["build"]["build_args"])
    assert states(fields) == {
        "base": "match",
        "build args": "match",
        "input digest": "match",
        "content digest": "match",
        "Python packages": "match",
        "shared libraries": "match",
        "CUDA version": "match",
        "image id": "differs (expected)",
        "smoke": "match",
        "snapshot": "match",
    }
    assert not any(f.drift for f in fields)
    assert next(f for f in fields if f.name == "image id").differences == (IMAGE_ID_NOTE,)
    reproducible = compare(entry(sha("1")), entry(sha("2")), ids_reproducible=True)
    assert states(reproducible)["image id"] == "drift"


def test_drift_is_reported_field_by_field_with_the_differences() -> None:
    old, new = entry(sha("1")), entry(sha("2"))
    new["build"]["content"] = {
        "digest": sha("9"),
        "parts": {"usr/lib": sha("8"), "opt/tinyengine": sha("7")},
        "files": 13,
    }
    new["build"]["inventory"]["python_packages"] = {"numpy": "2.1.0"}
    new["build"]["inventory"]["cuda"] = "13.0.2"
    new["smoke"]["checks"][0]["status"] = "failed"
    fields = compare(old, new)
    got = {f.name: f for f in fields}
    assert got["content digest"].state is State.DRIFT
    assert got["content digest"].differences == (
        "recorded eeeeeeeeeeee, rebuilt 999999999999",
        "+ opt/tinyengine 777777777777",
        "~ usr/lib ffffffffffff -> 888888888888",
    )
    assert got["Python packages"].differences == ("+ numpy 2.1.0",)
    assert got["CUDA version"].differences == ("recorded 13.0.1, rebuilt 13.0.2",)
    assert got["smoke"].differences == ("~ version passed -> failed",)
    assert got["input digest"].state is State.MATCH
    lines = table({"cu130": fields})
    assert lines[0] == "cu130: DRIFT in content digest, Python packages, CUDA version, smoke"
    assert "    + numpy 2.1.0" in "\n".join(lines)


def test_a_changed_base_and_args_the_config_no_longer_gives_are_drift() -> None:
    old, new = entry(sha("1")), entry(sha("2"))
    new["build"]["base"] = {**old["build"]["base"], "content_digest": sha("5"), "standin": False}
    args = {**old["build"]["build_args"], "CUDA_VERSION": "13.0.2"}
    got = {f.name: f for f in compare(old, new, config_args=args)}
    assert got["base"].state is State.DRIFT
    assert got["base"].differences[0].endswith("rebuilt 555555555555")
    ref = old["build"]["base"]["ref"]
    assert got["base"].differences[1] == f"recorded {ref} (stand-in), rebuilt {ref}"
    assert got["build args"].differences == (
        f"~ CUDA_VERSION {old['build']['build_args']['CUDA_VERSION']} -> 13.0.2",
    )
    assert states(compare(old, new))["build args"] == "not compared"


def test_a_snapshot_omitted_on_both_sides_matches() -> None:
    omitted = {"status": "omitted", "reason": "CUDA 12.8.1, rule `!=12.*`"}
    old, new = entry(sha("1")), entry(sha("2"))
    old["snapshot"] = new["snapshot"] = copy.deepcopy(omitted)
    assert states(compare(old, new))["snapshot"] == "match"
    del new["snapshot"]
    assert states(compare(old, new))["snapshot"] == "not compared"


def test_dict_changes_is_bounded() -> None:
    old = {f"lib{i}.so": "a" * 64 for i in range(30)}
    lines = dict_changes(old, {}, limit=5)
    assert lines[:1] == ["- lib0.so aaaaaaaaaaaa"] and lines[-1] == "... 25 more"


def test_a_snapshot_the_rc_passed_and_the_rebuild_failed_is_drift() -> None:
    old, new = entry(sha("1")), entry(sha("2"))
    new["snapshot"] = {**new["snapshot"], "status": "failed"}
    got = {f.name: f for f in compare(old, new)}
    assert got["snapshot"].state is State.DRIFT
    assert got["snapshot"].differences == ("recorded passed, rebuilt failed",)

"""The rc the rc page and the GitHub release are made from: a manifest of four rows (one
not published, one on two platforms, one whose smoke failed), and the sample engine
with v0.1.0rc1 tagged by ``release tag`` and a manifest note for it (the fixture
``rc1_tagged``, registered by conftest)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from release.adapters.git_notes import write_note
from release.adapters.git_tags import tag_message
from release.core.manifest import Release, check
from release.flows.context import ReleaseContext
from release.sample import SampleEngine
from tests.conftest import run_cli
from tests.manifest_support import build, sha, smoke

TAG = "v0.31.0rc1"
COMMIT = "c" * 40
IMAGE = "example/tinyengine"
REGISTRY = "127.0.0.1:5000/rel"
FIGURES = {"cold_start_s": 0.4123, "dump_s": 0.8, "restore_s": 0.61, "first_answer_s": 0.0312}


def _build(image: str, cuda: str, *, standin: bool = False) -> dict[str, Any]:
    made = build(image)
    made["cuda"] = cuda
    made["base"]["standin"] = standin
    return made


def _publish(platform: str, digest: str, index: str, row: str, group: str) -> dict[str, Any]:
    return {
        "registry": REGISTRY,
        "platform": platform,
        "image_id": sha("0"),
        "digest": digest,
        "tags": [f"{REGISTRY}/{IMAGE}:{TAG}-{row}"],
        "index": {"digest": index, "tags": [f"{REGISTRY}/{IMAGE}:{TAG}-{group}"]},
    }


def manifest(commit: str = COMMIT, tag: str = TAG, version: str = "0.31.0rc1") -> dict[str, Any]:
    """Four rows: cu128 (not published, stand-in base), cu129 on two platforms under one
    index, cu130 (smoke failed, snapshot passed with timings)."""
    release = Release(version, tag, commit, 1764100000, IMAGE, "0.1.0")
    failed = smoke(sha("4"), passed=False)
    failed["checks"].append({"name": "gpu", "status": "not run", "reason": "no GPU here"})
    document = {
        "schema": "release-manifest/1",
        **release.header(),
        "variants": {
            "cu128": {
                "build": _build(sha("1"), "12.8.1", standin=True),
                "smoke": smoke(sha("1")),
                "snapshot": {"status": "omitted", "reason": "CUDA 12.8.1, rule `!=12.*`"},
            },
            "cu129-amd64": {
                "build": _build(sha("2"), "12.9.1"),
                "smoke": smoke(sha("2")),
                "snapshot": {"status": "omitted", "reason": "CUDA 12.9.1, rule `!=12.*`"},
                "publish": _publish("linux/amd64", sha("a"), sha("9"), "cu129-amd64", "cu129"),
            },
            "cu129-arm64": {
                "build": _build(sha("3"), "12.9.1"),
                "smoke": smoke(sha("3")),
                "snapshot": {"status": "not run", "reason": "CRIU does not run under qemu-user"},
                "publish": _publish("linux/arm64", sha("b"), sha("9"), "cu129-arm64", "cu129"),
            },
            "cu130": {
                "build": _build(sha("4"), "13.0.1"),
                "smoke": failed,
                "snapshot": {
                    "status": "passed",
                    "reason": "restored into a fresh container and answered",
                    "image_id": sha("4"),
                    "record": {"snapshot_runtime": {"figures": FIGURES, "runtime": []}},
                },
                "publish": _publish("linux/amd64", sha("c"), sha("8"), "cu130", "cu130"),
            },
        },
    }
    return check(document, "the test manifest")


# -- the rc on a real repository ----------------------------------------------------------
@pytest.fixture
def rc1_tagged(cut_engine_copy: SampleEngine) -> SampleEngine:
    """The sample engine, cu129 built for two platforms, with v0.1.0rc1 tagged by ``release
    tag`` (its notes in the tag's message) and a manifest note for it that the tag's
    configuration builds."""
    engine = cut_engine_copy
    pyproject = engine.root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    cu129 = 'id = "cu129"\n'
    pyproject.write_text(
        text.replace(cu129, cu129 + 'platforms = ["linux/amd64", "linux/arm64"]\n'),
        encoding="utf-8",
    )
    engine.repo.run("commit", "--quiet", "-am", "[CI/Build] cu129 for arm64 too (#112)")
    made = run_cli(engine.root, "tag")
    assert made.code == 0, made.output
    found = tag_message(engine.repo, "v0.1.0rc1")
    assert found is not None and found.annotated
    recorded = manifest(found.commit, "v0.1.0rc1", "0.1.0rc1")
    recorded["source_date_epoch"] = engine.repo.commit_time("v0.1.0rc1")
    configured = ReleaseContext(engine.root).config.matrix
    assert configured is not None and set(configured.ids) == set(recorded["variants"])
    for variant in configured.variants:
        build_ = recorded["variants"][variant.id]["build"]
        build_["build_args"] = configured.build_args_for(variant, "0.1.0rc1")
        build_["base"]["ref"] = variant.base_image
    write_note(engine.repo, "v0.1.0rc1", found.commit, json.dumps(recorded, indent=2) + "\n")
    return engine

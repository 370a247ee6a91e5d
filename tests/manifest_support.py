"""Manifest parts made up for tests (builds, smokes, snapshots of made-up images), and a
sample engine's rc with its parts or its manifest note, as the tests of the manifest,
the rc page, promote, reproduce and the terminal build them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from release.core.accelerator import accelerator_fields
from release.core.manifest import Release, VariantRule, check, merge, part_document
from release.core.matrix import ImageMatrix
from release.flows.context import ReleaseContext
from release.sample import SampleEngine

COMMIT = "a" * 40
RELEASE = Release("0.31.0rc1", "v0.31.0rc1", COMMIT, 1764100000, "example/tinyengine", "0.1.0")
RULES = [
    VariantRule("cu128", "CUDA 12.8.1", False, "!=12.*"),
    VariantRule("cu130", "CUDA 13.0.1", True, "!=12.*"),
]


def sha(char: str) -> str:
    return "sha256:" + char * 64


def build(image: str) -> dict[str, Any]:
    return {
        "cuda": "13.0.1",
        "build_args": {"CUDA_VERSION": "13.0.1", "ENGINE_VERSION": "0.31.0rc1"},
        "base": {
            "ref": "nvidia/cuda:13.0.1-base",
            "id": sha("b"),
            "content_digest": sha("c"),
            "standin": True,
        },
        "image_id": image,
        "tags": ["example/tinyengine:v0.31.0rc1"],
        "input_digest": sha("d"),
        "content": {"digest": sha("e"), "parts": {"usr/lib": sha("f")}, "files": 12},
        "inventory": {"cuda": "13.0.1", "python": "3.11.2", "python_packages": {}, "libraries": {}},
    }


def smoke(image: str, passed: bool = True) -> dict[str, Any]:
    status = "passed" if passed else "failed"
    return {
        "image_id": image,
        "passed": passed,
        "checks": [{"name": "version", "status": status, "reason": ""}],
    }


def snapshot(image: str) -> dict[str, Any]:
    return {
        "status": "passed",
        "reason": "roundtrip ok",
        "image_id": image,
        "record": {"state": {}},
    }


def complete_parts() -> list[dict[str, Any]]:
    return [
        part_document(RELEASE, "cu128", "build", build(sha("1"))),
        part_document(RELEASE, "cu128", "smoke", smoke(sha("1"))),
        part_document(RELEASE, "cu130", "build", build(sha("2"))),
        part_document(RELEASE, "cu130", "smoke", smoke(sha("2"))),
        part_document(RELEASE, "cu130", "snapshot", snapshot(sha("2"))),
    ]


def entry(image: str) -> dict[str, Any]:
    return {"build": build(image), "smoke": smoke(image), "snapshot": snapshot(image)}


# -- the sample engine's rc1 and its parts, as its own configuration builds them ----------
TAG = "v0.1.0rc1"


def tagged(engine: SampleEngine) -> tuple[Release, Path]:
    engine.repo.run("tag", "-a", TAG, "-m", TAG)
    commit = engine.repo.head()
    release = Release(
        "0.1.0rc1",
        TAG,
        commit,
        engine.repo.commit_time("HEAD"),
        "example/tinyengine",
        "0.1.0",
    )
    return release, engine.repo.git_dir / "release" / "manifest" / "0.1.0rc1"


def write(where: Path, release: Release, variant: str, part: str, data: dict[str, Any]) -> None:
    where.mkdir(parents=True, exist_ok=True)
    document = part_document(release, variant, part, data)
    (where / f"{variant}.{part}.json").write_text(json.dumps(document), encoding="utf-8")


def built_by(matrix: ImageMatrix, variant_id: str, image: str, version: str) -> dict[str, Any]:
    """The build part of ``image`` as building ``variant_id`` with ``matrix`` records it:
    its CUDA version, base and build args (ids and digests made up)."""
    variant = matrix.variant(variant_id)
    made = build(image) | {
        **accelerator_fields(variant.accelerator),
        "build_args": matrix.build_args_for(variant, version),
    }
    made["base"] = made["base"] | {"ref": variant.base_image}
    return made


def all_parts(engine: SampleEngine, where: Path, release: Release, *, skip: str = "") -> None:
    """Every part of the sample's rc, as its own configuration builds it."""
    matrix = ReleaseContext(engine.root).config.matrix
    assert matrix is not None
    for n, variant in enumerate(("cu128", "cu129", "cu130"), start=1):
        image = sha(str(n))
        made = built_by(matrix, variant, image, release.version)
        for part, data in (("build", made), ("smoke", smoke(image))):
            if f"{variant}.{part}" != skip:
                write(where, release, variant, part, data)
    if skip != "cu130.snapshot":
        write(where, release, "cu130", "snapshot", snapshot(sha("3")))


def every_optional_key() -> dict[str, Any]:
    """A manifest that uses every key the schema makes optional (and a number of seconds)."""
    manifest = merge(complete_parts(), RULES)
    row = manifest["variants"]["cu130"]
    build = row["build"]
    del build["cuda"]
    build["accelerator"] = {"kind": "rocm", "version": "6.4.1"}
    build["recipe"] = {"dockerfile": "docker/Dockerfile.rocm", "context": ".", "target": "final"}
    row["smoke"]["checks"].append(
        {"name": "serves", "status": "timed out", "reason": "no answer", "seconds": 2.5}
    )
    row["publish"] = {
        "registry": "127.0.0.1:5000/engine",
        "platform": "linux/arm64/v8",
        "image_id": build["image_id"],
        "digest": sha("7"),
        "tags": ["127.0.0.1:5000/engine:v0.31.0rc1-aarch64"],
        "signed_by": "A" * 40,
        "index": {"digest": sha("8"), "tags": ["127.0.0.1:5000/engine:v0.31.0rc1"],
                  "signed_by": "B" * 40},
    }  # fmt: skip
    row["attest"] = {
        "image_id": build["image_id"],
        "subject": sha("7"),
        "sbom": {"tag": "t.sbom", "digest": sha("9"), "media_type": "application/spdx+json",
                 "packages": 12, "tool": "syft 1.0"},
        "provenance": {"tag": "t.att", "digest": sha("a"),
                       "predicate_type": "https://slsa.dev/provenance/v1", "signed": True,
                       "signed_by": "C" * 40},
    }  # fmt: skip
    manifest["promoted_from"] = {"tag": "v0.31.0rc1", "commit": COMMIT, "image_ids": {}}
    return check(manifest, "every optional key")

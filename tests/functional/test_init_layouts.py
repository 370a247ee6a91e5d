"""release init --dry-run on the layouts of real engines of the vLLM family, each a small
tree under tests/layouts/ (their Dockerfiles' ARG, FROM, COPY and device lines, their
version files, and the names of some of their tags and branches): what it proposes is
what a maintainer of that engine would recognise, each value says where it was read, and
what it cannot tell is said so, with no value made up."""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

from release.adapters.git import GitRepo
from release.commands.init import InitOutcome, InitRequest, init
from release.commands.outcome import Run
from release.core.dockerfile_text import parse_dockerfile
from release.core.matrix import parse_images
from release.core.variant_guess import DockerfileSource, propose_images
from release.errors import ConfigError
from tests.conftest import repo_state

LAYOUTS = Path(__file__).parents[1] / "layouts"


def _parser_takes_accelerators() -> bool:
    try:
        parse_images({"name": "a/b", "variants": [{"id": "c", "cpu": True, "base-image": "b"}]})
    except ConfigError:
        return False
    return True


# the keys rocm, cann, hpu, tpu, xpu, neuron, cpu, dockerfile, target, tag-suffix and
# context in a variant come with the accelerator change to the matrix parser
needs_accelerator_keys = pytest.mark.skipif(
    not _parser_takes_accelerators(), reason="the matrix parser takes only cuda variants yet"
)


def layout(name: str, tmp_path: Path) -> Path:
    root = tmp_path / name
    shutil.copytree(LAYOUTS / name / "tree", root)
    repo = GitRepo.init(root)
    assert repo is not None
    for key, value in (("user.name", "A"), ("user.email", "a@example.com"),
                       ("commit.gpgsign", "false"), ("tag.gpgsign", "false")):  # fmt: skip
        repo.run("config", key, value)
    repo.run("add", "-A")
    repo.run("commit", "--quiet", "-m", "the tree")
    for line in (LAYOUTS / name / "refs.txt").read_text().splitlines():
        kind, ref = line.split()
        repo.run("branch" if kind == "branch" else "tag", ref)
    return root


def dry_run(root: Path) -> InitOutcome:
    before = repo_state(root)
    outcome = init(InitRequest(dry_run=True), Run(root, lambda _: None))
    assert repo_state(root) == before  # a dry run changes nothing
    return outcome


def proposal(outcome: InitOutcome) -> dict[str, Any]:
    """The table with its commented image matrix uncommented: TOML, as a maintainer
    would have it after uncommenting every line that has a value."""
    text = re.sub(r"(?m)^# (?=\[|[a-z-]+ = )", "", outcome.table)
    return tomllib.loads(text)["tool"]["release"]


def variants(outcome: InitOutcome) -> dict[str, dict[str, Any]]:
    return {v["id"]: v for v in proposal(outcome)["images"]["variants"]}


def prose(outcome: InitOutcome) -> str:
    """The table's text with comment marks taken off and lines joined."""
    return " ".join(line.removeprefix("# ").strip() for line in outcome.table.splitlines())


def comments_of(outcome: InitOutcome, vid: str) -> str:
    """The comment prose of one proposed variant, joined."""
    block = outcome.table.split(f'# id = "{vid}"\n', 1)[1].split("# [[tool.release", 1)[0]
    return " ".join(line[2:] for line in block.splitlines() if not re.match(r"# [a-z-]+ = ", line))


def test_vllm_one_variant_per_accelerator_from_docker(tmp_path: Path) -> None:
    outcome = dry_run(layout("vllm", tmp_path))
    found = variants(outcome)
    assert list(found) == [
        "cu128", "cpu-arm", "cpu", "hpu", "neuron", "rocm", "cpu-s390x", "tpu", "xpu",
    ]  # fmt: skip
    images = proposal(outcome)["images"]
    assert (images["dockerfile"], images["default-variant"]) == ("docker/Dockerfile", "cu128")
    cuda = found["cu128"]
    assert cuda == {
        "id": "cu128", "cuda": "12.8.1", "target": "vllm-openai", "python": "3.12",
        "base-image": "nvidia/cuda:12.8.1-devel-ubuntu22.04",
    }  # fmt: skip
    assert "cuda: ARG CUDA_VERSION=12.8.1, docker/Dockerfile:2" in comments_of(outcome, "cu128")
    assert "FROM ${FINAL_BASE_IMAGE}, docker/Dockerfile:13" in comments_of(outcome, "cu128")
    assert "target: the stage named like vllm-openai, docker/Dockerfile:18" in comments_of(
        outcome, "cu128"
    )
    assert found["rocm"] == {
        "id": "rocm", "base-image": "rocm/vllm-dev:base", "target": "vllm-openai",
        "dockerfile": "docker/Dockerfile.rocm",
    }  # fmt: skip
    assert (
        "rocm: could not tell: no ARG ROCM_VERSION with a version; the base image "
        "rocm/vllm-dev:base names no version (a rocm image by its name, Dockerfile.rocm)"
    ) in comments_of(outcome, "rocm")
    assert found["cpu"]["cpu"] is True and found["cpu"]["target"] == "vllm-openai"
    assert found["cpu"]["base-image"] == "ubuntu:25.04"  # through base-${TARGETARCH}
    assert (found["cpu-arm"]["platforms"], found["cpu-s390x"]["platforms"]) == (
        ["linux/arm64"], ["linux/s390x"],
    )  # fmt: skip
    assert found["cpu-s390x"]["base-image"] == "registry.access.redhat.com/ubi9/ubi-minimal:9.6"
    assert (found["xpu"]["xpu"], found["hpu"]["hpu"], found["neuron"]["neuron"]) == (
        "2025.3.2", "1.20.1", "2.23.0",
    )  # fmt: skip
    assert "tpu" not in found["tpu"]  # no version anywhere: said, not made up
    assert "tpu: could not tell" in comments_of(outcome, "tpu")
    assert found["tpu"]["base-image"].endswith("xla:nightly_3.10_tpuvm_20250124")
    assert "platforms: could not tell" in comments_of(outcome, "cu128")
    said = prose(outcome)
    assert "docker/Dockerfile.rocm_base (a base image, by its name)" in said
    assert "docker/Dockerfile.nightly_torch (a nightly image, by its name)" in said
    assert not any("cuda" in v and k != "cu128" for k, v in found.items())
    assert proposal(outcome)["branch"] == "releases/v{version}"


def test_vllm_ascend_cann_variants_per_chip_and_os(tmp_path: Path) -> None:
    outcome = dry_run(layout("vllm-ascend", tmp_path))
    found = variants(outcome)
    suffixes = {k: v.get("tag-suffix") for k, v in found.items()}
    assert suffixes == {
        "cann": None, "cann-310p": "310p", "cann-310p-openeuler": "310p-openeuler",
        "cann-a3": "a3", "cann-a3-openeuler": "a3-openeuler", "cann-openeuler": "openeuler",
    }  # fmt: skip
    assert {v["cann"] for v in found.values()} == {"9.1.0"}
    assert found["cann-a3-openeuler"]["base-image"] == (
        "quay.io/ascend/cann:9.1.0-a3-openeuler24.03-py3.12"
    )
    assert found["cann"]["base-image"] == "quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12"
    assert proposal(outcome)["images"]["default-variant"] == "cann"
    assert "os: openeuler (the file's name)" in comments_of(outcome, "cann-openeuler")
    table = proposal(outcome)
    assert (table["first-rc"], table["tag"], table["changelog"]) == (0, "v{version}", "")
    assert "Dockerfile.lint" not in outcome.table  # three folders deep: not looked in


def test_vllm_gaudi_hpu_ubuntu_and_rhel_from_cd(tmp_path: Path) -> None:
    outcome = dry_run(layout("vllm-gaudi", tmp_path))
    found = variants(outcome)
    assert list(found) == ["hpu-rhel-ubi", "hpu-ubuntu"]
    rhel, ubuntu = found["hpu-rhel-ubi"], found["hpu-ubuntu"]
    assert (rhel["hpu"], ubuntu["hpu"]) == ("1.24.1", "1.24.1")
    assert "SYNAPSE_VERSION=1.24.1, .cd/Dockerfile.rhel.ubi.vllm:3" in comments_of(
        outcome, "hpu-rhel-ubi"
    )
    assert rhel["base-image"] == "registry.access.redhat.com/ubi9/ubi:9.6"
    assert rhel["target"] == "vllm-openai" and "context" not in rhel  # its COPY LICENSE: the root
    assert ubuntu["base-image"] == (
        "vault.habana.ai/gaudi-docker/1.24.1/ubuntu24.04/habanalabs/pytorch-installer-2.11.0:latest"
    )
    assert ubuntu["context"] == ".cd"  # templates, entrypoints, server are there
    assert (rhel["tag-suffix"], ubuntu["tag-suffix"]) == ("rhel-ubi", "ubuntu")
    images = proposal(outcome)["images"]
    assert "default-variant" not in images
    assert "default-variant: could not tell" in prose(outcome)
    for hidden in (".github/Dockerfile.ci", "pytorch_ci_hud_benchmark"):
        assert hidden not in outcome.table
    assert "[project] dynamic version, from setuptools_scm" in outcome.table


def test_tpu_inference_is_a_tpu_engine(tmp_path: Path) -> None:
    outcome = dry_run(layout("tpu-inference", tmp_path))
    found = variants(outcome)
    assert list(found) == ["tpu", "tpu-pypi"]
    assert found["tpu"] == {"id": "tpu", "tpu": "0.0.44", "base-image": "python:3.12-slim-bookworm"}
    said = comments_of(outcome, "tpu")
    assert "VLLM_TARGET_DEVICE=tpu, docker/Dockerfile:6" in said
    assert "libtpu==0.0.44, requirements.txt:4" in said
    assert "requirements.txt, copied in at docker/Dockerfile.pypi:4" in comments_of(
        outcome, "tpu-pypi"
    )
    assert "cuda" not in outcome.table.lower().replace("cuda, rocm", "")
    assert "setup.py:4: version computed by get_version()" in outcome.table


def test_llm_compressor_has_no_images_and_its_own_spellings(tmp_path: Path) -> None:
    outcome = dry_run(layout("llm-compressor", tmp_path))
    table = proposal(outcome)
    assert "images" not in table
    assert "# No Dockerfile found that builds a release image" in outcome.table
    assert (table["tag"], table["branch"], table["changelog"]) == (
        "{version}",
        "release-{version}",
        "",
    )
    said = prose(outcome)
    assert "tag: guessed from 32 of the 32 release tags" in said  # 0.12.0.1 and its kin too
    assert table["patch-releases"] == "four-part"  # as since 0.8.1: 0.9.0.1 ... 0.12.0.1
    assert "the newest release after a final, 0.12.0.1: a four-part release" in said
    assert "version-files" not in table  # setuptools_scm: the version is the tag's
    assert "bump-main-after-cut" not in table
    assert "branch: guessed from 4 of the 6 release branches" in said
    assert "not read: release-0.1, release-0.6" in said
    assert "setup.py:3: use_scm_version" in outcome.table
    assert "release tag and promote keep none" in said


def test_ao_keeps_its_version_in_version_txt(tmp_path: Path) -> None:
    outcome = dry_run(layout("ao", tmp_path))
    table = proposal(outcome)
    assert (table["tag"], table["rc-spelling"], table["branch"]) == (
        "v{version}", "-rc{n}", "release/{version}",
    )  # fmt: skip
    assert "#   version.txt: 0.19.0" in outcome.table
    said = prose(outcome)
    assert "8 of the 9 release tags" in said and "not read: v0.1" in said  # ciflow/... is none
    assert "images" not in table
    # v0.14.1-rc1 and v0.14.1 on release/0.14.0: patch releases on the version's branch
    assert (table["patch-releases"], table["version-files"]) == ("patch", ["version.txt"])
    assert "version.txt says 0.19.0" in said
    assert table["bump-main-after-cut"] is True  # 0.19.0 on main beside release/0.18.0
    assert "past the newest release branch release/0.18.0" in said


def test_pytorch_data_has_a_line_per_minor_rc0_and_version_txt(tmp_path: Path) -> None:
    outcome = dry_run(layout("data", tmp_path))
    table = proposal(outcome)
    assert (table["branch"], table["tag"], table["rc-spelling"], table["first-rc"]) == (
        "release/{major}.{minor}", "v{version}", "-rc{n}", 0,
    )  # fmt: skip
    assert (table["patch-releases"], table["version-files"]) == ("patch", ["version.txt"])
    said = prose(outcome)
    assert "the newest release after a final, v0.10.1: a patch release" in said
    assert "version.txt says 0.12.0a0" in said
    assert table["bump-main-after-cut"] is True  # 0.12.0a0 on main beside release/0.11


@needs_accelerator_keys
@pytest.mark.parametrize("name", ["vllm", "vllm-ascend", "tpu-inference"])
def test_each_variant_told_whole_parses(tmp_path: Path, name: str) -> None:
    """Uncommented, a proposal every key of which was told is a matrix the parser takes."""
    outcome = dry_run(layout(name, tmp_path))
    images = proposal(outcome)["images"]
    whole = [v for v in images["variants"] if "could not tell" not in comments_of(outcome, v["id"])
             .replace("platforms: could not tell", "")]  # fmt: skip
    assert whole
    matrix = parse_images({**images, "variants": whole,
                           "default-variant": whole[0]["id"]})  # fmt: skip
    assert matrix is not None and {v.group for v in matrix.variants} == {v["id"] for v in whole}


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("FROM a AS final\nFROM final AS dev\n", "final"),
        ("FROM a AS base\nFROM base AS app\nFROM app AS test\n", "app"),
        ("FROM a AS base\nFROM base AS build\n", "build"),
        ("FROM a AS vllm-openai-base\nFROM vllm-openai-base AS vllm-openai\n"
         "FROM vllm-openai AS extra\n", "vllm-openai"),
        ("FROM a AS only\n", None),
        ("FROM a AS base\nFROM base\n", None),
    ],
)  # fmt: skip
def test_the_stage_a_release_image_is_built_from(text: str, target: str | None) -> None:
    (variant,) = propose_images([DockerfileSource("Dockerfile.cpu", text)]).variants
    told = {t.key: t.value for t in variant.told}
    assert told.get("target") == target


def test_references_resolve_as_docker_resolves_them() -> None:
    df = parse_dockerfile(
        "ARG A=one\nARG EMPTY\nARG B=${A}-two\n"
        "FROM r/${B}:${EMPTY}x${UNSET:-dflt}${A:+set} AS s\nARG C=$A/$NOPE\n"
        "FROM s AS t\nRUN echo <<EOF\nFROM not-a-stage\nEOF\nFROM t AS u\n"
    )
    assert [s.name for s in df.stages] == ["s", "t", "u"]  # the here-document is no FROM
    assert df.resolved(df.stages[0]) == "r/one-two:xdfltset"
    assert df.value("C") is None  # $NOPE: no ARG sets it
    assert df.origin(df.stages[2]) == ("r/one-two:xdfltset", df.stages[0])


def test_no_bump_after_cut_where_main_says_the_newest_branch_version(tmp_path: Path) -> None:
    root = tmp_path / "ao"
    shutil.copytree(LAYOUTS / "ao" / "tree", root)
    (root / "version.txt").write_text("0.18.0\n", encoding="utf-8")
    repo = GitRepo.init(root)
    assert repo is not None
    repo.run("-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "--quiet",
             "--allow-empty", "-m", "the tree")  # fmt: skip
    for name in ("release/0.17.0", "release/0.18.0"):
        repo.run("branch", name)
    table = proposal(dry_run(root))
    assert table["version-files"] == ["version.txt"] and "bump-main-after-cut" not in table

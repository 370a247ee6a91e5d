"""Variants for any accelerator, without Docker: the accelerator keys, their versions and
the selectors rules write over them; per-variant Dockerfile, context, target and tag
suffix; the layout and device checks each accelerator's smoke adds; the stand-ins'
recipes; the manifest's record of the accelerator, old (``cuda``) and new; and a matrix
shaped like the vLLM family's (vLLM's ``docker/``, vllm-ascend's per-chip Dockerfiles),
which loads and validates against the schema.
"""

from __future__ import annotations

import copy
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from release.adapters.devices import DeviceAccess, devices_here, nodes_access
from release.core.accelerator import (
    Accelerator,
    accelerator_fields,
    accelerator_of,
    parse_selector,
)
from release.core.config import config_from_mapping
from release.core.config_schema import schema_problems
from release.core.devices import DEVICES, Device, device_of
from release.core.host_access import asked_by
from release.core.manifest import ManifestError, check
from release.core.matrix import ImageMatrix, parse_images
from release.errors import ConfigError
from release.images.bake import bake_document
from release.images.inputs import input_digest
from release.images.smoke_checks import layout_checks, smoke_checks
from release.images.source import BuildSource
from release.images.standin import standin_dockerfile

FIXTURES = Path(__file__).parents[1] / "fixtures" / "accelerators"


def family() -> dict[str, Any]:
    """The ``[tool.release]`` table of the vLLM-family fixture."""
    document = tomllib.loads((FIXTURES / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(document["tool"]["release"])


def family_matrix() -> ImageMatrix:
    matrix = parse_images(family()["images"])
    assert matrix is not None
    return matrix


def images(**changes: Any) -> dict[str, Any]:
    table = copy.deepcopy(family()["images"])
    table.update(changes)
    return table


def refused(table: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_images(table)
    return caught.value.message


SOURCE = BuildSource(
    root=Path("."), revision="a" * 40, epoch=1_700_000_000, version="0.31.0rc1", tagged=True
)

# -- the accelerator keys ------------------------------------------------------------


def test_the_family_fixture_loads_and_validates() -> None:
    table = family()
    assert schema_problems(table) == []
    config_from_mapping(table)
    matrix = family_matrix()
    on = {v.id: v.accelerator for v in matrix.variants}
    assert on == {
        "cu129": Accelerator("cuda", "12.9.1"),
        "cu130": Accelerator("cuda", "13.0.1"),
        "rocm": Accelerator("rocm", "6.4.1"),
        "ascend-a2": Accelerator("cann", "8.1.rc1"),
        "ascend-310p": Accelerator("cann", "8.1.rc1"),
        "gaudi": Accelerator("hpu", "1.21.0"),
        "cpu": Accelerator("cpu"),
    }


@pytest.mark.parametrize(
    ("keys", "said"),
    [
        ({}, "it gives none"),
        ({"cuda": "12.9.1", "rocm": "6.4.1"}, "it gives cuda and rocm"),
        ({"cpu": True, "cann": "8.1.rc1"}, "it gives cann and cpu"),
    ],
)
def test_zero_or_two_accelerators_are_refused_naming_the_variant(
    keys: dict[str, Any], said: str
) -> None:
    variant = {"id": "odd", "base-image": "ubuntu:22.04", **keys}
    message = refused(images(variants=[variant]))
    assert message.startswith("[tool.release.images] variants[odd]: name exactly one accelerator")
    assert said in message
    problems = schema_problems({"images": images(variants=[variant])})
    assert problems and problems[0].startswith("[tool.release] images.variants.0:")


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("cpu", False, "variants[odd].cpu: expected true"),
        ("cpu", "yes", "variants[odd].cpu: expected true"),
        ("rocm", 6.4, "variants[odd].rocm: expected a version"),
        ("cann", "8.1 rc1", "variants[odd].cann: '8.1 rc1' is not a version"),
        ("hpu", "1.21;touch /x", "variants[odd].hpu: '1.21;touch /x' is not a version"),
        ("rocm", "$(id)", "variants[odd].rocm: '$(id)' is not a version"),
        ("cuda", "twelve", "variants[odd].cuda: 'twelve' is not a version"),
    ],
)
def test_an_accelerator_value_that_is_not_one_is_refused(key: str, value: Any, said: str) -> None:
    variant = {"id": "odd", "base-image": "ubuntu:22.04", key: value}
    assert said in refused(images(variants=[variant]))


def test_versions_are_kept_as_written_with_a_pep440_reading_where_there_is_one() -> None:
    assert Accelerator("cann", "8.1.rc1").parsed is not None
    assert str(Accelerator("cann", "8.1.rc1").parsed) == "8.1rc1"
    assert Accelerator("cann", "8.1.rc1.alpha001").parsed is None  # CANN's alphas: text
    assert Accelerator("cpu").parsed is None
    # CANN's own order: 8.0.RC3 before 8.0.0, 8.1.RC1 before 8.2.RC1 and 8.5.0
    order = ["8.0.rc3", "8.0.0", "8.1.rc1", "8.2.rc1", "8.5.0"]
    parsed = [Accelerator("cann", v).parsed for v in order]
    assert parsed == sorted(parsed)  # type: ignore[type-var]
    assert Accelerator("rocm", "6.4.1").label == "ROCm 6.4.1"
    assert Accelerator("cpu").label == "CPU"


# -- selectors -----------------------------------------------------------------------

CU129 = Accelerator("cuda", "12.9.1")
CU130 = Accelerator("cuda", "13.0.1")
ROCM = Accelerator("rocm", "6.4.1")
ROCM5 = Accelerator("rocm", "5.7.1")
CANN = Accelerator("cann", "8.1.rc1")
CANN_ALPHA = Accelerator("cann", "8.2.rc1.alpha001")
CPU = Accelerator("cpu")
EVERY = (CU129, CU130, ROCM, ROCM5, CANN, CANN_ALPHA, CPU)


@pytest.mark.parametrize(
    ("rule", "taken"),
    [
        # the sample's rule: not CUDA 12.x; another accelerator is not CUDA 12.x
        ({"cuda": "!=12.*"}, {CU130, ROCM, ROCM5, CANN, CANN_ALPHA, CPU}),
        # an ordered clause on CUDA takes CUDA variants only
        ({"cuda": ">=12"}, {CU129, CU130}),
        ({"rocm": ">=6"}, {ROCM}),
        ({"cann": ">=8.1rc1"}, {CANN}),  # the alpha has no PEP 440 reading: no order
        ({"cann": "===8.2.rc1.alpha001"}, {CANN_ALPHA}),  # but equality as text
        ({"cann": "!=8.1.rc1"}, {CU129, CU130, ROCM, ROCM5, CANN_ALPHA, CPU}),
        ({"accelerator": "cpu"}, {CPU}),
        ({"accelerator": ["cpu", "rocm"], "rocm": "!=5.*"}, {ROCM, CPU}),
        ({"cuda": "!=12.*", "accelerator": ["cuda", "rocm"]}, {CU130, ROCM, ROCM5}),
    ],
)
def test_a_selector_takes_the_variants_its_clauses_hold_for(
    rule: dict[str, Any], taken: set[Accelerator]
) -> None:
    selector = parse_selector(rule, "[tool.release.images] snapshot")
    assert {a for a in EVERY if selector.applies(a)} == taken


def test_the_snapshot_rule_keeps_its_meaning_over_other_accelerators() -> None:
    matrix = family_matrix()
    assert matrix.snapshot is not None and matrix.snapshot.selector.text == "!=12.*"
    assert matrix.snapshot_ids() == ("cu130", "rocm", "ascend-a2", "ascend-310p", "gaudi", "cpu")
    sessions = matrix.session_ids()
    assert "cu129" not in sessions["snapshot"] and "cpu" in sessions["snapshot"]
    for v in matrix.variants:  # the build step and the session are one rule
        args = matrix.build_args_for(v)
        assert ("INSTALL_SNAPSHOT_RUNTIME" in args) is (v.id in sessions["snapshot"])


@pytest.mark.parametrize(
    ("rule", "said"),
    [
        ({"build-args": {"A": "1"}}, "select the variants by their accelerator"),
        ({"rocm": "6.4"}, "snapshot.rocm: '6.4' is not a version specifier"),
        ({"accelerator": "gpu"}, "snapshot.accelerator: expected one of cuda, rocm"),
        ({"accelerator": []}, "snapshot.accelerator: expected one of"),
    ],
)
def test_a_selector_that_is_not_one_is_refused(rule: dict[str, Any], said: str) -> None:
    assert said in refused(images(snapshot=rule))


def test_the_rule_is_told_as_written() -> None:
    assert parse_selector({"cuda": "!=12.*"}, "x").text == "!=12.*"
    assert parse_selector({"cuda": "!=12.*"}, "x").prose == "CUDA !=12.*"
    both = parse_selector({"rocm": ">=6", "accelerator": ["rocm", "cpu"]}, "x")
    assert both.text == "accelerator cpu|rocm, rocm >=6"
    assert both.prose == "CPU or ROCm, ROCm >=6"
    assert both.to_dict() == {"rocm": ">=6", "accelerator": ["cpu", "rocm"]}


# -- a variant's own build -----------------------------------------------------------


def test_a_variant_builds_its_own_dockerfile_context_and_target() -> None:
    matrix = family_matrix()
    cuda, rocm, a2 = (matrix.variant(v) for v in ("cu130", "rocm", "ascend-a2"))
    assert (matrix.dockerfile_of(cuda), matrix.context_of(cuda), matrix.target_of(cuda)) == (
        "docker/Dockerfile",
        ".",
        "vllm-openai",
    )
    assert (matrix.dockerfile_of(rocm), matrix.target_of(rocm)) == (
        "docker/Dockerfile.rocm",
        "final",
    )
    assert (matrix.dockerfile_of(a2), matrix.context_of(a2), matrix.target_of(a2)) == (
        "ascend/Dockerfile",
        "ascend",
        "",
    )
    assert matrix.build_args_for(rocm)["ROCM_VERSION"] == "6.4.1"
    assert matrix.build_args_for(a2)["CANN_VERSION"] == "8.1.rc1"
    assert "CUDA_VERSION" not in matrix.build_args_for(rocm)
    cpu_args = matrix.build_args_for(matrix.variant("cpu"))
    assert not any(k.endswith("_VERSION") and k != "PYTHON_VERSION" for k in cpu_args)


def test_a_tag_suffix_names_the_variants_tags() -> None:
    matrix = family_matrix()
    p310 = matrix.variant("ascend-310p")
    assert matrix.tag(p310, "v0.31.0rc1") == "vllm/vllm-openai:v0.31.0rc1-310p"
    assert matrix.index_tags("ascend-310p", "v0.31.0rc1") == ("vllm/vllm-openai:v0.31.0rc1-310p",)
    assert matrix.tag(matrix.variant("rocm"), "v1") == "vllm/vllm-openai:v1-rocm"
    assert matrix.tag(matrix.variant("cu130"), "v1") == "vllm/vllm-openai:v1"


def test_two_variants_whose_tags_would_be_one_are_refused() -> None:
    table = images()
    table["variants"][3]["tag-suffix"] = "rocm"
    assert "its tags would be variant 'rocm''s (both end in -rocm)" in refused(table)


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("dockerfile", "../Dockerfile", "leads out of the work tree"),
        ("context", "/abs", "must be a path inside the work tree"),
        ("target", "vllm openai", "is not a Dockerfile stage name"),
        ("tag-suffix", "-310p", "is not a tag part docker accepts"),
    ],
)
def test_a_variants_own_build_that_cannot_be_is_refused(key: str, value: str, said: str) -> None:
    table = images()
    table["variants"][0][key] = value
    message = refused(table)
    assert message.startswith(f"[tool.release.images] variants[cu129].{key}:") and said in message


def test_the_bake_file_builds_each_variants_own_dockerfile_and_target() -> None:
    targets = bake_document(family_matrix(), SOURCE)["target"]
    assert targets["rocm"]["dockerfile"] == "docker/Dockerfile.rocm"
    assert targets["rocm"]["target"] == "final"
    assert targets["ascend-a2"]["context"] == "ascend"
    assert targets["ascend-a2"]["dockerfile"] == "Dockerfile"  # relative to its context
    assert "target" not in targets["ascend-a2"]
    assert targets["cu130"]["target"] == "vllm-openai"
    assert targets["rocm"]["labels"]["org.release.rocm"] == "6.4.1"
    assert targets["cpu"]["labels"]["org.release.cpu"] == "true"


def test_another_target_is_another_image(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM scratch AS a\nFROM scratch AS b\n")

    def digest(target: str) -> str:
        return input_digest(
            tmp_path, tmp_path / "Dockerfile", {}, "sha256:" + "1" * 64, {}, None, target=target
        )

    assert len({digest(""), digest("a"), digest("b")}) == 3


# -- smoke per accelerator -----------------------------------------------------------


def names(accelerator: Accelerator) -> list[str]:
    return [c.name for c in layout_checks(accelerator, 60.0)]


def test_each_accelerator_checks_the_layout_its_images_carry() -> None:
    assert names(CU129) == ["CUDA_VERSION is 12.9.1", "/usr/local/cuda/version.json says 12.9.1"]
    assert names(ROCM) == ["/opt/rocm/.info/version says 6.4.1"]
    assert names(CANN) == ["ASCEND_HOME_PATH is set", "ascend_toolkit_install.info says 8.1.rc1"]
    assert names(Accelerator("hpu", "1.21.0")) == ["HABANA_SCAL_BIN_PATH is set"]
    for kind in ("tpu", "xpu", "neuron"):
        assert names(Accelerator(kind, "1.0")) == []
    assert names(CPU) == []


def test_the_rocm_version_file_is_read_as_rocm_writes_it() -> None:
    (check,) = layout_checks(ROCM, 60.0)
    test = check.config["fileContentTests"][0]
    assert test["path"] == "/opt/rocm/.info/version"
    pattern = test["expectedContents"][0]
    assert re.search(pattern, "6.4.1-120\n") and re.search(pattern, "6.4.1\n")
    assert not re.search(pattern, "6.4.10-1\n") and not re.search(pattern, "6.3.4-5\n")


def test_the_cann_version_is_read_from_the_toolkit_ascend_home_path_names() -> None:
    env, info = layout_checks(CANN, 60.0)
    assert env.config["metadataTest"]["envVars"][0]["key"] == "ASCEND_HOME_PATH"
    command = info.config["commandTests"][0]
    assert command["args"][1] == (
        'cat "$ASCEND_HOME_PATH/$(uname -m)-linux/ascend_toolkit_install.info"'
    )
    pattern = command["expectedOutput"][0].replace("(?mi)", "")
    said = "package_name=Ascend-cann-toolkit\nversion=8.1.RC1\narch=x86_64\n"
    assert re.search(pattern, said, re.M | re.I)
    assert not re.search(pattern, said.replace("8.1.RC1", "8.2.RC1"), re.M | re.I)


@pytest.mark.parametrize(
    ("variant", "device"),
    [
        ("cu130", "GPU visible (nvidia-smi)"),
        ("rocm", "ROCm GPU visible (rocm-smi)"),
        ("ascend-a2", "Ascend NPU visible (npu-smi info)"),
        ("gaudi", "Gaudi HPU visible (hl-smi)"),
        ("cpu", None),
    ],
)
def test_each_variant_checks_its_own_device_and_a_cpu_variant_none(
    variant: str, device: str | None
) -> None:
    matrix = family_matrix()
    checks = smoke_checks(matrix, matrix.variant(variant), SOURCE)
    on_device = [c.name for c in checks if c.gpu and c.serve is None and not c.config]
    assert on_device == ([device] if device else [])
    labels = next(c for c in checks if c.name.startswith("labels:"))
    keys = {lab["key"] for lab in labels.config["metadataTest"]["labels"]}
    assert f"org.release.{matrix.variant(variant).accelerator.kind}" in keys


def test_device_checks_name_what_is_missing() -> None:
    assert device_of("cpu") is None
    assert device_of("cuda", ("nvidia-smi", "-L")).command == ("nvidia-smi", "-L")  # type: ignore[union-attr]
    assert DEVICES["cuda"].absent == "no usable GPU here"  # the CUDA wording, as before
    assert DEVICES["rocm"].absent == "no usable ROCm GPU here"
    assert set(DEVICES) == {"cuda", "rocm", "cann", "hpu", "tpu", "xpu", "neuron"}


# -- stand-ins -----------------------------------------------------------------------


def test_each_stand_in_carries_its_accelerators_layout_and_says_so() -> None:
    rocm = standin_dockerfile("rocm/dev-ubuntu-22.04:6.4.1", ROCM)
    assert "printf '6.4.1\\n' > /opt/rocm/.info/version" in rocm
    assert "ROCm 6.4.1 layout, no ROCm libraries" in rocm
    assert "CUDA_VERSION" not in rocm
    cann = standin_dockerfile("quay.io/ascend/cann:8.1.rc1-910b-ubuntu22.04-py3.10", CANN)
    assert "ASCEND_HOME_PATH=/usr/local/Ascend/ascend-toolkit/latest" in cann
    assert "version=8.1.RC1" in cann and "ascend_toolkit_install.info" in cann
    cpu = standin_dockerfile("ubuntu:22.04", CPU)
    assert "no accelerator's layout" in cpu and "RUN" not in cpu
    cuda = standin_dockerfile("nvidia/cuda:12.9.1-base-ubuntu22.04", CU129)
    assert "NVIDIA's CUDA 12.9.1 layout, no CUDA libraries" in cuda  # as before


# -- the manifest --------------------------------------------------------------------


def test_records_carry_the_accelerator_and_old_ones_are_read_as_cuda() -> None:
    assert accelerator_fields(CU129) == {
        "accelerator": {"kind": "cuda", "version": "12.9.1"},
        "cuda": "12.9.1",
    }
    assert accelerator_fields(CPU) == {"accelerator": {"kind": "cpu", "version": ""}}
    assert accelerator_of(accelerator_fields(ROCM)) == ROCM
    assert accelerator_of({"cuda": "12.8.1"}) == Accelerator("cuda", "12.8.1")  # an old one


def _part(build: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema": "release-manifest-part/1",
        "version": "0.31.0rc1",
        "tag": "v0.31.0rc1",
        "commit": "a" * 40,
        "source_date_epoch": 1,
        "tool": {"name": "release", "version": "0"},
        "image": "vllm/vllm-openai",
        "variant": "rocm",
        "part": "build",
        "data": build,
    }


def test_the_manifest_schema_takes_new_and_old_build_records() -> None:
    build = {
        "build_args": {},
        "base": {"ref": "rocm/dev-ubuntu-22.04:6.4.1", "id": "sha256:" + "1" * 64,
                 "content_digest": "sha256:" + "5" * 64, "standin": True},
        "image_id": "sha256:" + "2" * 64,
        "tags": ["vllm/vllm-openai:v0.31.0rc1-rocm"],
        "input_digest": "sha256:" + "3" * 64,
        "content": {"digest": "sha256:" + "4" * 64, "parts": {}, "files": 0},
        "inventory": {"cuda": None, "python_packages": {}, "libraries": {}},
        "recipe": {"dockerfile": "docker/Dockerfile.rocm", "context": ".", "target": "final"},
    }  # fmt: skip
    check(_part({**build, **accelerator_fields(ROCM)}), "new")
    check(_part({**build, "cuda": "12.9.1"}), "old")
    with pytest.raises(ManifestError, match=r"data: .accelerator. is a required property"):
        check(_part(build), "neither")
    with pytest.raises(ManifestError, match=r"data\.accelerator\.kind"):
        check(_part({**build, "accelerator": {"kind": "gpu", "version": "1"}}), "no such kind")


def test_a_device_is_given_where_its_nodes_are_and_not_run_where_they_are_not(
    tmp_path: Path,
) -> None:
    kfd, dri = tmp_path / "kfd", tmp_path / "dri"
    rocm = Device(
        "ROCm GPU", ("rocm-smi",), (str(kfd),), (str(kfd), str(dri)), ("--group-add=video",)
    )
    assert nodes_access(rocm) == DeviceAccess(False, "no usable ROCm GPU here")
    kfd.touch()
    dri.mkdir()
    assert nodes_access(rocm) == DeviceAccess(
        True, options=(f"--device={dri}", f"--device={kfd}", "--group-add=video")
    )
    # a render node of another vendor is no Intel XPU
    xpu = Device("Intel XPU", ("xpu-smi",), (str(kfd),), (), vendor="0x8086")
    assert not nodes_access(xpu).usable


def test_devices_here_asks_consent_for_what_a_device_check_would_be_given(tmp_path: Path) -> None:
    matrix = family_matrix()
    rocm = [matrix.variant("rocm")]
    asked = asked_by(matrix, rocm, gpu=False, devices={"rocm": ("--device=/dev/kfd",)})
    assert asked["the rocm device smoke check"] == ("--device=/dev/kfd",)
    assert "the rocm device smoke check" not in asked_by(matrix, rocm, gpu=False, devices={})
    assert devices_here(["cpu", "cuda"]) == {}  # no device of its own; CUDA is weighed apart


def test_the_storys_engine_adds_a_rocm_and_a_cpu_variant_each_on_its_own_dockerfile(
    tmp_path: Path,
) -> None:
    from release.sample.story import RULE_NOT_12, make_story_engine

    engine = make_story_engine(tmp_path)
    text = (engine.root / "pyproject.toml").read_text(encoding="utf-8")
    table = tomllib.loads(text.replace('cuda = ">=12"', RULE_NOT_12))["tool"]["release"]
    assert schema_problems(table) == []
    matrix = parse_images(table["images"])
    assert matrix is not None and matrix.ids == ("cu128", "cu129", "cu130", "rocm", "cpu")
    assert matrix.snapshot_ids() == ("cu130", "rocm", "cpu")  # neither is CUDA 12.x
    rocm, cpu = matrix.variant("rocm"), matrix.variant("cpu")
    assert (matrix.dockerfile_of(rocm), matrix.target_of(rocm)) == (
        "docker/Dockerfile.rocm",
        "final",
    )
    assert matrix.dockerfile_of(cpu) == "docker/Dockerfile.cpu"
    for variant in (rocm, cpu):  # the Dockerfiles are the sample's, committed
        assert (engine.root / matrix.dockerfile_of(variant)).is_file()
    assert "FROM ${BASE_IMAGE} AS final" in (engine.root / "docker/Dockerfile.rocm").read_text()
    # before #59118 the rule is an ordered clause on CUDA: neither had a snapshot
    before = parse_images(tomllib.loads(text)["tool"]["release"]["images"])
    assert before is not None and before.snapshot_ids() == ("cu128", "cu129", "cu130")

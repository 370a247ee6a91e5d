"""Variants of several accelerators against a real Docker Engine: a matrix of CUDA, ROCm,
CANN and CPU variants, each on a Dockerfile of its own (one built to a named stage, one
from a context of its own), is built, smoke-tested and published; each variant's layout
checks pass on the stand-in of its own accelerator and fail on another's (or on one that
says another version); the device checks say *not run* with the reason, and a CPU
variant has none. Stand-in bases are made here as the build needs them and kept (cached).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest

from release.adapters.engine import ContainerEngine
from release.adapters.registry_server import LocalRegistry
from tests.docker_support import local_registry, purge
from tests.engine_support import (
    BASE_1291,
    Repo,
    check_lines,
    images,
    make_engine_repo,
    smoke_section,
)

ROCM_BASE = "rocm/dev-ubuntu-22.04:6.4.1"
CANN_BASE = "quay.io/ascend/cann:8.1.rc1-910b-ubuntu22.04-py3.10"
CPU_BASE = "release-test/cpu-base:bookworm"  # a name no one else uses: its stand-in is ours
VERSION = "v0.1.0"

# built to its stage "final": building the last stage instead fails
ROCM_DOCKERFILE = """\
ARG BASE_IMAGE
FROM ${BASE_IMAGE} AS final
ARG ROCM_VERSION
ARG NONCE=0
RUN echo "rocm ${ROCM_VERSION} ${NONCE}" > /variant
FROM final AS broken
RUN echo "the last stage is not this variant's target" >&2; exit 7
"""
CANN_DOCKERFILE = """\
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG CANN_VERSION
ARG NONCE=0
COPY marker.txt /marker.txt
RUN echo "cann ${CANN_VERSION} ${NONCE}" > /variant
"""
CPU_DOCKERFILE = """\
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG NONCE=0
RUN echo "cpu ${NONCE}" > /variant
"""
FILES = {
    "docker/Dockerfile.rocm": ROCM_DOCKERFILE,
    "ascend/Dockerfile": CANN_DOCKERFILE,
    "ascend/marker.txt": "in the ascend context only\n",
    "docker/Dockerfile.cpu": CPU_DOCKERFILE,
}

MATRIX = [
    {"id": "cu129", "cuda": "12.9.1", "base-image": BASE_1291},
    {
        "id": "rocm",
        "rocm": "6.4.1",
        "base-image": ROCM_BASE,
        "dockerfile": "docker/Dockerfile.rocm",
        "target": "final",
    },
    {
        "id": "ascend",
        "cann": "8.1.rc1",
        "base-image": CANN_BASE,
        "context": "ascend",
        "dockerfile": "ascend/Dockerfile",
        "tag-suffix": "a2",
    },
    {"id": "cpu", "cpu": True, "base-image": CPU_BASE, "dockerfile": "docker/Dockerfile.cpu"},
]


@pytest.fixture(scope="module")
def family(docker: ContainerEngine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Repo]:
    """The four variants, built."""
    root = tmp_path_factory.mktemp("accelerators")
    repo = make_engine_repo(
        root / "engine",
        tmp_path_factory.mktemp("home"),
        variants=MATRIX,
        checks=[],
        default="cu129",
        files=FILES,
    )
    try:
        result = repo.release("images.build", "--jobs", "2", timeout=900)
        assert result.code == 0, result.output
        yield repo
    finally:
        purge(docker, repo.name, repo.head)


@pytest.fixture(scope="module")
def smoked(family: Repo) -> str:
    result = family.release("images.smoke", timeout=600)
    assert result.code == 0, result.output
    return result.output


@images
def test_each_variant_builds_its_own_dockerfile_stage_and_context(
    family: Repo, docker: ContainerEngine
) -> None:
    def run(tag: str, *argv: str) -> str:
        said = docker.run(["run", "--rm", "--network", "none", tag, *argv], timeout=60)
        return said.stdout.strip()

    name = family.name
    assert run(f"{name}:{VERSION}-rocm", "cat", "/variant").startswith("rocm 6.4.1 ")
    assert run(f"{name}:{VERSION}-a2", "cat", "/marker.txt") == "in the ascend context only"
    assert run(f"{name}:{VERSION}-cpu", "cat", "/variant").startswith("cpu ")
    labels = docker.inspect_image(f"{name}:{VERSION}-a2").labels  # type: ignore[union-attr]
    assert labels["org.release.cann"] == "8.1.rc1" and "org.release.cuda" not in labels
    cpu = docker.inspect_image(f"{name}:{VERSION}-cpu").labels  # type: ignore[union-attr]
    assert cpu["org.release.cpu"] == "true"
    # the build parts record what was built from where
    parts = {p.name: json.loads(p.read_text())["data"] for p in family.state.rglob("*.build.json")}
    assert parts["rocm.build.json"]["recipe"] == {
        "dockerfile": "docker/Dockerfile.rocm",
        "context": ".",
        "target": "final",
    }
    assert parts["rocm.build.json"]["accelerator"] == {"kind": "rocm", "version": "6.4.1"}
    assert parts["cu129.build.json"]["cuda"] == "12.9.1"  # what older readers read


@images
def test_each_layout_check_passes_on_its_own_stand_in_and_devices_are_not_run(
    smoked: str,
) -> None:
    assert set(check_lines(smoked, "failed")) == set()
    passed = set(check_lines(smoked, "passed"))
    assert {
        "CUDA_VERSION is 12.9.1",
        "/usr/local/cuda/version.json says 12.9.1",
        "/opt/rocm/.info/version says 6.4.1",
        "ASCEND_HOME_PATH is set",
        "ascend_toolkit_install.info says 8.1.rc1",
    } <= passed
    not_run = check_lines(smoked, "not run")
    assert sorted(not_run) == [
        "Ascend NPU visible (npu-smi info)",
        "GPU visible (nvidia-smi)",
        "ROCm GPU visible (rocm-smi)",
    ]
    assert "- no usable ROCm GPU here" in smoke_section(smoked, "rocm")
    assert "- no usable Ascend NPU here" in smoke_section(smoked, "ascend")
    assert "- no usable GPU here" in smoke_section(smoked, "cu129")
    cpu = smoke_section(smoked, "cpu")
    assert "visible" not in cpu and "not run" not in cpu  # a CPU variant has no device
    assert "[on a stand-in base: ROCm layout only, no ROCm libraries]" in smoked
    assert "[on a stand-in base: CANN layout only, no CANN libraries]" in smoked
    assert "[on a stand-in base: CUDA layout only, no CUDA libraries]" in smoked
    assert "[on a stand-in base: a Debian rootfs, not the real base]" in cpu


@images
def test_the_variants_publish_under_their_tags(
    family: Repo, smoked: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with local_registry(tmp_path_factory.mktemp("registry")) as registry:
        at = f"{registry.address}/family"
        result = family.release("images.publish", "--registry", at, timeout=600)
        assert result.code == 0, result.output
        for suffix in ("", "-cu129", "-rocm", "-a2", "-cpu"):
            assert _served(registry, f"{at}/{family.name}:{VERSION}{suffix}"), suffix


def _served(registry: LocalRegistry, ref: str) -> bool:
    said = subprocess.run(
        ["skopeo", "inspect", "--raw", "--tls-verify=false", f"docker://{ref}"],
        capture_output=True,
        check=False,
        timeout=60,
    )
    return said.returncode == 0


# -- the wrong stand-in --------------------------------------------------------------

WRONG = [
    # ROCm variants on the CUDA stand-in, and on a ROCm one of another version
    {"id": "rocm-on-cuda", "rocm": "6.4.1", "base-image": BASE_1291},
    {"id": "rocm-other", "rocm": "6.3.4", "base-image": ROCM_BASE},
    # CANN variants on the ROCm stand-in, and on a CANN one of another version
    {"id": "cann-on-rocm", "cann": "8.1.rc1", "base-image": ROCM_BASE},
    {"id": "cann-other", "cann": "8.2.rc1", "base-image": CANN_BASE},
    # a CUDA variant on the ROCm stand-in; a Gaudi one on the CPU base
    {"id": "cuda-on-rocm", "cuda": "12.9.1", "base-image": ROCM_BASE},
    {"id": "hpu-on-cpu", "hpu": "1.21.0", "base-image": CPU_BASE},
]
FAILS = {
    "rocm-on-cuda": {"/opt/rocm/.info/version says 6.4.1"},
    "rocm-other": {"/opt/rocm/.info/version says 6.3.4"},
    "cann-on-rocm": {"ASCEND_HOME_PATH is set", "ascend_toolkit_install.info says 8.1.rc1"},
    "cann-other": {"ascend_toolkit_install.info says 8.2.rc1"},
    "cuda-on-rocm": {"CUDA_VERSION is 12.9.1", "/usr/local/cuda/version.json says 12.9.1"},
    "hpu-on-cpu": {"HABANA_SCAL_BIN_PATH is set"},
}


@images
def test_a_layout_check_fails_on_another_accelerators_stand_in(
    docker: ContainerEngine, tmp_path_factory: pytest.TempPathFactory, family: Repo
) -> None:
    root = tmp_path_factory.mktemp("wrong")
    repo = make_engine_repo(
        root / "engine",
        tmp_path_factory.mktemp("home"),
        variants=WRONG,
        checks=[],
        default="rocm-on-cuda",
    )
    try:
        built = repo.release("images.build", "--jobs", "2", timeout=900)
        assert built.code == 0, built.output
        smoked = repo.release("images.smoke", timeout=600)
        assert smoked.code != 0, smoked.output
        for variant, failing in FAILS.items():
            section = smoke_section(smoked.output, variant)
            assert set(check_lines(section, "failed")) == failing, section
            assert f"smoke({variant}): FAILED" in section
        # the one that passes in the wrong pair: CANN's env is there, its version is not
        assert "ASCEND_HOME_PATH is set" in check_lines(
            smoke_section(smoked.output, "cann-other"), "passed"
        )
    finally:
        purge(docker, repo.name, repo.head)

"""A variant built for several platforms, without a Docker Engine: one row per platform
(its id, tag, sessions and selection), the multi-arch index's tags, the refusals of a bad
``platforms``, and how binfmt_misc says whether a foreign platform runs here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from release.adapters.emulation import emulation_problem
from release.adapters.engine import ContainerEngine
from release.core.matrix import ImageMatrix, parse_images, platform_slug
from release.errors import ConfigError
from release.images.standin import platform_alias
from tests.docker_support import need_emulation, purge
from tests.engine_support import BASE_1291, images, make_engine_repo
from tests.matrix_support import config_error, sample_table

BOTH = ["linux/amd64", "linux/arm64"]


def with_platforms(variant: str, platforms: Any, **more: Any) -> ImageMatrix:
    table = sample_table()
    for entry in table["variants"]:
        if entry["id"] == variant:
            entry["platforms"] = platforms
    table.update(more)
    matrix = parse_images(table)
    assert matrix is not None
    return matrix


def test_a_variant_for_two_platforms_is_two_rows_with_their_own_ids_and_tags() -> None:
    matrix = with_platforms("cu129", BOTH)
    assert matrix.ids == ("cu128", "cu129-amd64", "cu129-arm64", "cu130")
    assert matrix.groups == ("cu128", "cu129", "cu130")
    arm = matrix.variant("cu129-arm64")
    assert (arm.group, arm.platform, arm.slug) == ("cu129", "linux/arm64", "arm64")
    assert matrix.tag(arm, "v0.31.0rc1") == "example/tinyengine:v0.31.0rc1-cu129-arm64"
    assert matrix.index_tags("cu129", "v0.31.0rc1") == ("example/tinyengine:v0.31.0rc1-cu129",)
    # a variant of one platform keeps its id and tag
    one = matrix.variant("cu128")
    assert (one.group, one.platform, one.slug) == ("cu128", None, "")
    assert matrix.tag(one, "v0.31.0rc1") == "example/tinyengine:v0.31.0rc1-cu128"
    # published per platform: a row's own tag, or the variant's with the platform added
    assert matrix.platform_tag(arm, "v0.31.0rc1", "linux/arm64") == matrix.tag(arm, "v0.31.0rc1")
    assert (
        matrix.platform_tag(one, "v0.31.0rc1", "linux/amd64")
        == "example/tinyengine:v0.31.0rc1-cu128-amd64"
    )
    # each row has its sessions; the snapshot rule goes by CUDA, so by row
    assert matrix.session_ids()["build"] == matrix.ids
    assert "cu129-arm64" not in matrix.session_ids()["snapshot"]


def test_the_default_variants_rows_and_index_tags() -> None:
    matrix = with_platforms("cu130", BOTH)
    rows = [matrix.tag(v, "v0.31.0rc1") for v in matrix.rows_of("cu130")]
    assert rows == ["example/tinyengine:v0.31.0rc1-amd64", "example/tinyengine:v0.31.0rc1-arm64"]
    assert matrix.index_tags("cu130", "v0.31.0rc1") == (
        "example/tinyengine:v0.31.0rc1",
        "example/tinyengine:v0.31.0rc1-cu130",
    )
    assert matrix.snapshot_ids() == ("cu130-amd64", "cu130-arm64")


def test_a_variant_selects_all_its_platforms_a_row_only_itself() -> None:
    matrix = with_platforms("cu129", BOTH)
    assert [v.id for v in matrix.select(["cu129"])] == ["cu129-amd64", "cu129-arm64"]
    assert [v.id for v in matrix.select(["cu129-arm64", "cu128"])] == ["cu129-arm64", "cu128"]
    assert [v.id for v in matrix.select(["cu129", "cu129-amd64"])] == ["cu129-amd64", "cu129-arm64"]
    assert [v.id for v in matrix.select(None)] == list(matrix.ids)
    with pytest.raises(ConfigError) as unknown:
        matrix.select(["cu127"])
    assert "no image variant 'cu127'" in unknown.value.one_line()


def test_platforms_for_every_variant_and_one_platform_as_before() -> None:
    table = sample_table()
    table["platforms"] = BOTH
    table["variants"][0]["platform"] = "linux/amd64"  # its own: one platform, its own id
    matrix = parse_images(table)
    assert matrix is not None
    assert matrix.ids == ("cu128", "cu129-amd64", "cu129-arm64", "cu130-amd64", "cu130-arm64")
    assert matrix.variant("cu128").platform == "linux/amd64"


@pytest.mark.parametrize(
    ("platforms", "said"),
    [
        ([], "expected a list of os/arch"),
        ("linux/amd64", "expected a list of os/arch"),
        (["linux"], "'linux' is not os/arch"),
        (["linux/amd64", "linux/amd64"], "a platform is named twice"),
        (["linux/arm/v7", "linux/armv7"], "two platforms would share a tag"),
    ],
)
def test_a_bad_platforms_list_is_refused_naming_the_key(platforms: Any, said: str) -> None:
    table = sample_table()
    table["variants"][1]["platforms"] = platforms
    message = config_error(table)
    assert "variants[cu129].platforms" in message and said in message


def test_platform_and_platforms_together_or_a_row_that_names_another_variant_are_refused() -> None:
    table = sample_table()
    table["variants"][1].update(platform="linux/amd64", platforms=BOTH)
    assert "give platform or platforms, not both" in config_error(table)
    table = sample_table()
    table["variants"][0]["id"] = "cu129-arm64"
    table["variants"][1]["platforms"] = BOTH
    assert "which another variant is called" in config_error(table)


def test_slugs_and_the_local_name_of_a_foreign_base() -> None:
    assert [platform_slug(p) for p in ("linux/arm64", "linux/arm/v7", "windows/amd64")] == [
        "arm64",
        "armv7",
        "windows-amd64",
    ]
    alias = platform_alias("nvidia/cuda:12.9.1-base-ubuntu22.04", "linux/arm64")
    assert alias == "release-base-linux-arm64:nvidia-cuda-12.9.1-base-ubuntu22.04"


def _binfmt(root: Path, name: str, text: str) -> Path:
    root.mkdir(exist_ok=True)
    (root / "status").write_text("enabled\n")
    (root / name).write_text(text)
    return root


HANDLER = "enabled\ninterpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P\nflags: {}\noffset 0\n"


def test_emulation_is_known_from_binfmt_misc(tmp_path: Path) -> None:
    root = _binfmt(tmp_path / "binfmt", "qemu-aarch64", HANDLER.format("POCF"))
    assert emulation_problem("linux/arm64", root) is None
    assert "no binfmt handler for s390x" in str(emulation_problem("linux/s390x", root))
    assert "lacks the F flag" in str(
        emulation_problem(
            "linux/arm64", _binfmt(tmp_path / "noF", "qemu-aarch64", HANDLER.format("PO"))
        )
    )
    off = _binfmt(
        tmp_path / "off", "qemu-aarch64", HANDLER.format("POCF").replace("enabled", "disabled")
    )
    assert "is disabled" in str(emulation_problem("linux/arm64", off))
    assert "not mounted" in str(emulation_problem("linux/arm64", tmp_path / "nothing"))
    assert "no emulator is known" in str(emulation_problem("linux/mystery", root))


@images
def test_an_emulated_platforms_snapshot_is_not_run_never_passed(
    docker: ContainerEngine, tmp_path: Path
) -> None:
    need_emulation("linux/arm64")
    repo = make_engine_repo(
        tmp_path / "engine",
        tmp_path / "home",
        variants=[{"id": "a", "cuda": "12.9.1", "base-image": BASE_1291, "platforms": BOTH}],
        checks=[],
        default="a",
        tables='[tool.release.images.snapshot]\ncuda = ">=12"\nruntime = ["snapshot-runtime"]\n',
    )
    try:
        built = repo.release("images.build", "--variant", "a-arm64", timeout=900)
        assert built.code == 0, built.output
        assert "(emulated, linux/arm64 on linux/amd64)" in built.output
        smoked = repo.release("images.smoke", "--variant", "a-arm64")
        assert smoked.code == 0, smoked.output
        assert "passed    runs as linux/arm64 (uname -m: aarch64)" in smoked.output
        snap = repo.release("images.snapshot", "--variant", "a-arm64")
        assert snap.code == 0, snap.output
        assert "checkpoint/restore round trip: not run: emulated platform" in snap.output
        (part,) = repo.state.rglob("a-arm64.snapshot.json")
        data = json.loads(part.read_text())["data"]
        assert data["status"] == "not run" and "CRIU does not run under qemu-user" in data["reason"]
    finally:
        purge(docker, repo.name, repo.head)

"""What release init reads of a work tree, and within which bounds: Dockerfiles where
engines keep them (never through a symbolic link, never in vendored or hidden folders,
never more or larger than the caps), a changelog in any case, the version's files; and
``changelog = ""``, what it writes where there is none, keeps none when tagging."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from release.adapters import tree_scan
from release.adapters.git import GitRepo
from release.adapters.tree_scan import changelog_files, dockerfiles, version_files
from release.commands.init import InitRequest, init
from release.commands.outcome import Run
from release.core.version_sources import version_sources
from release.sample import SampleEngine
from tests.conftest import run_cli


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


FROM = "FROM ubuntu:24.04\n"


def test_dockerfiles_are_found_where_engines_keep_them(tmp_path: Path) -> None:
    write(tmp_path, {
        "Dockerfile": FROM, "rocm.Dockerfile": FROM, "Dockerfile.dockerignore": "*\n",
        "docker/Dockerfile.cpu": FROM, "docker/cuda/Dockerfile": FROM,
        ".cd/Dockerfile.ubuntu.pytorch.vllm": FROM, ".cd/sub/Dockerfile.hpu": FROM,
        "deploy/Dockerfile.tpu": FROM, "deploy/deeper/Dockerfile.xpu": FROM,
        ".github/Dockerfile.ci": FROM, "third_party/Dockerfile": FROM,
        "node_modules/x/Dockerfile": FROM, "vendor/Dockerfile": FROM, "docker/README.md": "",
    })  # fmt: skip
    found, unread, primary = dockerfiles(tmp_path)
    assert [f.path for f in found] == [
        "Dockerfile", ".cd/Dockerfile.ubuntu.pytorch.vllm", ".cd/sub/Dockerfile.hpu",
        "deploy/Dockerfile.tpu", "docker/Dockerfile.cpu", "docker/cuda/Dockerfile",
        "rocm.Dockerfile",
    ]  # fmt: skip
    assert (unread, primary) == ([], "Dockerfile")


def test_no_symbolic_link_is_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, {"Dockerfile.rocm": FROM, "inner/Dockerfile.cpu": FROM})
    tree = tmp_path / "tree"
    write(tree, {"docker/Dockerfile": FROM})
    (tree / "docker" / "Dockerfile.rocm").symlink_to(outside / "Dockerfile.rocm")
    (tree / "Dockerfile.tpu").symlink_to("docker/Dockerfile")  # inside, still a link
    (tree / "linked").symlink_to(outside / "inner")  # a folder
    os.symlink(outside, tree / "docker" / "away")
    found, unread, _ = dockerfiles(tree)
    assert [f.path for f in found] == ["docker/Dockerfile"]
    assert unread == [
        ("Dockerfile.tpu", "a symbolic link, not followed"),
        ("docker/Dockerfile.rocm", "a symbolic link, not followed"),
    ]


def test_what_is_read_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, {"docker/Dockerfile": FROM, "docker/Dockerfile.cpu": FROM,
                     "docker/Dockerfile.rocm": FROM + "# " + "x" * 200 + "\n",
                     "docker/Dockerfile.tpu": FROM})  # fmt: skip
    (tmp_path / "docker" / "Dockerfile.xpu").write_bytes(b"FROM \xff\n")
    monkeypatch.setattr(tree_scan, "MAX_DOCKERFILES", 3)
    monkeypatch.setattr(tree_scan, "MAX_DOCKERFILE_BYTES", 100)
    found, unread, _ = dockerfiles(tmp_path)
    assert [f.path for f in found] == ["docker/Dockerfile", "docker/Dockerfile.cpu",
                                       "docker/Dockerfile.tpu"]  # fmt: skip
    assert (
        unread[0][0] == "docker/Dockerfile.rocm" and "more than the 100 read here" in unread[0][1]
    )
    assert unread[1] == ("docker/Dockerfile.xpu", "past the 3 Dockerfiles read")
    monkeypatch.setattr(tree_scan, "MAX_DOCKERFILES", 10)
    _, unread, _ = dockerfiles(tmp_path)
    assert unread[1][0] == "docker/Dockerfile.xpu" and "is not UTF-8 text" in unread[1][1]


def test_a_dockerfile_not_read_is_said_so_by_init(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    GitRepo.init(tree)
    write(tmp_path / "elsewhere", {"Dockerfile": "ARG CUDA_VERSION=12.9.1\nFROM x\n"})
    (tree / "Dockerfile").symlink_to(tmp_path / "elsewhere" / "Dockerfile")
    outcome = init(InitRequest(dry_run=True), Run(tree, lambda _: None))
    prose = " ".join(line.removeprefix("# ") for line in outcome.table.splitlines())
    assert "Not read: Dockerfile (a symbolic link, not followed)." in prose
    assert "12.9.1" not in outcome.table


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"changelog.md": ""}, ("changelog.md", None)),
        ({"Changes.md": "", "HISTORY.md": ""}, ("Changes.md", None)),
        ({"docs/ChangeLog.md": ""}, ("docs/ChangeLog.md", None)),
        ({"CHANGELOG.rst": ""}, (None, "CHANGELOG.rst")),
        ({"README.md": ""}, (None, None)),
    ],
)
def test_a_changelog_is_found_in_any_case(
    tmp_path: Path, files: dict[str, str], expected: tuple[str | None, str | None]
) -> None:
    write(tmp_path, files)
    assert changelog_files(tmp_path) == expected


def test_where_the_version_is_kept(tmp_path: Path) -> None:
    write(tmp_path, {
        "version.txt": "0.19.0\n",
        "pyproject.toml": '[project]\nname = "x"\nversion = "1.2.3"\n',
        "engine/__init__.py": '"""The engine."""\n\n__version__ = "0.4.0"\n',
        "src/other/_version.py": "__version__: str = '0.5.0'\n",
        "tests/__init__.py": '__version__ = "9.9.9"\n',
    })  # fmt: skip
    assert version_sources(version_files(tmp_path)) == [
        "version.txt: 0.19.0",
        "pyproject.toml: [project] version = 1.2.3",
        "engine/__init__.py:3: __version__ = 0.4.0",
        "src/other/_version.py:1: __version__ = 0.5.0",
    ]


@pytest.mark.slow
def test_changelog_empty_keeps_none_when_tagging(cut_engine: SampleEngine) -> None:
    """What init writes where a repository keeps no changelog: tag makes none, commits
    none, and tags the rc."""
    pyproject = cut_engine.root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8").replace(
            'changelog = "CHANGELOG.md"', 'changelog = ""'
        ),
        encoding="utf-8",
    )
    cut_engine.repo.run("commit", "--quiet", "-am", "Keep no changelog")
    head = cut_engine.repo.head()
    said = run_cli(cut_engine.root, "tag")
    assert said.code == 0, said.output
    assert not (cut_engine.root / "CHANGELOG.md").exists()
    assert cut_engine.repo.head() == head  # no changelog commit
    assert cut_engine.repo.rev("refs/tags/v0.1.0rc1") == head

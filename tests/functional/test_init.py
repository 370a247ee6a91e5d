"""release init: a commented [tool.release] guessed from the repository, appended to its
pyproject.toml (the rest kept byte for byte), loadable and valid; refused, changing
nothing, where a table is there already."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from release.adapters.config_file import load_config
from release.adapters.git import GitRepo
from release.commands.init import InitOutcome, InitRequest, init
from release.commands.outcome import Run
from release.core.config_schema import schema_problems
from release.core.matrix import parse_images
from release.core.versions import ReleaseVersion
from release.errors import ConfigError, RefusedError, UsageError
from release.sample import make_engine_repo

AUTHOR = ("Release Maintainer", "maintainer@example.com")


def repo_at(path: Path, *, commit: bool = True) -> GitRepo:
    repo = GitRepo.init(path)
    assert repo is not None
    for key, value in (("user.name", "A"), ("user.email", "a@example.com"),
                       ("commit.gpgsign", "false"), ("tag.gpgsign", "false")):  # fmt: skip
        repo.run("config", key, value)
    if commit:
        repo.run("commit", "--quiet", "--allow-empty", "-m", "one")
    return repo


def run_init(path: Path, *, dry_run: bool = False) -> InitOutcome:
    return init(InitRequest(dry_run=dry_run), Run(path, lambda _: None))


def table(path: Path) -> dict[str, object]:
    written = tomllib.loads((path / "pyproject.toml").read_text(encoding="utf-8-sig"))
    found = written["tool"]["release"]
    assert schema_problems(found) == []
    return found


def state(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and "objects" not in p.parts and not p.name.endswith(".lock")
    }


def uncommented(text: str) -> str:
    """The TOML lines of the commented skeleton, uncommented (prose stays a comment)."""
    return re.sub(r"(?m)^# (?=\[|[a-z-]+ = )", "", text)


def test_a_fresh_repository_without_commits_gets_a_pyproject_toml(tmp_path: Path) -> None:
    repo_at(tmp_path, commit=False)
    outcome = run_init(tmp_path)
    assert outcome.created and not outcome.dry_run and outcome.exit_code == 0
    assert table(tmp_path) == {"main-branch": "main", "changelog": ""}
    text = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    assert "# main-branch: guessed from the checked-out branch main\n" in text
    assert "# branch: not guessed: no release branches yet\n" in text
    assert "# No Dockerfile found" in text
    assert "# changelog: no changelog found (CHANGELOG.md, CHANGES.md" in text
    config = load_config(tmp_path)
    assert config.main_branch == "main" and config.branch.template == "releases/v{version}"
    assert config.changelog == ""  # tag and promote keep none
    assert load_config(tmp_path) == config
    assert tomllib.loads(uncommented(text))["tool"]["release"]["tag"] == "v{version}"


def test_dry_run_prints_the_table_and_changes_nothing(tmp_path: Path) -> None:
    repo_at(tmp_path)
    before = state(tmp_path)
    outcome = run_init(tmp_path, dry_run=True)
    lines = list(outcome.text())
    assert lines[0] == "release init --dry-run: would create pyproject.toml, changing nothing:"
    assert "[tool.release]" in lines and 'main-branch = "main"' in lines
    assert state(tmp_path) == before
    document = outcome.document()
    assert document["dry_run"] is True and document["table"] == outcome.table
    assert {"key": "main-branch", "value": "main", "guessed_from": "the branch main"} in document[
        "guesses"
    ]  # type: ignore[operator]


def test_an_existing_pyproject_is_kept_byte_for_byte(tmp_path: Path) -> None:
    repo_at(tmp_path)
    old = '\ufeff[project]\r\nname = "engine"\r\n[tool.ruff]\r\nline-length = 99'.encode()
    (tmp_path / "pyproject.toml").write_bytes(old)
    outcome = run_init(tmp_path)
    new = (tmp_path / "pyproject.toml").read_bytes()
    assert not outcome.created
    assert new.startswith(old + b"\r\n\r\n[tool.release]\r\n")
    assert b"\n" not in new.replace(b"\r\n", b"")  # its line endings throughout
    assert table(tmp_path)["main-branch"] == "main"
    assert load_config(tmp_path).main_branch == "main"


@pytest.mark.parametrize(
    "text",
    [
        '[tool.release]\nmain-branch = "trunk"\n',
        '[tool.release.images]\nname = "x"\n',
        "[tool]\nrelease = {}\n",
    ],
)
def test_a_table_there_already_is_refused_and_nothing_changes(tmp_path: Path, text: str) -> None:
    repo_at(tmp_path)
    (tmp_path / "pyproject.toml").write_text(text)
    before = state(tmp_path)
    with pytest.raises(RefusedError, match=r"has a \[tool.release\] table already") as err:
        run_init(tmp_path)
    assert err.value.exit_code == 3
    assert state(tmp_path) == before


def test_a_pyproject_the_table_cannot_join_is_refused(tmp_path: Path) -> None:
    repo_at(tmp_path)
    (tmp_path / "pyproject.toml").write_text("tool = { ruff = { line-length = 99 } }\n")
    before = state(tmp_path)
    with pytest.raises(RefusedError, match="cannot add"):
        run_init(tmp_path)
    assert state(tmp_path) == before


def test_a_pyproject_that_is_not_toml_or_a_symlink_is_refused(tmp_path: Path) -> None:
    repo_at(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        run_init(tmp_path)
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / "elsewhere.toml").write_text("")
    (tmp_path / "pyproject.toml").symlink_to("elsewhere.toml")
    with pytest.raises(UsageError, match="symbolic link"):
        run_init(tmp_path)
    assert (tmp_path / "elsewhere.toml").read_text() == ""


@pytest.mark.parametrize(
    ("branches", "tags", "expected"),
    [
        (["releases/v0.12.0", "releases/v0.13.0"], ["v0.13.0rc1", "v0.13.0rc2", "v0.13.0"],
         {"branch": "releases/v{version}", "tag": "v{version}", "version-scheme": "pep440"}),
        (["release/v1.0.0"], ["v1.0.0-rc.1", "v1.0.0-rc.2"],
         {"branch": "release/v{version}", "tag": "v{version}", "version-scheme": "semver"}),
        ([], ["engine-0.2.0rc0", "engine-0.2.0rc1", "unrelated"],
         {"tag": "engine-{version}", "version-scheme": "pep440", "first-rc": 0}),
    ],
)  # fmt: skip
def test_conventions_are_guessed_from_branches_and_tags(
    tmp_path: Path, branches: list[str], tags: list[str], expected: dict[str, object]
) -> None:
    repo = repo_at(tmp_path)
    for name in branches:
        repo.run("branch", name)
    for name in tags:
        repo.run("tag", name)
    run_init(tmp_path)
    found = table(tmp_path)
    assert {k: found[k] for k in expected} == expected
    assert "branch" in expected or "branch" not in found
    config = load_config(tmp_path)
    for name in branches:
        assert config.branch.parse(name) is not None
    for name in tags[:-1]:
        assert config.tag.render(config.tag.parse_any(name)) == name  # type: ignore[arg-type]


def test_a_pytorch_style_repository(tmp_path: Path) -> None:
    repo = repo_at(tmp_path)
    for name in ("release/2.4", "release/2.5"):
        repo.run("branch", name)
    for name in ("v2.5.0-rc1", "v2.5.0", "v2.5.1-rc1"):
        repo.run("tag", name)
    (tmp_path / "CHANGES.md").write_text("# Changes\n")
    run_init(tmp_path)
    text = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    assert table(tmp_path) == {
        "main-branch": "main", "branch": "release/{major}.{minor}", "changelog": "CHANGES.md",
        "tag": "v{version}", "version-scheme": "pep440", "rc-spelling": "-rc{n}",
        "patch-releases": "patch",
    }  # fmt: skip
    assert "# rc-spelling: guessed from the rc tags v2.5.0-rc1, v2.5.1-rc1" in text
    assert "v2.5.1-rc1: a patch\n# release (tags: 1 patch)" in text
    config = load_config(tmp_path)
    assert config.tag.render(ReleaseVersion(2, 5, 1, rc=2)) == "v2.5.1-rc2"  # as they spell it
    assert config.branch.parse("release/2.5") == ReleaseVersion(2, 5, 0)
    assert config.branch.render(ReleaseVersion(2, 5, 1)) == "release/2.5"
    assert config.tag.parse_any("v2.5.1-rc1") == ReleaseVersion(2, 5, 1, rc=1)


def test_the_sample_engine_without_its_table_gets_its_conventions_back(tmp_path: Path) -> None:
    engine = make_engine_repo(tmp_path, first="[Core] The engine (#1)", author=AUTHOR)
    pyproject = engine.root / "pyproject.toml"
    shipped = pyproject.read_text(encoding="utf-8")
    kept = shipped[: shipped.index("[tool.release]")]
    pyproject.write_text(kept, encoding="utf-8")
    engine.repo.run("branch", "releases/v0.30.0")
    engine.repo.run("tag", "v0.30.0rc1")
    run_init(engine.root)
    text = pyproject.read_text(encoding="utf-8")
    assert text.startswith(kept)
    shipped_table = tomllib.loads(shipped)["tool"]["release"]
    found = table(engine.root)
    for key in ("main-branch", "branch", "tag", "version-scheme"):
        assert found[key] == shipped_table[key], key
    assert found["changelog"] == ""  # none in the tree: none kept, not one made by release tag
    images = tomllib.loads(uncommented(text))["tool"]["release"]["images"]
    matrix = parse_images(images)
    assert matrix is not None and matrix.ids[0] == "cu130"  # from docker/Dockerfile, the main one
    shipped_images = shipped_table["images"]
    assert matrix.dockerfile == shipped_images["dockerfile"] == "docker/Dockerfile"
    assert matrix.version_arg == shipped_images["version-arg"] == "ENGINE_VERSION"
    (variant,) = [v for v in images["variants"] if v["id"] == "cu130"]
    (shipped_variant,) = [v for v in shipped_images["variants"] if v["id"] == "cu130"]
    assert variant == {**shipped_variant, "python": "3.11"}  # its id, CUDA and base
    prose = " ".join(line.removeprefix("# ") for line in text.splitlines())
    assert "cuda: ARG CUDA_VERSION=13.0.1, docker/Dockerfile:6" in prose
    assert "version-arg: ARG ENGINE_VERSION=0.0.0.dev0, a placeholder" in prose


def test_what_a_dockerfile_says_is_escaped_where_it_is_written(tmp_path: Path) -> None:
    repo_at(tmp_path)
    (tmp_path / "Dockerfile").write_text(
        'ARG CUDA_VERSION=12.9.1\nARG BASE_IMAGE=a"b\\c\x7f\nARG PYTHON_VERSION="3.12\x1b"\n'
        "FROM ${BASE_IMAGE} AS st\x1bage\nFROM st\x1bage AS next\n"
    )
    run_init(tmp_path)
    text = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    assert "\x7f" not in text and "\x1b" not in text
    images = tomllib.loads(uncommented(text))["tool"]["release"]["images"]
    assert images["variants"][0]["base-image"] == 'a"b\\c\x7f'
    assert images["variants"][0]["cuda"] == "12.9.1"
    assert images["variants"][0]["target"] == "next"
    assert "python" not in images["variants"][0]  # "3.12\x1b" is no version: not proposed


def test_out_writes_the_table_to_a_new_file_outside_the_tree(tmp_path: Path) -> None:
    """``init --out FILE``: the guessed table in a file of its own, which ``--config``
    reads; the tree (its pyproject.toml with a table of its own too) is left as it was."""
    tree = tmp_path / "engine"
    repo = repo_at(tree)
    repo.run("tag", "v0.14.0-rc1")
    repo.run("branch", "release/0.14.0")
    (tree / "pyproject.toml").write_text('[tool.release]\nmain-branch = "trunk"\n')
    before = state(tree)
    out = tmp_path / "tried.toml"
    outcome = init(InitRequest(out=str(out)), Run(tree, lambda _: None))
    assert state(tree) == before
    assert outcome.path == str(out) and f"release --config {out} check" in "\n".join(outcome.text())
    written = tomllib.loads(out.read_text(encoding="utf-8"))["tool"]["release"]
    assert schema_problems(written) == []
    assert (written["branch"], written["rc-spelling"]) == ("release/{version}", "-rc{n}")
    first = out.read_bytes()
    assert first.startswith(b"# Written by release ")  # the file is the tool's, and says so
    init(InitRequest(out=str(out)), Run(tree, lambda _: None))  # unchanged: made again
    assert out.read_bytes() == first
    out.write_text(first.decode() + 'remote = "upstream"\n', encoding="utf-8")  # tried by hand
    edited = out.read_bytes()
    with pytest.raises(RefusedError, match=r"changed since release wrote it.*--force") as err:
        init(InitRequest(out=str(out)), Run(tree, lambda _: None))
    assert err.value.exit_code == 3 and out.read_bytes() == edited and state(tree) == before

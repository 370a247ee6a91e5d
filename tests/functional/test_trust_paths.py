"""Paths the tool is given, as an attacker would give them (DESIGN.md §11): nothing read
from a tag or a tree is followed out of the tree, and every output path is a regular file
in an existing directory. Each hole is shown through the CLI where a command meets it: one
line on stderr, the right exit code, the repository (and whatever lies outside it) as it
was. A FIFO never holds a command up (each run has a timeout, so a regression fails)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import invoke.vendor.yaml as yaml
import pytest

from release.adapters.files import output_path, read_tree_file, read_tree_text
from release.core.config import config_from_text
from release.core.json_text import parse_json
from release.core.manifest import PART_SCHEMA, ManifestError, loads
from release.core.matrix import parse_images
from release.core.pipelines import runner_label
from release.errors import ConfigError, UsageError
from release.flows import manifest_store
from release.flows.manifest_store import read_parts
from release.images.inputs import HashCache
from release.sample import SampleEngine
from tests.ci_support import PINNED, as_written, github_workflow, pipeline_text
from tests.conftest import repo_state, run_cli
from tests.engine_support import GUARDED_PYPROJECT
from tests.matrix_support import sample_table

USAGE, MANIFEST = 2, 7
FAST = 30  # seconds: a command that blocks on a FIFO fails the test instead of hanging it
DEEP = "[" * 100_000

# the pipelines release ci writes install the tool by a commit
PYPROJECT = GUARDED_PYPROJECT.replace(
    'dockerfile = "docker/Dockerfile"', 'dockerfile = "{dockerfile}"'
) + (f'\n[tool.release.ci]\ninstall = "{PINNED.requirement}"\n')


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout.strip()


NOXFILE = "from release.cli.nox_sessions import image_sessions\n\nimage_sessions()\n"


def engine_repo(
    tmp_path: Path,
    *,
    context: str = ".",
    dockerfile: str = "docker/Dockerfile",
    links: dict[str, str] | None = None,
    pyproject: str | None = None,
) -> Path:
    """An engine with an image matrix, committed and tagged v0.31.0rc1; ``links``: symlinks
    committed with it (path -> target)."""
    root = tmp_path / "engine"
    (root / "docker").mkdir(parents=True)
    (root / "docker" / "Dockerfile").write_text("FROM scratch\n", encoding="utf-8")
    text = pyproject or PYPROJECT.format(context=context, dockerfile=dockerfile)
    (root / "pyproject.toml").write_text(text, encoding="utf-8")
    (root / "noxfile.py").write_text(NOXFILE, encoding="utf-8")  # the sessions CI jobs run
    for path, target in (links or {}).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).symlink_to(target)
    git(root, "init", "--quiet", "--initial-branch=main")
    git(root, "add", "--all")
    git(root, "commit", "--quiet", "-m", "engine")
    git(root, "tag", "-a", "v0.31.0rc1", "-m", "v0.31.0rc1")
    return root


def host(tmp_path: Path) -> Path:
    """A directory outside the repository standing for the host's files (``/etc``)."""
    where = tmp_path / "host"
    where.mkdir(exist_ok=True)
    (where / "passwd").write_text("root:x:0:0::/root:/bin/sh\n", encoding="utf-8")
    (where / "pyproject.toml").write_text('[tool.release]\nremote = "host"\n', encoding="utf-8")
    (where / "Dockerfile").write_text("FROM host\n", encoding="utf-8")
    return where


def listing(root: Path) -> dict[str, object]:
    """Every entry under ``root``: its type, and a regular file's bytes."""
    out: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        out[str(path.relative_to(root))] = (
            path.read_bytes() if stat.S_ISREG(st.st_mode) else stat.S_IFMT(st.st_mode)
        )
    return out


def device(path: Path) -> Path:
    """A character device like ``/dev/null`` (1, 3), made here: the real one is never touched."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root")
    return path


@contextlib.contextmanager
def unix_socket(path: Path) -> Iterator[Path]:
    """A socket bound at ``path``, by its name from its directory (a socket's path is short)."""
    with socket.socket(socket.AF_UNIX) as sock:
        cwd = Path.cwd()
        os.chdir(path.parent)
        try:
            sock.bind(path.name)
        finally:
            os.chdir(cwd)
        yield path


def one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{stderr}"
    assert lines[0].startswith("error: ") and "Traceback" not in stderr, lines[0]
    return lines[0]


def refused(root: Path, *args: str, code: int, says: str, env: dict[str, str] | None = None) -> str:
    """``release ARGS`` refuses in one line saying ``says``, and changes nothing."""
    before = repo_state(root)
    result = run_cli(root, *args, env=env, timeout=FAST)
    line = one_line(result.stderr)
    assert result.code == code, f"exit {result.code}, expected {code}: {line}"
    assert says in line, line
    assert repo_state(root) == before
    return line


# -- reading a file of the tree ------------------------------------------------------------


def test_a_committed_pyproject_symlink_out_of_the_tree_is_not_the_config(
    tmp_path: Path,
) -> None:
    outside = host(tmp_path)
    root = engine_repo(tmp_path)
    (root / "pyproject.toml").unlink()
    (root / "pyproject.toml").symlink_to(outside / "pyproject.toml")
    git(root, "commit", "--quiet", "-am", "config elsewhere")
    line = refused(root, "status", code=USAGE, says="pyproject.toml leads outside the work tree")
    assert str(outside / "pyproject.toml") in line
    (root / "pyproject.toml").unlink()
    (root / "pyproject.toml").symlink_to("/dev/zero")  # read whole, a MemoryError once
    refused(root, "status", code=USAGE, says="leads outside the work tree (/dev/zero)")


def test_a_pyproject_symlink_inside_the_tree_is_read(tmp_path: Path) -> None:
    root = engine_repo(tmp_path)
    (root / "config").mkdir()
    (root / "pyproject.toml").rename(root / "config" / "pyproject.toml")
    (root / "pyproject.toml").symlink_to("config/pyproject.toml")
    result = run_cli(root, "images.matrix", timeout=FAST)
    assert result.code == 0, result.stderr
    assert "release-test/guarded:v{version}" in result.stdout


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_a_pyproject_that_is_no_regular_file_is_refused_without_blocking(
    tmp_path: Path, kind: str
) -> None:
    root = engine_repo(tmp_path)
    target = root / "special"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "device":
        device(target)
    else:
        target.mkdir()
    (root / "pyproject.toml").unlink()
    (root / "pyproject.toml").symlink_to("special")
    says = {"fifo": "a FIFO", "device": "a device", "directory": "a directory"}[kind]
    refused(root, "status", code=USAGE, says=f"pyproject.toml is {says}, not a regular file")


def test_a_pyproject_nested_too_deeply_is_a_config_error(tmp_path: Path) -> None:
    root = engine_repo(tmp_path)
    (root / "pyproject.toml").write_text("x = " + DEEP, encoding="utf-8")
    refused(root, "status", code=USAGE, says="pyproject.toml: not valid TOML: nested too deeply")
    with pytest.raises(ConfigError, match="nested too deeply"):
        config_from_text("[tool.release]\nbots = " + DEEP)


@pytest.mark.parametrize("key", ["picks-file", "changelog"])
def test_a_picks_file_or_changelog_that_is_a_fifo_never_blocks(tmp_path: Path, key: str) -> None:
    text = PYPROJECT.format(context=".", dockerfile="docker/Dockerfile")
    text = text.replace('main-branch = "main"', f'main-branch = "main"\n{key} = "notes/file.txt"')
    root = engine_repo(tmp_path, pyproject=text)
    (root / "notes").mkdir()
    if key == "changelog":  # a file the tool writes is never a symlink
        os.mkfifo(root / "notes" / "file.txt")
    else:
        os.mkfifo(root / "notes" / "real")
        (root / "notes" / "file.txt").symlink_to("real")  # inside the tree: still a FIFO
    refused(root, "status", code=USAGE, says="not a regular file")


def test_read_tree_file_refuses_what_is_not_a_file_of_the_tree(tmp_path: Path) -> None:
    outside = host(tmp_path)
    root = tmp_path / "tree"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "ok.txt").write_text("ok\n", encoding="utf-8")
    (root / "inside").symlink_to("sub/ok.txt")
    (root / "out").symlink_to(outside / "passwd")
    (root / "via").symlink_to(outside)  # a directory component leading out
    os.mkfifo(root / "fifo")
    device(root / "null")
    with unix_socket(root / "sock"):
        cases = {
            "out": "leads outside the work tree",
            "via/passwd": "leads outside the work tree",
            "sub/../../host/passwd": "leads outside the work tree",
            "fifo": "is a FIFO",
            "null": "is a device",
            "sock": "is a socket",
            "sub": "is a directory",
        }
        for rel, says in cases.items():
            with pytest.raises(UsageError, match=says):
                read_tree_file(root, rel, rel)
    assert read_tree_file(root, "inside", "inside") == b"ok\n"
    assert read_tree_file(root, "sub/missing", "missing") is None
    with pytest.raises(UsageError, match="3 bytes, more than the 2 read here"):
        read_tree_file(root, "sub/ok.txt", "small", limit=2)
    (root / "bad.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        read_tree_text(root, "bad.txt", "bad.txt", error=ConfigError)


# -- the context and the Dockerfile --------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("context", "/etc", "must be a path inside the work tree"),
        ("context", "~/src", "must be a path inside the work tree"),
        ("context", "../other", "leads out of the work tree"),
        ("dockerfile", "docker/../../Dockerfile", "leads out of the work tree"),
        ("dockerfile", "/etc/passwd", "must be a path inside the work tree"),
        ("context", ".git", "inside the git directory"),
        ("dockerfile", "docker/Docker\nfile", "not a usable file name"),
        ("context", "a\0b", "not a usable file name"),
    ],
)
def test_context_and_dockerfile_are_validated_on_load(key: str, value: str, says: str) -> None:
    table = sample_table()
    table[key] = value
    with pytest.raises(ConfigError) as caught:
        parse_images(table)
    assert f"[tool.release.images] {key}: {value!r}" in str(caught.value)
    assert says in str(caught.value)


def test_bake_with_an_absolute_context_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    root = engine_repo(tmp_path, context="/etc")
    out = tmp_path / "docker-bake.json"
    refused(root, "bake", "--out", str(out), code=USAGE, says="context: '/etc' must be a path")
    assert not out.exists()


@pytest.mark.parametrize(
    ("links", "context", "dockerfile", "says"),
    [
        ({"docker-host": "{host}"}, "docker-host", "docker/Dockerfile", "context 'docker-host'"),
        ({"up": "{host}"}, ".", "up/Dockerfile", "dockerfile 'up/Dockerfile'"),
        ({"Dockerfile": "{host}/Dockerfile"}, ".", "Dockerfile", "dockerfile 'Dockerfile'"),
    ],
    ids=["context-symlink", "dockerfile-directory-symlink", "dockerfile-symlink"],
)
def test_a_committed_symlink_out_of_the_tree_is_no_build_input(
    tmp_path: Path, links: dict[str, str], context: str, dockerfile: str, says: str
) -> None:
    outside = host(tmp_path)
    links = {path: target.format(host=outside) for path, target in links.items()}
    root = engine_repo(tmp_path, context=context, dockerfile=dockerfile, links=links)
    out = tmp_path / "docker-bake.json"
    before = listing(outside)
    no_engine = {"DOCKER": str(tmp_path / "no-docker")}  # refused before any engine is asked
    for args in (("bake", "--out", str(out)), ("images.build",), ("images.smoke",)):
        line = refused(
            root, *args, code=USAGE, says=f"{says} leads outside the work tree", env=no_engine
        )
        assert str(outside) in line
    assert not out.exists()
    assert listing(outside) == before


def test_a_dockerfile_or_dockerignore_that_is_no_regular_file_is_refused(tmp_path: Path) -> None:
    root = engine_repo(tmp_path, dockerfile="docker/Dockerfile.fifo")
    os.mkfifo(root / "docker" / "Dockerfile.fifo")
    out = tmp_path / "docker-bake.json"
    refused(root, "bake", "--out", str(out), code=USAGE, says="is a FIFO, not a regular file")
    root = engine_repo(tmp_path / "second", links={".dockerignore": "/dev/zero"})
    refused(root, "bake", "--out", str(out), code=USAGE, says="leads outside the work tree")
    assert not out.exists()


def test_bake_writes_the_matrix_paths_never_a_host_path(tmp_path: Path) -> None:
    root = engine_repo(tmp_path, context="docker", dockerfile="docker/Dockerfile")
    (root / "docker" / "engine").symlink_to(".")  # a symlink that stays inside is fine
    out = tmp_path / "docker-bake.json"
    result = run_cli(root, "bake", "--out", str(out), "--allow-dirty", timeout=FAST)
    assert result.code == 0, result.stderr
    target = json.loads(out.read_text(encoding="utf-8"))["target"]["cu129"]
    assert (target["context"], target["dockerfile"]) == ("docker", "Dockerfile")
    assert str(tmp_path) not in out.read_text(encoding="utf-8")


# -- output paths --------------------------------------------------------------------------


def _special(kind: str) -> Callable[[Path], Path]:
    def make(path: Path) -> Path:
        if kind == "device":
            return device(path)
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "directory":
            path.mkdir()
        else:
            (path.parent / "elsewhere").write_text("not ours\n", encoding="utf-8")
            path.symlink_to(path.parent / "elsewhere")
        return path

    return make


SPECIAL = {
    "device": "is a device, not a regular file",
    "fifo": "is a FIFO, not a regular file",
    "directory": "is a directory, not a regular file",
    "symlink": "is a symbolic link; name the file itself",
}


@pytest.mark.parametrize("kind", sorted(SPECIAL))
def test_bake_and_ci_never_replace_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    root = engine_repo(tmp_path)
    made = tmp_path / "out"
    made.mkdir()
    bake_file = _special(kind)(made / "docker-bake.json")
    (made / "ci").mkdir()
    _special(kind)(made / "ci" / "pipeline.yml")
    before = listing(made)
    refused(root, "bake", "--out", str(bake_file), code=USAGE, says=SPECIAL[kind])
    refused(
        root,
        "ci",
        "--format",
        "buildkite",
        "--out",
        str(made / "ci"),
        code=USAGE,
        says=SPECIAL[kind],
    )
    assert listing(made) == before
    if kind == "device":
        assert stat.S_ISCHR(bake_file.lstat().st_mode)  # still the device, not a file


def test_a_missing_directory_is_an_error_not_made(tmp_path: Path) -> None:
    root = engine_repo(tmp_path)
    gone = tmp_path / "gone"
    refused(root, "bake", "--out", str(gone / "b.json"), code=USAGE, says="no directory")
    refused(root, "ci", "--format", "github", "--out", str(gone), code=USAGE, says="no directory")
    assert not gone.exists()


def test_ci_writes_its_default_places_in_the_repository_made_when_missing(tmp_path: Path) -> None:
    root = engine_repo(tmp_path)
    (root / "src").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    from_sub = run_cli(root / "src", "ci", "--format", "github", timeout=FAST)
    assert from_sub.code == 0, from_sub.stderr
    assert (root / ".github" / "workflows" / "images.yml").is_file()
    by_env = run_cli(
        elsewhere, "ci", "--format", "buildkite", env={"RELEASE_REPO": str(root)}, timeout=FAST
    )
    assert by_env.code == 0, by_env.stderr
    assert (root / ".buildkite" / "pipeline.yml").is_file()
    assert not list((root / "src").iterdir()) and not list(elsewhere.iterdir())


@pytest.mark.parametrize(("fmt", "directory"), [("github", ".github"), ("buildkite", ".buildkite")])
def test_ci_never_writes_through_a_committed_symlink_out_of_the_repository(
    tmp_path: Path, fmt: str, directory: str
) -> None:
    outside = host(tmp_path)
    (outside / "workflows").mkdir()
    root = engine_repo(tmp_path, links={directory: str(outside)})
    before = listing(outside)
    line = refused(root, "ci", "--format", fmt, code=USAGE, says="leads outside the repository")
    assert str(outside) in line
    named = refused(
        root, "ci", "--format", fmt, "--out", str(root / directory), code=USAGE, says="outside"
    )
    assert str(outside) in named
    assert listing(outside) == before


def test_output_path_takes_a_new_or_regular_file_in_a_directory(tmp_path: Path) -> None:
    (tmp_path / "old.json").write_text("{}\n", encoding="utf-8")
    assert output_path(tmp_path / "old.json", "--out") == tmp_path / "old.json"
    assert output_path(tmp_path / "new.json", "--out") == tmp_path / "new.json"
    deep = tmp_path / "a" / "b" / "c.yml"
    with pytest.raises(UsageError, match="no directory"):
        output_path(deep, "--out")
    assert output_path(deep, "--out", made=True) == deep and not deep.parent.exists()
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(UsageError, match="is not a directory"):
        output_path(tmp_path / "file" / "x.json", "--out", made=True)


def test_manifest_out_is_checked_before_the_parts_are_read(
    cut_engine_copy: SampleEngine,
) -> None:
    engine = cut_engine_copy
    engine.repo.run("tag", "-a", "v0.1.0rc1", "-m", "v0.1.0rc1")
    null = device(engine.root.parent / "null")
    refused(engine.root, "manifest", "--out", str(null), code=USAGE, says="is a device")
    gone = engine.root.parent / "gone" / "manifest.json"
    refused(engine.root, "manifest", "--out", str(gone), code=USAGE, says="no directory")
    assert stat.S_ISCHR(null.lstat().st_mode)


@pytest.mark.parametrize("kind", ["missing-directory", "directory", "device", "fifo"])
def test_notes_output_is_checked_before_the_notes_are_built(
    cut_engine_copy: SampleEngine, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RELEASE_REPO_CACHE", "1")  # a run that goes on keeps its notes
    monkeypatch.delenv("CI", raising=False)
    engine = cut_engine_copy
    where = engine.root.parent / "out"
    where.mkdir()
    target = where / "gone" / "notes.md"
    if kind != "missing-directory":
        target = _special(kind)(where / "notes.md")
    says = "no directory" if kind == "missing-directory" else SPECIAL[kind]
    refused(engine.root, "notes", "--out", str(target), code=USAGE, says=says)
    kept = run_cli(engine.root, "notes", "--out", str(where / "kept.md"), timeout=FAST)
    assert kept.code == 0, kept.stderr
    assert (where / "kept.md").read_text(encoding="utf-8").startswith("#")
    assert (engine.repo.git_dir / "release" / "notes").is_dir()  # what a refusal never wrote


# -- text in the generated YAML ------------------------------------------------------------

INJECTED = "ubuntu-latest\non: {push: {}}\nevil: true"


@pytest.mark.parametrize(
    "runner", [INJECTED, "a\rb", "a\u2028evil: 1", "\x1b[2J", " ", "${{ github.head_ref }}"]
)
def test_ci_runner_with_a_control_character_is_refused(tmp_path: Path, runner: str) -> None:
    root = engine_repo(tmp_path)
    refused(
        root,
        "ci",
        "--format",
        "github",
        "--runner",
        runner,
        code=USAGE,
        says="is not a runner label or queue name",
    )
    assert not (root / ".github").exists()
    with pytest.raises(UsageError):
        runner_label(runner, "--runner")


@pytest.mark.parametrize("line", ["\n", "\r", "\u2028", "\u2029", "\x85"])
def test_the_header_comment_stays_a_comment_whatever_it_carries(line: str) -> None:
    matrix = parse_images(sample_table())
    assert matrix is not None
    made = ["release", "ci", "--runner", f"x{line}evil: true{line}jobs: {{}}"]
    text = as_written(pipeline_text(matrix, "github"), made)
    parsed = yaml.safe_load(text)
    assert parsed == github_workflow(matrix)
    assert "evil" not in parsed
    header = text.split("\nname: ", 1)[0]
    assert all(row.startswith("#") for row in header.splitlines())


@pytest.mark.parametrize("line", ["\n", "\r", "\u2028", "\x85"])
def test_an_install_with_a_line_break_is_refused_and_writes_nothing(
    tmp_path: Path, line: str
) -> None:
    root = engine_repo(tmp_path)
    install = f"{PINNED.requirement}{line}evil: true"
    refused(root, "ci", "--format", "github", "--install", install, code=3, says="is not pinned")
    assert not (root / ".github").exists()


# -- manifest parts and JSON ---------------------------------------------------------------


def _parts(engine: SampleEngine) -> Path:
    engine.repo.run("tag", "-a", "v0.1.0rc1", "-m", "v0.1.0rc1")
    parts = engine.root.parent / "parts"
    parts.mkdir()
    return parts


@pytest.mark.parametrize("kind", ["fifo", "device", "symlink", "directory"])
def test_a_parts_entry_that_is_no_regular_file_is_refused_without_blocking(
    cut_engine_copy: SampleEngine, kind: str
) -> None:
    parts = _parts(cut_engine_copy)
    entry = parts / "job-1" / "cu130.build.json"
    entry.parent.mkdir()
    _special(kind)(entry)
    says = {"symlink": "a symbolic link, not a part"}.get(kind, SPECIAL[kind])
    line = refused(
        cut_engine_copy.root, "manifest", "--parts", str(parts), code=MANIFEST, says=says
    )
    assert str(entry) in line


def test_a_deeply_nested_part_is_one_line(cut_engine_copy: SampleEngine) -> None:
    parts = _parts(cut_engine_copy)
    (parts / "cu130.build.json").write_text(DEEP, encoding="utf-8")
    refused(
        cut_engine_copy.root, "manifest", "--parts", str(parts), code=MANIFEST, says="nested too"
    )


def test_read_parts_bounds_size_depth_and_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    part = tmp_path / "cu130.build.json"
    depth = 950  # parsed, and deeper than the schema's messages can show
    head = f'{{"schema": "{PART_SCHEMA}", "version": "0.1.0", "data": '
    part.write_text(head + "[" * depth + "]" * depth + "}", encoding="utf-8")
    with pytest.raises(ManifestError, match="nested too deeply"):
        read_parts([tmp_path], "0.1.0")
    part.write_text('{"schema": "other"}', encoding="utf-8")
    monkeypatch.setattr(manifest_store, "MAX_PART", 8)
    with pytest.raises(ManifestError, match="more than the 8 read here"):
        read_parts([tmp_path], "0.1.0")
    monkeypatch.undo()
    assert read_parts([tmp_path], "0.1.0") == []  # another kind of JSON: passed over
    part.unlink()
    with unix_socket(part), pytest.raises(ManifestError, match="is a socket"):
        read_parts([tmp_path], "0.1.0")


def test_a_deeply_nested_note_is_a_manifest_error(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    engine.repo.run("tag", "-a", "v0.1.0rc1", "-m", "v0.1.0rc1")
    engine.repo.run("notes", "--ref=refs/notes/release/v0.1.0rc1", "add", "-m", DEEP, "HEAD")
    result = run_cli(engine.root, "status", timeout=FAST)
    assert result.code == 0 and "Traceback" not in result.output, result.output
    assert "not a release manifest (nested too deep to read)" in result.stdout
    with pytest.raises(ManifestError, match="nested too deep"):
        loads(DEEP, "a note")


def test_json_read_back_by_the_tool_is_refused_or_dropped_when_nested_too_deeply(
    tmp_path: Path, cut_engine_copy: SampleEngine
) -> None:
    with pytest.raises(ValueError, match="nested too deeply"):
        parse_json(DEEP)
    hashes = tmp_path / "hashes.json"
    hashes.write_text(DEEP, encoding="utf-8")
    HashCache(hashes).save()  # a cache nested too deeply is no cache, not a crash
    engine = cut_engine_copy
    journal = engine.repo.git_dir / "release" / "tag.json"
    journal.parent.mkdir(exist_ok=True)
    journal.write_text(DEEP, encoding="utf-8")
    refused(engine.root, "tag", code=3, says="damaged")

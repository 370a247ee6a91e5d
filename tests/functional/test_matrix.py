"""The image matrix as data, without a Docker Engine: config validation, tags, the snapshot
rule, smoke checks, snapshot diffs and baselines, build inputs, and the nox sessions made
from the config."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from release.core.accelerator import Accelerator
from release.core.matrix import ImageMatrix, parse_images
from release.images.inputs import HashCache, context_files, input_digest
from release.images.schedule import read_durations, record_durations, schedule
from release.images.smoke_checks import shares_a_run, smoke_checks
from release.images.snapshot import diff_states, find_baseline
from release.images.source import BuildSource
from release.images.standin import standin_dockerfile
from tests.conftest import run_nox
from tests.matrix_support import SAMPLE, config_error, sample_table

ROOT = Path(__file__).resolve().parents[2]


def sample_matrix() -> ImageMatrix:
    matrix = parse_images(sample_table())
    assert matrix is not None
    return matrix


# -- validation ----------------------------------------------------------------


def test_the_sample_matrix_parses() -> None:
    matrix = sample_matrix()
    assert matrix.name == "example/tinyengine"
    assert matrix.ids == ("cu128", "cu129", "cu130")
    assert matrix.default_variant == "cu130"
    assert matrix.variant("cu129").accelerator == Accelerator("cuda", "12.9.1")
    assert matrix.version_arg == "ENGINE_VERSION"
    assert parse_images({}) is None


def test_duplicate_variant_ids_are_refused() -> None:
    table = sample_table()
    table["variants"][1]["id"] = "cu128"
    message = config_error(table)
    assert message.startswith("[tool.release.images] variants[cu128].id:")
    assert "duplicate variant id 'cu128'" in message


@pytest.mark.parametrize("cuda", ["twelve", "12.9.1-cuda", ""])
def test_a_cuda_version_that_is_not_a_version(cuda: str) -> None:
    table = sample_table()
    table["variants"][1]["cuda"] = cuda
    message = config_error(table)
    assert message.startswith("[tool.release.images] variants[cu129].cuda:")
    assert "not a version" in message or "non-empty string" in message


@pytest.mark.parametrize("spec", ["12.*", "!=12.*;", "not 12", "~=12"])
def test_a_snapshot_rule_that_is_not_a_specifier(spec: str) -> None:
    table = sample_table()
    table["snapshot"]["cuda"] = spec
    message = config_error(table)
    assert message.startswith("[tool.release.images] snapshot.cuda:")
    assert f"{spec!r} is not a version specifier" in message


@pytest.mark.parametrize(
    "name",
    [
        "Example/TinyEngine",
        "example/tiny engine",
        "example//engine",
        "example/tinyengine:v1",
        "-example/engine",
        "example/tinyengine\n",  # a pattern's $ matches before a final newline
    ],
)
def test_an_image_name_docker_would_reject(name: str) -> None:
    table = sample_table()
    table["name"] = name
    message = config_error(table)
    assert message.startswith("[tool.release.images] name:")
    assert "not an image name docker accepts" in message


def test_image_names_docker_accepts() -> None:
    for name in ("tinyengine", "example/tiny-engine", "registry.example.com:5000/org/tiny_engine"):
        table = sample_table()
        table["name"] = name
        matrix = parse_images(table)
        assert matrix is not None and matrix.name == name


@pytest.mark.parametrize("vid", ["cu/129", "-cu129", "cu 129", "cü129", "cu129\n"])
def test_a_variant_id_that_is_not_an_id(vid: str) -> None:
    table = sample_table()
    table["variants"][1]["id"] = vid
    message = config_error(table)
    assert message.startswith("[tool.release.images] variants[1].id:")
    assert "not a valid variant id" in message


def test_a_variant_id_that_makes_a_tag_docker_rejects() -> None:
    table = sample_table()
    long_id = "cu" + "9" * 130  # a valid id, but NAME:v0.0.0rc1-<id> is over docker's 128 chars
    table["variants"][1]["id"] = long_id
    message = config_error(table)
    assert message.startswith(f"[tool.release.images] variants[{long_id}].id:")
    assert "would be rejected by docker" in message


@pytest.mark.parametrize(
    ("where", "key", "expected"),
    [
        (
            "top",
            "defualt-variant",
            "[tool.release.images]: unknown key 'defualt-variant'; did you mean 'default-variant'?",
        ),
        (
            "variant",
            "base_image",
            "[tool.release.images] variants[cu129]: unknown key 'base_image'; "
            "did you mean 'base-image'?",
        ),
        (
            "snapshot",
            "runtim",
            "[tool.release.images] snapshot: unknown key 'runtim'; did you mean 'runtime'?",
        ),
        (
            "smoke",
            "pakage",
            "[tool.release.images] smoke: unknown key 'pakage'; did you mean 'package'?",
        ),
        (
            "variant",
            "zzz",
            "[tool.release.images] variants[cu129]: unknown key 'zzz'; known: id, cuda,",
        ),
    ],
)
def test_unknown_keys_with_did_you_mean(where: str, key: str, expected: str) -> None:
    table = sample_table()
    target = {
        "top": table,
        "variant": table["variants"][1],
        "snapshot": table["snapshot"],
        "smoke": table["smoke"],
    }[where]
    target[key] = "x"
    assert config_error(table).startswith(expected)


@pytest.mark.parametrize(
    "base",
    [
        "nvidia/CUDA:12.9.1-base-ubuntu22.04",
        "nvidia/cuda:12.9.1 base",
        "nvidia/cuda:",
        "nvidia/cuda@sha256:abc",
    ],
)
def test_a_bad_base_image_reference(base: str) -> None:
    table = sample_table()
    table["variants"][1]["base-image"] = base
    message = config_error(table)
    assert message.startswith("[tool.release.images] variants[cu129].base-image:")
    assert "not an image reference docker accepts" in message


def test_a_missing_base_image_names_the_variant_and_key() -> None:
    table = sample_table()
    del table["variants"][2]["base-image"]
    assert config_error(table) == (
        "[tool.release.images] variants[cu130].base-image: missing (required)"
    )


def test_smoke_checks_are_validated() -> None:
    table = sample_table()
    table["smoke"]["checks"] = [{"name": "x", "command": ["true"], "expect-output": "("}]
    where = "[tool.release.images] smoke.checks[0]"
    assert config_error(table).startswith(f"{where}.expect-output: bad regex")
    table["smoke"]["checks"] = [{"name": "x", "command": "true"}]
    assert config_error(table).startswith(f"{where}.command: expected a non-empty list")
    table["smoke"]["checks"] = [{"name": "x", "command": ["true"], "timeout": 0}]
    assert "expected a positive number of seconds" in config_error(table)


@pytest.mark.parametrize("value", [0, -5, "60", True, float("nan"), float("inf")])
def test_a_bad_heartbeat_is_refused_in_one_line(value: Any) -> None:
    table = sample_table()
    table["heartbeat"] = value
    assert config_error(table) == (
        "[tool.release.images] heartbeat: expected a positive number of seconds, got " + repr(value)
    )


def test_heartbeat_defaults_to_a_minute() -> None:
    assert sample_matrix().heartbeat == 60.0
    table = sample_table()
    table["heartbeat"] = 15
    matrix = parse_images(table)
    assert matrix is not None and matrix.heartbeat == 15.0


# -- tags and the snapshot rule ------------------------------------------------------


def test_tags_default_variant_bare_others_suffixed() -> None:
    m = sample_matrix()
    assert m.tag(m.variant("cu130"), "v0.31.0rc1") == "example/tinyengine:v0.31.0rc1"
    assert m.tag(m.variant("cu129"), "v0.31.0rc1") == "example/tinyengine:v0.31.0rc1-cu129"
    assert m.tag(m.variant("cu128"), "v0.31.0rc1") == "example/tinyengine:v0.31.0rc1-cu128"


def test_default_variant_defaults_to_the_last() -> None:
    table = sample_table()
    del table["default-variant"]
    matrix = parse_images(table)
    assert matrix is not None and matrix.default_variant == "cu130"
    table["default-variant"] = "cu999"
    assert "'cu999' is not a variant" in config_error(table)


def test_the_snapshot_rule_decides_build_args_and_sessions_together() -> None:
    matrix = sample_matrix()
    assert matrix.snapshot_ids() == ("cu130",)
    for v in matrix.variants:
        args = matrix.build_args_for(v, "0.31.0rc1")
        assert args["CUDA_VERSION"] == v.accelerator.version
        assert args["BASE_IMAGE"] == v.base_image
        assert args["ENGINE_VERSION"] == "0.31.0rc1"
        assert ("INSTALL_SNAPSHOT_RUNTIME" in args) is matrix.has_snapshot(v)
        assert matrix.has_snapshot(v) is (not v.accelerator.version.startswith("12."))
    assert matrix.build_args_for(matrix.variant("cu130"))["INSTALL_SNAPSHOT_RUNTIME"] == "1"
    assert "ENGINE_VERSION" not in matrix.build_args_for(matrix.variant("cu130"))


def test_the_snapshot_rule_follows_the_config() -> None:
    table = sample_table()
    table["snapshot"]["cuda"] = ">=12.9"
    table["variants"].append(
        {"id": "cu131rc", "cuda": "13.1.0rc1", "base-image": "nvidia/cuda:13.1.0-base"}
    )
    matrix = parse_images(table)
    assert matrix is not None
    assert matrix.snapshot_ids() == ("cu129", "cu130", "cu131rc")  # a pre-release CUDA counts
    assert "INSTALL_SNAPSHOT_RUNTIME" in matrix.build_args_for(matrix.variant("cu129"))
    assert "INSTALL_SNAPSHOT_RUNTIME" not in matrix.build_args_for(matrix.variant("cu128"))
    del table["snapshot"]
    matrix = parse_images(table)
    assert matrix is not None and matrix.snapshot_ids() == ()
    assert all("INSTALL_SNAPSHOT_RUNTIME" not in matrix.build_args_for(v) for v in matrix.variants)


def test_build_args_variant_overrides_matrix() -> None:
    table = sample_table()
    table["build-args"] = {"TORCH": "2.9", "JOBS": 4}
    table["variants"][0]["build-args"] = {"TORCH": "2.8"}
    table["variants"][0]["python"] = "3.12"
    matrix = parse_images(table)
    assert matrix is not None
    args = matrix.build_args_for(matrix.variant("cu128"))
    assert args["TORCH"] == "2.8" and args["JOBS"] == "4" and args["PYTHON_VERSION"] == "3.12"
    assert matrix.build_args_for(matrix.variant("cu129"))["TORCH"] == "2.9"
    assert list(args) == sorted(args)


# -- smoke checks (pure) --------------------------------------------------------------------


REVISION = "0123456789abcdef0123456789abcdef01234567"


def source(version: str = "0.31.0rc1") -> BuildSource:
    return BuildSource(Path("/src"), REVISION, 1_764_000_000, version, True)


def test_smoke_checks_for_a_variant() -> None:
    matrix = sample_matrix()
    entrypoint = ("python3", "-m", "tinyengine.server")
    checks = smoke_checks(matrix, matrix.variant("cu129"), source(), entrypoint)
    assert [c.name for c in checks] == [
        "tinyengine imports and reports 0.31.0rc1",
        "CUDA_VERSION is 12.9.1",
        "/usr/local/cuda/version.json says 12.9.1",
        "labels: version, revision, variant, CUDA",
        "entrypoint answers --help",
        "serves a completion",
        "GPU visible (nvidia-smi)",
    ]
    version, cuda_env, version_json, labels, help_check, serve, gpu = checks
    assert serve.serve is not None and serve.config == {} and not serve.gpu
    assert serve.serve.requests[-1].expect_json["choices.0.text"] == "three two"
    assert all(c.config["schemaVersion"] == "2.0.0" for c in checks[:-2])
    test = version.config["commandTests"][0]
    assert test["command"] == "python3" and test["exitCode"] == 0
    assert test["args"] == ["-c", "import tinyengine; print(tinyengine.__version__)"]
    pattern = test["expectedOutput"][0]
    assert re.search(pattern, "0.31.0rc1\n") and not re.search(pattern, "0.31.0rc10\n")
    env = cuda_env.config["metadataTest"]["envVars"][0]
    assert env["key"] == "CUDA_VERSION" and env["isRegex"]
    assert re.search(env["value"], "12.9.1") and not re.search(env["value"], "12.9.10")
    assert {(lab["key"], lab["value"]) for lab in labels.config["metadataTest"]["labels"]} == {
        ("org.opencontainers.image.version", "0.31.0rc1"),
        ("org.opencontainers.image.revision", REVISION),
        ("org.release.variant", "cu129"),
        ("org.release.cuda", "12.9.1"),
    }
    assert help_check.config["commandTests"][0]["command"] == "python3"
    assert help_check.config["commandTests"][0]["args"] == ["-m", "tinyengine.server", "--help"]
    assert gpu.gpu and gpu.argv == ("nvidia-smi",) and gpu.config == {}
    assert not any(c.gpu for c in checks[:-1])
    assert all(c.timeout == 60.0 for c in checks)
    assert shares_a_run(serve) is None  # it starts a server: never in a shared run
    # what the smoke check expects is what a stand-in base writes
    dockerfile = standin_dockerfile(
        "nvidia/cuda:12.9.1-base-ubuntu22.04", Accelerator("cuda", "12.9.1")
    )
    expected = version_json.config["fileContentTests"][0]["expectedContents"][0]
    assert re.search(expected, dockerfile.replace('\\"', '"'))
    assert "CUDA_VERSION=12.9.1" in dockerfile


def test_smoke_checks_from_config() -> None:
    table = sample_table()
    server_argv = ["python3", "-m", "tinyengine.server"]
    table["smoke"] = {
        "package": "tinyengine",
        "entrypoint-help": False,
        "timeout": 20,
        "env": {"PYTHONDONTWRITEBYTECODE": "1"},
        "gpu-command": ["nvidia-smi", "-L"],
        "checks": [
            {
                "name": "server answers",
                "command": [*server_argv, "x"],
                "expect-output": "serving x",
                "timeout": 5,
            },
            {
                "name": "kernel on GPU",
                "command": ["python3", "-c", "1"],
                "gpu": True,
                "expect-exit": 0,
            },
        ],
    }
    matrix = parse_images(table)
    assert matrix is not None
    checks = smoke_checks(matrix, matrix.variant("cu130"), source(), tuple(server_argv))
    names = [c.name for c in checks]
    assert "entrypoint answers --help" not in names
    assert names[-3:] == ["server answers", "kernel on GPU", "GPU visible (nvidia-smi -L)"]
    env = next(c for c in checks if c.name.startswith("env: "))
    assert env.config["metadataTest"]["envVars"] == [
        {"key": "PYTHONDONTWRITEBYTECODE", "value": "1"}
    ]
    server = checks[names.index("server answers")]
    assert server.timeout == 5 and not server.gpu
    assert server.config["commandTests"] == [
        {
            "name": "server answers",
            "command": "python3",
            "args": ["-m", "tinyengine.server", "x"],
            "exitCode": 0,
            "expectedOutput": ["serving x"],
        }
    ]
    assert checks[names.index("kernel on GPU")].gpu
    assert checks[names.index("CUDA_VERSION is 13.0.1")].timeout == 20


def test_no_package_no_version_check() -> None:
    table = sample_table()
    del table["smoke"]
    matrix = parse_images(table)
    assert matrix is not None
    names = [c.name for c in smoke_checks(matrix, matrix.variant("cu128"), source())]
    assert names == [
        "CUDA_VERSION is 12.8.1",
        "/usr/local/cuda/version.json says 12.8.1",
        "labels: version, revision, variant, CUDA",
        "GPU visible (nvidia-smi)",
    ]


# -- snapshot diffs and baselines ------------------------------------------------------------


def test_diff_states() -> None:
    old = {
        "os": {"id": "debian"},
        "python": {"packages": {"numpy": "2.0", "torch": "2.8"}},
        "driver": "no GPU",
        "libraries": {"/usr/lib/libc.so.6": "aa"},
    }
    new = copy.deepcopy(old)
    assert diff_states(old, new) == []
    new["python"]["packages"]["torch"] = "2.9"
    del new["python"]["packages"]["numpy"]
    new["libraries"]["/usr/lib/libcuda.so.1"] = "bb"
    new["driver"] = "575.51"
    assert diff_states(old, new) == [
        "changed driver: no GPU -> 575.51",
        "added   libraries./usr/lib/libcuda.so.1 = bb",
        "removed python.packages.numpy (was 2.0)",
        "changed python.packages.torch: 2.8 -> 2.9",
    ]


def record(store: Path, version: str, variant: str) -> Path:
    path = store / version / f"{variant}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": version, "state": {}}), encoding="utf-8")
    return path


def test_find_baseline(tmp_path: Path) -> None:
    store = tmp_path / "snapshots"
    assert find_baseline(store, "cu130", "0.1.0rc1") is None  # no store yet
    rc1 = record(store, "0.1.0rc1", "cu130")
    rc2 = record(store, "0.1.0rc2", "cu130")
    rc10 = record(store, "0.1.0rc10", "cu130")
    final = record(store, "0.1.0", "cu130")
    record(store, "0.1.0rc3", "cu129")  # another variant
    (store / "not-a-version").mkdir()
    (store / "not-a-version" / "cu130.json").write_text("{}")
    assert find_baseline(store, "cu130", "0.1.0rc1") is None
    assert find_baseline(store, "cu130", "0.1.0rc2") == rc1
    assert find_baseline(store, "cu130", "0.1.0rc3") == rc2
    assert find_baseline(store, "cu130", "0.1.0rc11") == rc10  # versions, not strings
    assert find_baseline(store, "cu130", "0.1.1rc1") == final
    assert find_baseline(store, "cu130", "0.1.0") == rc10
    assert find_baseline(store, "cu128", "0.2.0") is None
    assert find_baseline(store, "cu130", "not a version") is None


# -- build inputs ----------------------------------------------------------------------------


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


IGNORE = "# comment\n**/__pycache__\n*.pyc\n.git\ndocs\n!docs/keep.md\nbuild/**/*.o\ndocker/\n"


def make_context(root: Path) -> Path:
    write(
        root,
        {
            ".dockerignore": IGNORE,
            "docker/Dockerfile": "FROM scratch\n",
            "docker/notes.txt": "ignored with its directory\n",
            "engine/__init__.py": "x = 1\n",
            "engine/__pycache__/__init__.cpython-311.pyc": "bytecode",
            "engine/mod.pyc": "nested .pyc: *.pyc matches at the root only\n",
            "top.pyc": "root .pyc\n",
            "docs/index.md": "ignored\n",
            "docs/keep.md": "re-included\n",
            "build/a/b/x.o": "ignored\n",
            "build/a/x.c": "kept\n",
            ".git/HEAD": "ref: refs/heads/main\n",
            "README.md": "hello\n",
        },
    )
    return root


def test_context_files_honour_dockerignore(tmp_path: Path) -> None:
    context = make_context(tmp_path / "ctx")
    dockerfile = context / "docker" / "Dockerfile"
    names = [p.relative_to(context).as_posix() for p in context_files(context)]
    assert names == [
        ".dockerignore",
        "README.md",
        "build/a/x.c",
        "docs/keep.md",
        "engine/__init__.py",
        "engine/mod.pyc",
    ]
    # docker always sends the Dockerfile, even an ignored one
    sent = [p.relative_to(context).as_posix() for p in context_files(context, dockerfile)]
    assert sent == sorted([*names, "docker/Dockerfile"])


def test_context_files_without_dockerignore(tmp_path: Path) -> None:
    write(tmp_path, {"a.txt": "a", "sub/b.txt": "b"})
    names = [p.relative_to(tmp_path).as_posix() for p in context_files(tmp_path)]
    assert names == ["a.txt", "sub/b.txt"]


def digest_of(context: Path, **changes: Any) -> str:
    inputs: dict[str, Any] = {
        "dockerfile": context / "docker" / "Dockerfile",
        "build_args": {"CUDA_VERSION": "12.9.1", "ENGINE_VERSION": "0.1.0rc1"},
        "base_identity": "sha256:" + "1" * 64,
        "labels": {"org.release.variant": "cu129"},
        "platform": None,
    }
    inputs.update(changes)
    return input_digest(context, **inputs)


def test_input_digest_changes_with_every_input(tmp_path: Path) -> None:
    context = make_context(tmp_path / "ctx")
    first = digest_of(context)
    assert first.startswith("sha256:") and digest_of(context) == first
    seen = {first}

    def changed(digest: str) -> None:
        assert digest not in seen
        seen.add(digest)

    changed(digest_of(context, build_args={"CUDA_VERSION": "12.9.1", "ENGINE_VERSION": "0.1.0rc2"}))
    changed(digest_of(context, base_identity="sha256:" + "2" * 64))
    changed(digest_of(context, labels={"org.release.variant": "cu129", "org.release.cuda": "x"}))
    changed(digest_of(context, platform="linux/arm64"))
    (context / "engine" / "__init__.py").write_text("x = 2\n")
    changed(digest_of(context))
    os.chmod(context / "engine" / "__init__.py", 0o755)
    changed(digest_of(context))
    (context / "engine" / "new.py").write_text("")
    changed(digest_of(context))
    # ignored by .dockerignore, but it is the Dockerfile
    (context / "docker" / "Dockerfile").write_text("FROM scratch\nLABEL a=b\n")
    changed(digest_of(context))
    (context / "docs" / "keep.md").write_text("changed\n")
    changed(digest_of(context))


def test_input_digest_ignores_ignored_files(tmp_path: Path) -> None:
    context = make_context(tmp_path / "ctx")
    first = digest_of(context)
    (context / "docs" / "index.md").write_text("changed\n")
    (context / "engine" / "__pycache__" / "new.cpython-311.pyc").write_text("more bytecode")
    (context / "top.pyc").write_text("changed")
    (context / "docker" / "notes.txt").write_text("changed")
    (context / "build" / "a" / "b" / "y.o").write_text("new")
    (context / ".git" / "HEAD").write_text("ref: refs/heads/other\n")
    assert digest_of(context) == first


def test_input_digest_with_the_hash_cache_is_the_same(tmp_path: Path) -> None:
    context = make_context(tmp_path / "ctx")
    past = 1_600_000_000_000_000_000  # old enough to be cached
    for path in context.rglob("*"):
        os.utime(path, ns=(past, past))
    record = tmp_path / "hashes.json"

    def cached() -> str:
        cache = HashCache(record)
        digest = digest_of(context, cache=cache)
        cache.save()
        return digest

    plain = digest_of(context)
    assert cached() == plain  # cold: everything hashed, then recorded
    files = json.loads(record.read_text())["files"]
    assert "engine/__init__.py" in files and "docs/index.md" not in files
    assert cached() == plain  # warm: from the record
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctx", "hashes.json"]  # no temporary

    # the same size, a new mtime: read again, not taken from the record
    module = context / "engine" / "__init__.py"
    module.write_text("x = 2\n")
    os.utime(module, ns=(past + 1, past + 1))
    changed = digest_of(context)
    assert changed != plain
    assert cached() == changed
    assert json.loads(record.read_text())["files"]["engine/__init__.py"][1] == past + 1

    # a recorded hash is trusted while its key matches, and only then
    data = json.loads(record.read_text())
    data["files"]["engine/__init__.py"][3] = "0" * 64
    record.write_text(json.dumps(data))
    assert digest_of(context, cache=HashCache(record)) != changed  # (proves it is read)
    data["files"]["engine/__init__.py"][2] += 1  # another inode
    record.write_text(json.dumps(data))
    assert cached() == changed

    for corrupt in ("{not json", "[1, 2]", '{"version": 1, "files": {"engine/__init__.py": 3}}'):
        record.write_text(corrupt)
        assert digest_of(context, cache=HashCache(record)) == changed
    # entries whose key matches but whose digest is no sha256 are read again, not trusted
    cached()
    good = json.loads(record.read_text())
    for digest in ("g" * 64, "0" * 63, "A" * 64, 7):
        data = json.loads(json.dumps(good))
        data["files"]["engine/__init__.py"][3] = digest
        record.write_text(json.dumps(data))
        assert digest_of(context, cache=HashCache(record)) == changed, digest
    assert digest_of(context, cache=HashCache(tmp_path / "missing" / "hashes.json")) == changed
    HashCache(tmp_path / "missing" / "hashes.json").save()  # an unwritable record is no error


def test_input_digest_ignores_the_tools_own_logs(tmp_path: Path) -> None:
    """A context with .git in it (no .dockerignore): build logs written there must not
    make every build look changed."""
    write(tmp_path, {"Dockerfile": "FROM scratch\n", "app.py": "print(1)\n", ".git/HEAD": "ref\n"})

    def digest() -> str:
        return input_digest(tmp_path, tmp_path / "Dockerfile", {}, "sha256:" + "1" * 64, {}, None)

    first = digest()
    write(
        tmp_path,
        {
            ".git/release/logs/build-cu129.log": "#1 done\n",
            ".git/release/logs/build-cu129.iid": "sha256:1",
        },
    )
    assert digest() == first
    (tmp_path / "app.py").write_text("print(2)\n")
    assert digest() != first


# -- build order ----------------------------------------------------------------------------------


def test_builds_start_longest_first() -> None:
    matrix = sample_matrix()

    def order(durations: dict[str, float]) -> list[str]:
        return [v.id for v in schedule(matrix, matrix.variants, durations)]

    # no record: the variant with the snapshot step (the heavy build) first
    assert order({}) == ["cu130", "cu128", "cu129"]
    assert order({"cu128": 5.0, "cu129": 40.0, "cu130": 20.0}) == ["cu129", "cu130", "cu128"]
    # a variant with no record yet (a first, cold build) before those with one
    assert order({"cu130": 50.0, "cu129": 3.0}) == ["cu128", "cu130", "cu129"]
    # ties: the snapshot step first, else the matrix order
    assert order({"cu128": 2.0, "cu129": 2.0, "cu130": 2.0}) == ["cu130", "cu128", "cu129"]
    assert order({"cu128": 2.0, "cu129": 2.0, "cu130": 1.0}) == ["cu128", "cu129", "cu130"]
    # only the variants asked for
    assert [v.id for v in schedule(matrix, matrix.variants[:2], {"cu128": 1.0})] == [
        "cu129",
        "cu128",
    ]


def test_build_durations_are_recorded_and_merged(tmp_path: Path) -> None:
    assert read_durations(tmp_path) == {}
    record_durations(tmp_path, {"cu130": 12.34567})
    record_durations(tmp_path, {"cu128": 1.5})
    record_durations(tmp_path, {})
    assert read_durations(tmp_path) == {"cu130": 12.346, "cu128": 1.5}
    assert [p.name for p in tmp_path.iterdir()] == ["durations.json"]  # no temporary left
    (tmp_path / "durations.json").write_text("{not json")
    assert read_durations(tmp_path) == {}
    (tmp_path / "durations.json").write_text('{"cu128": "x", "cu129": -1, "cu130": 4, "a": true}')
    assert read_durations(tmp_path) == {"cu130": 4.0}
    (tmp_path / "durations.json").write_text("[1, 2]")
    assert read_durations(tmp_path) == {}
    record_durations(tmp_path / "missing", {"cu128": 1.0})  # an unwritable record is no error


# -- nox sessions and the matrix task -------------------------------------------------------------

IMAGE_SESSIONS = [
    "build(cu128)",
    "build(cu129)",
    "build(cu130)",
    "smoke(cu128)",
    "smoke(cu129)",
    "smoke(cu130)",
    "snapshot(cu130)",
]


def listed(text: str) -> list[str]:
    return [m[1] for m in re.finditer(r"^[*-] (\S+)", text, re.MULTILINE)]


def test_nox_lists_the_image_sessions_from_config() -> None:
    proc = run_nox(ROOT, "-l")
    assert proc.returncode == 0, proc.stderr
    sessions = listed(proc.stdout)
    image_sessions = [s for s in sessions if s.startswith(("build(", "smoke(", "snapshot("))]
    assert image_sessions == IMAGE_SESSIONS
    assert "snapshot(cu128)" not in sessions and "snapshot(cu129)" not in sessions
    assert "- build(cu129) [images,cu129] -> Build the variant's image" in proc.stdout
    assert "(only where CUDA !=12.*)" in proc.stdout
    assert "* tests" in proc.stdout  # image sessions are not run by default, tests is


def test_an_image_sessions_posargs_are_its_commands_options_and_no_others() -> None:
    """A session's posargs are parsed by ``images.<kind>``'s own declaration: an option the
    command does not offer (snapshot has no --force) is refused naming the command, and the
    session's variant cannot be moved by --variant; an offered one reaches the command (here
    it stops at the engine that is not there, past the parsing)."""
    from release.commands.registry import by_name

    assert "force" not in {o.name for o in by_name()["images.snapshot"].options}
    refused = run_nox(ROOT, "-s", "snapshot(cu130)", "--", "--force")
    assert refused.returncode != 0
    assert "posargs: unknown option --force for images.snapshot" in refused.stderr
    moved = run_nox(ROOT, "-s", "snapshot(cu130)", "--", "--variant", "cu128")
    assert moved.returncode != 0
    assert "posargs: the session runs cu130; run another session, not --variant" in moved.stderr
    env = {"DOCKER_HOST": "unix:///nonexistent.sock"}
    offered = subprocess.run(
        [sys.executable, "-m", "nox", "-s", "snapshot(cu130)", "--", "--dry-run"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, env={**os.environ, **env},
    )  # fmt: skip
    assert offered.returncode != 0 and "posargs" not in offered.stderr
    assert "no Docker Engine is reachable" in offered.stderr


def test_nox_json_by_tag() -> None:
    proc = run_nox(ROOT, "-l", "--json", "-t", "images")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [s["session"] for s in data] == IMAGE_SESSIONS
    for s in data:
        variant = s["call_spec"]["variant"]
        assert s["session"] == f"{s['name']}({variant})"
        assert s["tags"] == ["images", variant] and s["python"] is False
    proc = run_nox(ROOT, "-l", "--json", "-t", "cu129")
    assert [s["session"] for s in json.loads(proc.stdout)] == ["build(cu129)", "smoke(cu129)"]


def test_nox_sessions_follow_an_engines_own_rule(tmp_path: Path) -> None:
    """An engine repository's noxfile gets its sessions from its own [tool.release.images]."""
    text = (SAMPLE / "pyproject.toml").read_text(encoding="utf-8")
    assert 'cuda = "!=12.*"' in text
    (tmp_path / "pyproject.toml").write_text(text.replace('cuda = "!=12.*"', 'cuda = ">=12.9"'))
    (tmp_path / "noxfile.py").write_text(
        "from release.cli.nox_sessions import image_sessions\n\nimage_sessions()\n"
    )
    proc = run_nox(tmp_path, "-l", "--json", "-t", "images")
    assert proc.returncode == 0, proc.stderr
    assert [s["session"] for s in json.loads(proc.stdout)] == [
        "build(cu128)",
        "build(cu129)",
        "build(cu130)",
        "smoke(cu128)",
        "smoke(cu129)",
        "smoke(cu130)",
        "snapshot(cu129)",
        "snapshot(cu130)",
    ]


def test_images_matrix_task() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "release", "images.matrix", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["image"] == "example/tinyengine" and data["default_variant"] == "cu130"
    rows = {row["id"]: row for row in data["variants"]}
    assert rows["cu129"]["tag"] == "example/tinyengine:v{version}-cu129"
    assert rows["cu130"]["tag"] == "example/tinyengine:v{version}"
    assert [rows[i]["snapshot"] for i in ("cu128", "cu129", "cu130")] == [False, False, True]
    assert rows["cu130"]["sessions"] == ["build(cu130)", "smoke(cu130)", "snapshot(cu130)"]
    assert rows["cu129"]["sessions"] == ["build(cu129)", "smoke(cu129)"]
    assert rows["cu130"]["build_args"]["INSTALL_SNAPSHOT_RUNTIME"] == "1"
    assert "INSTALL_SNAPSHOT_RUNTIME" not in rows["cu128"]["build_args"]
    assert rows["cu130"]["accelerator"] == {"kind": "cuda", "version": "13.0.1"}
    assert rows["cu130"]["cuda"] == "13.0.1"
    assert rows["cu130"]["dockerfile"] == "release/sample/engine/docker/Dockerfile"
    assert (rows["cu130"]["context"], rows["cu130"]["target"]) == ("release/sample/engine", "")


def test_context_files_in_pathlib_order_without_entering_ignored_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    context = tmp_path / "ctx"
    write(
        context,
        {
            ".dockerignore": ".git\nbuild\n",
            ".git/objects/ab/cdef": "an object",
            "build/Dockerfile": "FROM scratch\n",
            "build/out.o": "ignored",
            "a-b/x": "1",
            "a/b": "2",
            "a.b": "3",
            "real/inside.txt": "4",
        },
    )
    (context / "link").symlink_to("real", target_is_directory=True)  # a file here: not followed
    (context / "dangling").symlink_to("nowhere")
    dockerfile = context / "build" / "Dockerfile"
    scanned: list[str] = []
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:
        scanned.append(Path(path).relative_to(context).as_posix())
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    names = [p.relative_to(context).as_posix() for p in context_files(context, dockerfile)]
    monkeypatch.undo()
    # what pathlib's rglob, sorted, gives with the same rules (the order the digest hashes)
    everything = sorted(context.rglob("*"))
    kept = [p for p in everything if p.is_file() or p.is_symlink()]
    expected = [
        p.relative_to(context).as_posix()
        for p in kept
        if p == dockerfile or not p.relative_to(context).as_posix().startswith((".git", "build"))
    ]
    assert names == expected
    assert "link" in names and "real/inside.txt" in names and "build/Dockerfile" in names
    assert not any(s.startswith((".git", "build")) for s in scanned)  # pruned, never walked

"""Engine repositories for image tests: small engines of our own (:func:`make_engine_repo`:
a Dockerfile that fails or sleeps on a build arg, variants and smoke checks as asked),
the sample engine under an image name of its own (the fixture ``sample``, registered
by conftest), an engine built once for a module (:func:`built_engine`), and what image
tests read of a run's output and of the processes left running."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from release.adapters.engine import ContainerEngine
from release.sample import make_sample_engine
from tests.conftest import CliResult, run_cli
from tests.docker_support import image_env, need_emulation, purge, unique_name

images = pytest.mark.images
NOTHING_LEFT = {"containers": [], "dangling images": []}
BASE_1291 = "nvidia/cuda:12.9.1-base-ubuntu22.04"
VERSION = "v0.1.0"  # the tag make_engine_repo puts on its one commit
BOTH = ["linux/amd64", "linux/arm64"]


@dataclass
class Repo:
    root: Path
    name: str  # image name
    env: dict[str, str]

    def release(self, *args: str, timeout: float = 300, **env: str) -> CliResult:
        return run_cli(self.root, *args, env={**self.env, **env}, timeout=timeout)

    def nox(self, *args: str, timeout: float = 300, **env: str) -> CliResult:
        proc = subprocess.run(
            [sys.executable, "-m", "nox", *args],
            cwd=self.root,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        return CliResult(proc.returncode, proc.stdout, proc.stderr)

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=self.root, env=self.env, capture_output=True, text=True, check=True
        ).stdout.strip()

    @property
    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    @property
    def state(self) -> Path:
        return self.root / ".git" / "release"


def check_lines(output: str, status: str) -> list[str]:
    """Names of smoke checks reported with ``status`` (passed, failed, timed out, not run)."""
    return [m[1] for m in re.finditer(rf"^  {status} +(.+?) \(\d+\.\d+s\)", output, re.MULTILINE)]


def smoke_section(output: str, variant: str) -> str:
    """One variant's smoke report: its header line to its verdict line."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"smoke({variant}): "))
    end = next(
        i for i in range(start + 1, len(lines)) if lines[i].startswith(f"smoke({variant}): ")
    )
    return "\n".join(lines[start : end + 1])


def processes_with(text: str) -> list[str]:
    """Command lines of running processes that contain ``text``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(cmdline.strip())
    return found


ENGINE_DOCKERFILE = """\
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG FAIL=0
ARG SLOW=0
ARG NONCE=0
RUN echo "nonce ${NONCE}" > /nonce \\
    && if [ "${FAIL}" = "1" ]; then echo "this step fails on purpose" >&2; exit 3; fi
RUN if [ "${SLOW}" != "0" ]; then echo "slow step: sleeping ${SLOW}s"; sleep "${SLOW}"; fi
"""


def toml_value(value: Any) -> str:
    if isinstance(value, dict):
        pairs = (f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items())
        return "{ " + ", ".join(pairs) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)


def make_engine_repo(
    root: Path,
    home: Path,
    *,
    variants: list[dict[str, Any]],
    checks: list[dict[str, Any]],
    default: str,
    dockerignore: bool = True,
    remote: str | None = None,
    files: dict[str, str] | None = None,
    tables: str = "",
) -> Repo:
    """A small engine repository of our own: its Dockerfile fails or sleeps on a build arg.
    Without ``dockerignore`` its build context includes ``.git`` (where the build logs go).
    ``files``: more files (or another Dockerfile), by path; ``tables``: more of the
    config (TOML)."""
    name = unique_name()
    lines = [
        '[project]\nname = "testengine"\nversion = "0.0.0"\n',
        '[tool.release]\nmain-branch = "main"\n',
        "[tool.release.images]",
        f'name = "{name}"\ndockerfile = "docker/Dockerfile"\ndefault-variant = "{default}"',
        f'build-args = {{ NONCE = "{uuid.uuid4().hex}" }}\n',  # no layer cache from other runs
    ]
    for variant in variants:
        lines.append("[[tool.release.images.variants]]")
        lines += [f"{key} = {toml_value(value)}" for key, value in variant.items()]
        lines.append("")
    lines.append("[tool.release.images.smoke]\nentrypoint-help = false\ntimeout = 60\n")
    for check in checks:
        lines.append("[[tool.release.images.smoke.checks]]")
        lines += [f"{key} = {toml_value(value)}" for key, value in check.items()]
        lines.append("")
    lines.append(tables)
    (root / "docker").mkdir(parents=True)
    (root / "pyproject.toml").write_text("\n".join(lines), encoding="utf-8")
    (root / "docker" / "Dockerfile").write_text(ENGINE_DOCKERFILE, encoding="utf-8")
    if dockerignore:
        (root / ".dockerignore").write_text(".git\n", encoding="utf-8")
    for path, text in (files or {}).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    (root / "noxfile.py").write_text(
        "from release.cli.nox_sessions import image_sessions\n\nimage_sessions()\n",
        encoding="utf-8",
    )
    repo = Repo(root, name, image_env(home))
    repo.git("init", "--quiet", "--initial-branch=main")
    repo.git("add", "--all")
    repo.git("commit", "--quiet", "-m", "Test engine")
    repo.git("tag", "v0.1.0")
    if remote is not None:
        repo.git("remote", "add", "origin", remote)
    return repo


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return sample_repo(tmp_path_factory)


def sample_repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """The sample engine with a unique image name and a noxfile, tagged v0.1.0rc1."""
    root = tmp_path_factory.mktemp("sample")
    home = tmp_path_factory.mktemp("home")
    env = image_env(home)
    with pytest.MonkeyPatch.context() as mp:
        for key in ("HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_NOSYSTEM"):
            mp.setenv(key, env[key])
        made = make_sample_engine(root)
    repo = Repo(made.root, unique_name(), env)
    pyproject = repo.root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    assert 'name = "example/tinyengine"' in text
    pyproject.write_text(text.replace('name = "example/tinyengine"', f'name = "{repo.name}"'))
    (repo.root / "noxfile.py").write_text(
        "from release.cli.nox_sessions import image_sessions\n\nimage_sessions()\n",
        encoding="utf-8",
    )
    repo.git("add", "--all")
    repo.git("commit", "--quiet", "-m", "[CI/Build] Image sessions (#120)")
    repo.git("tag", "-a", "v0.1.0rc1", "-m", "v0.1.0rc1")
    return repo


def wait_until_gone(text: str, limit: float = 15) -> list[str]:
    deadline = time.monotonic() + limit
    while (found := processes_with(text)) and time.monotonic() < deadline:
        time.sleep(0.3)
    return found


# an engine whose build context is a folder of the tree (``context``), its Dockerfile in it
GUARDED_PYPROJECT = """\
[project]
name = "guarded"
version = "0.0.0"

[tool.release]
main-branch = "main"

[tool.release.images]
name = "release-test/guarded"
dockerfile = "docker/Dockerfile"
context = "{context}"
default-variant = "cu129"

[[tool.release.images.variants]]
id = "cu129"
cuda = "12.9.1"
base-image = "nvidia/cuda:12.9.1-base-ubuntu22.04"
"""


# an engine's server, by its first argument: one that answers, crashes at start, hangs
# before listening, or answers wrongly
SERVER = """\
import json, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer

mode = sys.argv[1]
print("loading weights for", mode, flush=True)
if mode == "crash":
    print("CUDA error: out of memory", file=sys.stderr, flush=True)
    sys.exit(3)
if mode == "hang":
    time.sleep(3600)


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.answer({"status": "ok"})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.answer({"choices": [{"text": "two three" if mode == "wrong" else "three two"}]})

    def answer(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


HTTPServer(("0.0.0.0", 8000), Handler).serve_forever()
"""


# -- an engine built once for a test module -----------------------------------------------
# Two variants: ``a`` (the default) for amd64 and arm64, ``b`` for the engine's own platform.
TWO_VARIANTS = [
    {"id": "a", "cuda": "12.9.1", "base-image": BASE_1291, "platforms": BOTH},
    {"id": "b", "cuda": "12.9.1", "base-image": BASE_1291, "build-args": {"B": "1"}},
]


@contextlib.contextmanager
def built_engine(
    docker: ContainerEngine,
    tmp_path_factory: pytest.TempPathFactory,
    folder: str,
    variants: list[dict[str, Any]],
) -> Iterator[Repo]:
    """An engine of ``variants`` (the first the default, no smoke checks) in a folder of its
    own, built with ``images.build``; what it made is removed at the end. Skips (or fails,
    where it is required) unless this host runs every platform a variant names."""
    for platform in sorted({p for variant in variants for p in variant.get("platforms", [])}):
        need_emulation(platform)
    repo = make_engine_repo(
        tmp_path_factory.mktemp(folder) / "engine",
        tmp_path_factory.mktemp("home"),
        variants=variants,
        checks=[],
        default=variants[0]["id"],
    )
    try:
        result = repo.release("images.build", timeout=900)
        assert result.code == 0, result.output
        yield repo
    finally:
        purge(docker, repo.name, repo.head)

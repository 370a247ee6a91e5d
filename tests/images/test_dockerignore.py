"""``.dockerignore`` as Docker reads it: the files ``context_files`` says docker sends are the
files a real engine puts in an image built with ``COPY . /ctx/``, for a table of patterns
(character classes, escapes, ``**``, negation, paths to clean, regexp characters that mean
nothing in a pattern). And the input digest and the dirty guard use that same list."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from release.adapters.engine import ContainerEngine
from release.errors import ConfigError
from release.images.inputs import context_files, docker_regex
from tests.docker_support import unique_name

FILES = (
    "a.txt", "b.txt", "c.txt", "[ab].txt", "a*b", "axb", "a.b", "a+b", "aab", "x.{c,h}",
    "x.c", ".hidden", "keep/me.md", "keep/not.md", "dir/x.pyc", "dir/sub/y.pyc", "dir/z.py",
    "deep/a/b/c.log", "sp ace.txt", "ü.txt",
)  # fmt: skip

# each a whole .dockerignore (the Dockerfile lives outside the context)
TABLE = {
    "class": "[ab].txt\n",
    "negated-class": "[^a].txt\n",
    "escape": "a\\*b\n",
    "star-and-question": "a?b\n*.txt\n",
    "double-star": "**/*.pyc\n",
    "double-star-dir": "deep/**\n",
    "negation": "keep\n!keep/me.md\n",
    "clean": "./dir//sub/../x.pyc\n/c.txt\n",
    # "+", "(", ")" and "|" are left out: Docker 20.10's matcher passes them to the regexp
    # (a+b excludes aab), Docker 23 and later escape them (a+b is the file a+b), as here
    "regexp-chars": "x.{c,h}\na.b\n",
    "comment-and-space": "# a.txt\n  b.txt  \n\n",
    "dot-files": ".*\n",
    "unicode-and-space": "ü.txt\nsp ace.txt\n",
}


def _context(root: Path, ignore: str) -> Path:
    context = root / "ctx"
    for rel in FILES:
        path = context / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rel + "\n", encoding="utf-8")
    (context / ".dockerignore").write_text(ignore, encoding="utf-8")
    return context


def _ours(context: Path) -> set[str]:
    return {p.relative_to(context).as_posix() for p in context_files(context)} - {".dockerignore"}


def test_patterns_become_dockers_regular_expressions() -> None:
    assert docker_regex("[ab].txt") == r"^[ab]\.txt"
    assert docker_regex("a\\*b") == r"^a\*b"
    assert docker_regex("**/x") == "^(?:.*/)?x" and docker_regex("a/**") == "^a/.*"
    assert docker_regex("x.{c,h}") == r"^x\.\{c,h\}"


def test_a_pattern_docker_refuses_is_refused(tmp_path: Path) -> None:
    context = _context(tmp_path, "[a-\n")
    with pytest.raises(ConfigError) as refused:
        context_files(context)
    assert "'[a-' is not a pattern" in str(refused.value)


@pytest.mark.images
def test_the_files_sent_are_the_ones_docker_sends(tmp_path: Path, docker: ContainerEngine) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM scratch\nCOPY . /ctx/\n", encoding="utf-8")
    differ = {}
    for name, ignore in TABLE.items():
        root = tmp_path / name
        context = _context(root, ignore)
        tag = unique_name() + ":ignore"
        built = subprocess.run(
            [docker.cli, "build", "--quiet", "-t", tag, "-f", str(dockerfile), str(context)],
            env={"DOCKER_BUILDKIT": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert built.returncode == 0, built.stderr
        try:
            container = docker.run(["create", tag, "/none"]).stdout.strip()
            exported = subprocess.run(
                [docker.cli, "export", container], capture_output=True, timeout=120, check=True
            ).stdout
            docker.run(["rm", container])
        finally:
            docker.run(["rmi", "--force", tag], check=False)
        with tarfile.open(fileobj=io.BytesIO(exported)) as tar:
            sent = {
                m.name.removeprefix("ctx/")
                for m in tar.getmembers()
                if m.isfile() and m.name.startswith("ctx/")
            } - {".dockerignore"}
        if sent != _ours(context):
            differ[name] = (sorted(sent ^ _ours(context)), ignore)
        assert sent < set(FILES) or name in ("comment-and-space",), (name, sorted(sent))
    assert differ == {}

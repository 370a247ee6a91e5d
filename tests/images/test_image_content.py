"""The content digest of an image's file system.

Pure tests read tar streams made in memory through a real pipe: times, order and the
spelling of paths never count; every field the digest stands for is changed in turn and
must change the digest and name its part; the records name the paths. Image tests build
one small Dockerfile on the stand-in base with ``--no-cache``: two builds get different ids
and the same digest, a changed file gets another digest naming its part, and no container
is left behind, after a failure, Ctrl-C or SIGTERM included. The sample engine's variant
that installs packages, built with ``--no-cache`` from two clones of one commit, has one
digest. The cache is used without the engine, and a damaged entry is ignored and
rewritten.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import pytest

from release.adapters import image_content
from release.adapters.engine import MANAGED_LABEL, ContainerEngine
from release.adapters.image_content import (
    cache_path,
    cached_digest,
    image_content_digest,
    image_content_records,
)
from release.core.accelerator import Accelerator
from release.core.content_digest import (
    ALGORITHM,
    ENGINE_FILES,
    ContentDigest,
    ContentDrift,
    compare_content,
    compare_records,
    content_records,
    digest_tar,
)
from release.errors import EngineError
from release.images.standin import ensure_base
from release.sample import make_sample_engine
from tests.conftest import run_cli
from tests.docker_support import CACHE_DIR, image_env, interrupt_when, purge, unique_name

images = pytest.mark.images

# -- tar streams made in memory ------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    path: str
    data: bytes = b""
    kind: bytes = tarfile.REGTYPE
    mode: int = 0o644
    uid: int = 0
    gid: int = 0
    link: str = ""
    device: tuple[int, int] = (0, 0)
    pax: Mapping[str, str] = field(default_factory=dict)


def folder(path: str, mode: int = 0o755) -> Entry:
    return Entry(path, kind=tarfile.DIRTYPE, mode=mode)


CAPABILITY = "SCHILY.xattr.security.capability"
TREE = (
    folder("usr"),
    folder("usr/bin"),
    Entry("usr/bin/python3", b"#!/bin/sh\nexec python3.11\n", mode=0o755),
    Entry("usr/bin/ping", b"\x7fELF ping", mode=0o755, pax={CAPABILITY: "\x01\x00\x00\x02"}),
    folder("usr/lib"),
    Entry("usr/lib/libc.so.6", b"\x7fELF libc"),
    Entry("usr/lib/libc.so", kind=tarfile.SYMTYPE, mode=0o777, link="libc.so.6"),
    Entry("usr/lib/libc-copy.so.6", kind=tarfile.LNKTYPE, link="usr/lib/libc.so.6"),
    Entry("bin", kind=tarfile.SYMTYPE, mode=0o777, link="usr/bin"),
    folder("etc"),
    Entry("etc/passwd", b"root:x:0:0:root:/root:/bin/bash\n"),
    folder("dev"),
    Entry("dev/null", kind=tarfile.CHRTYPE, mode=0o666, device=(1, 3)),
    folder("opt"),
    folder("opt/tinyengine"),
    Entry("opt/tinyengine/server.py", b"print('serving')\n"),
    folder("tmp", mode=0o1777),
    Entry("tmp/queue", kind=tarfile.FIFOTYPE),
)
PARTS = {"/", "usr", "usr/bin", "usr/lib", "etc", "dev", "opt", "opt/tinyengine", "tmp"}


def tar_bytes(entries: tuple[Entry, ...], *, when: float = 1_700_000_000) -> bytes:
    """A PAX tar of ``entries``, each stamped with its own times from ``when`` on."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for n, entry in enumerate(entries):
            info = tarfile.TarInfo(entry.path)
            info.type, info.mode, info.uid, info.gid = entry.kind, entry.mode, entry.uid, entry.gid
            info.linkname = entry.link
            info.devmajor, info.devminor = entry.device
            info.mtime = int(when) + n
            times = {"atime": f"{when + n / 3:.6f}", "ctime": f"{when + n / 7:.6f}"}
            info.pax_headers = {**times, **entry.pax}
            info.size = len(entry.data) if entry.kind == tarfile.REGTYPE else 0
            tar.addfile(info, io.BytesIO(entry.data) if info.size else None)
    return out.getvalue()


def through_pipe(data: bytes) -> ContentDigest:
    """The digest of ``data`` read from an OS pipe, as ``docker export`` is (no seeking)."""
    reader, writer = os.pipe()

    def write() -> None:
        with os.fdopen(writer, "wb") as pipe:
            pipe.write(data)

    feeder = threading.Thread(target=write, daemon=True)
    feeder.start()
    with os.fdopen(reader, "rb") as pipe:
        try:
            return digest_tar(pipe)
        finally:
            pipe.read()  # let the writer finish whatever the reader did
            feeder.join()


def digest_of(entries: tuple[Entry, ...], **stamp: float) -> ContentDigest:
    return through_pipe(tar_bytes(entries, **stamp))


def changed(entries: tuple[Entry, ...], path: str, **fields: Any) -> tuple[Entry, ...]:
    assert any(e.path == path for e in entries), path
    return tuple(replace(e, **fields) if e.path == path else e for e in entries)


def without(entries: tuple[Entry, ...], *paths: str) -> tuple[Entry, ...]:
    assert all(any(e.path == p for e in entries) for p in paths), paths
    return tuple(e for e in entries if e.path not in paths)


BEFORE = digest_of(TREE)

# -- pure: what counts and what does not -------------------------------------------------


def test_a_tree_has_its_entries_and_parts() -> None:
    assert BEFORE.files == len(TREE)
    assert set(BEFORE.parts) == PARTS
    assert BEFORE.digest.startswith("sha256:") and len(BEFORE.digest) == 71


def test_times_order_and_path_spelling_do_not_count() -> None:
    shuffled = TREE[1::2] + TREE[::-1][1::2]
    assert sorted(shuffled, key=lambda e: e.path) == sorted(TREE, key=lambda e: e.path)
    assert tar_bytes(shuffled, when=1_800_000_000.25) != tar_bytes(TREE)
    assert digest_of(shuffled, when=1_800_000_000.25) == BEFORE
    spelled = tuple(
        replace(
            e, path=("./" if n % 2 else "/") + e.path + ("/" if e.kind == tarfile.DIRTYPE else "")
        )
        for n, e in enumerate(TREE)
    )
    assert digest_of(spelled) == BEFORE


def test_a_path_written_twice_counts_as_its_last_entry() -> None:
    rewritten = (*TREE, Entry("etc/passwd", b"root:x:0:0::/root:/bin/sh\n"))
    assert digest_of(rewritten) == digest_of(
        changed(TREE, "etc/passwd", data=b"root:x:0:0::/root:/bin/sh\n")
    )
    assert digest_of(rewritten) != BEFORE


ONE_CHANGE = [
    pytest.param(changed(TREE, "etc/passwd", data=b"root:x:0:0::/:/bin/sh\n"), (), (), ("etc",), id="contents"),
    pytest.param(changed(TREE, "etc/passwd", data=b"root:x:0:0:root:/root:/bin/zsh\n"), (), (), ("etc",), id="contents, same size"),
    pytest.param(changed(TREE, "usr/bin/python3", mode=0o750), (), (), ("usr/bin",), id="mode"),
    pytest.param(changed(TREE, "usr/bin/python3", mode=0o4755), (), (), ("usr/bin",), id="setuid bit"),
    pytest.param(changed(TREE, "usr/lib", mode=0o700), (), (), ("usr/lib",), id="directory mode"),
    pytest.param(changed(TREE, "tmp", mode=0o777), (), (), ("tmp",), id="sticky bit"),
    pytest.param(changed(TREE, "usr/lib/libc.so.6", uid=1000), (), (), ("usr/lib",), id="owner"),
    pytest.param(changed(TREE, "opt/tinyengine/server.py", gid=100), (), (), ("opt/tinyengine",), id="group"),
    pytest.param(changed(TREE, "usr/lib/libc.so", link="libc.so.7"), (), (), ("usr/lib",), id="symlink target"),
    pytest.param(changed(TREE, "bin", link="usr/sbin"), (), (), ("/",), id="top-level symlink target"),
    pytest.param(changed(TREE, "usr/lib/libc-copy.so.6", link="usr/lib/libc.so"), (), (), ("usr/lib",), id="hard link target"),
    pytest.param(changed(TREE, "dev/null", device=(1, 5)), (), (), ("dev",), id="device numbers"),
    pytest.param(changed(TREE, "dev/null", kind=tarfile.BLKTYPE), (), (), ("dev",), id="device kind"),
    pytest.param(changed(TREE, "tmp/queue", kind=tarfile.DIRTYPE), ("tmp/queue",), (), ("tmp",), id="fifo to directory"),
    pytest.param(changed(TREE, "usr/bin/ping", pax={}), (), (), ("usr/bin",), id="file capability dropped"),
    pytest.param(changed(TREE, "usr/bin/ping", pax={CAPABILITY: "\x01\x00\x00\x03"}), (), (), ("usr/bin",), id="file capability"),
    pytest.param((*TREE, Entry("usr/lib/libm.so.6", b"")), (), (), ("usr/lib",), id="file added"),
    pytest.param(without(TREE, "opt/tinyengine/server.py"), (), (), ("opt/tinyengine",), id="file removed"),
    pytest.param((*TREE, Entry("srv/www/index.html", b"hi")), ("srv/www",), (), (), id="part added"),
    pytest.param(without(TREE, "opt/tinyengine", "opt/tinyengine/server.py"), (), ("opt/tinyengine",), (), id="part removed"),
    pytest.param((*TREE, Entry("init", b"#!/bin/sh\n", mode=0o755)), (), (), ("/",), id="top-level file added"),
]  # fmt: skip


@pytest.mark.parametrize(("after", "added", "removed", "changed_parts"), ONE_CHANGE)
def test_each_field_counts_and_its_part_is_named(
    after: tuple[Entry, ...],
    added: tuple[str, ...],
    removed: tuple[str, ...],
    changed_parts: tuple[str, ...],
) -> None:
    new = digest_of(after)
    assert new.digest != BEFORE.digest
    drift = compare_content(BEFORE, new)
    assert drift == ContentDrift(added=added, removed=removed, changed=changed_parts)
    assert not drift.same
    assert compare_content(new, BEFORE) == ContentDrift(removed, added, changed_parts)


def test_the_records_name_the_paths_the_parts_hold() -> None:
    def records(entries: tuple[Entry, ...], **stamp: float) -> dict[str, bytes]:
        return content_records(io.BytesIO(tar_bytes(entries, **stamp)))

    before = records(TREE)
    assert sorted(before) == sorted(e.path for e in TREE)
    assert compare_records(before, records(TREE[::-1], when=1_900_000_000)).same
    after = (
        *without(changed(TREE, "usr/bin/python3", mode=0o775), "tmp/queue"),
        Entry("var/log/dpkg.log", b"2026-12-02 16:33:01 install criu\n"),
        Entry(".dockerenv"),  # the engine's: never named
    )
    drift = ContentDrift(("var/log/dpkg.log",), ("tmp/queue",), ("usr/bin/python3",))
    assert compare_records(before, records(after)) == drift
    assert compare_content(BEFORE, digest_of(after)) == ContentDrift(
        ("var/log",), (), ("tmp", "usr/bin")
    )


def test_the_same_digest_has_no_drift() -> None:
    drift = compare_content(BEFORE, digest_of(TREE, when=1_900_000_000))
    assert drift.same and drift.to_dict() == {"added": [], "removed": [], "changed": []}


@pytest.mark.parametrize("path", sorted(ENGINE_FILES))
def test_what_the_engine_writes_into_every_container_is_left_out(path: str) -> None:
    injected = (*TREE, Entry(path, b"written by the engine\n", mode=0o755))
    assert digest_of(injected) == BEFORE
    assert digest_of((*TREE, Entry("./" + path, b"x"))) == BEFORE
    # only that exact path: a file beside it counts
    assert digest_of((*TREE, Entry(path + ".orig", b"x"))).digest != BEFORE.digest


def test_names_that_are_not_utf8_are_read_and_told_apart() -> None:
    one = digest_of((*TREE, Entry("opt/caf\udce9", b"x")))
    other = digest_of((*TREE, Entry("opt/caf\udce8", b"x")))
    assert len({one.digest, other.digest, BEFORE.digest}) == 3


@pytest.mark.parametrize("data", [b"", b"not a tar stream\n" * 64], ids=["empty", "text"])
def test_a_stream_that_is_not_tar_is_refused(data: bytes) -> None:
    with pytest.raises(tarfile.TarError):
        through_pipe(data)


# -- pure: the value -------------------------------------------------------------------------


def test_a_digest_round_trips_through_json() -> None:
    data = json.loads(json.dumps(BEFORE.to_dict()))
    assert set(data) == {"digest", "parts", "files"}
    assert list(data["parts"]) == sorted(PARTS)
    assert ContentDigest.from_dict(data) == BEFORE


GOOD = BEFORE.to_dict()
BAD = [
    pytest.param([GOOD], id="a list"),
    pytest.param({k: v for k, v in GOOD.items() if k != "files"}, id="a key missing"),
    pytest.param({**GOOD, "algorithm": ALGORITHM}, id="a key too many"),
    pytest.param({**GOOD, "digest": GOOD["digest"][7:]}, id="no sha256: prefix"),
    pytest.param({**GOOD, "digest": GOOD["digest"].upper()}, id="upper-case digest"),
    pytest.param({**GOOD, "parts": {"usr": "sha256:00"}}, id="a short part digest"),
    pytest.param({**GOOD, "parts": ["usr"]}, id="parts as a list"),
    pytest.param({**GOOD, "files": -1}, id="negative count"),
    pytest.param({**GOOD, "files": True}, id="count as a bool"),
    pytest.param({**GOOD, "files": "18"}, id="count as text"),
]


@pytest.mark.parametrize("data", BAD)
def test_a_damaged_digest_is_refused(data: object) -> None:
    with pytest.raises(ValueError, match="content digest"):
        ContentDigest.from_dict(data)


# -- the cache (no engine) -------------------------------------------------------------------

SOME_ID = "sha256:" + "5e" * 32
NO_ENGINE = ContainerEngine("/nonexistent/docker", builder="classic-buildkit", description="none")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty user cache dir of our own."""
    monkeypatch.setenv("RELEASE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def plant(image_id: str, text: str) -> Path:
    path = cache_path(image_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def entry_text(image_id: str, digest: ContentDigest, algorithm: int = ALGORITHM) -> str:
    return json.dumps({"image": image_id, "algorithm": algorithm, "content": digest.to_dict()})


def test_the_cache_is_keyed_by_image_id_and_algorithm(cache: Path) -> None:
    assert cache_path(SOME_ID) == cache / "image-content" / f"v{ALGORITHM}" / f"{'5e' * 32}.json"


def test_a_cached_digest_is_answered_without_the_engine(cache: Path) -> None:
    plant(SOME_ID, entry_text(SOME_ID, BEFORE))
    assert image_content_digest(NO_ENGINE, SOME_ID) == BEFORE
    other = "sha256:" + "6f" * 32
    with pytest.raises(EngineError, match="cannot run /nonexistent/docker"):
        image_content_digest(NO_ENGINE, other)  # not cached: the engine is asked


DAMAGED = [
    pytest.param("\x00\x01garbage", id="garbage"),
    pytest.param(entry_text(SOME_ID, BEFORE)[:40], id="cut short"),
    pytest.param("[]", id="not an object"),
    pytest.param(entry_text("sha256:" + "6f" * 32, BEFORE), id="another image's"),
    pytest.param(entry_text(SOME_ID, BEFORE, ALGORITHM + 1), id="another algorithm's"),
    pytest.param(
        entry_text(SOME_ID, BEFORE).replace(f'"files": {BEFORE.files}', '"files": -1'),
        id="a bad count",
    ),
]


@pytest.mark.parametrize("text", DAMAGED)
def test_a_damaged_cache_entry_is_not_trusted(cache: Path, text: str) -> None:
    plant(SOME_ID, entry_text(SOME_ID, BEFORE))
    assert cached_digest(SOME_ID) == BEFORE  # the same place, read while whole
    plant(SOME_ID, text)
    assert cached_digest(SOME_ID) is None


def test_a_cache_that_cannot_be_read_is_not_trusted(cache: Path) -> None:
    cache_path(SOME_ID).mkdir(parents=True)
    assert cached_digest(SOME_ID) is None


# -- against a real engine -------------------------------------------------------------------

DOCKERFILE = """\
ARG BASE
FROM ${BASE}
ARG MESSAGE
RUN mkdir -p /opt/tinyengine && printf '%s\\n' "$MESSAGE" > /opt/tinyengine/message
COPY server.py /opt/tinyengine/server.py
"""


@dataclass(frozen=True)
class Builds:
    first: str  # image ids: MESSAGE=one
    again: str  # the same inputs, built again
    other: str  # MESSAGE=two


@pytest.fixture(scope="module")
def builds(docker: ContainerEngine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Builds]:
    """Three ``--no-cache`` builds of :data:`DOCKERFILE` on the stand-in base, removed after."""
    context = tmp_path_factory.mktemp("context")
    (context / "Dockerfile").write_text(DOCKERFILE, encoding="utf-8")
    (context / "server.py").write_text("print('serving')\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RELEASE_CACHE_DIR", CACHE_DIR)  # where the stand-in's rootfs is kept
        mp.setenv("RELEASE_NO_PULL", "1")
        base = ensure_base(
            docker, "nvidia/cuda:13.0.1-base-ubuntu24.04", Accelerator("cuda", "13.0.1"), print
        )
    made: list[str] = []

    def build(message: str) -> str:
        iid = context / f"iid-{len(made)}"
        log = context / f"build-{len(made)}.log"
        result = docker.build(
            context=context,
            dockerfile=context / "Dockerfile",
            build_args={"BASE": base.ref, "MESSAGE": message},
            labels={MANAGED_LABEL: "true"},
            iidfile=iid,
            platform=None,
            log=log,
            timeout=300,
            no_cache=True,
        )
        assert result.ok, log.read_text(errors="replace")
        made.append(iid.read_text().strip())
        return made[-1]

    try:
        yield Builds(build("one"), build("one"), build("two"))
    finally:
        for image in made:
            docker.remove_image(image)


@pytest.fixture(scope="module")
def digests(
    builds: Builds, docker: ContainerEngine, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, ContentDigest]:
    """The digest of each build, read through the engine (an empty cache of its own)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RELEASE_CACHE_DIR", str(tmp_path_factory.mktemp("cold-cache")))
        return {name: image_content_digest(docker, image) for name, image in vars(builds).items()}


def ours(docker: ContainerEngine, image: str) -> list[str]:
    """Names of the project's containers (any state) made from ``image``."""
    args = ["ps", "--all", "--format", "{{.Names}}", "--filter", f"label={MANAGED_LABEL}"]
    return docker.run([*args, "--filter", f"ancestor={image}"], timeout=60).stdout.split()


def exports_of(name: str) -> list[str]:
    """Running ``docker export NAME`` processes."""
    found = []
    for proc in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = proc.read_bytes().split(b"\0")
        except OSError:
            continue
        if b"export" in argv and name.encode() in argv:
            found.append(proc.parent.name)
    return found


@images
def test_two_builds_of_the_same_inputs_have_another_id_and_the_same_content(
    builds: Builds, digests: dict[str, ContentDigest]
) -> None:
    assert builds.first != builds.again  # what the content digest is there for
    assert digests["first"] == digests["again"]
    assert digests["first"].files > 1000  # the base's files are in it
    assert {"usr/lib", "etc", "opt/tinyengine"} <= set(digests["first"].parts)


@images
def test_a_changed_file_changes_the_digest_and_names_its_part(
    digests: dict[str, ContentDigest],
) -> None:
    assert digests["other"].digest != digests["first"].digest
    assert compare_content(digests["first"], digests["other"]) == ContentDrift(
        changed=("opt/tinyengine",)
    )


@images
def test_the_container_read_is_removed(
    builds: Builds, digests: dict[str, ContentDigest], docker: ContainerEngine, cache: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    before = ours(docker, builds.first)
    seen: list[str] = []

    def watched(stream: IO[bytes]) -> ContentDigest:
        seen.extend(ours(docker, builds.first))
        return digest_tar(stream)

    monkeypatch.setattr(image_content, "digest_tar", watched)
    assert image_content_digest(docker, builds.first) == digests["first"]
    assert len(seen) == len(before) + 1  # there was one while it was read
    assert ours(docker, builds.first) == before


@images
def test_a_reader_that_fails_stops_the_export_and_removes_the_container(
    builds: Builds, docker: ContainerEngine, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []

    def failing(stream: IO[bytes]) -> ContentDigest:
        stream.read(1 << 16)
        seen.extend(ours(docker, builds.first))
        raise RuntimeError("the reader gave up")

    monkeypatch.setattr(image_content, "digest_tar", failing)
    with pytest.raises(RuntimeError, match="gave up"):  # ours, not docker's: docker was stopped
        image_content_digest(docker, builds.first)
    assert len(seen) == 1 and not exports_of(seen[0])
    assert seen[0] not in ours(docker, builds.first)
    assert cached_digest(builds.first) is None


@images
def test_a_damaged_cache_entry_is_rewritten(
    builds: Builds, digests: dict[str, ContentDigest], docker: ContainerEngine, cache: Path
) -> None:
    path = plant(builds.other, entry_text(builds.other, digests["first"])[:-9])
    assert image_content_digest(docker, builds.other) == digests["other"]
    assert json.loads(path.read_text())["content"] == digests["other"].to_dict()
    assert image_content_digest(NO_ENGINE, builds.other) == digests["other"]


@images
def test_engine_failures_are_engine_errors(docker: ContainerEngine, cache: Path) -> None:
    with pytest.raises(EngineError, match="no image release-test/none:x in the engine"):
        image_content_digest(docker, "release-test/none:x")
    with pytest.raises(EngineError, match=r"docker create failed: .*No such image"):
        image_content_digest(docker, "sha256:" + "0" * 64)
    with pytest.raises(EngineError, match=r"docker export failed: .*No such container"):
        docker.export_container("release-no-such-container", digest_tar)


SLOW_READER = """
import sys, time
from release.adapters import image_content
from release.adapters.engine import ContainerEngine
from release.cli.entry import sigterm_stops

def slow(stream):
    stream.read(1 << 16)
    print("reading", flush=True)
    time.sleep(120)

image_content.digest_tar = slow
try:
    with sigterm_stops():
        image_content.image_content_digest(ContainerEngine.detect(), sys.argv[1])
except KeyboardInterrupt:
    print("stopped", flush=True)
    sys.exit(130)
"""


@images
@pytest.mark.parametrize(
    ("sig", "group"), [(signal.SIGINT, True), (signal.SIGTERM, False)], ids=["ctrl-c", "sigterm"]
)
def test_an_interrupted_digest_leaves_nothing_behind(
    builds: Builds, docker: ContainerEngine, tmp_path: Path, sig: int, group: bool
) -> None:
    seen: list[str] = []

    def reading(output: str) -> bool:
        if "reading" not in output:
            return False
        seen.extend(ours(docker, builds.first))
        return True

    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "RELEASE_CACHE_DIR": str(tmp_path / "cache")}
    argv = [sys.executable, "-c", SLOW_READER, builds.first]
    stopped = interrupt_when(argv, work, env, reading, sig=sig, group=group)
    assert stopped.code == 130 and "stopped" in stopped.output, stopped.output
    assert stopped.seconds < 15
    assert len(seen) == 1  # the container existed while the export was read
    assert seen[0] not in ours(docker, builds.first)
    assert not exports_of(seen[0])


# -- the sample engine: two clones of one commit ----------------------------------------------

SNAPSHOT_VARIANT = "cu130"  # the sample's variant that installs packages (the snapshot runtime)


@images
def test_two_clones_of_one_commit_build_the_same_content(
    docker: ContainerEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two ``--no-cache`` builds of the sample's variant with the snapshot runtime (apt,
    dpkg, debconf and ldconfig at work) from two clones of one commit, the second cloned
    under another umask as on another machine: other image ids, the same content digest.
    On a failure, the paths that differ are named."""
    sample = make_sample_engine(tmp_path / "sample", with_remote=False)
    name = unique_name()
    pyproject = sample.root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text.replace('"example/tinyengine"', f'"{name}"'), encoding="utf-8")
    sample.repo.run("commit", "--quiet", "--all", "-m", "[CI/Build] An image name of its own")
    sample.repo.run("tag", "-a", "v0.1.0rc1", "-m", "v0.1.0rc1")
    env = image_env(tmp_path / "home")
    made: list[str] = []
    try:
        for n, umask in enumerate((0o022, 0o002)):
            clone = tmp_path / f"clone-{n}"
            argv = ["git", "clone", "--quiet", str(sample.root), str(clone)]
            subprocess.run(argv, env=env, umask=umask, check=True, timeout=60)
            args = ("images.build", "--no-cache", "--variant", SNAPSHOT_VARIANT)
            built = run_cli(clone, *args, env=env, timeout=900)
            assert built.code == 0, built.output
            image = docker.image_id(f"{name}:v0.1.0rc1")
            assert image is not None
            docker.tag(image, [f"{name}:clone-{n}"])  # kept when the next build takes the tag
            made.append(image)
        assert made[0] != made[1]  # docker stamps every layer with the time it was made
        monkeypatch.setenv("RELEASE_CACHE_DIR", str(tmp_path / "digests"))
        first, again = (image_content_digest(docker, image) for image in made)
        if first != again:
            drift = compare_records(*(image_content_records(docker, image) for image in made))
            named = {"changed": drift.changed, "only in the first": drift.removed}
            named["only in the second"] = drift.added
            paths = "; ".join(f"{how}: {', '.join(p)}" for how, p in named.items() if p)
            pytest.fail(f"two --no-cache builds of one commit differ ({paths})", pytrace=False)
        assert first.files > 1000 and "opt/snapshot-runtime" in first.parts
    finally:
        purge(docker, name, sample.repo.head())

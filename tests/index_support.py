"""A real package index on loopback, for the tests that run the jobs' install lines.

pypiserver serves one directory (``--disable-fallback``: a name it lacks is not sent on
to a public index) holding:

- this tool's wheel, built from the work tree by pip (a build isolated as a runner's
  would be, its backend from this index);
- the dependencies of this tool and of nox, as installed in this test environment,
  packed again as wheels (nothing here is fetched from outside);
- virtualenv's own setuptools wheel: the build backend, for installs built from source;
- decoys, as a name squatter would publish them: ``release`` 99.0.0, and ``release`` at
  this tool's own version with a build tag (pip prefers a build-tagged wheel where
  nothing pins the file). Each leaves a marker file in the environment it went into when
  that Python starts (a ``.pth`` file runs at every start) or imports it: a decoy
  installed cannot go unseen (:func:`decoys_in`).

The jobs' pip reads no configuration of this machine (``PIP_CONFIG_FILE`` is the null
device): the index given is the only one.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import release

ROOT = Path(__file__).resolve().parents[1]
VERSION = release.__version__
DECOYS = (("99.0.0", ""), (VERSION, "1"))  # (version, build tag)
SKIPPED = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


@dataclass(frozen=True)
class PackageIndex:
    """The index as the tests use it: where it answers, what it serves, and the wheel of
    this tool with its sha256."""

    url: str  # .../simple/
    packages: Path
    wheel: Path
    sha256: str
    nox: str  # nox==V, as installed here
    work: Path  # the index's own folder: its server's log, virtualenv's seed wheels

    @property
    def archive_url(self) -> str:
        """The wheel of this tool as the server hands it out."""
        return self.url.replace("/simple/", f"/packages/{self.wheel.name}")

    def served(self) -> list[Path]:
        return sorted(self.packages.glob("*.whl"))


MARKER = "decoy-installed-"  # what a decoy leaves in the environment it went into


def decoys_in(python: Path) -> list[str]:
    """The markers decoys left in the virtual environment at ``python``."""
    return sorted(p.name for p in python.glob(f"{MARKER}*"))


def _record(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(path: Path, files: dict[str, bytes], info: str) -> Path:
    """A wheel of ``files`` (``info``: its ``.dist-info`` folder), with its RECORD."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        lines = [_record(name, data) for name, data in files.items()] + [f"{info}/RECORD,,"]
        archive.writestr(f"{info}/RECORD", "\n".join(lines) + "\n")
    return path


def closure(*names: str) -> dict[str, metadata.Distribution]:
    """The installed distributions ``names`` need, themselves included, by canonical name."""
    found: dict[str, metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = canonicalize_name(todo.pop())
        if name in found:
            continue
        found[name] = dist = metadata.distribution(name)
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return found


def _tag(dist: metadata.Distribution) -> str:
    """The wheel's tags, compressed (py2.py3-none-any), from its WHEEL file."""
    lines = (dist.read_text("WHEEL") or "").splitlines()
    tags = [line.split(":", 1)[1].strip().split("-") for line in lines if line.startswith("Tag:")]
    return "-".join(".".join(dict.fromkeys(t[i] for t in tags)) for i in range(3))


def repack(dist: metadata.Distribution, out: Path) -> Path:
    """An installed distribution packed again as a wheel: its files as RECORD lists them,
    a script that is no entry point as the wheel's data, entry points left for pip."""
    name, version = dist.metadata["Name"], dist.version
    stem = f"{canonicalize_name(name).replace('-', '_')}-{version}"
    scripts = {e.name for e in dist.entry_points if e.group in ("console_scripts", "gui_scripts")}
    files: dict[str, bytes] = {}
    info = ""
    for path in dist.files or []:
        if "__pycache__" in path.parts or path.name in SKIPPED:
            continue
        source = Path(str(dist.locate_file(path)))
        if path.parts[0] == "..":
            if path.name in scripts or not source.is_file():
                continue
            files[f"{stem}.data/scripts/{path.name}"] = source.read_bytes()
        elif source.is_file():
            info = path.parts[0] if path.parts[0].endswith(".dist-info") else info
            files[path.as_posix()] = source.read_bytes()
    return write_wheel(out / f"{stem}-{_tag(dist)}.whl", files, info)


def decoy(out: Path, version: str, build: str) -> Path:
    """A ``release`` wheel that is not this tool: once installed, each start of that Python
    (and an import of it) leaves a marker in the environment (:func:`decoys_in`)."""
    info = f"release-{version}.dist-info"
    marker = f"{MARKER}{version}{'-' + build if build else ''}"
    leave = f"import os, sys; open(os.path.join(sys.prefix, {marker!r}), 'w').close()\n"
    files = {
        "release/__init__.py": leave.encode(),
        "release_decoy.pth": leave.encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: release\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: decoy\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
            + (f"Build: {build}\n" if build else "")
        ).encode(),
        f"{info}/entry_points.txt": b"[console_scripts]\nrelease = release:main\n",
    }
    tagged = f"-{build}" if build else ""
    return write_wheel(out / f"release-{version}{tagged}-py3-none-any.whl", files, info)


def pip_env(index: str, home: Path, path: str = "") -> dict[str, str]:
    """An environment in which pip reads this index only: no pip setting of this machine
    (configuration files, ``PIP_*`` variables), its own cache."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))
    }
    env |= {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_INDEX_URL": index,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1",
        "PIP_CACHE_DIR": str(home / "pip-cache"),
        "HOME": str(home),
    }
    return env | ({"PATH": path} if path else {})


def fresh_python(where: Path, seeds: Path) -> Path:
    """A new virtual environment with pip only (virtualenv seeds it from its own wheels,
    offline, kept in ``seeds``); its ``bin``."""
    subprocess.run(
        [sys.executable, "-m", "virtualenv", "--quiet", "--no-setuptools", "--no-wheel",
         "--no-periodic-update", "--app-data", str(seeds), str(where)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return where / "bin"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


@contextmanager
def pypiserver(packages: Path, log: Path) -> Iterator[str]:
    """pypiserver serving ``packages`` on a free port of 127.0.0.1; its simple index URL."""
    for _ in range(3):  # a port taken between the probe and the server's bind: another
        port = _free_port()
        with log.open("ab") as sink:
            server = subprocess.Popen(
                [sys.executable, "-m", "pypiserver", "run", "-i", "127.0.0.1", "-p", str(port),
                 "--disable-fallback", "--hash-algo", "sha256", str(packages)],
                stdout=sink, stderr=subprocess.STDOUT,
            )  # fmt: skip
        url = f"http://127.0.0.1:{port}/simple/"
        deadline = time.monotonic() + 30
        while server.poll() is None and time.monotonic() < deadline and not _answers(url):
            time.sleep(0.2)
        if server.poll() is None and _answers(url):
            break
        server.kill()
        server.wait()
    else:
        raise AssertionError(f"pypiserver did not start: {log.read_text(errors='replace')}")
    try:
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def dependencies(index: PackageIndex, target: Path) -> Path:
    """Everything this tool and nox need but themselves, installed from the index into
    ``target`` (scripts in ``target/bin``): a runner's cache, for jobs that install only
    what they pin."""
    wanted = [
        str(w) for w in index.served() if not w.name.startswith(("release-", "nox-", "setuptools-"))
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--target", str(target), *wanted],
        env=pip_env(index.url, index.work / "home"), capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return target


def source_tree(out: Path) -> Path:
    """This tool's sources as the work tree has them now (what a build would pack)."""
    out.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, out / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "release", out / "release", ignore=ignore)
    return out


def build_wheel(source: Path, out: Path, env: dict[str, str]) -> Path:
    """This tool's wheel, built by pip in isolation: the backend comes from the index."""
    out.mkdir(exist_ok=True)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out),
         str(source)],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = out.glob(f"release-{VERSION}-*.whl")
    return wheel


def backend_wheel() -> Path:
    """virtualenv's own newest setuptools wheel (setuptools >= 68, as pyproject.toml asks)."""
    from virtualenv.seed.wheels.embed import BUNDLE_FOLDER  # type: ignore[import-untyped]

    found = sorted(Path(BUNDLE_FOLDER).glob("setuptools-*.whl"), key=lambda p: p.stat().st_mtime)
    assert found, f"no setuptools wheel in {BUNDLE_FOLDER}"
    return found[-1]


@contextmanager
def package_index(work: Path) -> Iterator[PackageIndex]:
    """The index, served, with everything above in it."""
    if importlib.util.find_spec("pypiserver") is None:
        raise AssertionError("pypiserver is not installed: pip install -e '.[test]' brings it")
    packages, home = work / "packages", work / "home"
    for folder in (packages, home):
        folder.mkdir(parents=True)
    for name, dist in closure("release", "nox").items():
        if name != "release":
            repack(dist, packages)
    shutil.copy2(backend_wheel(), packages)
    for version, build in DECOYS:
        decoy(packages, version, build)
    with pypiserver(packages, work / "pypiserver.log") as url:
        wheel = build_wheel(source_tree(work / "source"), work / "built", pip_env(url, home))
        shutil.copy2(wheel, packages / wheel.name)
        sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
        nox = f"nox=={metadata.version('nox')}"
        yield PackageIndex(url, packages, packages / wheel.name, sha256, nox, work)

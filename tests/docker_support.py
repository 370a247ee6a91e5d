"""The ``docker`` fixture and helpers for image tests.

Image tests need a Docker Engine. Where none answers they are skipped with the reason,
except when ``RELEASE_REQUIRE_DOCKER=1`` (set by ``.ci/run``): then a missing engine is a
failure, so image tests can never silently skip in CI.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from release.adapters.emulation import emulation_problem
from release.adapters.engine import MANAGED_LABEL, ContainerEngine
from release.adapters.registry_server import LocalRegistry, registry_binary
from release.errors import ReleaseError

__all__ = [
    "REQUIRE_ENV",
    "Interrupted",
    "connect",
    "default_sigint",
    "docker",
    "image_env",
    "interrupt_when",
    "local_registry",
    "need_emulation",
    "purge",
    "recording_client",
    "remove_repository",
    "unique_name",
]

REQUIRE_ENV = "RELEASE_REQUIRE_DOCKER"


def _user_cache() -> str:
    # Read once, before any test points HOME at a temporary directory: the cached
    # debootstrap rootfs for stand-in base images lives in the real user's cache.
    import platformdirs

    return os.environ.get("RELEASE_CACHE_DIR") or platformdirs.user_cache_dir("release")


CACHE_DIR = _user_cache()


def connect() -> ContainerEngine:
    """The engine when one answers; else skip saying why, or fail when one is required."""
    try:
        engine = ContainerEngine.detect()
        engine.ping()
    except ReleaseError as err:
        reason = f"no usable Docker Engine: {err.one_line()}"
        if os.environ.get(REQUIRE_ENV, "") not in ("", "0"):
            pytest.fail(f"{reason} [{REQUIRE_ENV}=1: image tests must run here]", pytrace=False)
        pytest.skip(reason)
    return engine


@pytest.fixture(scope="session")
def docker() -> Iterator[ContainerEngine]:
    """A :class:`ContainerEngine` that answers (see :func:`connect`)."""
    yield connect()


def unique_name() -> str:
    """An image name no other build uses: ``release-test/<random>``."""
    return f"release-test/t{uuid.uuid4().hex[:10]}"


def recording_client(folder: Path, real: str | None = None) -> tuple[dict[str, str], Path]:
    """A docker client in ``folder`` that writes down the arguments of every call, a line
    each, then runs the ``real`` client (None: fails, as where no engine answers); the
    environment that makes it the client the tool uses, and the file of calls (absent
    while none was made)."""
    sent, client = folder / "docker-calls", folder / "bin" / "docker"
    client.parent.mkdir(parents=True)
    then = f'exec "{real}" "$@"' if real is not None else "exit 1"
    client.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{sent}"\n{then}\n')
    client.chmod(0o755)
    return {"RELEASE_DOCKER": str(client), "DOCKER": str(client)}, sent


def image_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment for the CLI in image tests: isolated git, the real rootfs cache, no pulls."""
    from tests.conftest import GIT_ENV

    env = {
        k: v
        for k, v in os.environ.items()  # as in CI: output to a pipe is block-buffered
        if k not in ("RELEASE_REPO", "RELEASE_DEBUG", "SOURCE_DATE_EPOCH", "PYTHONUNBUFFERED")
    }
    env.update(GIT_ENV)
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "RELEASE_CACHE_DIR": CACHE_DIR,
            "RELEASE_NO_PULL": "1",  # no registry is reachable in tests; stand-ins are made locally
            # nox would write its noxfile's bytecode into the work tree, which these engines
            # do not keep out of the build context (a .dockerignore): a build would be dirty
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    env.update(extra)
    return env


def remove_repository(engine: ContainerEngine, name: str) -> None:
    """Remove every tag of ``name`` (and so its images) from the engine."""
    refs = engine.run(
        ["images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", f"reference={name}"],
        check=False,
        timeout=60,
    ).stdout.split()
    for ref in refs:
        engine.remove_image(ref)


def purge(engine: ContainerEngine, name: str, revision: str | None = None) -> None:
    """Remove what a test made: containers of its images, its tags, and (by ``revision``)
    untagged images left behind."""
    if revision is not None:
        ours = f"label=org.opencontainers.image.revision={revision}"
        for container in containers(engine, ours):
            engine.remove_container(container)
    remove_repository(engine, name)
    if revision is not None:
        left = engine.run(
            [
                "images",
                "--all",
                "--quiet",
                "--no-trunc",
                "--filter",
                "dangling=true",
                "--filter",
                ours,
            ],
            check=False,
            timeout=60,
        ).stdout.split()
        for image in left:
            engine.remove_image(image)


def containers(engine: ContainerEngine, *filters: str) -> list[str]:
    args = ["ps", "--all", "--quiet", "--no-trunc"]
    for f in filters:
        args += ["--filter", f]
    return engine.run(args, timeout=60).stdout.split()


def managed_leftovers(engine: ContainerEngine, revision: str) -> dict[str, list[str]]:
    """Containers and untagged images carrying the project's label, made from ``revision``."""
    ours = f"label=org.opencontainers.image.revision={revision}"
    images = engine.run(
        [
            "images",
            "--quiet",
            "--no-trunc",
            "--filter",
            f"label={MANAGED_LABEL}",
            "--filter",
            "dangling=true",
            "--filter",
            ours,
        ],
        timeout=60,
    ).stdout.split()
    return {
        "containers": containers(engine, f"label={MANAGED_LABEL}", ours),
        "dangling images": images,
    }


@dataclass
class Interrupted:
    code: int
    output: str
    seconds: float  # from SIGINT to exit


def default_sigint() -> None:
    """In a child about to run: SIGINT as a terminal's foreground process has it. A suite
    started in the background by a shell without job control inherits SIGINT ignored, and
    Python keeps an ignored SIGINT ignored: the Ctrl-C a test sends would never arrive."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt_when(
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str],
    ready: Callable[[str], bool],
    *,
    limit: float = 120,
    sig: int = signal.SIGINT,
    group: bool = True,
) -> Interrupted:
    """Start ``argv`` in its own process group, send ``sig`` once ``ready(output so far)``
    holds (polled), and wait for it to exit: to the whole group (a terminal's Ctrl-C), or
    with ``group=False`` to the process alone (CI's cancel, ``timeout``)."""
    out_path = cwd.parent / f"interrupt-{uuid.uuid4().hex[:8]}.out"
    with out_path.open("w") as out:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=dict(env),
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            preexec_fn=default_sigint,
        )
    try:
        deadline = time.monotonic() + limit
        while not ready(out_path.read_text(errors="replace")):
            if proc.poll() is not None:
                raise AssertionError(
                    f"{argv} ended before it could be interrupted:\n"
                    + out_path.read_text(errors="replace")
                )
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{argv}: not ready after {limit:.0f}s:\n"
                    + out_path.read_text(errors="replace")
                )
            time.sleep(0.2)
        sent = time.monotonic()
        (os.killpg if group else os.kill)(proc.pid, sig)
        code = proc.wait(timeout=60)
        return Interrupted(code, out_path.read_text(errors="replace"), time.monotonic() - sent)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        out_path.unlink(missing_ok=True)


def _required(why: str) -> None:
    """Skip saying why, or fail where image tests are required (CI)."""
    if os.environ.get(REQUIRE_ENV, "") not in ("", "0"):
        pytest.fail(f"{why}; {REQUIRE_ENV}=1 requires it", pytrace=False)
    pytest.skip(why)


@contextlib.contextmanager
def local_registry(root: Path) -> Iterator[LocalRegistry]:
    """Debian's docker-registry on a free port of 127.0.0.1, started (the product's own
    :class:`release.adapters.registry_server.LocalRegistry`); skips saying why where it or
    skopeo is not installed, and fails instead where image tests are required."""
    if registry_binary() is None:
        _required("no docker-registry here (Debian package docker-registry)")
    if shutil.which("skopeo") is None:
        _required("no skopeo here (Debian package skopeo)")
    with LocalRegistry(root) as running:
        yield running


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRegistry]:
    """A registry of the test module's own (:func:`local_registry`), for all its tests."""
    with local_registry(tmp_path_factory.mktemp("registry")) as running:
        yield running


EMULATION_ENV = "RELEASE_REQUIRE_EMULATION"  # set by .ci/run where it set emulation up


def need_emulation(platform: str = "linux/arm64") -> None:
    """Skip saying why where this host cannot run ``platform``'s binaries; fail instead
    where emulation is required (``.ci/run`` requires it once it could set it up)."""
    problem = emulation_problem(platform)
    if problem is None:
        return
    why = f"not run: no {platform} emulation: {problem}"
    if os.environ.get(EMULATION_ENV, "") not in ("", "0"):
        pytest.fail(f"{why}; {EMULATION_ENV}=1 requires it", pytrace=False)
    pytest.skip(why)

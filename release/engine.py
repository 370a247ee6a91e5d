"""The container engine adapter: the only module that runs ``docker``.

Every call goes through :meth:`ContainerEngine.run`, which echoes the command when
asked, enforces a timeout and turns failures into :class:`EngineError`. The CLI is
chosen once: buildx where it works; else a client whose classic builder runs BuildKit
itself (``DOCKER_BUILDKIT=1``; docker < 23); the choice is said in the output. Every
container and image made here carries the ``org.release.managed`` label, so nothing
is left behind unnoticed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from release.errors import EngineError

__all__ = ["MANAGED_LABEL", "ContainerEngine", "RunResult"]

MANAGED_LABEL = "org.release.managed"
_START_HINT = (
    "start one as root: dockerd >/tmp/dockerd.log 2>&1 & (Debian: apt-get install docker.io), "
    "or point DOCKER_HOST at a running engine"
)


@dataclass(frozen=True)
class RunResult:
    status: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.status == 0 and not self.timed_out


def _echo_default(line: str) -> None:
    if os.environ.get("RELEASE_ECHO"):
        import sys

        print(line, file=sys.stderr)


class ContainerEngine:
    echo: Callable[[str], None] = staticmethod(_echo_default)

    def __init__(self, cli: str, *, builder: str, description: str) -> None:
        self.cli = cli
        self.builder = builder  # "buildx" or "classic-buildkit"
        self.description = description
        self._active: set[subprocess.Popen[str]] = set()
        self._active_lock = threading.Lock()

    def kill_all(self) -> None:
        """Stop every docker process still running (after Ctrl-C in the main thread)."""
        with self._active_lock:
            procs = list(self._active)
        for proc in procs:
            _kill_group(proc)

    # -- choosing the CLI ------------------------------------------------------
    @classmethod
    def detect(cls, env: Mapping[str, str] | None = None) -> ContainerEngine:
        env = os.environ if env is None else env
        candidates: list[str] = []
        for choice in (
            env.get("RELEASE_DOCKER"),
            env.get("DOCKER"),
            shutil.which("docker"),
            "/usr/bin/docker",
        ):
            if (
                choice
                and choice not in candidates
                and (os.path.exists(choice) or shutil.which(choice))
            ):
                candidates.append(choice)
        if not candidates:
            raise EngineError(f"no docker CLI found; {_START_HINT}")
        skipped: list[str] = []
        for cli in candidates:
            version = _client_version(cli)
            if version is None:
                skipped.append(f"{cli}: does not run")
                continue
            if _quiet_ok([cli, "buildx", "version"]):
                return cls(
                    cli, builder="buildx", description=f"{cli} {version}, docker buildx build"
                )
            if int(version.split(".")[0]) < 23:
                return cls(
                    cli,
                    builder="classic-buildkit",
                    description=f"{cli} {version}, classic docker build with BuildKit (DOCKER_BUILDKIT=1; buildx not installed)",
                )
            skipped.append(f"{cli} {version}: needs buildx, which is not installed")
        raise EngineError(
            "no docker CLI can build with BuildKit ("
            + "; ".join(skipped)
            + "); install buildx or Debian's docker.io"
        )

    # -- the choke point -------------------------------------------------------
    def run(
        self,
        args: Sequence[str],
        *,
        timeout: float | None = None,
        check: bool = True,
        stdin: str | None = None,
        env: Mapping[str, str] | None = None,
        log: Path | None = None,
        on_timeout: Callable[[], None] | None = None,
    ) -> RunResult:
        type(self).echo("+ docker " + " ".join(args))
        result = self._spawn(
            [self.cli, *args], timeout=timeout, stdin=stdin, env=env, log=log, on_timeout=on_timeout
        )
        if check and not result.ok:
            raise EngineError(self._failure(args, result, log))
        return result

    def run_tool(self, argv: Sequence[str], *, timeout: float | None = None) -> RunResult:
        """Run a tool that talks to the engine itself (container-structure-test), same rules."""
        type(self).echo("+ " + " ".join(argv))
        return self._spawn(
            list(argv), timeout=timeout, stdin=None, env=None, log=None, on_timeout=None
        )

    def _spawn(
        self,
        argv: list[str],
        *,
        timeout: float | None,
        stdin: str | None,
        env: Mapping[str, str] | None,
        log: Path | None,
        on_timeout: Callable[[], None] | None,
    ) -> RunResult:
        full_env = {**os.environ, **(env or {})}
        started = time.perf_counter()
        out_target: Any = subprocess.PIPE
        log_handle = None
        if log is not None:
            log.parent.mkdir(parents=True, exist_ok=True)
            log_handle = log.open("w", encoding="utf-8")
            out_target = log_handle
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=out_target,
                stderr=subprocess.STDOUT if log_handle else subprocess.PIPE,
                env=full_env,
                text=True,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise EngineError(f"{argv[0]} not found; {_START_HINT}") from None
        with self._active_lock:
            self._active.add(proc)
        try:
            out, err = proc.communicate(stdin, timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            timed_out = True
            if on_timeout:
                on_timeout()
        except BaseException:  # Ctrl-C: the child has its own session, stop it too
            _kill_group(proc)
            proc.wait()
            raise
        finally:
            with self._active_lock:
                self._active.discard(proc)
            if log_handle:
                log_handle.close()
        return RunResult(
            proc.returncode, out or "", err or "", time.perf_counter() - started, timed_out
        )

    def _failure(self, args: Sequence[str], result: RunResult, log: Path | None) -> str:
        if result.timed_out:
            return f"docker {args[0]} timed out after {result.seconds:.0f}s"
        text = (result.stderr or result.stdout).strip()
        if log is not None and log.exists():
            text = log.read_text(errors="replace").strip()
        if "Cannot connect to the Docker daemon" in text or "connect: no such file" in text:
            return f"no Docker Engine is reachable ({_last(text)}); {_START_HINT}"
        return f"docker {args[0]} failed: {_last(text)}"

    # -- queries -----------------------------------------------------------------
    def ping(self) -> str:
        result = self.run(["version", "--format", "{{.Server.Version}}"], timeout=20, check=False)
        if not result.ok or not result.stdout.strip():
            raise EngineError(
                f"no Docker Engine is reachable ({_last(result.stderr) or 'no answer'}); {_START_HINT}"
            )
        return result.stdout.strip()

    def inspect_image(self, ref: str) -> dict[str, Any] | None:
        result = self.run(["image", "inspect", ref], check=False, timeout=60)
        if not result.ok:
            if "No such image" in result.stderr or "No such object" in result.stderr:
                return None
            if "Cannot connect" in result.stderr:
                raise EngineError(self._failure(["image"], result, None))
            return None
        data: list[dict[str, Any]] = json.loads(result.stdout)
        return data[0] if data else None

    def image_id(self, ref: str) -> str | None:
        data = self.inspect_image(ref)
        return str(data["Id"]) if data else None

    def labelled(
        self, kind: str, label: str = MANAGED_LABEL, *, all_states: bool = True
    ) -> list[str]:
        """Ids of containers (``kind="container"``) or images carrying ``label``."""
        if kind == "container":
            args = ["ps", "--quiet", "--no-trunc", "--filter", f"label={label}"] + (
                ["--all"] if all_states else []
            )
        else:
            args = ["images", "--quiet", "--no-trunc", "--filter", f"label={label}"]
        return self.run(args, timeout=60).stdout.split()

    def remove_container(self, name: str) -> None:
        self.run(["rm", "--force", "--volumes", name], check=False, timeout=60)

    # -- actions -----------------------------------------------------------------
    def build(
        self,
        *,
        context: Path,
        dockerfile: Path,
        build_args: Mapping[str, str],
        labels: Mapping[str, str],
        iidfile: Path,
        platform: str | None,
        log: Path,
        timeout: float | None = None,
        no_cache: bool = False,
    ) -> RunResult:
        """Build without tagging; the caller tags by id once the build is complete."""
        args = (
            ["buildx", "build", "--load"] if self.builder == "buildx" else ["build", "--force-rm"]
        )
        if no_cache:
            args.append("--no-cache")
        args += ["--file", str(dockerfile), "--iidfile", str(iidfile), "--progress", "plain"]
        if platform:
            args += ["--platform", platform]
        for key, value in build_args.items():
            args += ["--build-arg", f"{key}={value}"]
        for key, value in labels.items():
            args += ["--label", f"{key}={value}"]
        args.append(str(context))
        env = {"DOCKER_BUILDKIT": "1"} if self.builder == "classic-buildkit" else {}
        return self.run(args, env=env, log=log, timeout=timeout, check=False)

    def tag(self, image_id: str, tags: Sequence[str]) -> None:
        for tag in tags:
            self.run(["tag", image_id, tag], timeout=60)

    def remove_image(self, ref: str) -> None:
        self.run(["image", "rm", "--force", ref], check=False, timeout=60)

    def run_container(
        self,
        image: str,
        argv: Sequence[str],
        *,
        timeout: float,
        entrypoint: str | None = None,
        labels: Mapping[str, str] | None = None,
        stdin: str | None = None,
        gpus: bool = False,
        extra: Sequence[str] = (),
    ) -> RunResult:
        """``docker run --rm`` with a name and labels; killed and removed on timeout or Ctrl-C."""
        name = f"release-{uuid.uuid4().hex[:12]}"
        args = [
            "run",
            "--rm",
            "--name",
            name,
            "--label",
            f"{MANAGED_LABEL}=true",
            "--network",
            "none",
        ]
        for key, value in (labels or {}).items():
            args += ["--label", f"{key}={value}"]
        if stdin is not None:
            args.append("--interactive")
        if gpus:
            args += ["--gpus", "all"]
        if entrypoint is not None:
            args += ["--entrypoint", entrypoint]
        args += [*extra, image, *argv]
        try:
            return self.run(
                args,
                timeout=timeout,
                check=False,
                stdin=stdin,
                on_timeout=lambda: self.remove_container(name),
            )
        except BaseException:
            self.remove_container(name)
            raise

    def import_rootfs(self, tarball: Path, ref: str, changes: Sequence[str]) -> None:
        args = ["import"]
        for change in changes:
            args += ["--change", change]
        args += [str(tarball), ref]
        self.run(args, timeout=600)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def _client_version(cli: str) -> str | None:
    try:
        proc = subprocess.run(
            [cli, "version", "--format", "{{.Client.Version}}"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = proc.stdout.strip().splitlines()
    return text[0] if text and text[0][:1].isdigit() else None


def _quiet_ok(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=20, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _last(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""

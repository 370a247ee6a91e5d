"""The container engine adapter: the only module that runs ``docker``.

Every call goes through :meth:`ContainerEngine.run`, which echoes the command when
asked, enforces a timeout and turns failures into :class:`EngineError`. The CLI is
chosen once: buildx where it works; else a client whose classic builder runs BuildKit
itself (``DOCKER_BUILDKIT=1``; docker < 23); the choice is said in the output. What a
candidate CLI answered (its client version, whether ``buildx`` works) is cached in the
user cache dir, keyed by the CLI's resolved path, mtime and size and by the buildx
plugins present, so a warm run probes nothing. Every container and image made here
carries the ``org.release.managed`` label, so nothing is left behind unnoticed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from release.errors import EngineError

__all__ = ["MANAGED_LABEL", "ContainerEngine", "RunResult", "user_cache_dir"]

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
        probes = _ProbeCache(env)
        try:
            for cli in candidates:
                version, buildx = probes.answer(cli)
                if version is None:
                    skipped.append(f"{cli}: does not run")
                    continue
                if buildx:
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
        finally:
            probes.save()
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
        if _unreachable(text):
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

    def inspect_images(self, refs: Sequence[str]) -> dict[str, dict[str, Any] | None]:
        """``docker image inspect REF...`` in one call: each ref's data, None where it is missing.

        Doubles as the ping: an engine that does not answer raises the :class:`EngineError`
        that says how to start one. docker prints the images found as one JSON array and
        exits 1 naming each missing ref on stderr; entries are matched back to refs by their
        tags, digests or id. A ref neither matched nor reported missing (a spelling we do
        not recognise, or another error) is inspected on its own, as :meth:`inspect_image`.
        """
        unique = list(dict.fromkeys(refs))
        if not unique:
            self.ping()
            return {}
        result = self.run(["image", "inspect", *unique], check=False, timeout=60)
        errors = result.stderr.strip()
        if result.timed_out or _unreachable(errors):
            raise EngineError(
                f"no Docker Engine is reachable ({'no answer within 60s' if result.timed_out else _last(errors)}); {_START_HINT}"
            )
        missing = {m.strip() for m in _MISSING.findall(errors)}
        try:
            parsed = json.loads(result.stdout or "[]")
        except json.JSONDecodeError:
            parsed = []
        found: list[dict[str, Any]] = [
            d for d in (parsed if isinstance(parsed, list) else []) if isinstance(d, dict)
        ]
        out: dict[str, dict[str, Any] | None] = {}
        for ref in unique:
            if ref in missing:
                out[ref] = None
                continue
            match = next((data for data in found if _names(data, ref)), None)
            out[ref] = match if match is not None else self.inspect_image(ref)
        return out

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

    def remove_if_dangling(self, image_id: str, data: Mapping[str, Any] | None = None) -> bool:
        """Remove a project image (``org.release.managed``) that no tag points at and no
        container uses, e.g. the one a rebuilt tag pointed at before. ``data``: its inspect
        data when already at hand. Anything else is left alone; True when removed."""
        if data is None:
            data = self.inspect_image(image_id)
        if data is None or data.get("RepoTags"):
            return False
        labels = (data.get("Config") or {}).get("Labels") or {}
        if labels.get(MANAGED_LABEL) != "true":
            return False
        users = self.run(
            ["ps", "--all", "--quiet", "--filter", f"ancestor={data['Id']}"],
            check=False,
            timeout=60,
        )
        if not users.ok or users.stdout.strip():
            return False
        # not --force: docker itself refuses if a tag or a container appeared meanwhile
        return self.run(["image", "rm", str(data["Id"])], check=False, timeout=60).ok

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
        import uuid

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


class _ProbeFailed(Exception):
    """A probe that could not finish (timeout, spawn error): its answer is not cached."""


def _client_version(cli: str) -> str | None:
    try:
        proc = subprocess.run(
            [cli, "version", "--format", "{{.Client.Version}}"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise _ProbeFailed(str(err)) from None
    text = proc.stdout.strip().splitlines()
    return text[0] if text and text[0][:1].isdigit() else None


def _quiet_ok(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=20, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired) as err:
        raise _ProbeFailed(str(err)) from None


def user_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """The user's cache dir for this tool (``RELEASE_CACHE_DIR`` overrides); made if missing."""
    env = os.environ if env is None else env
    override = env.get("RELEASE_CACHE_DIR")
    if override:
        root = Path(override)
    else:
        import platformdirs

        root = Path(platformdirs.user_cache_dir("release"))
    root.mkdir(parents=True, exist_ok=True)
    return root


_PROBE_FILE = "engine-cli.json"
_PROBE_SCHEMA = 1
_PLUGIN_DIRS = (
    "/usr/local/lib/docker/cli-plugins",
    "/usr/local/libexec/docker/cli-plugins",
    "/usr/lib/docker/cli-plugins",
    "/usr/libexec/docker/cli-plugins",
)


def _stat_key(path: str) -> list[Any] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [path, st.st_mtime_ns, st.st_size]


class _ProbeCache:
    """What each candidate CLI answered, kept in the user cache dir between runs.

    An entry holds only while the CLI's resolved path, mtime and size, and the buildx
    plugins docker would find, are as they were when it was probed; anything else (no
    file, unreadable, another schema, a changed binary) means probing again.
    """

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.path: Path | None = None
        self.entries: dict[str, Any] = {}
        self.dirty: dict[str, Any] = {}
        try:
            self.path = user_cache_dir(env) / _PROBE_FILE
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("schema") == _PROBE_SCHEMA:
                clis = data.get("clis")
                if isinstance(clis, dict):
                    self.entries = clis
        except (OSError, ValueError):
            pass

    def _plugins(self) -> list[list[Any]]:
        config = self.env.get("DOCKER_CONFIG") or os.path.join(
            self.env.get("HOME") or os.path.expanduser("~"), ".docker"
        )
        dirs = (os.path.join(config, "cli-plugins"), *_PLUGIN_DIRS)
        return [key for d in dirs if (key := _stat_key(os.path.join(d, "docker-buildx")))]

    def _key(self, cli: str) -> tuple[str, dict[str, Any]] | None:
        found = cli if os.sep in cli else shutil.which(cli)
        if not found:
            return None
        resolved = os.path.realpath(found)
        stat = _stat_key(resolved)
        if stat is None:
            return None
        return resolved, {"mtime_ns": stat[1], "size": stat[2], "plugins": self._plugins()}

    def answer(self, cli: str) -> tuple[str | None, bool]:
        """``(client version or None, buildx works)`` for ``cli``: cached, else probed."""
        key = self._key(cli)
        if key is not None:
            resolved, fingerprint = key
            entry = self.entries.get(resolved)
            if (
                isinstance(entry, dict)
                and all(entry.get(k) == v for k, v in fingerprint.items())
                and (entry.get("version") is None or isinstance(entry.get("version"), str))
                and isinstance(entry.get("buildx"), bool)
            ):
                return entry["version"], entry["buildx"]
        try:
            version = _client_version(cli)
        except _ProbeFailed:
            return None, False
        try:
            buildx = version is not None and _quiet_ok([cli, "buildx", "version"])
        except _ProbeFailed:
            return version, False
        if key is not None:
            resolved, fingerprint = key
            self.dirty[resolved] = {**fingerprint, "version": version, "buildx": buildx}
        return version, buildx

    def save(self) -> None:
        if not self.dirty or self.path is None:
            return
        try:
            try:  # keep what another process wrote meanwhile
                on_disk = json.loads(self.path.read_text(encoding="utf-8"))
                clis = on_disk.get("clis") if on_disk.get("schema") == _PROBE_SCHEMA else None
            except (OSError, ValueError, AttributeError):
                clis = None
            merged = {**(clis if isinstance(clis, dict) else {}), **self.dirty}
            text = json.dumps({"schema": _PROBE_SCHEMA, "clis": merged}, indent=2, sort_keys=True)
            fd, tmp = tempfile.mkstemp(prefix=".engine-cli-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text + "\n")
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError:
            pass  # a cache that cannot be written only means probing next time


_MISSING = re.compile(r"No such (?:image|object): (\S+)")


def _unreachable(text: str) -> bool:
    return any(
        marker in text
        for marker in (
            "Cannot connect to the Docker daemon",
            "connect: no such file",
            "permission denied while trying to connect to the Docker daemon",
            "error during connect",
        )
    )


def _ref_names(ref: str) -> set[str]:
    """Spellings of ``ref`` as docker reports it in RepoTags and RepoDigests."""
    name, at, digest = ref.partition("@")
    for prefix in ("docker.io/", "index.docker.io/"):
        if name.startswith(prefix):
            name = name.removeprefix(prefix)
            if name.startswith("library/") and name.count("/") == 1:
                name = name.removeprefix("library/")
            break
    tagged = ":" in name.rsplit("/", 1)[-1]
    if at:
        return {ref, f"{name.rsplit(':', 1)[0] if tagged else name}@{digest}"}
    return {ref, name if tagged else f"{name}:latest"}


def _names(data: Mapping[str, Any], ref: str) -> bool:
    """Whether inspect ``data`` is the image ``ref`` names (a tag, a digest or its id)."""
    image_id = str(data.get("Id", ""))
    if ref == image_id or (
        re.fullmatch(r"(sha256:)?[0-9a-f]{12,64}", ref)
        and image_id.startswith(ref if ref.startswith("sha256:") else "sha256:" + ref)
    ):
        return True
    known = set(data.get("RepoTags") or ()) | set(data.get("RepoDigests") or ())
    return bool(_ref_names(ref) & known)


def _last(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""

"""Which docker CLI to use, and how it builds: chosen once, cached between runs.

Candidates, in order: ``$RELEASE_DOCKER``, ``$DOCKER``, the ``docker`` on PATH,
``/usr/bin/docker``. The first that runs wins: with ``docker buildx build`` where
buildx works, else with its classic builder running BuildKit (``DOCKER_BUILDKIT=1``;
docker < 23). A newer client without buildx is skipped, and said so. What each
candidate answered (its client version, whether buildx works) is cached in the user
cache dir, keyed by the CLI's resolved path, mtime and size and by the buildx plugins
present, so a warm run probes nothing.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from release.adapters import process
from release.adapters.cache import user_cache_dir
from release.adapters.files import atomic_write
from release.core.json_text import parse_json
from release.errors import EngineError

__all__ = ["START_HINT", "choose_cli"]

START_HINT = (
    "start one as root: dockerd >/tmp/dockerd.log 2>&1 & (Debian: apt-get install docker.io), "
    "or point DOCKER_HOST at a running engine"
)


def _candidates(env: Mapping[str, str]) -> list[str]:
    found: list[str] = []
    for choice in (
        env.get("RELEASE_DOCKER"),
        env.get("DOCKER"),
        shutil.which("docker"),
        "/usr/bin/docker",
    ):
        if choice and choice not in found and (os.path.exists(choice) or shutil.which(choice)):
            found.append(choice)
    return found


def choose_cli(env: Mapping[str, str] | None = None) -> tuple[str, str, str]:
    """``(cli, builder, description)``: builder is ``"buildx"`` or ``"classic-buildkit"``."""
    env = os.environ if env is None else env
    candidates = _candidates(env)
    if not candidates:
        raise EngineError(f"no docker CLI found; {START_HINT}")
    skipped: list[str] = []
    probes = _ProbeCache(env)
    try:
        for cli in candidates:
            version, buildx = probes.answer(cli)
            if version is None:
                skipped.append(f"{cli}: does not run")
            elif buildx:
                return cli, "buildx", f"{cli} {version}, docker buildx build"
            elif int(version.split(".")[0]) < 23:
                how = "classic docker build with BuildKit (DOCKER_BUILDKIT=1; buildx not installed)"
                return cli, "classic-buildkit", f"{cli} {version}, {how}"
            else:
                skipped.append(f"{cli} {version}: needs buildx, which is not installed")
    finally:
        probes.save()
    raise EngineError(
        "no docker CLI can build with BuildKit ("
        + "; ".join(skipped)
        + "); install buildx or Debian's docker.io"
    )


class _ProbeFailed(Exception):
    """A probe that could not finish (timeout, spawn error): its answer is not cached."""


def _probe(argv: list[str]) -> process.Result:
    try:
        result = process.run(argv, error=EngineError, timeout=20, own_group=True)
    except EngineError as err:
        raise _ProbeFailed(err.message) from None
    if result.timed_out:
        raise _ProbeFailed(f"{argv[0]} did not answer within 20s")
    return result


def _client_version(cli: str) -> str | None:
    text = _probe([cli, "version", "--format", "{{.Client.Version}}"]).stdout.strip().splitlines()
    return text[0] if text and text[0][:1].isdigit() else None


def _quiet_ok(argv: list[str]) -> bool:
    return _probe(argv).ok


_PROBE_FILE = "engine-cli.json"
_PROBE_SCHEMA = 1
_PLUGIN_DIRS = (
    "/usr/local/lib/docker/cli-plugins",
    "/usr/local/libexec/docker/cli-plugins",
    "/usr/lib/docker/cli-plugins",
    "/usr/libexec/docker/cli-plugins",
)


def _stat_key(path: str) -> list[str | int] | None:
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
            data = parse_json(self.path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("schema") == _PROBE_SCHEMA:
                clis = data.get("clis")
                if isinstance(clis, dict):
                    self.entries = clis
        except (OSError, ValueError):
            pass

    def _plugins(self) -> list[list[str | int]]:
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
                on_disk = parse_json(self.path.read_text(encoding="utf-8"))
                clis = on_disk.get("clis") if on_disk.get("schema") == _PROBE_SCHEMA else None
            except (OSError, ValueError, AttributeError):
                clis = None
            merged = {**(clis if isinstance(clis, dict) else {}), **self.dirty}
            text = json.dumps({"schema": _PROBE_SCHEMA, "clis": merged}, indent=2, sort_keys=True)
            atomic_write(self.path, text + "\n")
        except OSError:
            pass  # a cache that cannot be written only means probing next time

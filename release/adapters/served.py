"""A container that serves: started detached with one port published on 127.0.0.1, asked
over HTTP on loopback only, and removed whatever ends its ``with`` block (a failure,
Ctrl-C, SIGTERM).

Requests go to ``127.0.0.1`` and nowhere else, never through a proxy; every wait is
bounded by a deadline.
"""

from __future__ import annotations

import contextlib
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from release.adapters.engine import ContainerEngine, RunResult
from release.errors import EngineError

__all__ = ["Answer", "ServedContainer", "ask", "published_port", "serving_container"]

_POLL = 0.05  # seconds between two looks at a server coming up
_LOOK = 1.0  # seconds between two questions to the engine whether the container still runs
_SETTLE = 0.3  # seconds for a container creation already asked of the engine to finish
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy


class Answer:
    """One HTTP answer: ``status`` 0 when none came (``error`` says why)."""

    def __init__(self, status: int, body: str, error: str = "") -> None:
        self.status = status
        self.body = body
        self.error = error


def ask(
    port: int, path: str, *, method: str = "GET", body: object = None, timeout: float
) -> Answer:
    """One request to ``127.0.0.1:port``; a JSON ``body`` when not None."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=data,
        method=method,
        headers={"Content-Type": "application/json"} if data is not None else {},
    )
    try:
        with _OPENER.open(request, timeout=max(timeout, 0.05)) as answer:
            return Answer(answer.status, answer.read().decode("utf-8", "replace"))
    except urllib.error.HTTPError as err:
        return Answer(err.code, err.read().decode("utf-8", "replace"))
    except (OSError, ValueError) as err:  # refused, reset, timed out, a broken answer
        return Answer(0, "", str(getattr(err, "reason", err)) or type(err).__name__)


class ServedContainer:
    def __init__(self, engine: ContainerEngine, name: str, port: int) -> None:
        self.engine = engine
        self.name = name
        self.port = port  # the host port on 127.0.0.1; 0 when the container stopped first

    def state(self) -> tuple[bool, int]:
        """(running, exit code)."""
        result = self.engine.run(
            ["inspect", "--format", "{{.State.Running}} {{.State.ExitCode}}", self.name],
            check=False,
            timeout=30,
        )
        running, _, code = result.stdout.strip().partition(" ")
        return running == "true", int(code) if code.lstrip("-").isdigit() else -1

    def logs(self, lines: int = 10) -> list[str]:
        """The container's last ``lines`` lines of output (stdout and stderr)."""
        result = self.engine.run(["logs", "--tail", str(lines), self.name], check=False, timeout=30)
        text = (result.stdout + result.stderr).strip()
        return text.splitlines()[-lines:] if text else []

    def exec(self, argv: Sequence[str], *, timeout: float) -> RunResult:
        return self.engine.run(["exec", self.name, *argv], check=False, timeout=timeout)

    def copy_out(self, path: str, to: Path) -> None:
        self.engine.run(["cp", f"{self.name}:{path}", str(to)], timeout=120)

    def copy_in(self, source: Path, path: str) -> None:
        self.engine.run(["cp", str(source), f"{self.name}:{path}"], timeout=120)

    def wait_healthy(self, path: str, *, deadline: float) -> tuple[Answer | None, str]:
        """Poll ``path`` until it answers 200, the container stops, or ``deadline`` (a
        ``time.monotonic`` value) passes: (the healthy answer, "") or (None, why not)."""
        last, looked = "no answer", 0.0
        if not self.port:  # it stopped before its port could be read: nothing will answer
            _, code = self.state()
            return None, f"the container stopped (exit code {code}) before {path} answered"
        while True:
            now = time.monotonic()
            if now >= deadline:
                return None, f"not healthy in time (last: {last})"
            answer = ask(self.port, path, timeout=min(2.0, deadline - now))
            if answer.status == 200:
                return answer, ""
            last = f"status {answer.status}" if answer.status else answer.error
            if now - looked >= _LOOK:  # the engine is asked once a second, not every poll
                looked = now
                running, code = self.state()
                if not running:
                    return None, f"the container stopped (exit code {code}) before {path} answered"
            time.sleep(_POLL)


def published_port(engine: ContainerEngine, name: str, port: int) -> int:
    """The host port ``port`` is published on; 0 when the container has already stopped
    (a stopped container publishes nothing: its exit is the answer, not a missing port)."""
    result = engine.run(["port", name, f"{port}/tcp"], check=False, timeout=30)
    for line in result.stdout.split():
        host, _, number = line.rpartition(":")
        if host == "127.0.0.1" and number.isdigit():
            return int(number)
    running, _ = ServedContainer(engine, name, 0).state()
    if not running:
        return 0
    raise EngineError(f"container {name} has no port {port} published on 127.0.0.1")


@contextlib.contextmanager
def serving_container(
    engine: ContainerEngine,
    image: str,
    argv: Sequence[str] = (),
    *,
    port: int,
    entrypoint: str | None = None,
    options: Sequence[str] = (),
    labels: Mapping[str, str] | None = None,
    gpus: bool = False,
) -> Iterator[ServedContainer]:
    """``image`` started detached, ``port`` published on a free port of 127.0.0.1. The
    container is named before it exists, so it is removed whatever ends the block, a
    ``docker run`` cut short by Ctrl-C included."""
    name, identity = engine.new_container()
    args = ["run", "--detach", *identity]
    for key, value in (labels or {}).items():
        args += ["--label", f"{key}={value}"]
    args += ["--publish", f"127.0.0.1::{port}", "--pull", "never"]
    if gpus:
        args += ["--gpus", "all"]
    if entrypoint is not None:
        args += ["--entrypoint", entrypoint]
    args += [*options, image, *argv]
    try:
        engine.run(args, timeout=120)
        yield ServedContainer(engine, name, published_port(engine, name, port))
    except BaseException:
        engine.remove_container(name)
        time.sleep(_SETTLE)  # a docker run killed just now may still have its container made
        engine.remove_container(name)
        raise
    engine.remove_container(name)

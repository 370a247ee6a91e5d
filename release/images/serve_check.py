"""The ``serve`` smoke check: the image started detached with its port published on
127.0.0.1, healthy within the start-up timeout, then asked each configured request and
judged (:func:`release.core.serving.judge`).

It fails on a wrong answer and on a server that stops at start, and times out on one that
never gets healthy or never answers; each of those shows the container's last log lines.
The container is removed in every case, Ctrl-C and SIGTERM included.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from release.adapters.devices import DeviceAccess
from release.adapters.engine import ContainerEngine
from release.adapters.served import ServedContainer, ask, serving_container
from release.core.matrix import Check
from release.core.serving import Request, Serving, judge
from release.errors import EngineError
from release.images.smoke_checks import CheckResult, CheckStatus

__all__ = ["Failure", "ask_all", "healthy", "run_serve_check", "start_argv"]

LOG_LINES = 10


class Failure(Exception):
    """A served container answered wrong or not in time; ``log`` is its last output."""

    def __init__(self, reason: str, *, timed_out: bool = False, log: Sequence[str] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.timed_out = timed_out
        self.log = tuple(log)


def start_argv(command: Sequence[str]) -> tuple[list[str], str | None]:
    """(arguments, entrypoint) for ``docker run``: the image's own when ``command`` is empty."""
    return (list(command[1:]), command[0]) if command else ([], None)


def healthy(box: ServedContainer, serving: Serving, deadline: float) -> float:
    """Wait until ``box`` is healthy; the seconds it took. Raises :class:`Failure`."""
    started = time.monotonic()
    answer, why = box.wait_healthy(
        serving.health, deadline=min(deadline, started + serving.startup_timeout)
    )
    if answer is None:
        raise Failure(why, timed_out="in time" in why, log=box.logs(LOG_LINES))
    return time.monotonic() - started


def ask_all(box: ServedContainer, requests: Sequence[Request], deadline: float) -> None:
    """Send each request in turn and judge its answer. Raises :class:`Failure`."""
    for request in requests:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise Failure(f"{request.what}: no time left", timed_out=True, log=box.logs(LOG_LINES))
        answer = ask(
            box.port, request.path, method=request.method, body=request.body, timeout=remaining
        )
        if answer.status == 0:
            raise Failure(
                f"{request.what}: no answer ({answer.error})",
                timed_out="timed out" in answer.error,
                log=box.logs(LOG_LINES),
            )
        reason = judge(request, answer.status, answer.body)
        if reason is not None:
            raise Failure(reason, log=box.logs(LOG_LINES))


def run_serve_check(
    engine: ContainerEngine, image: str, check: Check, device: DeviceAccess | None = None
) -> CheckResult:
    """``device``: how the variant's device is given to a ``gpu = true`` check (None or a
    CPU variant's: it runs without one)."""
    serving = check.serving or Serving()
    given = device if check.gpu and device is not None else DeviceAccess(True)
    started = time.perf_counter()
    deadline = time.monotonic() + check.timeout
    argv, entrypoint = start_argv(serving.command)
    try:
        with serving_container(
            engine,
            image,
            argv,
            port=serving.port,
            entrypoint=entrypoint,
            options=(*serving.run_options, *given.options),
            labels={"org.release.smoke": check.name},
            gpus=given.gpus,
        ) as box:
            healthy(box, serving, deadline)
            ask_all(box, check.requests, deadline)
    except Failure as failure:
        status = CheckStatus.TIMED_OUT if failure.timed_out else CheckStatus.FAILED
        seconds = time.perf_counter() - started
        return CheckResult(check.name, status, seconds, failure.reason, failure.log)
    except EngineError as err:
        return CheckResult(check.name, CheckStatus.FAILED, time.perf_counter() - started, str(err))
    return CheckResult(check.name, CheckStatus.PASSED, time.perf_counter() - started)

"""The snapshot round trip: a real checkpoint and restore of the image's running server.

1. start a container whose first process is ``RUNTIME hold``, with the configured run
   options, and in it the server (``RUNTIME start -- SERVER...``); wait for health: the
   time from the server's start (the ``start`` command returned) to its first answer is
   the *cold start*, measured as the first answer after a restore is;
2. warm it with the ``warm`` requests;
3. checkpoint it (``RUNTIME dump DIR``);
4. stop the original: its container is removed, with the process's PID;
5. restore into a fresh container of the same image and options (``RUNTIME restore DIR``,
   the checkpoint copied in);
6. check it answers, and that its state came along (the ``carried`` requests);
7. record the dump and restore times (the runtime's own when it prints them, as one JSON
   line with ``seconds``), the time from the restore's end to the first answer, and the
   cold start.

Any step that fails fails the round trip with its reason and the runtime's or the
container's last lines; nothing here can pass without a restored server answering right.
Both containers are removed whatever happens, Ctrl-C and SIGTERM included.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

from release.adapters.engine import ContainerEngine, RunResult
from release.adapters.leftovers import scratch
from release.adapters.served import ServedContainer, serving_container
from release.core.json_text import JSONValue, parse_json
from release.core.matrix import SnapshotRule
from release.errors import EngineError
from release.images.serve_check import LOG_LINES, Failure, ask_all, healthy, start_argv

__all__ = ["CHECKPOINT_DIR", "RoundTrip", "plan_lines", "round_trip"]

CHECKPOINT_DIR = "/tmp/release-checkpoint"  # in the containers


@dataclass(frozen=True)
class RoundTrip:
    passed: bool
    reason: str  # why it failed; what it did when it passed
    figures: Mapping[str, float] = field(default_factory=dict)  # seconds
    log: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {
            "passed": self.passed,
            "output": self.reason,
            "figures": {k: round(v, 4) for k, v in self.figures.items()},
        }
        if self.log:
            out["log"] = [*self.log]
        return out


def _step(box: ServedContainer, argv: Sequence[str], what: str, deadline: float) -> RunResult:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise Failure(f"{what}: no time left", timed_out=True)
    run = box.exec(argv, timeout=remaining)
    said = (run.stdout + run.stderr).strip().splitlines()
    if run.timed_out:
        raise Failure(f"{what} timed out", timed_out=True, log=said[-LOG_LINES:])
    if not run.ok:
        first = next((line for line in said if line.strip()), f"exit {run.status}")
        raise Failure(f"{what} failed: {first.strip()}", log=said[-LOG_LINES:])
    return run


def _seconds(run: RunResult, wall: float) -> float:
    """The runtime's own figure (a JSON line with ``seconds``), else the wall time."""
    for line in reversed(run.stdout.strip().splitlines()):
        try:
            said = parse_json(line)
        except ValueError:
            continue
        if isinstance(said, dict) and isinstance(said.get("seconds"), int | float):
            return float(said["seconds"])
    return wall


def round_trip(
    engine: ContainerEngine,
    image: str,
    rule: SnapshotRule,
    *,
    default_command: Sequence[str],
    labels: Mapping[str, str],
) -> RoundTrip:
    """``default_command``: the image's own entrypoint and command, served when the rule
    names no ``serve`` command."""
    serving = rule.serving
    server = list(serving.command or default_command)
    if not rule.runtime:
        return RoundTrip(False, "no runtime configured ([tool.release.images.snapshot] runtime)")
    if not server:
        return RoundTrip(False, "nothing to serve: the image has no entrypoint and no serve")
    hold_argv, entrypoint = start_argv([*rule.runtime, "hold"])
    runtime = list(rule.runtime)
    deadline = time.monotonic() + rule.timeout
    figures: dict[str, float] = {}

    def container() -> AbstractContextManager[ServedContainer]:
        return serving_container(
            engine,
            image,
            hold_argv,
            port=serving.port,
            entrypoint=entrypoint,
            options=serving.run_options,
            labels=labels,
        )

    try:
        with scratch("checkpoint") as tmp:
            saved = Path(tmp) / "checkpoint"
            with container() as first:
                _step(first, [*runtime, "start", "--", *server], "starting the server", deadline)
                started = time.perf_counter()  # the server runs: from here as after a restore
                healthy(first, serving, deadline)
                figures["cold_start_s"] = time.perf_counter() - started
                ask_all(first, rule.warm, deadline)
                started = time.perf_counter()
                run = _step(first, [*runtime, "dump", CHECKPOINT_DIR], "the checkpoint", deadline)
                figures["dump_s"] = _seconds(run, time.perf_counter() - started)
                first.copy_out(CHECKPOINT_DIR, saved)
            # the original is gone with its container; the restore gets a fresh one
            with container() as second:
                second.copy_in(saved, CHECKPOINT_DIR)
                started = time.perf_counter()
                run = _step(second, [*runtime, "restore", CHECKPOINT_DIR], "the restore", deadline)
                restored = time.perf_counter()
                figures["restore_s"] = _seconds(run, restored - started)
                healthy(second, serving, deadline)
                figures["first_answer_s"] = time.perf_counter() - restored
                ask_all(second, rule.carried, deadline)
    except Failure as failure:
        return RoundTrip(False, failure.reason, figures, failure.log)
    except EngineError as err:
        return RoundTrip(False, str(err), figures)
    said = ", ".join(
        f"{name[:-2].replace('_', ' ')} {value * 1000:.0f} ms" for name, value in figures.items()
    )
    carried = (
        f"{len(rule.carried)} check(s) of the carried state passed"
        if rule.carried
        else "no carried-state checks configured"
    )
    return RoundTrip(
        True, f"restored into a fresh container and answered; {carried}; {said}", figures
    )


def plan_lines(rule: SnapshotRule, image: str, default_command: Sequence[str]) -> list[str]:
    """What :func:`round_trip` would run, as a user reads it (``--dry-run``)."""
    serving = rule.serving
    runtime = " ".join(rule.runtime) or "(no runtime configured)"
    server = " ".join(serving.command or default_command) or "(the image's entrypoint)"
    options = " ".join(serving.run_options) or "(no run options: CRIU will lack privileges)"
    return [
        f"  containers: docker run --detach --publish 127.0.0.1::{serving.port} {options}",
        f"              --entrypoint {rule.runtime[0] if rule.runtime else '?'} {image} "
        + " ".join([*rule.runtime[1:], "hold"]),
        f"  1. {runtime} start -- {server}; wait for {serving.health} "
        f"(up to {serving.startup_timeout:.0f}s): the cold start",
        "  2. warm: " + (", ".join(r.what for r in rule.warm) or "no requests"),
        f"  3. {runtime} dump {CHECKPOINT_DIR}",
        "  4. stop the original (its container is removed)",
        f"  5. a fresh container, the checkpoint copied in; {runtime} restore {CHECKPOINT_DIR}",
        f"  6. wait for {serving.health}; carried: "
        + (", ".join(r.what for r in rule.carried) or "no checks"),
        f"  7. record dump, restore, first answer and cold start (limit {rule.timeout:.0f}s in all)",
    ]

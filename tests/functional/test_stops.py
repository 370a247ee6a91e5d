"""A stop is never lost: SIGTERM (or Ctrl-C) that lands where Python ignores exceptions (an
at-fork hook of ``logging`` as a subprocess starts, a ``__del__``) is delivered again, and
the run stops as it would anywhere else."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.docker_support import default_sigint

CODE = """
import contextlib, gc, signal, sys, time
from release.cli.entry import _terminate, sigterm_stops
from release.errors import Terminated

@contextlib.contextmanager
def handler_alone():  # the handler without the hook: what a dropped stop does
    signal.signal(signal.SIGTERM, _terminate)
    yield

class Dropped:
    def __del__(self):
        signal.raise_signal(signal.{name})
        for _ in range(1000):  # the handler runs here, inside __del__: its raise is ignored
            pass

stopped = "not stopped"
with {guard}():
    try:
        Dropped()
        gc.collect()
        for _ in range(100):  # bounded: 1 s at most
            time.sleep(0.01)
    except (Terminated, KeyboardInterrupt) as err:
        stopped = type(err).__name__
print(stopped)
"""


@pytest.mark.parametrize(
    ("name", "stop"), [("SIGTERM", "Terminated"), ("SIGINT", "KeyboardInterrupt")]
)
def test_a_stop_raised_where_exceptions_are_ignored_still_stops_the_run(
    name: str, stop: str
) -> None:
    def run(guard: str) -> subprocess.CompletedProcess[str]:
        code = CODE.replace("{name}", name).replace("{guard}", guard)
        return subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            preexec_fn=default_sigint,
        )

    alone = run("handler_alone")  # where it lands Python drops it: the run goes on
    assert "Exception ignored in" in alone.stderr and alone.stdout.strip() == "not stopped"
    guarded = run("sigterm_stops")
    assert guarded.stdout.strip() == stop, guarded.stderr

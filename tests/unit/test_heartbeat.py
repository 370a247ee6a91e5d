"""The build heartbeat without a Docker Engine: what a heartbeat line says (a fake clock),
the thread at a short interval and how it stops, ``RELEASE_HEARTBEAT``, and log tails."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from release.errors import ConfigError
from release.images import heartbeat as heartbeat_module
from release.images.heartbeat import Heartbeat, elapsed, heartbeat_interval, log_tail
from release.images.progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def heartbeat_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "heartbeat"]


def wait_for(condition: object, limit: float = 5.0) -> None:
    deadline = time.monotonic() + limit
    while not condition() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.01)


def test_a_heartbeat_line_per_running_build(tmp_path: Path) -> None:
    clock, said = Clock(), []
    log = tmp_path / "build-cu129.log"
    log.write_text("#5 [2/3] RUN make\n#5 12.3 compiling kernels 17/80\n\n", encoding="utf-8")
    progress = Progress(["cu128", "cu129", "cu130", "later"], said.append, clock=clock)
    progress.update("cu128", "base nvidia/cuda:12.8.1-base-ubuntu22.04")
    progress.update("cu129", "building", log=log)
    progress.update("cu130", "building", log=tmp_path / "not-written-yet.log")
    clock.now += 125
    progress.update("cu128", "unchanged, not rebuilt -> x:v1-cu128", final=True)
    said.clear()
    progress.beat()
    assert said == [  # a finished build says nothing, nor one that has not started
        "build(cu129): still running (2m05s): building; log: #5 12.3 compiling kernels 17/80",
        "build(cu130): still running (2m05s): building",
    ]
    clock.now += 3600
    said.clear()
    progress.beat()
    assert said[0].startswith("build(cu129): still running (1h02m): building; log: ")


def test_no_heartbeat_without_an_interval() -> None:
    said: list[str] = []
    with Progress(["a"], said.append) as progress:
        progress.update("a", "building")
    assert heartbeat_threads() == []


def test_the_thread_beats_at_its_interval_and_stops_at_the_end(tmp_path: Path) -> None:
    said: list[str] = []
    with Progress(["a", "b"], said.append, heartbeat=0.02) as progress:
        assert [t.daemon for t in heartbeat_threads()] == [True]
        progress.update("a", "building", log=tmp_path / "a.log")
        (tmp_path / "a.log").write_text("step one\nstep two\n", encoding="utf-8")
        wait_for(lambda: len([s for s in said if "step two" in s]) >= 2)
        progress.update("a", "built", final=True)
    assert heartbeat_threads() == []  # joined on the way out
    beats = [s for s in said if "still running" in s]
    assert len(beats) >= 2
    assert all(s.startswith("build(a): still running (0s): building") for s in beats)
    count = len(said)
    time.sleep(0.1)
    assert len(said) == count  # nothing said after the run


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit])
def test_the_thread_stops_when_the_run_is_stopped(stop: type[BaseException]) -> None:
    said: list[str] = []
    with pytest.raises(stop), Progress(["a"], said.append, heartbeat=0.01) as progress:
        progress.update("a", "building")
        wait_for(lambda: any("still running" in s for s in said))
        raise stop()
    assert heartbeat_threads() == []
    count = len(said)
    time.sleep(0.05)
    assert len(said) == count


def test_quiet_stops_the_heartbeat_before_the_run_ends() -> None:
    said: list[str] = []
    with Progress(["a"], said.append, heartbeat=0.01) as progress:
        progress.update("a", "building")
        wait_for(lambda: any("still running" in s for s in said))
        progress.quiet()  # as a stopped build cleans up
        assert heartbeat_threads() == []
        count = len(said)
        time.sleep(0.05)
        assert len(said) == count


def test_a_closed_output_ends_the_heartbeat_quietly() -> None:
    def closed() -> None:
        raise ValueError("I/O operation on closed file")

    beat = Heartbeat(0.01, closed).start()
    wait_for(lambda: not beat.running)
    assert not beat.running
    beat.stop()


def test_the_environment_overrides_the_config() -> None:
    assert heartbeat_interval(60.0, {}) == 60.0
    assert heartbeat_interval(60.0, {"RELEASE_HEARTBEAT": ""}) == 60.0
    assert heartbeat_interval(60.0, {"RELEASE_HEARTBEAT": "1"}) == 1.0
    assert heartbeat_interval(60.0, {"RELEASE_HEARTBEAT": " 0.5 "}) == 0.5


@pytest.mark.parametrize("value", ["0", "-1", "soon", "nan", "inf"])
def test_a_bad_environment_value_is_refused_in_one_line(value: str) -> None:
    with pytest.raises(ConfigError) as info:
        heartbeat_interval(60.0, {"RELEASE_HEARTBEAT": value})
    assert info.value.one_line() == (
        f"RELEASE_HEARTBEAT: expected a positive number of seconds, got {value!r}"
    )
    assert info.value.exit_code == 2


def test_elapsed() -> None:
    assert [elapsed(s) for s in (0, 59.9, 60, 185, 3599, 3600, 7260)] == [
        "0s",
        "59s",
        "1m00s",
        "3m05s",
        "59m59s",
        "1h00m",
        "2h01m",
    ]


def test_log_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "build.log"
    assert log_tail(log) == []  # no log
    assert log_tail(None) == []
    log.write_bytes(b"".join(b"line %d\n" % i for i in range(30)) + b"\n\r\n  \n")
    assert log_tail(log) == [f"line {i}" for i in range(20, 30)]
    assert log_tail(log, 3) == ["line 27", "line 28", "line 29"]
    assert log_tail(log, 0) == []
    log.write_bytes(b"bad \xff byte\r50% done\r100% done\n")
    assert log_tail(log, 2) == ["50% done", "100% done"]
    monkeypatch.setattr(heartbeat_module, "_TAIL_BYTES", 10)  # a big log: only its end is read
    log.write_bytes(b"0123456789abcdef\nlast\n")
    assert log_tail(log) == ["last"]


def test_the_live_line_on_a_terminal_shows_the_log_s_last_line(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=160, color_system=None)
    log = tmp_path / "build-cu130.log"
    log.write_text("#7 [3/5] RUN make\n#7 4.2 compiling kernels 17/80\n", encoding="utf-8")
    said: list[str] = []
    with Progress(["cu129", "cu130"], said.append, console=console, heartbeat=0.01) as progress:
        progress.update("cu130", "step 3/5 RUN make", log=log)
        progress.update("cu129", "step 1/5 FROM base")
        time.sleep(0.05)  # a heartbeat here would be a plain line: none on a terminal
        progress._live.refresh()  # type: ignore[union-attr]
        drawn = screen.getvalue()
    assert said == []
    line = [row for row in drawn.splitlines() if "build(cu130)" in row][-1]  # the last frame
    assert "step 3/5 RUN make" in line and "#7 4.2 compiling kernels 17/80" in line
    other = [row for row in drawn.splitlines() if "build(cu129)" in row][-1]
    assert "step 1/5 FROM base" in other
    assert "compiling" not in other  # no log yet: nothing from another build's

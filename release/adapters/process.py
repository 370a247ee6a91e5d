"""The one place a process is started: :func:`run` (wait for it), :func:`start` (collect its
output in the background) and :func:`stream` (read its output as it is written).

Invariants:

- every process runs with a closed or piped stdin, never the terminal's;
- ``timeout`` kills the process (its whole group when it has one of its own) and the
  result says ``timed_out``; nothing is left running;
- a process started with ``own_group=True`` does not see the terminal's Ctrl-C, so an
  interrupt (or any exception, SIGTERM included) while waiting for it kills its group
  before re-raising; one in our own group (git) is stopped too (it saw a terminal's
  Ctrl-C, but not a SIGTERM sent to this process alone), and waited for;
- one with its own group dies with the thread that started it (:mod:`.leftovers`);
- output is decoded once, here (``errors``: ``"surrogateescape"`` keeps file names
  round-trippable, ``"replace"`` is for text shown to people), or handed as bytes to a
  parser of its own (:meth:`Stream.read_bytes`);
- error output, a failure's line, an echoed command and a log are a tool's words for
  people, never data: their secrets are taken out here (:mod:`.known_secrets`);
- a program that cannot be started raises the adapter's own error class, never
  ``OSError``.

Adapters choose how the process is made (``spawn``: :func:`popen`, or one of their own)
and translate failures into the project's errors with :func:`first_line` and
:func:`last_line`.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol, TypeVar

from release.adapters.known_secrets import redact_file, shown
from release.core.terminal_text import escaped
from release.errors import ReleaseError

__all__ = [
    "Result",
    "Server",
    "Spawn",
    "Started",
    "Stream",
    "echo",
    "first_line",
    "last_line",
    "popen",
    "run",
    "start",
    "stop_all",
    "stream",
]

Errors = type[ReleaseError]
_T = TypeVar("_T")


@dataclass(frozen=True)
class Result:
    """What a finished process said. ``stdout``/``stderr`` are decoded, untrimmed."""

    argv: tuple[str, ...]
    status: int
    stdout: str
    stderr: str
    seconds: float = field(default=0.0, compare=False)  # how long it took: not part of the answer
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.status == 0 and not self.timed_out


class Spawn(Protocol):
    """Makes the process; :func:`popen` unless an adapter has its own way."""

    def __call__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None,
        env: Mapping[str, str],
        stdin: bool,
        stdout: int | IO[Any],
        stderr: int | IO[Any],
        own_group: bool,
    ) -> subprocess.Popen[bytes]: ...


def popen(
    argv: Sequence[str],
    *,
    cwd: Path | None,
    env: Mapping[str, str],
    stdin: bool,
    stdout: int | IO[Any],
    stderr: int | IO[Any],
    own_group: bool,
) -> subprocess.Popen[bytes]:
    if own_group:  # (only such a process needs leftovers, and only then is it imported)
        from release.adapters.leftovers import dies_with_parent
    return subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        start_new_session=own_group,
        preexec_fn=dies_with_parent() if own_group else None,
    )


def echo(argv: Sequence[str]) -> None:
    """``+ argv`` on stderr when ``RELEASE_ECHO`` is set (what a command is about to run):
    one line, its arguments' control characters escaped (a tag message is an argument)."""
    if os.environ.get("RELEASE_ECHO"):
        print(shown("+ " + " ".join(map(escaped, argv))), file=sys.stderr, flush=True)


# Processes with a group of their own that are still running: :func:`stop_all` ends them.
_grouped: set[subprocess.Popen[bytes]] = set()
_grouped_lock = threading.Lock()


def _spawned(
    spawn: Spawn,
    argv: Sequence[str],
    error: Errors,
    *,
    cwd: Path | None,
    env: Mapping[str, str] | None,
    stdin: bool,
    stdout: int | IO[Any] = subprocess.PIPE,
    stderr: int | IO[Any] = subprocess.PIPE,
    own_group: bool = False,
    missing: str | None = None,
) -> subprocess.Popen[bytes]:
    try:
        proc = spawn(
            argv,
            cwd=cwd,
            env={**os.environ, **(env or {})},
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            own_group=own_group,
        )
    except OSError as err:
        if missing is not None and isinstance(err, FileNotFoundError):
            raise error(f"{argv[0]} is not installed: {missing}") from None
        raise error(f"cannot run {argv[0]}: {err.strerror or err}") from None
    if own_group:
        with _grouped_lock:
            _grouped.add(proc)
    return proc


def _forget(proc: subprocess.Popen[bytes]) -> None:
    with _grouped_lock:
        _grouped.discard(proc)


def _kill(proc: subprocess.Popen[bytes], own_group: bool) -> None:
    """Stop ``proc`` (its group if it has its own): SIGTERM, then SIGKILL after 5 s."""
    if not own_group:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()  # git cleans up its lock files on SIGTERM
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def stop_all() -> None:
    """Stop every process with a group of its own still running (Ctrl-C in the main thread)."""
    with _grouped_lock:
        procs = list(_grouped)
    for proc in procs:
        _kill(proc, True)


def _encode(text: str) -> bytes:
    """Input as bytes: UTF-8, and bytes that were read with ``surrogateescape`` (a commit
    message in another encoding) go back exactly as they came."""
    return text.encode("utf-8", "surrogateescape")


def _decode(data: bytes | None, errors: str) -> str:
    return (data or b"").decode(sys.getfilesystemencoding(), errors)


def run(
    argv: Sequence[str],
    *,
    error: Errors,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    timeout: float | None = None,
    log: Path | None = None,
    own_group: bool = False,
    on_timeout: Callable[[], None] | None = None,
    errors: str = "replace",
    spawn: Spawn = popen,
    missing: str | None = None,
) -> Result:
    """Run ``argv`` to the end (or ``timeout``). ``log``: stdout and stderr go to this file
    instead (the result's output is then empty). ``error``: the adapter's error class, raised
    when the program cannot start (``PROGRAM is not installed: MISSING`` when it is absent)."""
    started = time.perf_counter()
    handle = None
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        handle = log.open("wb")
    try:
        proc = _spawned(
            spawn,
            argv,
            error,
            cwd=cwd,
            env=env,
            stdin=stdin is not None,
            stdout=handle or subprocess.PIPE,
            stderr=subprocess.STDOUT if handle else subprocess.PIPE,
            own_group=own_group,
            missing=missing,
        )
        timed_out = False
        data = None if stdin is None else _encode(stdin)
        try:
            out, err = proc.communicate(data, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc, own_group)
            out, err = proc.communicate()
            timed_out = True
        except BaseException:
            # A child with its own group did not see the Ctrl-C; one in ours did see a
            # terminal's signal, but not a SIGTERM sent to this process alone: stop it.
            _kill(proc, own_group)
            proc.wait()
            raise
        finally:
            _forget(proc)
    finally:
        if handle is not None and log is not None:
            handle.close()
            redact_file(log)  # a log people read: its secrets go as soon as it is whole
    if timed_out and on_timeout is not None:
        on_timeout()
    return Result(
        tuple(argv),
        proc.returncode,
        _decode(out, errors),
        shown(_decode(err, errors)),
        time.perf_counter() - started,
        timed_out,
    )


class Started:
    """A process begun at once, its output collected in the background; :meth:`result` waits."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        error: Errors,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        errors: str = "replace",
        spawn: Spawn = popen,
    ) -> None:
        self.argv = tuple(argv)
        self._errors = errors
        self._started = time.perf_counter()
        self._proc = _spawned(spawn, argv, error, cwd=cwd, env=env, stdin=stdin is not None)
        self._input = None if stdin is None else _encode(stdin)
        self._output: tuple[bytes, bytes] | BaseException = (b"", b"")
        self._collect = threading.Thread(target=self._communicate, daemon=True)
        self._collect.start()

    def _communicate(self) -> None:
        try:
            self._output = self._proc.communicate(self._input)
        except BaseException as err:  # handed to the thread that asks for the result
            self._output = err

    def result(self) -> Result:
        self._collect.join()
        if isinstance(self._output, BaseException):
            raise self._output
        out, err = self._output
        return Result(
            self.argv,
            self._proc.returncode,
            _decode(out, self._errors),
            shown(_decode(err, self._errors)),
            time.perf_counter() - self._started,
        )


class Stream:
    """A process started at once, its output read as it writes it: iterate for the pieces
    of ``stdout.split(sep)`` (one final newline is not output), or hand the bytes to a
    reader with :meth:`read_bytes`. Close it (or leave the ``with`` block) to stop the
    process early; :attr:`status` and :attr:`stderr` are set once it has ended."""

    def __init__(
        self,
        argv: Sequence[str],
        sep: str = "\n",
        *,
        error: Errors,
        cwd: Path | None = None,
        errors: str = "replace",
        own_group: bool = False,
        spawn: Spawn = popen,
    ) -> None:
        self.argv = tuple(argv)
        self.sep = sep
        self.status: int | None = None
        self.stderr = ""
        self._errors = errors
        self._own_group = own_group
        self._proc = _spawned(
            spawn, argv, error, cwd=cwd, env=None, stdin=False, own_group=own_group
        )
        self._err: list[bytes] = []
        self._read_all = False
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()

    def _read_stderr(self) -> None:
        assert self._proc.stderr is not None
        self._err.append(self._proc.stderr.read())

    def __iter__(self) -> Iterator[str]:
        stdout = self._proc.stdout
        assert stdout is not None
        decoder = codecs.getincrementaldecoder(sys.getfilesystemencoding())(self._errors)
        fd = stdout.fileno()
        pending = ""
        try:
            while chunk := os.read(fd, 1 << 16):
                text = pending + decoder.decode(chunk)
                # a final newline is not output: keep it back till more comes
                held = "\n" if text.endswith("\n") else ""
                parts = text[: len(text) - len(held)].split(self.sep)
                pending = parts.pop() + held
                yield from parts
            self._read_all = True
            yield (pending + decoder.decode(b"", final=True)).removesuffix("\n")
        finally:
            self.close()

    def read_bytes(self, read: Callable[[IO[bytes]], _T]) -> _T:
        """What ``read`` makes of stdout as bytes (a parser of its own, such as a tar
        reader); what it leaves unread is read and dropped, so the process ends by itself."""
        stdout = self._proc.stdout
        assert stdout is not None
        answer = read(stdout)
        while stdout.read(1 << 16):
            pass
        self._read_all = True
        return answer

    def close(self) -> int:
        """Wait for the process (stopping it first unless all its output was read)."""
        if self.status is not None:
            return self.status
        if not self._read_all and self._proc.poll() is None:
            _kill(self._proc, self._own_group)
        self.status = self._proc.wait()
        _forget(self._proc)
        self._drain.join()
        self.stderr = shown(_decode(b"".join(self._err), self._errors))
        for pipe in (self._proc.stdout, self._proc.stderr):
            if pipe is not None:
                pipe.close()
        return self.status

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *raised: object) -> None:
        self.close()


class Server:
    """A process that runs until stopped (a local registry), its output appended to
    ``log``; it has a group of its own, and dies with the thread that started it."""

    def __init__(self, argv: Sequence[str], *, log: Path, error: Errors) -> None:
        self.argv = tuple(argv)
        with log.open("ab") as out:
            self._proc = _spawned(
                popen, argv, error, cwd=None, env=None, stdin=False, stdout=out,
                stderr=subprocess.STDOUT, own_group=True,
            )  # fmt: skip

    @property
    def running(self) -> bool:
        return self._proc.poll() is None

    def stop(self) -> int:
        if self.running:
            _kill(self._proc, True)
        status = self._proc.wait()
        _forget(self._proc)
        return status


start = Started  # start(argv, error=...): begun now, collected in the background
stream = Stream  # stream(argv, sep, error=...): read as it is written


def _lines(text: str) -> list[str]:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith("hint:")]
    return useful or lines


def first_line(text: str, default: str = "") -> str:
    """The first line that says something (git's ``hint:`` lines skipped): a failure's."""
    lines = _lines(text)
    return shown(lines[0]) if lines else default


def last_line(text: str, default: str = "") -> str:
    """The last line that says something (git's ``hint:`` lines skipped)."""
    lines = _lines(text)
    return shown(lines[-1]) if lines else default

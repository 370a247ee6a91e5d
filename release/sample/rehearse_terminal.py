"""The rehearsal's terminal: commands echoed as a maintainer types them, their output
indented under them, steps headed with the time since the start, and checks kept.

Every ``release`` command runs as its own process (``python -m release``), exactly as it
would from a shell, with ``RELEASE_REPO`` pointing at the directory it is typed in; the
environment is the caller's, less what would pull the run out of its sandbox. Every line
the terminal says has its control characters escaped but the newlines between lines
(:mod:`release.core.terminal_text`): the commands' output is shown, never obeyed.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from release.adapters import process
from release.adapters.git import GitRepo
from release.core.say import Say
from release.core.terminal_text import escaped
from release.errors import ReleaseError

__all__ = [
    "RehearsalCheck",
    "StepFailed",
    "StepOutcome",
    "StepTime",
    "Terminal",
    "clock_text",
    "not_run_reasons",
    "shown",
]


# Settings that would point a command outside the sandbox, or change what it builds.
_OUTSIDE = ("RELEASE_DEBUG", "RELEASE_MANIFEST_DIR", "RELEASE_MAIN_BRANCH", "SOURCE_DATE_EPOCH")
COMMAND_TIMEOUT = 1200.0  # one command; a build of three variants takes well under a minute


class StepFailed(Exception):
    """A command of the story exited otherwise than the story expects: it cannot go on."""


@dataclass(frozen=True)
class StepOutcome:
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@dataclass(frozen=True)
class RehearsalCheck:
    what: str
    ok: bool | None  # None: not run (``why`` says why)
    why: str = ""


@dataclass
class StepTime:
    title: str
    started: float
    seconds: float | None = None  # None while the step runs


def shown(path: Path, base: Path) -> str:
    """``path`` as the transcript shows it: relative to ``base`` when under it."""
    try:
        return str(path.relative_to(base)) or "."
    except ValueError:
        return str(path)


@dataclass
class Terminal:
    say: Say
    sandbox: Path
    clock: Callable[[], float] = time.monotonic
    checks: list[RehearsalCheck] = field(default_factory=list)
    steps: list[StepTime] = field(default_factory=list)
    start: float = 0.0

    def __post_init__(self) -> None:
        self.start = self.clock()
        told = self.say
        self.say = lambda line: told(escaped(line, keep_newlines=True))

    @property
    def elapsed(self) -> float:
        return self.clock() - self.start

    # -- steps -------------------------------------------------------------------
    def step(self, title: str) -> None:
        self.end_step()
        self.steps.append(StepTime(title, self.clock()))
        self.say("")
        self.say(f"== {len(self.steps)}. {title}  [{clock_text(self.elapsed)}]")

    def end_step(self) -> None:
        if self.steps and self.steps[-1].seconds is None:
            self.steps[-1].seconds = self.clock() - self.steps[-1].started

    def note(self, text: str) -> None:
        self.say(f"# {text}")

    # -- commands ----------------------------------------------------------------
    def release(
        self, where: Path, *args: str, expect: int | None = 0, env: Mapping[str, str] | None = None
    ) -> StepOutcome:
        """``release ARGS`` typed in ``where``, with ``env`` set before it (as typed);
        ``expect=None`` takes any exit code, otherwise another one stops the story
        (:class:`StepFailed`)."""
        env = env or {}
        typed = "".join(f"{k}={shlex.quote(shown(Path(v), self.sandbox))} " for k, v in env.items())
        self.say(self._prompt(where) + typed + "release " + shlex.join(args))
        env = {**{k: v for k, v in os.environ.items() if k not in _OUTSIDE}, **env}
        env["RELEASE_REPO"] = str(where)
        result = process.run(
            [sys.executable, "-m", "release", *args],
            error=ReleaseError,
            cwd=where,
            env=env,
            timeout=COMMAND_TIMEOUT,
        )
        outcome = StepOutcome(result.status, result.stdout, result.stderr)
        for line in outcome.output.rstrip().splitlines():
            self.say("    " + line)
        if result.timed_out:
            raise StepFailed(
                f"`release {shlex.join(args)}` did not finish in {COMMAND_TIMEOUT:.0f}s"
            )
        if expect is not None and outcome.code != expect:
            raise StepFailed(
                f"`release {shlex.join(args)}` exited {outcome.code}, expected {expect}"
            )
        return outcome

    def git(self, repo: GitRepo, *args: str, check: bool = True) -> str:
        """``git ARGS`` in ``repo``, shown with paths under the sandbox made relative;
        ``check=False`` goes on when git fails (a conflict the story expects)."""
        self.say(
            self._prompt(repo.root)
            + "git "
            + shlex.join(shown(Path(a), self.sandbox) if a.startswith("/") else a for a in args)
        )
        return repo.run(*args, check=check).stdout

    def typed(self, where: Path, command: str) -> None:
        """A command run through an adapter (docker, an editor's save), shown as typed."""
        self.say(self._prompt(where) + command)

    def _prompt(self, where: Path) -> str:
        name = shown(where, self.sandbox)
        return "$ " if name == "engine" else f"({name}) $ "

    # -- checks ------------------------------------------------------------------
    def check(self, what: str, ok: bool | None, why: str = "") -> None:
        """``ok``/``FAIL`` (with why), or ``--`` for a check that could not run."""
        self.checks.append(RehearsalCheck(what, ok, why))
        if ok is None:
            self.say(f"--   {what} (not run: {why})")
        else:
            self.say(f"{'ok  ' if ok else 'FAIL'} {what}" + (f" ({why})" if why and not ok else ""))


def clock_text(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{seconds:.1f}s"


def not_run_reasons(checks: Sequence[RehearsalCheck]) -> str:
    """Each reason the checks that did not run gave, as they gave it; with how many gave
    each when there are several."""
    reasons = Counter(c.why or "no reason given" for c in checks if c.ok is None)
    if len(reasons) == 1:
        return next(iter(reasons))
    return "; ".join(f"{why} ({n})" for why, n in reasons.items())

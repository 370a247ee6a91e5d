"""``release status`` on real release branches, against ``python -c pass`` (the target's
unit) and ``git status`` (beside it), warm and cold: a part of ``real_history.py
--only histories``.

Each history is a clone found as ``real_history.find_history`` finds one; its release
branch is checked out in a clone of its own that shares the history's objects (nothing is
written into the history), its ``[tool.release]`` is what ``release init --out`` guesses
from it, and status runs ``--offline`` (no remote is asked; the figure is the reading
status does). Cold: the repository's caches (``.git/release``) removed before each run;
warm: the same status again. Targets: warm at most 5x, cold at most 10x ``python -c
pass``; the floor beside them is ``git status`` plus the interpreter alone.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["STATUS_HISTORIES", "status_speed"]

# (history, a release branch of it with rcs and a final)
STATUS_HISTORIES = (
    ("pytorch/ao", "release/0.13.0"),
    ("pytorch/data", "release/0.11"),
    ("vllm-project/tpu-inference", "releases/v0.27.0"),
)
WARM, COLD = 5.0, 10.0


def _ms(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, capture_output=True, check=True)
    return (time.perf_counter() - started) * 1000


def _rounds(
    argvs: list[list[str]], cwd: Path, rounds: int, before: Callable[[], None] | None
) -> list[float]:
    """Median ms of each argv, run in turn every round (``before`` ahead of the first), so
    load on the machine falls on all of them."""
    times: list[list[float]] = [[] for _ in argvs]
    for _ in range(rounds):
        for i, argv in enumerate(argvs):
            if before is not None and i == 0:
                before()
            times[i].append(_ms(argv, cwd))
    return [statistics.median(t) for t in times]


def status_speed(repo: Path, slug: str, branch: str, rounds: int) -> None:
    """Print the warm and cold figures of ``release status`` on ``slug``'s ``branch``."""
    work = Path(tempfile.mkdtemp(prefix="release-status-"))
    try:
        clone = work / "clone"
        cloned = subprocess.run(
            ["git", "clone", "--quiet", "--shared", "--branch", branch, str(repo), str(clone)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if cloned.returncode != 0:
            print(f"release status on {slug} {branch}: not run (no such branch here)")
            return
        config = work / "release.toml"
        subprocess.run(
            [sys.executable, "-m", "release", "init", "--out", str(config)],
            cwd=clone, capture_output=True, check=True,
        )  # fmt: skip
        status = [sys.executable, "-m", "release", "--config", str(config), "status", "--offline"]
        answer = subprocess.run(status, cwd=clone, capture_output=True, text=True, check=True)
        lines = answer.stdout.splitlines()
        shown = "; ".join(line.split(None, 1)[-1] for line in lines if line.startswith("next:"))
        print(f"release status on {slug} {branch} (next: {shown or '-'})")
        bare, git_status = [sys.executable, "-c", "pass"], ["git", "status", "--porcelain"]
        cache = clone / ".git" / "release"

        def cold() -> None:
            shutil.rmtree(cache, ignore_errors=True)

        for state, before, target in (("warm", None, WARM), ("cold", cold, COLD)):
            ours, unit, raw = _rounds([status, bare, git_status], clone, rounds, before)
            verdict = "met" if ours / unit <= target else "NOT MET"
            print(
                f"  {state}: {ours:.0f} ms = {ours / unit:.2f}x python -c pass ({unit:.0f} ms)"
                f" (target ≤ {target:.1f}x: {verdict}); git status {raw:.0f} ms = "
                f"{raw / unit:.2f}x; floor (the interpreter plus git status): "
                f"{(unit + raw) / unit:.2f}x"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)

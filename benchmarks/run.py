"""Speed of the release flow, each figure a ratio against the raw tool underneath.

The absolute time of ``release notes`` says little (it depends on the machine); how much
it adds to the ``git log`` it runs, or how it compares with git-cliff and commitizen on
the same history, says whether the Python layer is doing its job. So every figure here
is a median wall time of the whole process (``subprocess.run``, output captured), taken
in rounds that alternate the command and its baseline, after one warm-up round:

- ``release notes`` over the whole generated history (20,000 commits) against
  ``git log`` of the same range and fields: with warm caches (the run before printed
  the same notes: they are kept whole), with a warm commit cache but the notes cache
  removed before each run (a range not printed before, over commits parsed before), and
  cold (both removed before each run: the first run, and what git-cliff and commitizen,
  configured (``cliff.toml``, ``cz.toml``) to group the same ``[Category]`` subjects,
  are compared with);
- ``release pick`` of 200 commits onto a fresh release branch against one
  ``git cherry-pick -x`` of the same list;
- ``release pick --dry-run`` of every commit since a cut 5,000 commits behind main, half
  of them already picked, against ``git cherry`` over the same range;
- start-up: ``release --version`` against ``python -c pass`` (the same interpreter);
  ``inv --list`` (this repository's ``tasks.py``), ``release --list`` and ``release
  status`` against ``git status``.

Targets are printed with each figure; a miss is reported, never an error. Usage:
``nox -s bench [-- --quick] [-- --json]`` or ``python benchmarks/run.py [--quick]``.
The history comes from ``make_repo.py`` (cached); each run works on a copy of it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from make_repo import GIT_ENV, Layout, ensure_repo

from release.adapters.git_log import LOG_FORMAT

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
# Bytecode as on a user's machine: with PYTHONDONTWRITEBYTECODE set (as on CI runners),
# every run would recompile the package and measure the compiler, not the tool.
ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    **GIT_ENV,
    "NO_COLOR": "1",
    "RELEASE_REPO_CACHE": "1",  # the commit cache is written on CI runners too, here
}
PICK_BRANCH = "releases/v0.32.0"


@dataclass(frozen=True)
class Figure:
    name: str
    ms: float
    baseline: str
    baseline_ms: float
    target: float | None  # the ratio must be at most this (None: reported only)
    strict: bool = False  # "faster than": strictly below the target

    @property
    def ratio(self) -> float:
        return self.ms / self.baseline_ms

    @property
    def met(self) -> bool | None:
        if self.target is None:
            return None
        return self.ratio < self.target if self.strict else self.ratio <= self.target

    @property
    def target_text(self) -> str:
        if self.target is None:
            return "report"
        return f"{'<' if self.strict else '≤'} {self.target:.1f}"


class Bench:
    def __init__(self, repo: Path, layout: Layout, reps: int) -> None:
        self.repo, self.layout, self.reps = repo, layout, reps

    def log(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    def git(self, *args: str) -> str:
        return run(["git", *args], self.repo).stdout

    def rounds(
        self,
        commands: Sequence[tuple[Sequence[str], Path]],
        reps: int,
        before: Callable[[], None] | None = None,
    ) -> list[float]:
        """Median milliseconds of each command, run in alternating rounds after a warm-up."""
        times: list[list[float]] = [[] for _ in commands]
        for round_ in range(reps + 1):
            for k, (cmd, cwd) in enumerate(commands):
                if before is not None:
                    before()
                start = time.perf_counter()
                run(cmd, cwd)
                if round_:
                    times[k].append((time.perf_counter() - start) * 1000)
        return [statistics.median(t) for t in times]

    # -- the figures -------------------------------------------------------
    def notes(self) -> list[Figure]:
        n = self.layout.commits
        self.git("switch", "--quiet", "main")
        rng = "v0.30.0..main"
        commands = [
            ([tool("release"), "notes", "--since", "v0.30.0", "--until", "main"], self.repo),
            (["git", "log", "--no-merges", f"--format={LOG_FORMAT}", rng, "--"], self.repo),
            ([tool("git-cliff"), "--config", str(HERE / "cliff.toml"), rng], self.repo),
            (
                [
                    tool("cz"),
                    "--config",
                    str(HERE / "cz.toml"),
                    "changelog",
                    "--dry-run",
                    "--start-rev",
                    "v0.30.0",
                ],
                self.repo,
            ),
        ]
        cache = self.repo / ".git" / "release" / "commits.cache"
        kept = self.repo / ".git" / "release" / "notes"  # whole outputs

        def not_kept() -> None:
            shutil.rmtree(kept, ignore_errors=True)

        def cold() -> None:
            cache.unlink(missing_ok=True)
            not_kept()

        self.log(f"notes over {n:,} commits, cold caches ...")
        ours_cold, log_cold, cliff, cz = self.rounds(commands, self.reps, before=cold)
        self.log(f"notes over {n:,} commits, warm commit cache, notes not kept ...")
        built, log_built = self.rounds(commands[:2], self.reps, before=not_kept)
        self.log(f"notes over {n:,} commits, warm caches ...")
        ours, log = self.rounds(commands[:2], self.reps)
        for path in (cache, kept):
            if not path.exists():
                raise SystemExit(f"release notes left no cache at {path}")
        name = f"release notes, {n:,} commits"
        return [
            Figure(
                f"{name}, warm caches (the same notes again)",
                ours,
                "git log (same fields)",
                log,
                1.5,
            ),
            Figure(
                f"{name}, warm commit cache, notes built",
                built,
                "git log (same fields)",
                log_built,
                None,
            ),
            Figure(f"{name}, cold caches", ours_cold, "git log (same fields)", log_cold, 2.0),
            Figure(f"{name}, cold caches", ours_cold, "git-cliff", cliff, 1.0, strict=True),
            Figure(
                f"{name}, cold caches", ours_cold, "cz changelog --dry-run", cz, 1.0, strict=True
            ),
        ]

    def pick(self) -> list[Figure]:
        picks = self.layout.picks
        cut = self.layout.cut

        def fresh_branch() -> None:
            self.git("switch", "--quiet", "--force", "-C", PICK_BRANCH, cut)

        commands = [
            ([tool("release"), "pick", " ".join(picks)], self.repo),
            (["git", "cherry-pick", "-x", *picks], self.repo),
        ]
        self.log(f"pick of {len(picks)} commits ...")
        ours, git = self.rounds(commands, self.reps, before=fresh_branch)
        picked = self.git("rev-list", "--count", f"{cut}..HEAD").strip()
        if picked != str(len(picks)):
            raise SystemExit(f"git cherry-pick left {picked} commits, not {len(picks)}")
        self.git("switch", "--quiet", "--force", "main")
        self.git("branch", "--quiet", "-D", PICK_BRANCH)
        name = f"release pick, {len(picks)} commits"
        return [Figure(name, ours, "git cherry-pick -x (same list)", git, 1.2)]

    def already_picked(self, workdir: Path) -> list[Figure]:
        branch, cut = self.layout.backport_branch, self.layout.cut
        self.git("switch", "--quiet", branch)
        candidates = self.git("rev-list", "--reverse", f"{cut}..main").split()
        picks_file = workdir / "candidates.txt"
        picks_file.write_text("\n".join(candidates) + "\n")
        ours_cmd = [
            tool("release"),
            "pick",
            "--file",
            str(picks_file),
            "--dry-run",
            "--json",
            "--allow-feature",
        ]
        plan = json.loads(run(ours_cmd, self.repo).stdout)
        skipped = sum(1 for step in plan["steps"] if step["action"] == "skip")
        if skipped != self.layout.backported:
            raise SystemExit(
                f"release pick --dry-run found {skipped} picked, not {self.layout.backported}"
            )
        commands = [(ours_cmd, self.repo), (["git", "cherry", branch, "main", cut], self.repo)]
        self.log(f"already-picked detection over {len(candidates):,} commits ...")
        ours, cherry = self.rounds(commands, self.reps)
        name = f"pick --dry-run, {len(candidates):,} candidates ({skipped:,} picked), warm"
        return [Figure(name, ours, "git cherry (same range)", cherry, 1.5)]

    def startup(self) -> list[Figure]:
        self.git("switch", "--quiet", self.layout.backport_branch)
        self.log("start-up of release --version ...")
        version, bare = self.rounds(
            [
                ([tool("release"), "--version"], self.repo),
                ([sys.executable, "-c", "pass"], self.repo),
            ],
            self.reps * 2,
        )
        commands = [
            ([sys.executable, "-m", "invoke", "--list"], PROJECT),
            ([tool("release"), "--list"], self.repo),
            ([tool("release"), "status"], self.repo),
            (["git", "status"], self.repo),
        ]
        self.log("start-up ...")
        inv, listing, status, git = self.rounds(commands, self.reps * 2)
        return [
            # ≤ 100 ms where bare python takes 20 ms (invoke's import alone costs ~57 ms)
            Figure("release --version", version, "python -c pass", bare, 5.0),
            Figure("inv --list (this repo's tasks.py)", inv, "git status", git, None),
            Figure("release --list", listing, "git status", git, None),
            Figure(
                f"release status on {self.layout.backport_branch}", status, "git status", git, None
            ),
        ]


def tool(name: str) -> str:
    """A console script of this interpreter's environment (nox's venv, or any other)."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        raise SystemExit(f"{name} not found: install the package with its [bench] extras")
    return found


def run(cmd: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)[:200]} failed ({result.returncode}):\n{result.stderr}")
    return result


def table(figures: list[Figure]) -> str:
    header = ("figure", "ms", "compared with", "ms", "ratio", "target", "met")
    rows = [header] + [
        (
            f.name,
            f"{f.ms:.0f}",
            f.baseline,
            f"{f.baseline_ms:.0f}",
            f"{f.ratio:.2f}",
            f.target_text,
            {True: "yes", False: "NO", None: "-"}[f.met],
        )
        for f in figures
    ]
    widths = [max(len(row[k]) for row in rows) for k in range(len(header))]
    right = {1, 3, 4}
    lines = [
        "  ".join(
            c.rjust(w) if k in right else c.ljust(w)
            for k, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 commits instead of 20,000")
    parser.add_argument("--reps", type=int, default=5, help="measured rounds (start-up: twice)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)

    commits = 2_000 if args.quick else 20_000
    started, load = time.perf_counter(), os.getloadavg()[0]
    cached, layout = ensure_repo(commits)
    with tempfile.TemporaryDirectory(prefix="release-bench-") as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(cached, repo, symlinks=True)
        bench = Bench(repo, layout, args.reps)
        figures = [
            *bench.notes(),
            *bench.pick(),
            *bench.already_picked(Path(tmp)),
            *bench.startup(),
        ]
    elapsed = time.perf_counter() - started
    git_version = run(["git", "--version"], PROJECT).stdout.split()[-1]
    machine = (
        f"git {git_version}, Python {platform.python_version()}, {os.cpu_count()} CPUs "
        f"(load {load:.1f} at start); median of {args.reps} rounds after a warm-up; "
        f"{elapsed:.0f} s in all"
    )
    if args.json:
        data = {
            "commits": commits,
            "machine": machine,
            "figures": [
                {
                    **asdict(f),
                    "ms": round(f.ms, 1),
                    "baseline_ms": round(f.baseline_ms, 1),
                    "ratio": round(f.ratio, 3),
                    "met": f.met,
                }
                for f in figures
            ],
        }
        print(json.dumps(data, indent=2))
        return
    print(table(figures))
    print(f"\n{machine}")
    judged = [f for f in figures if f.met is not None]
    print(f"targets met: {sum(1 for f in judged if f.met)} of {len(judged)}")


if __name__ == "__main__":
    main()

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
  status`` against ``git status``; ``release --help``, ``release --list``, ``release
  status`` and ``release notes`` of an empty range against ``python -c pass``;
- on real histories, where ``RELEASE_REAL_RELEASE`` names a clone with a long release
  branch (vllm-project/vllm-ascend; ``RELEASE_REAL_RELEASE_BRANCH``, default
  ``releases/v0.13.0``): ``release status --offline`` there, at most 250 ms, printed
  against ``git status``; where ``RELEASE_REAL_HISTORY`` names a clone of
  vllm-project/vllm-gaudi: warm ``release notes`` of all of its main against ``git log``
  of the same range and fields. Each runs in a shared clone; without one the row is
  skipped, with the reason.

Targets are printed with each figure; a miss is reported, never an error. Beside each is
its floor, as a ratio to the same baseline, from parts measured in the same rounds: what no
run of the command could take less than (the package's start-up, ``release --version``,
plus the git command it is compared with, or plus one ``git status`` for the start-up rows;
the interpreter alone for ``--version``, ``--help`` and ``--list``). A target below its
floor cannot be met by any Python above it. Usage:
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
from dataclasses import asdict, dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks.*, as mypy reads them

from benchmarks.make_repo import GIT_ENV, Layout, ensure_repo
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
    limit_ms: float | None = None  # instead of a ratio: the time must be at most this
    floor: str | None = None  # what no run of it can take less than (see Floors)
    floor_ms: float | None = None  # that, measured in the same run

    @property
    def floor_text(self) -> str:
        if self.floor_ms is None:
            return "-"
        return f"{self.floor_ms / self.baseline_ms:.2f} ({self.floor})"

    @property
    def ratio(self) -> float:
        return self.ms / self.baseline_ms

    @property
    def met(self) -> bool | None:
        if self.limit_ms is not None:
            return self.ms <= self.limit_ms
        if self.target is None:
            return None
        return self.ratio < self.target if self.strict else self.ratio <= self.target

    @property
    def target_text(self) -> str:
        if self.limit_ms is not None:
            return f"≤ {self.limit_ms:.0f} ms"
        if self.target is None:
            return "report"
        return f"{'<' if self.strict else '≤'} {self.target:.1f}"


class Bench:
    def __init__(self, repo: Path, layout: Layout, reps: int) -> None:
        self.repo, self.layout, self.reps = repo, layout, reps
        self.start_ms = self.git_status_ms = 0.0  # measured by startup()

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
                floor=START,
            ),
            Figure(
                f"{name}, warm commit cache, notes built",
                built,
                "git log (same fields)",
                log_built,
                None,
            ),
            Figure(
                f"{name}, cold caches",
                ours_cold,
                "git log (same fields)",
                log_cold,
                2.5,
                floor=START,
            ),
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
        return [Figure(name, ours, "git cherry-pick -x (same list)", git, 1.2, floor=START)]

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
        return [Figure(name, ours, "git cherry (same range)", cherry, 1.5, floor=START)]

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
        empty = ["--since", "v0.30.0", "--until", "v0.30.0"]  # a range of no commits
        commands = [
            ([sys.executable, "-m", "invoke", "--list"], PROJECT),
            ([tool("release"), "--list"], self.repo),
            ([tool("release"), "status"], self.repo),
            (["git", "status"], self.repo),
            ([tool("release"), "--help"], self.repo),
            ([tool("release"), "notes", *empty], self.repo),
            ([sys.executable, "-c", "pass"], self.repo),
            ([tool("release"), "--version"], self.repo),  # the floors' start-up, same rounds
        ]
        self.log("start-up ...")
        inv, listing, status, git, helping, nothing, python, start = self.rounds(
            commands, self.reps * 2
        )
        on = self.layout.backport_branch
        self.start_ms, self.git_status_ms = start, git
        return [
            Figure("release --version", version, "python -c pass", bare, 1.5, floor=BARE),
            Figure("inv --list (this repo's tasks.py)", inv, "git status", git, None),
            Figure("release --list", listing, "git status", git, None),
            Figure(f"release status on {on}", status, "git status", git, None, floor=ONE_READ),
            Figure("release --help", helping, "python -c pass", python, 1.5, floor=BARE),
            Figure("release --list", listing, "python -c pass", python, 1.5, floor=BARE),
            Figure(
                f"release status on {on}", status, "python -c pass", python, 3.0, floor=ONE_READ
            ),
            Figure(
                "release notes of an empty range",
                nothing,
                "python -c pass",
                python,
                2.0,
                floor=ONE_READ,
            ),
        ]


# The floor beside a figure: what no run of the command can take less than, from parts
# measured in the same run: the start-up of the package (``release --version``: the
# interpreter, its site and the entry point) and the raw command it is compared with (the
# git it must run anyway), or for the start-up rows the interpreter alone.
START = "start-up"  # release --version + the baseline's own command
ONE_READ = "one git read"  # release --version + git status
BARE = "the interpreter"  # python -c pass


def with_floors(figures: list[Figure], start_ms: float, git_ms: float) -> list[Figure]:
    """``figures`` with :attr:`Figure.floor_ms` worked out for those that name a floor."""
    out = []
    for f in figures:
        ms = {
            START: start_ms + f.baseline_ms,
            ONE_READ: start_ms + git_ms,
            BARE: f.baseline_ms,
            None: None,
        }[f.floor]
        label = {
            START: f"start-up + {f.baseline.split(' (')[0]}",
            ONE_READ: "start-up + git status",
            BARE: "the interpreter",
        }.get(f.floor or "")
        out.append(replace(f, floor_ms=ms, floor=label))
    return out


# The rows on real histories: where these name clones (skipped, with the reason, otherwise).
REAL_NOTES = "RELEASE_REAL_HISTORY"  # a clone of vllm-project/vllm-gaudi: notes of its main
REAL_RELEASE = "RELEASE_REAL_RELEASE"  # a clone with a long release branch (vllm-ascend)
REAL_BRANCH = "RELEASE_REAL_RELEASE_BRANCH"  # that branch (default releases/v0.13.0)
STATUS_LIMIT_MS = 250.0
SKIPPED: list[str] = []  # why a row was not measured


def _clone_of(source: Path, work: Path) -> Path:
    """A clone reading ``source``'s objects (nothing is written into ``source``)."""
    clone = work / source.name
    subprocess.run(
        ["git", "clone", "--quiet", "--shared", "--no-checkout", str(source), str(clone)],
        check=True,
        env=ENV,
    )
    return clone


def _commit_of(repo: Path, *refs: str) -> str | None:
    for ref in refs:
        found = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
            cwd=repo, env=ENV, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if found.returncode == 0:
            return found.stdout.strip()
    return None


def _a_clone(var: str) -> Path | None:
    named = os.environ.get(var)
    if not named or not (Path(named) / ".git").exists():
        SKIPPED.append(f"{var}: no clone at {named or '$' + var}")
        return None
    return Path(named)


def real_history(bench: Bench, work: Path) -> list[Figure]:
    """``release status --offline`` on a real release branch of thousands of commits
    (against ``git status``, at most 250 ms), and warm ``release notes`` of all of a real
    main (against ``git log`` of the same range and fields), each in a shared clone."""
    figures: list[Figure] = []
    source = _a_clone(REAL_RELEASE)
    branch = os.environ.get(REAL_BRANCH, "releases/v0.13.0")
    if source is not None:
        tip = _commit_of(source, f"refs/remotes/origin/{branch}", f"refs/heads/{branch}")
        main = _commit_of(source, "refs/remotes/origin/main", "refs/heads/main")
        if tip is None or main is None:
            SKIPPED.append(f"{REAL_RELEASE}: {source} has no {branch} or no main")
        else:
            clone = _clone_of(source, work / "release")
            run(["git", "switch", "--quiet", "--force", "-C", branch, tip], clone)
            run(["git", "branch", "--quiet", "-f", "main", main], clone)
            count = run(["git", "rev-list", "--count", "HEAD"], clone).stdout.strip()
            bench.log(f"release status --offline on {branch} ({count} commits) ...")
            ours, git = bench.rounds(
                [([tool("release"), "status", "--offline"], clone), (["git", "status"], clone)],
                bench.reps * 2,
            )
            name = f"release status --offline, {source.name} {branch} ({count} commits)"
            figures.append(Figure(name, ours, "git status", git, None, limit_ms=STATUS_LIMIT_MS))
    history = _a_clone(REAL_NOTES)
    tip = _commit_of(history, "refs/remotes/origin/main", "refs/heads/main") if history else None
    if history is not None and tip is None:
        SKIPPED.append(f"{REAL_NOTES}: {history} has no main")
    if history is not None and tip is not None:
        clone = _clone_of(history, work / "notes")
        root = run(["git", "rev-list", "--max-parents=0", tip], clone).stdout.split()[-1]
        spec = f"{root}..{tip}"
        count = run(["git", "rev-list", "--count", "--no-merges", spec], clone).stdout.strip()
        ours_cmd = [tool("release"), "notes", "--since", root, "--until", tip]
        raw = ["git", "log", "--no-merges", f"--format={LOG_FORMAT}", spec, "--"]
        run(ours_cmd, clone)  # the caches are warm from here on
        bench.log(f"warm release notes of {count} commits of {history.name}'s main ...")
        ours, log = bench.rounds([(ours_cmd, clone), (raw, clone)], bench.reps)
        name = f"release notes, all {count} commits of {history.name}'s main, warm caches"
        figures.append(Figure(name, ours, "git log (same fields)", log, 2.5))
    return figures


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
    header = ("figure", "ms", "compared with", "ms", "ratio", "target", "met", "floor")
    rows = [header] + [
        (
            f.name,
            f"{f.ms:.0f}",
            f.baseline,
            f"{f.baseline_ms:.0f}",
            f"{f.ratio:.2f}",
            f.target_text,
            {True: "yes", False: "NO", None: "-"}[f.met],
            f.floor_text,
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
            *real_history(bench, Path(tmp)),
        ]
        figures = with_floors(figures, bench.start_ms, bench.git_status_ms)
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
            "skipped": SKIPPED,
            "figures": [
                {
                    **asdict(f),
                    "ms": round(f.ms, 1),
                    "baseline_ms": round(f.baseline_ms, 1),
                    "ratio": round(f.ratio, 3),
                    "met": f.met,
                    "floor_ratio": round(f.floor_ms / f.baseline_ms, 3) if f.floor_ms else None,
                }
                for f in figures
            ],
        }
        print(json.dumps(data, indent=2))
        return
    print(table(figures))
    for reason in SKIPPED:
        print(f"skipped: {reason}")
    print(f"\n{machine}")
    judged = [f for f in figures if f.met is not None]
    print(f"targets met: {sum(1 for f in judged if f.met)} of {len(judged)}")


if __name__ == "__main__":
    main()

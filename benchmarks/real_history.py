"""Figures on a real public release history (a vLLM-family repository), when one is here.

Point ``RELEASE_REAL_HISTORY`` (or ``--repo``) at a clone with its remote branches and
tags, e.g. of vllm-project/vllm-gaudi. Without one this says it was skipped, and why.
It prints, for the main branch (``--main``, default ``origin/main``):

- the share of "Other" in the notes with the default category map;
- reverts found, and revert pairs cancelled;
- contributors: distinct author emails, and people after mapping and merging;
- ``release notes`` over the last 300 commits of main, and over all of it, against
  ``git log`` of the same range and fields (median wall time of alternating rounds,
  after a warm-up): with both caches cold (removed before each run); with the commit
  cache warm but the notes cache removed (a range not printed before); and with both
  warm (the same notes again); run in a shared clone, so nothing is written into the
  repository measured;
- pick byte-equality: the last ``--picks`` main commits picked with ``--reason`` onto a
  branch at the oldest of them, each message compared with what plain
  ``git cherry-pick -x`` writes plus the trailer;
- ``release pick --dry-run`` of every main commit since a release branch's branch point
  (``--release-branch``, default the newest ``releases/*``), adapted-backport detection
  included, against ``git cherry`` of the same branch and main, with the patch cache cold,
  warm, and warm after the branch gained a commit (as after a pick: the new commit's
  pairs and patch id are compared with main); the plan must be the same either way.

The rows on named histories (``--only histories``; run by ``nox -s bench`` too) need no
clone named: each history is looked for under ``$RELEASE_HISTORIES/OWNER/NAME`` (a clone,
bare or not, with its branches as ``refs/heads``), else cloned bare from GitHub into
``benchmarks/.cache/histories`` on first use; where neither works the row says "not
run" and why. Each is printed with its target:

- ``release notes`` of all of main, cold caches, against ``git log`` of the same range and
  fields, on pytorch/tensordict, pytorch/torchtune and pytorch/ao (target 3.0x at most), with the
  floor measured in the same run (``release notes`` of an empty range: the interpreter,
  the imports and the reads made before any commit) and the ratio net of it;
- the first ``release pick --dry-run`` of every main commit since vllm-ascend's
  ``releases/v0.13.0`` left main, cold patch cache, against ``git cherry`` (4.0x at most),
  with the floor its changed-line evidence sets: git's own ``diff-tree -p`` of the
  candidates, measured in the same run.

Usage: ``python benchmarks/real_history.py [--repo PATH] [--main REF] [--rounds N]
[--release-branch NAME] [--only PART]``.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks.*, as mypy reads them

from benchmarks.real_status import STATUS_HISTORIES, status_speed
from release.adapters.git_log import ABOUT_FORMAT, LOG_FORMAT, parse_log
from release.core.config import Config
from release.core.notes import build_notes, cancel_reverts

ENV_VAR = "RELEASE_REAL_HISTORY"
TRAILER = b"Cherry-pick-reason: regression\n"
# the commit cache is written on CI runners too, here; and bytecode as on a user's machine
# (with PYTHONDONTWRITEBYTECODE, as CI runners set it, each run would compile the package)
CACHE_ON = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "RELEASE_REPO_CACHE": "1",
}


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", "-c", "i18n.logOutputEncoding=UTF-8", *args],
        cwd=repo,
        env={**os.environ, **(env or {})},
        capture_output=True,
        check=True,
    )
    return proc.stdout.decode("utf-8", "surrogateescape")


def shared_clone(repo: Path, work: Path) -> Path:
    """A clone in ``work`` reading ``repo``'s objects, no work tree: what is written while
    measuring (the caches) goes into it, never into ``repo``."""
    clone = work / "clone"
    subprocess.run(
        ["git", "clone", "--quiet", "--shared", "--no-checkout", str(repo), str(clone)],
        check=True,
    )
    return clone


def categories_and_people(repo: Path, main: str) -> None:
    config = Config()
    aliases = config.alias_map()
    commits = list(
        parse_log(
            git(repo, "log", "--no-merges", f"--format={LOG_FORMAT}", main), aliases, repo=None
        )
    )
    other = sum(1 for c in commits if c.category == "Other")
    print(f"commits on {main}: {len(commits)}")
    print(f"  'Other' share: {100 * other / len(commits):.1f}% ({other})")
    found = sum(1 for c in commits if c.reverts_subject is not None or c.reverts_sha)
    _, cancelled = cancel_reverts(list(reversed(commits)))
    print(f"  reverts found: {found}; pairs cancelled: {len(cancelled) // 2}")
    notes = build_notes(commits, category_order=list(config.categories), since=None, until=main)
    emails = {c.author.email.lower() for c in commits}
    print(f"  contributors: {len(notes.contributors)} people from {len(emails)} author emails")
    counts = collections.Counter(c.category for c in commits).most_common()
    print("  by category: " + ", ".join(f"{name} {n}" for name, n in counts))


def _median_ms(argv: list[str], cwd: Path, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=CACHE_ON, capture_output=True, check=True)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _output(argv: list[str], cwd: Path) -> bytes:
    return subprocess.run(argv, cwd=cwd, env=CACHE_ON, capture_output=True, check=True).stdout


State = tuple[str, Callable[[], None] | None]  # (name, what runs before each round)


def _removing(*paths: Path) -> Callable[[], None]:
    def remove() -> None:
        for path in paths:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)

    return remove


def _in_states(
    release: list[str], raw: list[str], cwd: Path, states: list[State], rounds: int
) -> list[tuple[str, tuple[float, float]]]:
    """(state, (median ms of ours, of the raw command)) for each state, whose ``before``
    runs before each round (removing a cache, moving the branch); the runs alternate, so
    load on the machine falls on both."""
    figures = []
    for state, before in states:
        _median_ms(release, cwd, 1)  # warm-up: bytecode, the cache
        ours, base = [], []
        for _ in range(rounds):
            if before is not None:
                before()
            ours.append(_median_ms(release, cwd, 1))
            base.append(_median_ms(raw, cwd, 1))
        figures.append((state, (statistics.median(ours), statistics.median(base))))
    return figures


def _report(
    what: str,
    raw: str,
    figures: list[tuple[str, tuple[float, float]]],
    target: float | None = None,
) -> None:
    for state, (ours, base) in figures:
        aim = "" if target is None else (
            f" (target ≤ {target:.1f}x: {'met' if ours / base <= target else 'NOT MET'})"
        )  # fmt: skip
        print(f"{what}, {state}: {ours:.0f} ms vs {raw} {base:.0f} ms = {ours / base:.2f}x{aim}")


# the patches backport detection reads (release.adapters.git_reads), for the candidates
_DIFFS = (
    "import subprocess, sys\n"
    "from release.adapters.git_reads import _PATCHES\n"
    "subprocess.run(['git', *_PATCHES], stdin=open(sys.argv[1], 'rb'), "
    "stdout=subprocess.DEVNULL, check=True)\n"
)
# what every dry run reads, whatever the prefilter rules out: git cherry, the candidates'
# tree diffs (the files they change) and their messages, side by side, from a bare
# interpreter (no package imported)
_READS = (
    "import subprocess, sys\n"
    "def read(*args, stdin=None):\n"
    "    return subprocess.Popen(['git', *args], stdin=stdin, stdout=subprocess.DEVNULL)\n"
    "reads = [read('cherry', sys.argv[2], 'main'),\n"
    "         read('diff-tree', '--stdin', '-z', '--raw', '-r', '--no-renames', '--root',\n"
    "              stdin=open(sys.argv[1], 'rb')),\n"
    f"         read('log', '--no-walk=unsorted', '--stdin', '--format={ABOUT_FORMAT}',\n"
    "              stdin=open(sys.argv[1], 'rb'))]\n"
    "for done in reads:\n"
    "    done.wait()\n"
)
HISTORIES_ENV = "RELEASE_HISTORIES"
HISTORY_CACHE = Path(__file__).resolve().parent / ".cache" / "histories"
PYTORCH_FAMILY = ("pytorch/tensordict", "pytorch/torchtune", "pytorch/ao")
# (history, release branch, [tool.release] where the defaults do not fit its names)
PICK_HISTORIES = (
    ("vllm-project/vllm-ascend", "releases/v0.13.0", None),
    ("pytorch/ao", "release/0.13.0", 'branch = "release/{version}"\ntag = "v{version}"\n'),
)


def find_history(slug: str, fetch: bool = True) -> tuple[Path | None, str]:
    """A clone of GitHub's ``slug``: under ``$RELEASE_HISTORIES``, else in the cache (cloned
    bare on first use, when ``fetch``); None with the reason when there is none and it
    cannot be fetched."""
    given = os.environ.get(HISTORIES_ENV)
    for where in ([Path(given) / slug] if given else []) + [HISTORY_CACHE / slug]:
        if (where / "HEAD").exists() or (where / ".git").exists():
            return where, ""
    named = f"${HISTORIES_ENV}/{slug}" if given else f"no ${HISTORIES_ENV}"
    if not fetch:
        return None, f"{named}, and --quick fetches nothing"
    target = HISTORY_CACHE / slug
    target.parent.mkdir(parents=True, exist_ok=True)
    fetched = subprocess.run(
        ["git", "clone", "--quiet", "--bare", f"https://github.com/{slug}", str(target)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    if fetched.returncode == 0:
        return target, ""
    shutil.rmtree(target, ignore_errors=True)
    reason = (fetched.stderr.strip().splitlines() or ["no answer"])[-1]
    return None, f"{named}, and cloning it failed: {reason}"


def startup_floor(cwd: Path, tip: str, rounds: int) -> float:
    """Median ms of ``release notes`` of an empty range (``--since TIP --until TIP``): the
    interpreter, its site, the imports and reads a notes run makes before any commit."""
    argv = [sys.executable, "-m", "release", "notes", "--since", tip, "--until", tip]
    _median_ms(argv, cwd, 1)
    return statistics.median(_median_ms(argv, cwd, 1) for _ in range(rounds * 2))


def history_notes(slug: str, rounds: int, fetch: bool = True) -> None:
    """Cold ``release notes`` of all of main against ``git log``, target 3.0x, with the
    start-up floor and the ratio net of it."""
    repo, why = find_history(slug, fetch)
    if repo is None:
        print(f"release notes, all of {slug}'s main: not run ({why})")
        return
    work = Path(tempfile.mkdtemp(prefix="release-real-"))
    try:
        clone = shared_clone(repo, work)
        tip = git(clone, "rev-parse", "origin/main^{commit}").strip()
        root = git(clone, "rev-list", "--max-parents=0", tip).split()[-1]
        count = int(git(clone, "rev-list", "--count", "--no-merges", f"{root}..{tip}").strip())
        release = [sys.executable, "-m", "release", "notes", "--since", root, "--until", tip]
        raw = ["git", "log", f"--format={LOG_FORMAT}", "--no-merges", f"{root}..{tip}", "--"]
        cache = clone / ".git" / "release"
        figures = _in_states(release, raw, clone, [("cold caches", _removing(cache))], rounds)
        _report(f"release notes, all {count} commits of {slug}'s main", "git log", figures, 3.0)
        floor = startup_floor(clone, tip, rounds)
        ((_, (ours, base)),) = figures
        print(
            f"  floor (release notes of an empty range): {floor:.0f} ms; net of it: "
            f"{ours - floor:.0f} ms vs git log {base:.0f} ms = {(ours - floor) / base:.2f}x"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def histories(rounds: int, fetch: bool = True) -> None:
    for slug in PYTORCH_FAMILY:
        history_notes(slug, rounds, fetch)
    for slug, branch, config in PICK_HISTORIES:
        repo, why = find_history(slug, fetch)
        if repo is None:
            print(f"release pick --dry-run on {slug} {branch}: not run ({why})")
            continue
        pick_speed(
            repo, "origin/main", branch, rounds, target=4.0, states=("cold cache",),
            config=config, name=slug,
        )  # fmt: skip
    for slug, branch in STATUS_HISTORIES:
        repo, why = find_history(slug, fetch)
        if repo is None:
            print(f"release status on {slug} {branch}: not run ({why})")
            continue
        status_speed(repo, slug, branch, max(rounds, 5) if fetch else rounds)


def notes_speed(repo: Path, main: str, rounds: int) -> None:
    tip = git(repo, "rev-parse", f"{main}^{{commit}}").strip()
    root = git(repo, "rev-list", "--max-parents=0", tip).split()[-1]
    count = int(git(repo, "rev-list", "--count", "--no-merges", f"{root}..{tip}").strip())
    work = Path(tempfile.mkdtemp(prefix="release-real-"))
    try:
        clone = shared_clone(repo, work)  # the commit cache goes into its git directory
        cache = clone / ".git" / "release" / "commits.cache"
        kept = clone / ".git" / "release" / "notes"  # whole outputs
        states: list[State] = [
            ("cold caches", _removing(cache, kept)),
            ("commit cache warm, notes not kept", _removing(kept)),
            ("warm caches (the same notes again)", None),
        ]
        # all of main: since its first commit (both tools read the same range)
        for label, since in (("last 300 commits", f"{tip}~300"), (f"all {count} commits", root)):
            release = [sys.executable, "-m", "release", "notes", "--since", since, "--until", tip]
            spec = f"{since}..{tip}"
            raw = ["git", "log", f"--format={LOG_FORMAT}", "--no-merges", spec, "--"]
            _removing(cache, kept)()
            cold, warm = (_output(release, clone) for _ in range(2))
            print(f"same notes with cold and warm caches: {'yes' if cold == warm else 'NO'}")
            figures = _in_states(release, raw, clone, states, rounds)
            _report(f"release notes, {label} of {main}", "git log", figures)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def pick_bytes(repo: Path, main: str, count: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="release-real-"))
    try:
        clone = shared_clone(repo, work)
        shas = git(clone, "rev-list", "--no-merges", "--reverse", f"-{count}", main).split()
        start = git(clone, "rev-parse", f"{shas[0]}^").strip()
        ident = {"GIT_AUTHOR_NAME": "R", "GIT_AUTHOR_EMAIL": "r@example.com",
                 "GIT_COMMITTER_NAME": "R", "GIT_COMMITTER_EMAIL": "r@example.com"}  # fmt: skip
        git(clone, "switch", "--quiet", "-c", "releases/v9.9.9", start)
        git(clone, "branch", "--quiet", "-f", "main", main)
        equal = 0
        for sha in shas:
            git(clone, "cherry-pick", "-x", sha, env={**ident, "GIT_EDITOR": "true"})
            plain = (
                git(clone, "cat-file", "commit", "HEAD")
                .split("\n\n", 1)[1]
                .encode("utf-8", "surrogateescape")
            )
            git(clone, "reset", "--quiet", "--hard", "HEAD~1")
            result = subprocess.run(
                [sys.executable, "-m", "release", "pick", sha, "--reason", "regression"],
                cwd=clone, env={**os.environ, **ident}, capture_output=True, check=False,
            )  # fmt: skip
            if result.returncode != 0:
                print(f"  {sha[:10]}: release pick exited {result.returncode}")
                continue
            ours = (
                git(clone, "cat-file", "commit", "HEAD")
                .split("\n\n", 1)[1]
                .encode("utf-8", "surrogateescape")
            )
            equal += ours == plain + TRAILER
        print(
            f"pick byte-equality: {equal} of {len(shas)} messages equal to git cherry-pick -x + trailer"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _main_of(repo: Path, main: str) -> str:
    """``main``, or in a mirror (whose branches are its own, no ``origin/``) the branch of
    that name."""
    for ref in (main, main.removeprefix("origin/")):
        found = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
            cwd=repo, capture_output=True, check=False,
        )  # fmt: skip
        if found.returncode == 0:
            return ref
    return main


def newest_release_branch(repo: Path) -> str | None:
    for where, strip in (("refs/remotes/origin/releases/", 3), ("refs/heads/releases/", 2)):
        names = git(
            repo, "for-each-ref", "--sort=-version:refname", f"--format=%(refname:lstrip={strip})",
            where,
        ).split()  # fmt: skip
        if names:
            return names[0]
    return None


def pick_speed(
    repo: Path,
    main: str,
    branch: str | None,
    rounds: int,
    *,
    target: float | None = None,
    states: tuple[str, ...] = ("cold cache", "warm cache", "warm cache, branch moved"),
    config: str | None = None,
    name: str = "",
) -> None:
    """``release pick --dry-run`` of every main commit since ``branch`` left main, against
    ``git cherry``; with a ``target``, the floors beside it. ``config``: the history's
    ``[tool.release]`` keys, where the defaults do not fit its names."""
    branch = branch or newest_release_branch(repo)
    if branch is None:
        print("pick --dry-run: skipped (no origin/releases/* branch)")
        return
    work = Path(tempfile.mkdtemp(prefix="release-real-"))
    try:
        clone = work / "clone"
        subprocess.run(
            ["git", "clone", "--quiet", "--shared", "--branch", branch, str(repo), str(clone)],
            check=True,
        )
        git(clone, "branch", "--quiet", "-f", "main", main)
        branch_point = git(clone, "merge-base", "main", branch).strip()
        shas = git(clone, "rev-list", "--no-merges", "--reverse", f"{branch_point}..main").split()
        picks = work / "picks"
        picks.write_text("".join(f"{sha}\n" for sha in shas))
        settings = ["--config", str(work / "release.toml")] if config else []
        if config:
            (work / "release.toml").write_text(f"[tool.release]\n{config}", encoding="utf-8")
        release = [sys.executable, "-m", "release", *settings, "pick", "--dry-run",
                   "--allow-feature", "--file", str(picks)]  # fmt: skip
        raw = ["git", "cherry", branch, "main"]
        cache = clone / ".git" / "release" / "patches.cache"
        cache.unlink(missing_ok=True)
        cold, warm = (_output(release, clone) for _ in range(2))
        print(f"pick --dry-run of {len(shas)} candidates onto {f'{name} ' if name else ''}{branch}: "
              f"{cold.decode().splitlines()[0]}")  # fmt: skip
        print(f"same plan with a cold and a warm patch cache: {'yes' if cold == warm else 'NO'}")
        count = itertools.count()

        def moved() -> None:  # what a pick does to the branch: one commit more
            (clone / "RELEASE-BENCH.txt").write_text(f"{next(count)}\n")
            git(clone, "add", "RELEASE-BENCH.txt")
            git(clone, "-c", "user.name=R", "-c", "user.email=r@example.com", "commit",
                "--quiet", "-m", "A commit of the release branch's own")  # fmt: skip

        every: list[State] = [
            ("cold cache", _removing(cache)),
            ("warm cache", None),
            ("warm cache, branch moved", moved),
        ]
        chosen = [state for state in every if state[0] in states]
        figures = _in_states(release, raw, clone, chosen, rounds)
        _report(f"release pick --dry-run, {len(shas)} candidates", "git cherry", figures, target)
        if target is not None:  # the floors, measured in the same run
            ((_, (ours, base)),) = _in_states(
                [sys.executable, "-c", _READS, str(picks), branch], raw, clone, [("", None)], rounds
            )
            print(
                f"  floor: the reads every dry run makes (git cherry, the candidates' tree "
                f"diffs and messages, side by side, from a bare interpreter): {ours:.0f} ms "
                f"= {ours / base:.2f}x git cherry"
            )
            diffs = [sys.executable, "-c", _DIFFS, str(picks)]
            ((_, (ours, base)),) = _in_states(diffs, raw, clone, [("raw", None)], rounds)
            print(
                f"  reading every patch (what the prefilter spares, as far as it rules "
                f"candidates out): git diff-tree -p -U0 -M of all {len(shas)} candidates: "
                f"{ours:.0f} ms = {ours / base:.2f}x git cherry"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default=os.environ.get(ENV_VAR))
    parser.add_argument("--main", default="origin/main")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--picks", type=int, default=8)
    parser.add_argument("--release-branch", default=None)
    parser.add_argument(
        "--only", choices=("notes", "picks", "pick-speed", "histories"), default=None,
        help="run one part (default: all)",
    )  # fmt: skip
    parser.add_argument(
        "--quick", action="store_true",
        help="one round; histories only from $RELEASE_HISTORIES or the cache, none fetched",
    )  # fmt: skip
    args = parser.parse_args()
    if args.quick:
        args.rounds = 1
    if args.only == "histories":
        histories(args.rounds, fetch=not args.quick)
        return 0
    repo = Path(args.repo) if args.repo else None
    if repo is None or (not (repo / ".git").exists() and not (repo / "HEAD").exists()):
        print(f"real history: skipped (no clone at {repo or '$' + ENV_VAR}; set {ENV_VAR} to a "
              "clone of vllm-project/vllm-gaudi, with its remote branches and tags)")  # fmt: skip
        return 0
    if args.only in (None, "notes"):  # read in repo itself (a clone's main is origin/main)
        categories_and_people(repo, _main_of(repo, args.main))
        notes_speed(repo, _main_of(repo, args.main), args.rounds)
    if args.only in (None, "picks"):
        pick_bytes(repo, args.main, args.picks)
    if args.only in (None, "pick-speed"):
        pick_speed(repo, args.main, args.release_branch, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())

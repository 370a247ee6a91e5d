"""Backport detection on a real history: precision and recall against a hand-checked truth.

``ground_truth/vllm-gaudi.tsv`` maps every commit of two release branches of
vllm-project/vllm-gaudi to the main commits it carries (checked by hand against the diffs).
For each branch this checks the branch out in a throwaway clone, asks
``release pick --dry-run --json`` about every main commit since the branch point, and
counts a main commit as found when the plan skips it (``-x`` or the same patch) or holds
it (likely backported: PR numbers, title, changed lines). It prints precision and recall,
what patch identity (``git cherry``) alone finds, the evidence behind each find, every
miss and false find, and the dry run's wall time against ``git cherry`` over the same
range (median of alternating rounds).

Point ``RELEASE_REAL_HISTORY`` (or ``--repo``) at a clone of vllm-project/vllm-gaudi with
its remote branches (``origin/releases/*``); without one this says it was skipped.
Usage: ``python benchmarks/backports.py [--repo PATH] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ENV_VAR = "RELEASE_REAL_HISTORY"
TRUTH = Path(__file__).with_name("ground_truth") / "vllm-gaudi.tsv"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def read_truth() -> dict[str, set[str]]:
    """Branch -> the main commits it carries."""
    truth: dict[str, set[str]] = defaultdict(set)
    for line in TRUTH.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        branch, _, main, *_ = line.split("\t")
        truth[branch]  # a branch with no counterpart at all still counts
        if main != "-":
            truth[branch].add(main)
    return truth


def _has(repo: Path, ref: str) -> bool:
    try:
        git(repo, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}")
    except subprocess.CalledProcessError:
        return False
    return True


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, capture_output=True, check=True)
    return time.perf_counter() - start


def measure(source: Path, branch: str, carried: set[str], rounds: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="backports-") as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(
            ["git", "clone", "-q", "--shared", "--no-checkout", str(source), str(clone)],
            check=True,
        )
        # the source's remote branches become the clone's (a mirror's branches are its own)
        refs = "refs/remotes/origin/*" if git(source, "branch", "-r").strip() else "refs/heads/*"
        git(clone, "fetch", "-q", "origin", f"+{refs}:refs/remotes/origin/*")
        git(clone, "checkout", "-q", "-b", branch, f"origin/{branch}")
        base = git(clone, "merge-base", "HEAD", "origin/main").strip()
        main = git(clone, "rev-list", "--no-merges", "--reverse", f"{base}..origin/main").split()
        release = [sys.executable, "-m", "release", "--main-branch", "main"]
        dry = [*release, "pick", "--dry-run", "--json", "--allow-feature", *main]
        proc = subprocess.run(dry, cwd=clone, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"{branch}: release pick --dry-run failed: {proc.stderr.strip()}")
        steps = json.loads(proc.stdout)["steps"]
        cherry = {
            line[2:]
            for line in git(clone, "cherry", "HEAD", "origin/main", base).splitlines()
            if line.startswith("- ")
        }
        found = {s["sha"]: s for s in steps if s["action"] in ("skip", "hold")}
        subject = {s["sha"]: s["subject"] for s in steps}
        hits = carried & set(found)
        kinds: Counter[str] = Counter()
        for sha in hits:
            step = found[sha]
            kinds[
                "patch or -x" if step["action"] == "skip" else step["why"].split("(")[1].split()[0]
            ] += 1
        print(f"{branch}: {len(main)} main commits since the branch point, {len(carried)} carried")
        print(f"  git cherry alone: {len(carried & cherry)} found, {len(cherry - carried)} false")
        precision = len(hits) / len(found) if found else 1.0
        recall = len(hits) / len(carried) if carried else 1.0
        print(
            f"  release: {len(found)} found, {len(hits)} right -> precision {100 * precision:.1f}%, "
            f"recall {100 * recall:.1f}%"
        )
        print(f"  right finds by evidence: {dict(kinds)}")
        for sha in sorted(carried - set(found)):
            print(f"  missed {sha[:10]} {subject.get(sha, '(not a candidate)')}")
        for sha in sorted(set(found) - carried):
            print(f"  false  {sha[:10]} {subject[sha]}: {found[sha].get('why')}")
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(rounds + 1):  # the first round warms caches and is dropped
            ours.append(timed(dry, clone))
            theirs.append(timed(["git", "cherry", "HEAD", "origin/main", base], clone))
        a, b = statistics.median(ours[1:]), statistics.median(theirs[1:])
        print(f"  pick --dry-run {1000 * a:.0f} ms vs git cherry {1000 * b:.0f} ms: {a / b:.2f}x")
        return {"found": len(found), "right": len(hits), "carried": len(carried)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=os.environ.get(ENV_VAR))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if not args.repo:
        print(f"backports: skipped (set {ENV_VAR} or --repo to a clone of vllm-project/vllm-gaudi)")
        return 0
    source = Path(args.repo).resolve()
    totals: Counter[str] = Counter()
    for branch, carried in read_truth().items():
        if not any(_has(source, ref) for ref in (f"origin/{branch}", f"refs/heads/{branch}")):
            print(f"{branch}: skipped (no origin/{branch} or {branch} in {source})")
            continue
        totals.update(measure(source, branch, carried, args.rounds))
    if totals:
        precision = totals["right"] / totals["found"] if totals["found"] else 1.0
        recall = totals["right"] / totals["carried"] if totals["carried"] else 1.0
        print(
            f"all branches: precision {100 * precision:.1f}%, recall {100 * recall:.1f}% "
            "(goal: recall >= 90% at precision >= 95%)"
        )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    raise SystemExit(main())

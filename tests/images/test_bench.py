"""``nox -s bench`` in its quick form, end to end: every step the session runs
(``benchmarks/steps.py``) exits 0 and prints its figures, so the benchmarks cannot break
silently (as when ``release reproduce`` came to ask for ``--allow-host`` and the image
figures stopped). No figure is judged here: timings say nothing on a shared machine; the
benchmarks print each against its target and floor.

The image and publishing steps need a Docker Engine (and docker-registry, skopeo); the
real-history steps are given no clone, and say so.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.steps import bench_steps
from release.adapters.engine import ContainerEngine
from tests.docker_support import local_registry

ROOT = Path(__file__).resolve().parents[2]
NAMED = ("RELEASE_REAL_HISTORY", "RELEASE_REAL_RELEASE", "RELEASE_REAL_RELEASE_BRANCH")

# what each step prints when it ran through (a line of its table, or why it was skipped)
PRINTED = {
    "benchmarks/run.py": ("release notes of an empty range", "targets met:"),
    "benchmarks/images.py": ("unchanged re-run, sample context", "reproduce of the tag"),
    "benchmarks/registry.py": ("promote", "publish", "publish --from the transfer registry"),
    "benchmarks/real_history.py": ("real history: skipped (no clone at",),
    "benchmarks/backports.py": ("backports: skipped",),
}
HISTORIES = (
    "release pick --dry-run on vllm-project/vllm-ascend releases/v0.13.0: not run",
    "--quick fetches nothing",
    # a small history of ao's shape is given (below): its rows run, not "not run"
    "candidates onto pytorch/ao release/0.13.0",
    "release status on pytorch/ao release/0.13.0 (next:",
    "  warm: ",
    "  cold: ",
    "release status on pytorch/data release/0.11: not run",
)


def _ao_shaped(root: Path) -> None:
    """A bare repository at ``root`` shaped as pytorch/ao's release/0.13.0: main, the
    release branch off it with rc tags, and main commits since the cut."""
    work = root.parent / "ao-work"

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=work, check=True, capture_output=True)

    work.mkdir(parents=True)
    git("init", "-q", "-b", "main")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "T")
    (work / "version.txt").write_text("0.13.0\n")
    (work / "f.py").write_text("a = 1\n")
    git("add", ".")
    git("commit", "-qm", "init")
    git("branch", "release/0.13.0")
    for n in range(1, 4):
        (work / "f.py").write_text(f"a = {n + 1}\n")
        git("commit", "-qam", f"Fix {n} (#{n})")
    git("switch", "-q", "release/0.13.0")
    git("cherry-pick", "-x", "main~2")
    git("tag", "v0.13.0-rc1")
    git("switch", "-q", "main")
    git("clone", "-q", "--bare", str(work), str(root))


def test_the_bench_sessions_steps_are_the_ones_its_quick_form_runs() -> None:
    full, quick = bench_steps([]), bench_steps(["--quick"])
    assert [step[0] for step in full] == [step[0] for step in quick]
    assert quick[0] == ["benchmarks/run.py", "--quick"]
    assert all("--quick" not in step for step in full)
    # images; publishing (one variant); named histories
    assert "--quick" in quick[1] and "--quick" in quick[2] and "--quick" in quick[4]


@pytest.mark.images
@pytest.mark.slow
def test_nox_bench_quick_runs_every_step_to_its_figures(
    docker: ContainerEngine, tmp_path: Path
) -> None:
    with local_registry(tmp_path / "registry-check"):  # skips (or fails in CI) without one
        pass
    env = {k: v for k, v in os.environ.items() if k not in NAMED}
    env["RELEASE_HISTORIES"] = str(tmp_path / "histories")  # only ao's shape; none fetched
    _ao_shaped(tmp_path / "histories" / "pytorch" / "ao")
    for step in bench_steps(["--quick", "--reps", "1"]):
        done = subprocess.run(
            [sys.executable, *step], cwd=ROOT, env=env, capture_output=True, text=True,
            timeout=1800, check=False,
        )  # fmt: skip
        output = done.stdout + done.stderr
        assert done.returncode == 0, f"{' '.join(step)} exited {done.returncode}:\n{output}"
        expected = HISTORIES if "histories" in step else PRINTED[step[0]]
        for text in expected:
            assert text in output, f"{' '.join(step)} did not print {text!r}:\n{output}"

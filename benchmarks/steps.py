"""The steps of ``nox -s bench``, in order, as the scripts and arguments each runs with:
the one list the nox session and the test of its quick form (``tests/images/test_bench.py``)
both run, so the test cannot pass on a sequence the session no longer runs.

``--quick`` (and any other argument) goes to ``run.py``; with it every other step takes
its own quick form: one run each, nothing fetched, reproduce with the builder's cache,
publishing on one variant (its two platforms).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["bench_steps"]


def bench_steps(posargs: Sequence[str]) -> list[list[str]]:
    """Each step's script (relative to the repository) and arguments."""
    quick = "--quick" in posargs
    return [
        ["benchmarks/run.py", *posargs],
        # the image figures (skipped, with the reason, where no Docker Engine answers)
        ["benchmarks/images.py", *(["--quick"] if quick else [])],
        # publishing: a re-publish and promote against a registry of its own, arm64 emulated
        ["benchmarks/registry.py", *(["--quick"] if quick else [])],
        # figures on a real vLLM-family history, where $RELEASE_REAL_HISTORY names a clone
        ["benchmarks/real_history.py", *(["--quick"] if quick else [])],
        # named real histories (PyTorch-family notes, vllm-ascend's and ao's picks), each
        # with its target and floor
        ["benchmarks/real_history.py", "--only", "histories", *(["--quick"] if quick else [])],
        # backport detection against the hand-checked ground truth
        ["benchmarks/backports.py", *(["--rounds", "1"] if quick else [])],
    ]

"""Shell blocks run as a maintainer runs them: bash with ``release`` on its PATH (this
checkout's package, as a separate process) and git's identity from the block's own ``git
config``, not the test suite's (the suite's ``GIT_AUTHOR_*`` would override it)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from tests.conftest import GIT_ENV

__all__ = ["run_block"]


def run_block(cwd: Path, script: str, *, bin_dir: Path, timeout: float = 300) -> str:
    """Run ``script`` in ``cwd`` under ``bash -euo pipefail``; its stdout. A block that
    fails fails the test, with its output. ``bin_dir`` holds the ``release`` shim (made on
    first use)."""
    shim = bin_dir / "release"
    if not shim.exists():
        bin_dir.mkdir(parents=True, exist_ok=True)
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m release "$@"\n')
        shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in GIT_ENV or k == "GIT_CONFIG_NOSYSTEM"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout

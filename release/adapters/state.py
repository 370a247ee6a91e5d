"""Work in progress that must outlive a crash: JSON documents under ``.git/release/``.

A document is replaced atomically (a reader sees the old one or the new one); a write
cut short leaves only ``<name>.tmp``, which :meth:`StateFile.clear` removes too. A
document that cannot be read as a JSON object is refused, never half-used.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

from release.adapters.files import atomic_write
from release.core.json_text import parse_json
from release.errors import RefusedError

__all__ = ["STATE_DIR_ENV", "StateFile", "image_state_dir"]

STATE_DIR_ENV = "RELEASE_STATE_DIR"


def image_state_dir(git_dir: Path, env: Mapping[str, str] | None = None) -> Path:
    """Where the image work keeps its logs, records and manifest parts: ``.git/release``,
    or ``$RELEASE_STATE_DIR`` (CI jobs set it outside the checkout: nothing of theirs is
    written under ``.git``)."""
    chosen = (os.environ if env is None else env).get(STATE_DIR_ENV)
    return Path(chosen).absolute() if chosen else git_dir / "release"


class StateFile:
    """A JSON document under ``.git/release/`` that outlives a crash."""

    def __init__(self, git_dir: Path, name: str) -> None:
        self.path = git_dir / "release" / name

    def read(self) -> dict[str, Any] | None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as err:  # a file where the directory should be, a directory here
            raise RefusedError(
                f"cannot read {self.path} ({err.strerror}); look at {self.path.parent}, "
                "then move aside what is in the way"
            ) from None
        try:
            data = parse_json(text)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            self.damaged("not a JSON object")
        return data

    def damaged(self, why: str) -> NoReturn:
        raise RefusedError(
            f"{self.path} is damaged ({why}); look at it, then remove it to start over"
        )

    def write(self, data: dict[str, Any]) -> None:
        import json  # (here: reading a state that is not there, as status does, needs none)

        atomic_write(self.path, json.dumps(data, indent=2), scratch=self.path.with_suffix(".tmp"))

    def clear(self) -> None:
        for path in (self.path, self.path.with_suffix(".tmp")):  # .tmp: a write cut short
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

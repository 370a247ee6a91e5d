"""Where manifests are kept, and reading them back: the parts ``build``, ``smoke`` and
``snapshot`` write, and the manifest published as a tag's note.

Parts live under ``<git dir>/release/manifest/<version>/<variant>.<part>.json``, or
under ``$RELEASE_MANIFEST_DIR/<version>/`` where that is set (CI: a directory each job
uploads as an artifact, so nothing is written under ``.git``). Everything read is checked
against the schema (:mod:`release.core.manifest`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from release.adapters.files import read_regular
from release.adapters.git import GitRepo
from release.adapters.git_notes import notes_ref, read_note
from release.adapters.state import image_state_dir
from release.core.json_text import parse_json
from release.core.manifest import PART_SCHEMA, ManifestError, check, loads, of_tag

__all__ = ["MANIFEST_DIR_ENV", "parts_root", "published", "read_parts"]

MANIFEST_DIR_ENV = "RELEASE_MANIFEST_DIR"
MAX_PART = 64 * 2**20  # bytes: a part with a large image's inventory is a few MB


def parts_root(git_dir: Path, env: Mapping[str, str] | None = None) -> Path:
    chosen = (os.environ if env is None else env).get(MANIFEST_DIR_ENV)
    return Path(chosen) if chosen else image_state_dir(git_dir, env) / "manifest"


def read_parts(dirs: Iterable[Path], version: str) -> list[dict[str, Any]]:
    """Every part of ``version`` under ``dirs``: in ``<dir>/<version>/`` as written here, or
    anywhere below ``dir`` (CI artifacts unpacked as they come), each checked. Other JSON
    files are passed over; a part that is damaged, and a ``*.json`` that is not a regular
    file (a symlink, a FIFO, a device, a socket: never opened) or is larger than any part,
    is an error naming the file."""
    found: list[dict[str, Any]] = []
    seen: set[Path] = set()
    for top in dirs:
        if not top.is_dir():
            raise ManifestError(f"--parts {top}: not a directory")
        for path in sorted(top.rglob("*.json")):
            if path.resolve() in seen:
                continue
            seen.add(path.resolve())
            head = _read_part(path)
            if not isinstance(head, dict) or head.get("schema") != PART_SCHEMA:
                continue
            if head.get("version") == version:
                try:
                    found.append(check(head, str(path)))
                except RecursionError:  # the schema's messages show the value, nested
                    raise ManifestError(f"{path}: not a part: nested too deeply") from None
    return found


def _read_part(path: Path) -> Any:
    """The JSON of one ``*.json`` file of a parts directory, as it is there: a symlink is
    refused, not followed (a part is a file the job wrote)."""
    if path.is_symlink():
        raise ManifestError(f"{path}: a symbolic link, not a part (a part is a regular file)")
    data = read_regular(path, str(path), error=ManifestError, limit=MAX_PART)
    try:
        return parse_json((data or b"").decode("utf-8"))
    except ValueError as err:  # not UTF-8 (a UnicodeDecodeError), not JSON, nested too deeply
        raise ManifestError(f"{path}: not a readable JSON part ({err})") from None


def published(repo: GitRepo, tag: str, commit: str) -> dict[str, Any] | None:
    """``tag``'s published manifest, checked against the schema and against the tag (it
    must name ``tag`` and its ``commit``); None when it has none."""
    text = read_note(repo, tag, commit)
    if text is None:
        return None
    what = f"the manifest of {tag} ({notes_ref(tag)})"
    return of_tag(loads(text, what), tag, commit, what)

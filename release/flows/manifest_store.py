"""Where manifests are kept, and reading them back: the parts ``build``, ``smoke`` and
``snapshot`` write, and the manifest published as a tag's note.

Parts live under ``<git dir>/release/manifest/<version>/<variant>.<part>.json``, or
under ``$RELEASE_MANIFEST_DIR/<version>/`` where that is set (CI: a directory each job
uploads as an artifact, so nothing is written under ``.git``). Everything read is checked
against the schema (:mod:`release.core.manifest`).

A tag's published manifest has one reading, :func:`published_manifest`, for every command
that shows or uses one (``status``, ``manifest show``, ``report``, ``promote``,
``images.promote``, ``reproduce``, the rehearsal's checks): the note comes from whoever can
push, so each of them refuses the same damage with the same line
(:mod:`release.core.tag_manifest`), and none judges a note on its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from release.adapters.config_file import committed_config
from release.adapters.files import read_regular
from release.adapters.git import GitRepo
from release.adapters.git_notes import notes_ref, read_note
from release.adapters.state import image_state_dir
from release.core.json_text import JSONValue, parse_json
from release.core.manifest import PART_SCHEMA, ManifestError, check, read_manifest
from release.core.manifest_records import Manifest, Part
from release.core.tag_manifest import built_as, not_built, not_built_so, of_tag
from release.errors import UsageError

if TYPE_CHECKING:
    from release.core.config import Config
    from release.core.matrix import ImageMatrix
    from release.core.versions import ReleaseVersion

__all__ = [
    "MANIFEST_DIR_ENV",
    "PublishedManifest",
    "parts_root",
    "published_manifest",
    "read_parts",
]

MANIFEST_DIR_ENV = "RELEASE_MANIFEST_DIR"
MAX_PART = 64 * 2**20  # bytes: a part with a large image's inventory is a few MB


def parts_root(git_dir: Path, env: Mapping[str, str] | None = None) -> Path:
    chosen = (os.environ if env is None else env).get(MANIFEST_DIR_ENV)
    return Path(chosen) if chosen else image_state_dir(git_dir, env) / "manifest"


def read_parts(dirs: Iterable[Path], version: str) -> list[Part]:
    """Every part of ``version`` under ``dirs``: in ``<dir>/<version>/`` as written here, or
    anywhere below ``dir`` (CI artifacts unpacked as they come), each checked. Other JSON
    files are passed over; a part that is damaged, and a ``*.json`` that is not a regular
    file (a symlink, a FIFO, a device, a socket: never opened) or is larger than any part,
    is an error naming the file."""
    found: list[Part] = []
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
                    found.append(Part.of(check(head, str(path)), str(path)))
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


@dataclass(frozen=True)
class PublishedManifest:
    """A tag's manifest as it was read and judged: against the tag and its commit, the
    version the tag names and the tag's own configuration."""

    tag: str
    commit: str
    version: ReleaseVersion  # the tag's
    built_as: ReleaseVersion  # its images': the tag's, or a final's rc's
    matrix: ImageMatrix  # the tag's configuration's, which it was judged against
    manifest: Manifest  # the manifest itself, checked against the schema, as records

    @property
    def document(self) -> dict[str, JSONValue]:
        """The manifest as the JSON document it was read from."""
        return self.manifest.document()

    @property
    def name(self) -> str:
        """How a refusal names it: the tag's manifest, and its notes ref."""
        return _name(self.tag)


def published_manifest(repo: GitRepo, tag: str, commit: str) -> PublishedManifest | None:
    """``tag``'s published manifest (its note on ``commit``); None when it has none.
    :class:`ManifestError`, in one line that says the same whichever command reads it,
    when it is not JSON read safely (a key twice, nested too deep), not valid against the
    schema, names another tag or commit, or records what the tag does not build with its
    own configuration (:func:`~release.core.tag_manifest.not_built_so`); a final's must
    be promoted from an rc of its version."""
    text = read_note(repo, tag, commit)
    if text is None:
        return None
    what = _name(tag)
    manifest = of_tag(read_manifest(text, what), tag, commit, what)
    config = committed_config(repo, commit, tag)
    version = _version(config, tag)
    images = built_as(manifest, version, config.tag, what)
    matrix = _matrix(config, what)
    epoch = repo.commit_time(commit)
    disagree = not_built_so(
        manifest, matrix, version=version.pep440(), build=images.pep440(), epoch=epoch
    )
    if disagree:
        raise not_built(what, disagree)
    return PublishedManifest(tag, commit, version, images, matrix, manifest)


def _name(tag: str) -> str:
    return f"the manifest of {tag} ({notes_ref(tag)})"


def _version(config: Config, tag: str) -> ReleaseVersion:
    """The version ``tag`` names under its own configuration's tag template."""
    version = config.tag.parse_any(tag)
    if version is None:
        raise UsageError(
            f"{tag} is not a release tag of its repository (tag = {config.tag.template!r})"
        )
    return version


def _matrix(config: Config, what: str) -> ImageMatrix:
    """The tag's matrix: a manifest of a tag that builds no images records what it does
    not build."""
    if config.matrix is None:
        raise not_built(what, ["images, the tag's configuration has no [tool.release.images]"])
    return config.matrix

"""The content digest of an image (:mod:`release.core.content_digest`), read through the
engine and kept in the user cache.

How: a container of the image is created and never started (``docker create``, labelled
``org.release.managed``); its file system is streamed out by ``docker export`` straight
into the tar reader, nothing written to disk; the container is removed whatever happens,
a failure, Ctrl-C or SIGTERM included.

Cache: an image id names its content, so the digest of an id never changes. It is kept
by id and :data:`~release.core.content_digest.ALGORITHM` in the user cache dir
(:func:`cache_path`; ``RELEASE_CACHE_DIR`` moves it), one small JSON file per image. An
entry that does not read back as the digest of that id with this algorithm (damaged, cut
short, another image's) is ignored and written anew, atomically; a cache dir that cannot
be written is left as it is.
"""

from __future__ import annotations

import contextlib
import json
import re
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

from release.adapters.cache import user_cache_dir
from release.adapters.engine import ContainerEngine
from release.adapters.files import atomic_write
from release.core.content_digest import ALGORITHM, ContentDigest, content_records, digest_tar
from release.core.json_text import parse_json
from release.errors import EngineError

__all__ = ["cache_path", "cached_digest", "image_content_digest", "image_content_records"]

_T = TypeVar("_T")
_IMAGE_ID = re.compile(r"sha256:[0-9a-f]{64}")


def image_content_digest(engine: ContainerEngine, image: str) -> ContentDigest:
    """The content digest of ``image`` (a tag, or an id): from the cache when its id is
    there (then the engine is not asked anything when ``image`` is a full id), else read
    through the engine and cached."""
    image_id = image if _IMAGE_ID.fullmatch(image) else engine.image_id(image)
    if image_id is None:
        raise EngineError(f"no image {image} in the engine; build it first")
    digest = cached_digest(image_id)
    if digest is None:
        digest = _exported(engine, image_id, digest_tar)
        _remember(image_id, digest)
    return digest


def image_content_records(engine: ContainerEngine, image: str) -> dict[str, bytes]:
    """The record of each path in ``image``, as its content digest reads them
    (:func:`release.core.content_digest.content_records`), read through the engine and
    never cached: what names the files two images' digests differ in
    (:func:`release.core.content_digest.compare_records`)."""
    return _exported(engine, image, content_records)


def cache_path(image_id: str) -> Path:
    """Where the digest of ``image_id`` (``sha256:<hex>``) is cached."""
    name = f"{image_id.removeprefix('sha256:')}.json"
    return user_cache_dir() / "image-content" / f"v{ALGORITHM}" / name


def cached_digest(image_id: str) -> ContentDigest | None:
    """The cached digest of ``image_id``; None when there is none to trust."""
    try:
        data = parse_json(cache_path(image_id).read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            return None
        if data.get("image") != image_id or data.get("algorithm") != ALGORITHM:
            return None
        return ContentDigest.from_dict(data.get("content"))
    except (OSError, ValueError):  # missing, unreadable, not JSON, not a digest
        return None


def _remember(image_id: str, digest: ContentDigest) -> None:
    entry = {"image": image_id, "algorithm": ALGORITHM, "content": digest.to_dict()}
    with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
        atomic_write(cache_path(image_id), json.dumps(entry, indent=1) + "\n")


def _exported(engine: ContainerEngine, image: str, read: Callable[[IO[bytes]], _T]) -> _T:
    with engine.created_container(image) as container:
        try:
            return engine.export_container(container, read)
        except tarfile.TarError as err:
            raise EngineError(
                f"docker export of {image[:19]} is not a tar stream that can be read ({err})"
            ) from None

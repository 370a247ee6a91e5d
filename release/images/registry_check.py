"""``reproduce`` against the registry: what the release registry serves for a published
tag, compared with the manifest and with the rebuild.

For a row whose manifest records where it was published, the variant's index tag is read
(it must still serve the recorded index, and list the row's platform with the recorded
digest: a tag moved behind the release's back is drift), then the platform image is pulled
by the digest the registry serves and its content digest compared with the rebuild's. A
registry that cannot be read, or an image that cannot be pulled, is *not compared*, with
the reason, never a match. An image pulled here only for this is removed afterwards.
"""

from __future__ import annotations

from release.adapters.engine import ContainerEngine
from release.adapters.image_content import image_content_digest
from release.adapters.registry import Registry, Served
from release.core.manifest_records import Content, PublishRecord
from release.core.references import repository
from release.core.terminal_text import escaped
from release.core.verdict import FieldVerdict, State
from release.errors import ReleaseError

__all__ = ["registry_verdicts"]

TAG_FIELD = "registry tag"
CONTENT_FIELD = "registry content"


def _platform_digest(served: Served, platform: str) -> str | None:
    return next((digest for name, digest in served.platforms if name == platform), None)


def _tag_verdict(published: PublishRecord, served: Served | None, tag: str) -> FieldVerdict:
    index = published.index.digest
    if served is None:
        return FieldVerdict(
            TAG_FIELD, State.DRIFT, (f"{escaped(tag)}: the registry serves nothing",)
        )
    listed = _platform_digest(served, published.platform)
    if served.digest != index or listed != published.digest:
        return FieldVerdict(
            TAG_FIELD,
            State.DRIFT,
            (
                f"{escaped(tag)} serves {escaped(served.digest)} ({escaped(published.platform)} "
                f"{escaped(str(listed))}); the manifest records {escaped(index)} "
                f"({escaped(published.digest)})",
            ),
        )
    return FieldVerdict(TAG_FIELD, State.MATCH)


def registry_verdicts(
    engine: ContainerEngine,
    published: PublishRecord | None,
    rebuilt_content: Content,
    reg: Registry | None = None,
) -> list[FieldVerdict]:
    """The registry's fields of a row's verdict ([] for a row never published).
    ``published``: the row's publish record; ``rebuilt_content``: the rebuild's content."""
    if published is None:
        return []
    reg = reg or Registry()
    tag = published.index.tags[0]
    try:
        served = reg.served(tag)
    except ReleaseError as err:
        why = (f"the registry could not be read: {escaped(err.one_line())}",)
        return [
            FieldVerdict(TAG_FIELD, State.NOT_COMPARED, why),
            FieldVerdict(CONTENT_FIELD, State.NOT_COMPARED, why),
        ]
    verdicts = [_tag_verdict(published, served, tag)]
    digest = _platform_digest(served, published.platform) if served else None
    if digest is None:
        why = (f"{escaped(tag)} lists no {escaped(published.platform)} image",)
        return [*verdicts, FieldVerdict(CONTENT_FIELD, State.NOT_COMPARED, why)]
    ref = f"{repository(tag)}@{digest}"
    had = engine.inspect_image(ref) is not None
    if not engine.pull(ref, published.platform):
        why = (f"{escaped(ref)} cannot be pulled here",)
        return [*verdicts, FieldVerdict(CONTENT_FIELD, State.NOT_COMPARED, why)]
    try:
        content = image_content_digest(engine, ref).digest
    finally:
        if not had:
            engine.remove_image(ref)  # the digest's name only where another tag keeps it
    if content == rebuilt_content.digest:
        return [*verdicts, FieldVerdict(CONTENT_FIELD, State.MATCH)]
    difference = f"served {escaped(content[:19])}, rebuilt {escaped(rebuilt_content.digest[:19])}"
    return [*verdicts, FieldVerdict(CONTENT_FIELD, State.DRIFT, (difference,))]

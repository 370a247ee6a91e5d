"""What the rc page of a tag is made from, gathered here: the tag and its message, its
release manifest (the git note in ``refs/notes/release/<tag>``), and the verdict of a
``release reproduce TAG`` run on this machine, if there was one.

All three are the tag's as this repository has them (``git fetch`` brings a remote's);
nothing is changed or fetched. The manifest is checked against its schema and against the
tag and its configuration as every command reads it
(:func:`~release.flows.manifest_store.published_manifest`): a tag without one, or with
one that is damaged, of another tag or records what the tag does not build, has no page;
the page's rows are those of the tag's configuration. The reproduce record, under
``<git dir>/release/reproduce/<tag>.json`` (``$RELEASE_STATE_DIR/reproduce/`` where that is
set), is untrusted JSON: one that cannot be read as a record of this tag is passed over
with a notice on the page, and reproduce is shown as not run.
"""

from __future__ import annotations

from pathlib import Path

from release.adapters.files import read_regular
from release.adapters.git_notes import NOTES_PREFIX, notes_ref
from release.adapters.git_tags import TagMessage, tag_message
from release.adapters.state import image_state_dir
from release.core.json_text import parse_json
from release.core.manifest import ManifestError
from release.core.rc_page import RcPage
from release.core.rc_page_input import ReproduceRecord, page_of, reproduce_of
from release.errors import ReleaseError, UsageError
from release.flows.context import ReleaseContext
from release.flows.manifest_store import published_manifest
from release.flows.published_tag import check_tag_name

__all__ = ["MAX_RECORD", "gather", "reproduce_record_path"]

MAX_RECORD = 16 * 2**20  # bytes: a record is a few KB per variant


def reproduce_record_path(git_dir: Path, tag: str) -> Path:
    """Where ``release reproduce TAG`` keeps its verdict (its ``--json`` document): with the
    image work's records, ``<git dir>/release`` or ``$RELEASE_STATE_DIR``."""
    return image_state_dir(git_dir) / "reproduce" / f"{tag}.json"


def gather(ctx: ReleaseContext, tag: str) -> RcPage:
    """The page of ``tag``: refused when there is no such tag or it has no manifest."""
    check_tag_name(tag)
    found = tag_message(ctx.repo, tag)
    if found is None:
        raise UsageError(f"no tag {tag} here (get it with: git fetch origin tag {tag})")
    manifest = published_manifest(ctx.repo, tag, found.commit)
    if manifest is None:
        raise ManifestError(
            f"{tag} has no release manifest here ({notes_ref(tag)}): record it with release "
            f"manifest, or fetch it: git fetch origin '{NOTES_PREFIX}*:{NOTES_PREFIX}*'"
        )
    notices: list[str] = []
    record = _reproduce(reproduce_record_path(ctx.repo.git_dir, tag), tag, notices)
    return page_of(
        manifest.manifest,
        matrix=manifest.matrix,
        notes=_notes(found),
        reproduce=record,
        notices=notices,
    )


def _notes(tag: TagMessage) -> str | None:
    """The tag's message without its first line where that only repeats the tag's name
    (``release tag`` writes it so); None for a lightweight tag."""
    if not tag.annotated:
        return None
    first, _, rest = tag.message.partition("\n")
    return rest.lstrip("\n") if first.strip() == tag.name else tag.message


def _reproduce(path: Path, tag: str, notices: list[str]) -> ReproduceRecord | None:
    what = f"the reproduce record {path}"
    try:
        data = read_regular(path, what, limit=MAX_RECORD)
        if data is None:
            return None
        return reproduce_of(parse_json(data.decode("utf-8")), tag)
    except ReleaseError as err:
        problem = err.one_line()
    except ValueError as err:  # not UTF-8, not JSON, too deep, not a record of this tag
        problem = f"{what} is not readable ({err})"
    notices.append(f"{problem}: reproduce is shown as not run")
    return None

"""A published tag and its manifest, read from the remote without changing this repository.

``reproduce`` checks what was published: the tag as the remote has it, and the manifest
note beside it (``refs/notes/release/<tag>``). Reading them changes no ref, no config and
no file of this repository, whatever the remote holds or the run ends in:

- the name is checked first: one tag, a valid ref name, no pattern (``v*`` names none);
- the remote's tag, its commit and its notes ref are listed (``git ls-remote``), and a
  local tag of that name that points elsewhere is refused before anything is fetched;
- their objects are fetched with no ref to update: ``--refmap=`` (a configured refspec
  such as ``+refs/notes/*:refs/notes/*`` updates nothing either), ``--no-tags``,
  ``--no-write-fetch-head``, no maintenance and no submodules. Objects no ref names are
  all that is added, and git's own gc removes them in time;
- :func:`pin` makes the two refs in the scratch clone the rebuild runs in.

Where there is no remote, or it does not answer, or it has no such tag, the local tag and
note are used, and a notice says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from release.adapters.git import GitRepo
from release.adapters.git_notes import notes_ref
from release.core.versions import ref_format_problem
from release.errors import GitError, RefusedError, UsageError

__all__ = ["PublishedTag", "check_tag_name", "pin", "read_published"]


@dataclass(frozen=True)
class PublishedTag:
    """The tag to reproduce as it will be read: the ref's object (a tag object or, for a
    lightweight tag, the commit), the commit, and the manifest note's ref, if any."""

    name: str
    ref_sha: str
    commit: str
    note: str | None
    notices: tuple[str, ...] = ()


def check_tag_name(tag: str) -> None:
    """One tag, named as git would name it: a pattern or a bad name is refused here, before
    anything is asked of git or the remote."""
    problem = ref_format_problem(tag) or (
        "it is not one tag name" if tag.startswith("refs/") else None
    )
    if problem:
        raise UsageError(
            f"{tag!r} is not a tag name ({problem}): name the one tag to reproduce, e.g. v0.31.0rc1"
        )


def read_published(repo: GitRepo, remote: str, tag: str) -> PublishedTag:
    """``tag`` and its manifest as ``remote`` published them (their objects fetched, no ref
    written), or the local ones with a notice saying why."""
    check_tag_name(tag)
    ref, note_ref = f"refs/tags/{tag}", notes_ref(tag)
    here = _Local(repo.object_id(ref), repo.rev(ref), repo.object_id(note_ref))
    if not repo.remotes.has(remote):
        return here.used(tag, f"no remote {remote!r}")
    try:
        listed = repo.remotes.refs(remote, ref, note_ref)
    except GitError as err:
        return here.used(tag, f"{remote} did not answer ({err.message})")
    their_tag = listed.get(ref)
    if their_tag is None:
        return here.used(tag, f"{remote} has no tag {tag}")
    theirs = their_tag.sha
    if here.ref_sha is not None and here.ref_sha != theirs:
        raise RefusedError(
            f"the tag {tag} here is not {remote}'s (here {here.ref_sha[:12]}, {remote} "
            f"{theirs[:12]}): reproduce checks what was published; delete the local tag "
            f"(git tag -d {tag}) and run it again"
        )
    note = listed[note_ref].sha if note_ref in listed else None
    repo.remotes.fetch_objects(remote, [ref, *([note_ref] if note else [])])
    commit = repo.rev(theirs)
    if commit is None and repo.object_id(theirs) is not None:
        raise UsageError(f"{remote}'s tag {tag} does not name a commit: nothing to reproduce")
    if commit is None or commit != their_tag.target or (note and repo.object_id(note) is None):
        raise GitError(f"{remote} changed {tag} while it was read; run reproduce again")
    if note is None:
        notice = f"{remote} has no manifest for {tag}: the one here, if any, is used"
        return PublishedTag(tag, theirs, commit, here.note, (notice,))
    return PublishedTag(tag, theirs, commit, note)


@dataclass(frozen=True)
class _Local:
    ref_sha: str | None
    commit: str | None
    note: str | None

    def used(self, tag: str, why: str) -> PublishedTag:
        """The local tag and note, since the remote's cannot be had (``why``)."""
        if self.ref_sha is None or self.commit is None:
            raise UsageError(f"no tag {tag} here, and {why}: fetch it, or check the name")
        notice = f"{why}: the tag and manifest here are used"
        return PublishedTag(tag, self.ref_sha, self.commit, self.note, (notice,))


def pin(clone: GitRepo, tag: PublishedTag) -> None:
    """Make ``tag`` and its note in ``clone`` (a scratch clone that shares this
    repository's objects) as they were read."""
    clone.set_ref(f"refs/tags/{tag.name}", tag.ref_sha)
    if tag.note is not None:
        clone.set_ref(notes_ref(tag.name), tag.note)

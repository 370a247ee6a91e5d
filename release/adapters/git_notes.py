"""Release manifests published with their tags, as git notes.

Each tag's manifest is a note on the tagged commit in a notes ref of its own,
``refs/notes/release/<tag>``. One ref per tag because the final is tagged on the last
rc's commit: both manifests sit on one commit, and with a ref each neither replaces the
other, and two jobs publishing two rcs never race for one ref. ``push`` sends a tag's
notes ref in the same atomic push as the tag; ``reproduce`` fetches both. By hand::

    git fetch origin 'refs/notes/release/*:refs/notes/release/*'
    git notes --ref release/v0.31.0rc1 show v0.31.0rc1

The note's blob is written as given (``git hash-object``, then ``notes add -C``): no
message cleanup touches the JSON.
"""

from __future__ import annotations

from release.adapters.git import GitRepo

__all__ = ["NOTES_PREFIX", "fetch_note", "notes_ref", "read_note", "write_note"]

NOTES_PREFIX = "refs/notes/release/"


def notes_ref(tag: str) -> str:
    return NOTES_PREFIX + tag


def read_note(repo: GitRepo, tag: str, commit: str) -> str | None:
    """The text of ``tag``'s note on ``commit``; None when there is none."""
    if repo.rev(notes_ref(tag)) is None:
        return None
    result = repo.run("notes", f"--ref={notes_ref(tag)}", "show", commit, check=False)
    return result.stdout + "\n" if result.ok else None


def write_note(repo: GitRepo, tag: str, commit: str, text: str) -> bool:
    """Record ``text`` as ``tag``'s note on ``commit``; False when it was there already."""
    if read_note(repo, tag, commit) == text:
        return False
    blob = repo.run("hash-object", "-w", "--stdin", stdin=text, mutating=True).stdout.strip()
    repo.run(
        "notes", f"--ref={notes_ref(tag)}", "add", "--force", "-C", blob, commit, mutating=True
    )
    return True


def fetch_note(repo: GitRepo, remote: str, tag: str) -> bool:
    """Fetch ``tag``'s notes ref from ``remote`` (forced: the remote's is what was
    published); False when the remote has none."""
    ref = notes_ref(tag)
    return repo.run("fetch", "--quiet", "--no-tags", remote, f"+{ref}:{ref}", check=False).ok

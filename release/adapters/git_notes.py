"""Release manifests published with their tags, as git notes.

Each tag's manifest is a note on the tagged commit in a notes ref of its own,
``refs/notes/release/<tag>``. One ref per tag because the final is tagged on the last
rc's commit: both manifests sit on one commit, and with a ref each neither replaces the
other, and two jobs publishing two rcs never race for one ref. ``push`` sends a tag's
notes ref in the same atomic push as the tag; ``reproduce`` fetches both. By hand::

    git fetch origin 'refs/notes/release/*:refs/notes/release/*'
    git notes --ref release/v0.31.0rc1 show v0.31.0rc1

The note's blob is written as given (``git hash-object``, then ``notes add -C``): no
message cleanup touches the JSON. An annotated tag's object gets the same note as its
commit, so ``git notes show v0.31.0rc1`` finds it by the tag's own name; it is read from the
commit, which every tag of it (an rc and its final) shares.

A signed manifest's detached signature (over the note's exact bytes) lives in the same
notes ref, as the file :data:`SIGNATURE_FILE` of its tree beside the notes: git keeps such
entries when it writes notes, so the signature travels wherever the ref does (``push``,
``manifest --push``, ``reproduce``'s fetch), and a note changed after signing keeps the
old signature, which then does not verify. By hand::

    git cat-file blob refs/notes/release/v0.31.0rc1:manifest.sig
"""

from __future__ import annotations

from release.adapters.git import GitRepo

__all__ = [
    "NOTES_PREFIX",
    "SIGNATURE_FILE",
    "fetch_note",
    "note_bytes",
    "notes_ref",
    "read_note",
    "read_signature",
    "remote_note",
    "reset_notes",
    "write_note",
    "write_signature",
]

NOTES_PREFIX = "refs/notes/release/"
SIGNATURE_FILE = "manifest.sig"  # in the notes ref's tree: not an object name, so not a note


def notes_ref(tag: str) -> str:
    return NOTES_PREFIX + tag


def read_note(repo: GitRepo, tag: str, commit: str) -> str | None:
    """The text of ``tag``'s note on ``commit``; None when there is none."""
    if repo.rev(notes_ref(tag)) is None:
        return None
    return _note_of(repo, tag, commit)


def write_note(repo: GitRepo, tag: str, commit: str, text: str) -> bool:
    """Record ``text`` as ``tag``'s note on ``commit`` (and on the annotated tag's object);
    False when it was there already."""
    tag_object = repo.object_id(f"refs/tags/{tag}")
    targets = [commit] + ([tag_object] if tag_object and tag_object != commit else [])
    missing = [t for t in targets if _note_of(repo, tag, t) != text]
    if not missing:
        return False
    blob = repo.run("hash-object", "-w", "--stdin", stdin=text, mutating=True).stdout.strip()
    for target in missing:
        repo.run(
            "notes", f"--ref={notes_ref(tag)}", "add", "--force", "-C", blob, target, mutating=True
        )
    return commit in missing


def _note_of(repo: GitRepo, tag: str, target: str) -> str | None:
    result = repo.run("notes", f"--ref={notes_ref(tag)}", "show", target, check=False)
    return result.stdout + "\n" if result.ok else None


def fetch_note(repo: GitRepo, remote: str, tag: str) -> bool:
    """Fetch ``tag``'s notes ref from ``remote`` (forced: the remote's is what was
    published); False when the remote has none."""
    ref = notes_ref(tag)
    return repo.run("fetch", "--quiet", "--no-tags", remote, f"+{ref}:{ref}", check=False).ok


def remote_note(repo: GitRepo, remote: str, tag: str, commit: str) -> tuple[str, str] | None:
    """``remote``'s notes ref of ``tag`` and its note's text on ``commit``, read without
    changing this repository's refs (a scratch ref, removed again); None when the remote
    has no such ref. ("", text "") when the ref has no note on ``commit``."""
    ref = notes_ref(tag)
    scratch = "refs/notes/release-scratch/" + tag
    fetched = repo.run(
        "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote, f"+{ref}:{scratch}",
        check=False, mutating=True,
    )  # fmt: skip
    try:
        sha = repo.rev(scratch) if fetched.ok else None
        if sha is None:
            return None
        shown = repo.run("notes", f"--ref={scratch}", "show", commit, check=False)
        return sha, (shown.stdout + "\n" if shown.ok else "")
    finally:
        repo.run("update-ref", "-d", scratch, check=False, mutating=True)


def note_bytes(repo: GitRepo, tag: str, commit: str) -> str | None:
    """``tag``'s note on ``commit`` exactly as stored (what its signature is over; bytes
    that are not UTF-8 as surrogates); None when there is none."""
    listed = repo.run("notes", f"--ref={notes_ref(tag)}", "list", commit, check=False)
    blob = listed.stdout.strip() if listed.ok else ""
    return repo.out("cat-file", "blob", blob) if blob else None


def read_signature(repo: GitRepo, tag: str) -> str | None:
    """The manifest signature kept in ``tag``'s notes ref; None when it has none."""
    shown = repo.run("cat-file", "blob", f"{notes_ref(tag)}:{SIGNATURE_FILE}", check=False)
    return shown.stdout if shown.ok and shown.stdout else None


def write_signature(repo: GitRepo, tag: str, signature: str | None) -> None:
    """Keep ``signature`` in ``tag``'s notes ref (a new commit of the ref, its notes as they
    are), or take the one there out (None: a note written again unsigned)."""
    ref = notes_ref(tag)
    tip = repo.rev(ref)
    if tip is None or read_signature(repo, tag) == signature:
        return
    entries = [
        line for line in repo.out("ls-tree", tip).splitlines()
        if line.split("\t", 1)[-1] != SIGNATURE_FILE
    ]  # fmt: skip
    if signature is not None:
        blob = repo.run("hash-object", "-w", "--stdin", stdin=signature, mutating=True).stdout
        entries.append(f"100644 blob {blob.strip()}\t{SIGNATURE_FILE}")
    tree = repo.run("mktree", stdin="".join(e + "\n" for e in entries), mutating=True).stdout
    said = "sign" if signature is not None else "drop the signature of"
    made = repo.run(
        "commit-tree", tree.strip(), "-p", tip, "-m", f"{said} the manifest of {tag}",
        mutating=True,
    ).stdout.strip()  # fmt: skip
    repo.run("update-ref", ref, made, tip, mutating=True)


def reset_notes(repo: GitRepo, tag: str, tip: str | None) -> None:
    """Put ``tag``'s notes ref back at ``tip`` (None: take it out), as it was before a run
    that stopped half way."""
    if tip is None:
        repo.run("update-ref", "-d", notes_ref(tag), check=False, mutating=True)
    else:
        repo.run("update-ref", notes_ref(tag), tip, mutating=True)

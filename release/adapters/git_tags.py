"""A tag's own message, as a record: what an annotated tag says (``tag`` writes the rc's
notes there), read from the tag object itself.

The message is the tag object's text after its header, as git stores it; a signature
(PGP, SSH or X.509, appended by ``git tag -s``) is cut off and reported, as ``git
for-each-ref --format=%(contents:body)`` would leave it out. A lightweight tag has no
message. Bytes that are not UTF-8 come back as surrogates (the git adapter's decoding):
a reader that writes them out must say how.
"""

from __future__ import annotations

from dataclasses import dataclass

from release.adapters.git import GitRepo

__all__ = ["TagMessage", "tag_message"]

# the lines that start a signature git appends to a tag's message (git's gpg-interface.c)
SIGNATURE_STARTS = (
    "-----BEGIN PGP SIGNATURE-----",
    "-----BEGIN PGP MESSAGE-----",
    "-----BEGIN SSH SIGNATURE-----",
    "-----BEGIN SIGNED MESSAGE-----",
)


@dataclass(frozen=True)
class TagMessage:
    """A tag as its readers see it: the commit it names, whether it is annotated (a tag
    object) and signed, and its message without the signature ("" for a lightweight tag)."""

    name: str
    commit: str
    annotated: bool
    message: str = ""
    signed: bool = False


def tag_message(repo: GitRepo, name: str) -> TagMessage | None:
    """The tag ``name`` (``refs/tags/<name>``) and its message; None when there is no such
    tag, or it does not name a commit."""
    ref = f"refs/tags/{name}"
    commit = repo.rev(ref)
    target = repo.object_id(ref)
    if commit is None or target is None:
        return None
    if target == commit:
        return TagMessage(name, commit, annotated=False)
    text = repo.out("cat-file", "tag", target)
    _, _, message = text.partition("\n\n")
    body, signed = _unsigned(message + "\n" if message else "")
    return TagMessage(name, commit, annotated=True, message=body, signed=signed)


def _unsigned(message: str) -> tuple[str, bool]:
    """The message without the signature git appended (the last line that starts one, as
    git finds it), and whether there was one."""
    start, offset = None, 0
    for line in message.splitlines(keepends=True):
        if line.startswith(SIGNATURE_STARTS):
            start = offset
        offset += len(line)
    return (message, False) if start is None else (message[:start], True)

"""The rehearsal's signatures: the maintainer signs rc1 (its tag and its manifest) with a
throwaway SSH key made in the sandbox; the tester pins its public half in an
allowed-signers file of their own, outside their clone, and verifies both; a note changed
on the remote after signing is refused by the tester's ``reproduce`` before anything is
built (exit 7), and then put back as it was."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from release.adapters.git import GitRepo
from release.adapters.git_notes import note_bytes, notes_ref, write_note
from release.adapters.signing import new_ssh_key
from release.sample.rehearse_terminal import Terminal, shown

__all__ = ["MAINTAINER", "Keys", "make_keys", "tampered_note_refused"]

MAINTAINER = "maintainer@tinyengine.invalid"  # the principal the tester's file names


@dataclass(frozen=True)
class Keys:
    key: Path  # the maintainer's private key (the public half beside it, .pub)
    allowed: Path  # the tester's allowed-signers file: the maintainer's public key, pinned


def make_keys(t: Terminal, sandbox: Path, repo: GitRepo) -> Keys:
    """The maintainer's throwaway key, set as their git's signing key, and the tester's
    allowed-signers file with its public half."""
    key = new_ssh_key(sandbox / "maintainer-key" / "id_ed25519", MAINTAINER)
    public = key.with_suffix(".pub")
    t.git(repo, "config", "gpg.format", "ssh")
    t.git(repo, "config", "user.signingkey", str(public))
    allowed = sandbox / "tester-trust" / "allowed_signers"
    allowed.parent.mkdir(parents=True, exist_ok=True)
    line = f"{MAINTAINER} {public.read_text(encoding='utf-8').strip()}"
    allowed.write_text(line + "\n", encoding="utf-8")
    t.note(f"the tester pins the maintainer's public key in {shown(allowed, sandbox)}:")
    t.note(f"  {line[:72]}...")
    return Keys(key, allowed)


def tampered_note_refused(
    t: Terminal, repo: GitRepo, tester: Path, tag: str, keys: Keys, allow_host: str
) -> None:
    """``tag``'s published note changed after signing (a check's status): the tester's
    reproduce says the signature does not verify (exit 7); the note is put back after."""
    what = f"a note changed after signing: the tester's reproduce of {tag} refuses it (exit 7)"
    ref, commit = notes_ref(tag), repo.rev(f"refs/tags/{tag}")
    before = repo.rev(ref)
    text = note_bytes(repo, tag, commit) if commit else None
    if before is None or commit is None or text is None or '"passed"' not in text:
        t.check(what, None, f"{tag} has no manifest with a passed check")
        return
    # a check the rc failed, recorded as passed (here: the other way round, as shown)
    write_note(repo, tag, commit, text.replace('"passed"', '"failed"', 1))
    try:
        t.git(repo, "push", "--quiet", "--force", "origin", f"+{ref}:{ref}")
        trust = os.path.relpath(keys.allowed, tester)
        refused = t.release(
            tester, "reproduce", tag, "--trust", trust, "--allow-host", allow_host, expect=None
        )
        t.check(
            what,
            refused.code == 7
            and f"manifest of {tag}: signature does not verify" in refused.stderr
            and "nothing was built" in refused.stderr,
        )
    finally:
        t.git(repo, "update-ref", ref, before)
        t.git(repo, "push", "--quiet", "--force", "origin", f"+{ref}:{ref}")

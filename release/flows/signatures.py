"""Signing a tag's manifest, and verifying a tag and its manifest against the tester's own
trust roots (:mod:`release.core.signatures` says what each verdict means).

Trust roots are what the tester holds: files named with ``--trust`` (an SSH allowed-signers
file, or an OpenPGP public keyring as ``gpg --export`` writes it; each is told by its
content) and, for SSH, ``gpg.ssh.allowedSignersFile`` in the tester's git configuration.
Nothing in the tag's tree or on the remote is one: a trust root that resolves inside the
repository's work tree (which a checked-out tag writes) is refused, whichever named it.

The signers whose host-reaching container options the tester trusts (``--allow-host``
once per signer, not per run) are named with ``--allow-host-signed-by`` or
``release.allowHostSignedBy`` (several values) in the tester's git configuration; they
count only where the tag's signature verifies.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from release.adapters.files import read_regular
from release.adapters.git import GitRepo
from release.adapters.git_notes import (
    note_bytes,
    notes_ref,
    read_signature,
    reset_notes,
    write_signature,
)
from release.adapters.signing import configured_signer, sign, verify
from release.core.signatures import (
    GIT_NAMESPACE,
    MANIFEST_NAMESPACE,
    SignatureKind,
    SignatureState,
    Signed,
    TagTrust,
    Verification,
    kind_of,
    split_tag,
)
from release.core.terminal_text import escaped
from release.errors import UsageError

__all__ = [
    "HOST_SIGNERS_KEY",
    "TrustRoots",
    "host_signers",
    "record_signed",
    "sign_manifest",
    "trust_roots",
    "verify_tag",
]

HOST_SIGNERS_KEY = "release.allowHostSignedBy"
ALLOWED_SIGNERS_KEY = "gpg.ssh.allowedSignersFile"
MAX_TRUST_ROOT = 16 * 2**20  # bytes: a keyring of many keys is still far less


@dataclass(frozen=True)
class TrustRoots:
    """The tester's trust root for each kind of signature (None: none held)."""

    ssh: Path | None = None
    openpgp: Path | None = None

    def of(self, kind: SignatureKind) -> Path | None:
        return {SignatureKind.SSH: self.ssh, SignatureKind.OPENPGP: self.openpgp}.get(kind)


def trust_roots(repo: GitRepo, named: Sequence[str]) -> TrustRoots:
    """The trust roots ``--trust`` names, else the tester's ``gpg.ssh.allowedSignersFile``;
    each a regular file outside the repository's work tree."""
    found: dict[SignatureKind, Path] = {}
    for value in named:
        path = _outside_tree(repo, value, f"--trust {value}")
        kind = _kind_of_root(path, f"--trust {value}")
        if kind in found:
            raise UsageError(f"--trust: two {kind.value} trust roots ({found[kind]}, {path})")
        found[kind] = path
    configured = repo.config_value(ALLOWED_SIGNERS_KEY)
    if SignatureKind.SSH not in found and configured:
        found[SignatureKind.SSH] = _outside_tree(repo, configured, ALLOWED_SIGNERS_KEY)
    return TrustRoots(found.get(SignatureKind.SSH), found.get(SignatureKind.OPENPGP))


def _outside_tree(repo: GitRepo, value: str, what: str) -> Path:
    path = Path(os.path.realpath(os.path.expanduser(value)))
    tree = Path(os.path.realpath(repo.root))
    if path == tree or tree in path.parents:
        raise UsageError(
            f"{what} is inside this repository's work tree ({path}), which a tag's tree can "
            "change: keep the keys you trust outside it"
        )
    if read_regular(path, what, limit=MAX_TRUST_ROOT) is None:
        raise UsageError(f"{what}: no such file")
    return path


def _kind_of_root(path: Path, what: str) -> SignatureKind:
    """An OpenPGP keyring (armoured, or binary packets) or an allowed-signers file (text)."""
    head = (read_regular(path, what, limit=MAX_TRUST_ROOT) or b"")[:64]
    if head.startswith(b"-----BEGIN PGP PUBLIC KEY BLOCK-----") or (head and head[0] & 0x80):
        return SignatureKind.OPENPGP
    return SignatureKind.SSH


def verify_tag(repo: GitRepo, tag: str, commit: str, roots: TrustRoots) -> TagTrust:
    """``tag``'s signature and its manifest's (where it has a note on ``commit``), each
    judged against ``roots`` only."""
    ref_object = repo.object_id(f"refs/tags/{tag}")
    signed = None
    if ref_object is not None and ref_object != commit:  # an annotated tag: a tag object
        signed = split_tag(repo.out("cat-file", "tag", ref_object))
    tag_verdict = _judge(f"tag {tag}", signed, GIT_NAMESPACE, roots)
    note = note_bytes(repo, tag, commit)
    if note is None:
        return TagTrust(tag_verdict, None)
    signature = read_signature(repo, tag)
    kind = kind_of(signature) if signature else None
    what = f"manifest of {tag}"
    if signature and kind is None:
        return TagTrust(
            tag_verdict, Verification(what, SignatureState.BAD, detail="not a signature")
        )
    note_signed = Signed(note, signature, kind) if signature and kind else None
    return TagTrust(tag_verdict, _judge(what, note_signed, MANIFEST_NAMESPACE, roots))


def _judge(what: str, signed: Signed | None, namespace: str, roots: TrustRoots) -> Verification:
    if signed is None:
        return Verification(what, SignatureState.UNSIGNED)
    root = roots.of(signed.kind)
    if root is None:
        hint = (
            "name your allowed-signers file with --trust FILE or gpg.ssh.allowedSignersFile"
            if signed.kind is SignatureKind.SSH
            else "name the keyring you trust with --trust FILE (gpg --export KEY > FILE)"
        )
        return Verification(what, SignatureState.UNVERIFIED, detail=f"{signed.kind.value}: {hint}")
    checked = verify(signed.kind, signed.payload, signed.signature, namespace, root)
    if not checked.ok:
        return Verification(what, SignatureState.BAD, detail=checked.detail)
    return Verification(what, SignatureState.SIGNED, escaped(checked.signer or "?"))


def sign_manifest(repo: GitRepo, tag: str, commit: str, *, written: bool) -> str | None:
    """Sign ``tag``'s note on ``commit`` with the key git signs with here, where signing is
    configured and the note was just ``written`` or has no signature yet, and say so;
    where it is not configured, a signature left from an earlier note is taken out (it
    would not verify) and None is said."""
    note = note_bytes(repo, tag, commit)
    signer = configured_signer(repo)
    if note is None or signer is None:
        if written:
            write_signature(repo, tag, None)
        return None
    if written or read_signature(repo, tag) is None:
        write_signature(repo, tag, sign(signer, note, MANIFEST_NAMESPACE))
    return f"manifest of {tag} signed ({signer.kind.value} key {escaped(signer.key)})"


def record_signed(
    repo: GitRepo, tag: str, commit: str, record: Callable[[], bool]
) -> tuple[bool, str | None]:
    """``record()`` the manifest's note, then sign it (:func:`sign_manifest`); where the
    signing fails or is stopped, the notes ref is put back as it was."""
    before = repo.rev(notes_ref(tag))
    try:
        written = record()
        return written, sign_manifest(repo, tag, commit, written=written)
    except BaseException:
        reset_notes(repo, tag, before)
        raise


def host_signers(repo: GitRepo, named: Sequence[str]) -> frozenset[str]:
    """The signers whose tags' host-reaching options the tester allows: ``named`` and
    ``release.allowHostSignedBy`` in the tester's git configuration."""
    listed = repo.run("config", "--get-all", HOST_SIGNERS_KEY, check=False)
    configured = listed.stdout.splitlines() if listed.ok else []
    return frozenset(s.strip() for s in (*named, *configured) if s.strip())

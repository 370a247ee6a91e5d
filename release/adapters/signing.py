"""Signing and verifying bytes with the programs git signs with: ``ssh-keygen -Y`` (SSH)
and ``gpg`` (OpenPGP). The one place that runs them.

Signing takes the maintainer's git configuration as git's own ``tag --sign`` does:
``gpg.format`` (``openpgp``, the default, or ``ssh``), ``user.signingKey`` (an SSH key's
path, private or public with the private half beside it or in the agent, or the key itself
as ``key::ssh-ed25519 ...``; an OpenPGP key id, else the committer's identity) and
``gpg.program`` / ``gpg.ssh.program``. Signing counts as configured where
``user.signingKey`` is set or ``tag.gpgSign`` is true.

Verifying reads only the trust root it is handed: an allowed-signers file for SSH
(``ssh-keygen -Y find-principals`` names the signer, ``-Y verify`` checks the bytes), an
exported public keyring for OpenPGP (imported into a scratch ``GNUPGHOME`` made for this
one check, so the tester's own keyring is neither read nor changed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from release.adapters import process
from release.adapters.git import GitRepo
from release.core.signatures import SignatureKind
from release.errors import RefusedError

__all__ = ["Checked", "Signer", "configured_signer", "new_ssh_key", "sign", "verify"]

TIMEOUT = 60  # seconds: a signing program that waits for a passphrase nobody types


@dataclass(frozen=True)
class Signer:
    """How this repository's git signs: the kind, the key as configured, the program."""

    kind: SignatureKind
    key: str
    program: str


@dataclass(frozen=True)
class Checked:
    """One verification: whether the bytes verify, who the trust root says signed them,
    and why not where they do not."""

    ok: bool
    signer: str | None = None
    detail: str = ""


def configured_signer(repo: GitRepo) -> Signer | None:
    """How the tag would be signed here; None where signing is not configured."""
    key = repo.config_value("user.signingkey") or ""
    sign_tags = (repo.config_value("tag.gpgsign") or "").lower() in ("true", "yes", "on", "1")
    if not key and not sign_tags:
        return None
    if (repo.config_value("gpg.format") or "openpgp") == "ssh":
        if not key:
            raise RefusedError(
                "gpg.format is ssh and tag.gpgSign is on, but user.signingKey is not set: "
                "name the SSH key to sign with"
            )
        return Signer(SignatureKind.SSH, key, repo.config_value("gpg.ssh.program") or "ssh-keygen")
    program = repo.config_value("gpg.openpgp.program") or repo.config_value("gpg.program")
    if not key:
        ident = repo.out("var", "GIT_COMMITTER_IDENT").strip()
        key = ident.rsplit(" ", 2)[0]  # "Name <email> 1700000000 +0000"
    return Signer(SignatureKind.OPENPGP, key, program or "gpg")


def new_ssh_key(path: Path, comment: str) -> Path:
    """A new ed25519 key without a passphrase at ``path`` (the public half beside it, as
    ``.pub``): a throwaway signing key, as the rehearsal's maintainer has."""
    path.parent.mkdir(parents=True, exist_ok=True)
    argv = ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)]
    _ran(argv, "", "making a key")
    return path


def sign(signer: Signer, data: str, namespace: str) -> str:
    """An armoured detached signature of ``data`` (text; bytes read as surrogates are
    signed as they were) by ``signer``'s key; ``namespace``: the SSH signature's."""
    import tempfile

    if signer.kind is SignatureKind.OPENPGP:
        argv = [signer.program, "--batch", "--armor", "--detach-sign", "--local-user", signer.key]
        return _ran(argv, data, "signing").stdout
    with tempfile.TemporaryDirectory(prefix="release-sign-") as scratch:
        key = _ssh_key_file(signer.key, Path(scratch))
        argv = [signer.program, "-Y", "sign", "-n", namespace, "-f", str(key)]
        return _ran(argv, data, "signing").stdout


def _ssh_key_file(key: str, scratch: Path) -> Path:
    """The key's file, as git reads ``user.signingKey``: a literal key is written out."""
    literal = key.removeprefix("key::")
    if key.startswith("key::") or key.startswith("ssh-"):
        path = scratch / "key.pub"
        path.write_text(literal.strip() + "\n", encoding="utf-8")
        return path
    return Path(os.path.expanduser(key))


def _ran(argv: list[str], data: str, doing: str) -> process.Result:
    result = process.run(argv, error=RefusedError, stdin=data, timeout=TIMEOUT)
    if not result.ok:
        said = process.first_line(result.stderr or result.stdout, "no message")
        raise RefusedError(f"{doing} with {argv[0]} failed: {said}")
    return result


def verify(
    kind: SignatureKind, payload: str, signature: str, namespace: str, trust: Path
) -> Checked:
    """Whether ``signature`` is of ``payload`` by a key ``trust`` names (an allowed-signers
    file for SSH, an exported keyring for OpenPGP)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="release-verify-") as scratch:
        sig = Path(scratch) / "signature"
        sig.write_bytes(signature.encode("utf-8", "surrogateescape"))
        if kind is SignatureKind.SSH:
            return _ssh(payload, sig, namespace, trust)
        return _openpgp(payload, sig, trust, Path(scratch) / "gnupg")


def _ssh(payload: str, sig: Path, namespace: str, allowed: Path) -> Checked:
    find = ["ssh-keygen", "-Y", "find-principals", "-f", str(allowed), "-s", str(sig)]
    found = process.run(find, error=RefusedError, timeout=TIMEOUT)
    principals = found.stdout.split() if found.ok else []
    if not principals:
        return Checked(False, detail=f"its key is not one {allowed} allows")
    for principal in principals:
        argv = ["ssh-keygen", "-Y", "verify", "-f", str(allowed), "-I", principal,
                "-n", namespace, "-s", str(sig)]  # fmt: skip
        if process.run(argv, error=RefusedError, stdin=payload, timeout=TIMEOUT).ok:
            return Checked(True, principal)
    return Checked(False, detail="the signed bytes were changed after signing")


def _openpgp(payload: str, sig: Path, keyring: Path, home: Path) -> Checked:
    home.mkdir(mode=0o700)
    base = ["gpg", "--batch", "--no-autostart", "--no-tty", "--homedir", str(home)]
    imported = process.run([*base, "--import", str(keyring)], error=RefusedError, timeout=TIMEOUT)
    if not imported.ok:
        said = process.first_line(imported.stderr, "no message")
        raise RefusedError(f"{keyring}: not an OpenPGP keyring gpg can import ({said})")
    argv = [*base, "--status-fd", "1", "--verify", str(sig), "-"]
    checked = process.run(argv, error=RefusedError, stdin=payload, timeout=TIMEOUT)
    status = [line.split(" ", 3)[1:] for line in checked.stdout.splitlines()
              if line.startswith("[GNUPG:] ")]  # fmt: skip
    good = [fields for fields in status if fields[0] == "GOODSIG" and len(fields) == 3]
    if checked.ok and good and any(fields[0] == "VALIDSIG" for fields in status):
        return Checked(True, good[0][2])
    if any(fields[0] in ("NO_PUBKEY", "ERRSIG") for fields in status):
        return Checked(False, detail=f"its key is not in {keyring}")
    return Checked(False, detail="the signed bytes were changed after signing")

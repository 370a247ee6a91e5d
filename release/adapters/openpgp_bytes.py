"""Detached OpenPGP signatures over bytes, with GnuPG: what signs and verifies a DSSE
envelope's PAE (:mod:`release.core.dsse`).

- :class:`BytesSigner`: the maintainer's key, named by fingerprint, in their GnuPG
  (``$GNUPGHOME``; in CI, the keyring the job imports from its secret), the same key that
  signs the images. ``gpg --detach-sign`` of the bytes, binary; the private key never
  passes through here.
- :class:`BytesVerifier`: the tester's check, against a public key file *they* hold,
  imported into a scratch keyring of this run's own (their own keyring is neither read
  nor changed). A signature verifies only with ``GOODSIG`` and ``VALIDSIG``; the signer
  is the primary key's fingerprint ``VALIDSIG`` names, never what the envelope claims.

Bytes and signatures pass through files in a scratch directory, never a pipe of text.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from release.adapters import process
from release.adapters.image_signatures import SigningError
from release.errors import UsageError

__all__ = ["BytesSigner", "BytesVerifier", "Verified"]

TIMEOUT = 120.0


def _gpg() -> str:
    return os.environ.get("RELEASE_GPG", "gpg")


def _run(argv: list[str], env: dict[str, str]) -> process.Result:
    return process.run(
        argv,
        error=SigningError,
        env=env,
        timeout=TIMEOUT,
        missing="provenance is signed and checked with gpg (apt-get install gpg)",
    )


def _said(result: process.Result) -> str:
    return process.last_line(result.stderr or result.stdout, "no output")


@dataclass(frozen=True)
class Verified:
    """One signature judged: the signer's fingerprint where it verifies, else why not."""

    signer: str | None
    detail: str = ""


class BytesSigner:
    """Signs bytes by ``key`` (a full fingerprint) from this GnuPG."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.env = dict(os.environ)

    def ready(self) -> None:
        """Refuse, before anything is pushed, a key this GnuPG holds no secret half of."""
        argv = [_gpg(), "--batch", "--with-colons", "--list-secret-keys", self.key]
        if not any(line.startswith("sec:") for line in _run(argv, self.env).stdout.splitlines()):
            raise UsageError(
                f"no secret key {self.key} in this GnuPG keyring ($GNUPGHOME, else ~/.gnupg): "
                "import it (gpg --batch --import) before signing"
            )

    def sign(self, data: bytes) -> bytes:
        """A binary detached signature of ``data`` by the key (``KEY!``: that key, not a
        subkey gpg would rather pick)."""
        with tempfile.TemporaryDirectory(prefix="release-sign-") as scratch:
            source, made = Path(scratch) / "data", Path(scratch) / "data.sig"
            source.write_bytes(data)
            argv = [_gpg(), "--batch", "--no-tty", "--yes", "--local-user", f"{self.key}!",
                    "--output", str(made), "--detach-sign", str(source)]  # fmt: skip
            result = _run(argv, self.env)
            if not result.ok or not made.is_file():
                raise SigningError(f"cannot sign by {self.key}: {_said(result)}")
            return made.read_bytes()


class BytesVerifier:
    """Verifies signatures against the public key(s) in ``key_file``, in a scratch keyring
    made for this run. Use as a context: the keyring goes at the end."""

    def __init__(self, key_file: Path) -> None:
        self.key_file = key_file.absolute()
        self.scratch = Path(tempfile.mkdtemp(prefix="release-verify-"))
        self.home = self.scratch / "gnupg"
        self.env = {**os.environ, "GNUPGHOME": str(self.home)}

    def _base(self) -> list[str]:
        return [_gpg(), "--batch", "--no-autostart", "--no-tty", "--homedir", str(self.home)]

    def __enter__(self) -> BytesVerifier:  # gpg's exit status on import says little: list
        try:
            self.home.mkdir(mode=0o700)
            imported = _run([*self._base(), "--import", str(self.key_file)], self.env)
            listed = _run([*self._base(), "--with-colons", "--list-keys"], self.env)
            if not any(line.startswith("pub:") for line in listed.stdout.splitlines()):
                raise SigningError(
                    f"{self.key_file} holds no OpenPGP public key: {_said(imported)}"
                )
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *raised: object) -> None:
        if shutil.which("gpgconf"):
            _run(["gpgconf", "--homedir", str(self.home), "--kill", "all"], self.env)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def verify(self, data: bytes, signature: bytes) -> Verified:
        """Whether ``signature`` is of ``data`` by a key of the file, and whose."""
        if not signature:
            return Verified(None, "the signature is not base64 of an OpenPGP signature")
        where = Path(tempfile.mkdtemp(dir=self.scratch))
        (where / "data").write_bytes(data)
        (where / "data.sig").write_bytes(signature)
        argv = [*self._base(), "--status-fd", "1", "--verify", str(where / "data.sig"),
                str(where / "data")]  # fmt: skip
        result = _run(argv, self.env)
        shutil.rmtree(where, ignore_errors=True)
        status = [line.split()[1:] for line in result.stdout.splitlines()
                  if line.startswith("[GNUPG:] ")]  # fmt: skip
        valid = [fields for fields in status if fields and fields[0] == "VALIDSIG"]
        good = any(fields and fields[0] == "GOODSIG" for fields in status)
        if result.ok and good and valid and len(valid[0]) >= 11:
            return Verified(valid[0][10].upper())
        if any(fields and fields[0] in ("NO_PUBKEY", "ERRSIG") for fields in status):
            return Verified(None, f"its key is not the one in {self.key_file.name}")
        return Verified(None, "the signed statement was changed after signing")

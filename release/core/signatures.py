"""What a tester concludes from a tag's and its manifest's signatures. Pure.

A tag is signed by git itself (``tag --sign``: SSH or OpenPGP, as the maintainer's git is
configured); the signature is the end of the tag object, over everything before it. The
manifest note gets a detached signature by the same key over the note's exact bytes
(SSH namespace :data:`MANIFEST_NAMESPACE`). Each is judged against trust roots the tester
holds (an allowed-signers file, an exported keyring), never one from the tag's tree or the
remote, and reads as one of :class:`State`:

- ``signed by NAME``: it verifies, and NAME is who the trust root says the key is;
- ``unsigned``: there is no signature;
- ``signed, not verified``: there is one, but the tester holds no trust root of its kind;
- ``signature does not verify``: the bytes were changed after signing, or the key is not
  one the trust root names. Always a refusal (exit 7, nothing built).

``--require-signed`` makes anything short of ``signed by`` a refusal.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "GIT_NAMESPACE",
    "MANIFEST_NAMESPACE",
    "SignatureKind",
    "SignatureState",
    "Signed",
    "TagTrust",
    "Verification",
    "kind_of",
    "split_tag",
]

GIT_NAMESPACE = "git"  # what git signs a tag's payload in (ssh-keygen -Y sign -n git)
MANIFEST_NAMESPACE = "release-manifest"  # what a manifest note is signed in

# the lines that start a signature git appends to a tag object (git's gpg-interface.c)
_STARTS = {
    "-----BEGIN PGP SIGNATURE-----": "openpgp",
    "-----BEGIN PGP MESSAGE-----": "openpgp",
    "-----BEGIN SSH SIGNATURE-----": "ssh",
    "-----BEGIN SIGNED MESSAGE-----": "x509",
}


class SignatureKind(enum.Enum):
    SSH = "ssh"
    OPENPGP = "openpgp"
    X509 = "x509"


class SignatureState(enum.Enum):
    SIGNED = "signed by"
    UNSIGNED = "unsigned"
    UNVERIFIED = "signed, not verified"
    BAD = "signature does not verify"


@dataclass(frozen=True)
class Signed:
    """A signed payload: the bytes signed (as text, surrogate-escaped where not UTF-8) and
    the armoured signature."""

    payload: str
    signature: str
    kind: SignatureKind


def kind_of(signature: str) -> SignatureKind | None:
    """The kind of an armoured signature, by its first line."""
    first = signature.lstrip().split("\n", 1)[0].strip()
    found = _STARTS.get(first)
    return SignatureKind(found) if found else None


def split_tag(tag_object: str) -> Signed | None:
    """A tag object's payload and signature (from the last line that starts one, as git
    finds it); None when it is not signed."""
    start, offset = None, 0
    for line in tag_object.splitlines(keepends=True):
        if line.rstrip("\n") in _STARTS:
            start = offset
        offset += len(line)
    if start is None:
        return None
    signature = tag_object[start:]
    kind = kind_of(signature)
    assert kind is not None
    return Signed(tag_object[:start], signature, kind)


@dataclass(frozen=True)
class Verification:
    """One signature's verdict: ``what`` is signed (``tag v0.1.0rc1``, ``manifest of
    v0.1.0rc1``), its state, the signer where it verifies, and why where it does not."""

    what: str
    state: SignatureState
    signer: str | None = None
    detail: str = ""

    def line(self) -> str:
        if self.state is SignatureState.SIGNED:
            return f"{self.what}: signed by {self.signer}"
        return f"{self.what}: {self.state.value}" + (f" ({self.detail})" if self.detail else "")

    def to_dict(self) -> dict[str, str | None]:
        return {"state": self.state.name.lower(), "signer": self.signer, "detail": self.detail}


@dataclass(frozen=True)
class TagTrust:
    """The tag's verdict and its manifest's (None where the tag has no manifest yet: a CI
    build job checks the tag before there is one)."""

    tag: Verification
    manifest: Verification | None

    @property
    def verdicts(self) -> tuple[Verification, ...]:
        return (self.tag,) + ((self.manifest,) if self.manifest else ())

    def refusal(self, require_signed: bool) -> str | None:
        """Why the run stops here, if it does: a signature that does not verify always;
        with ``require_signed``, anything not verified too."""
        bad = [v for v in self.verdicts if v.state is SignatureState.BAD]
        if not bad and require_signed:
            bad = [v for v in self.verdicts if v.state is not SignatureState.SIGNED]
        if not bad:
            return None
        why = "; ".join(v.line() for v in bad)
        more = "" if any(v.state is SignatureState.BAD for v in bad) else " (--require-signed)"
        return f"{why}{more}: nothing was built"

    def signer(self) -> str | None:
        """Who signed the tag, where it verifies: its configuration is that signer's."""
        return self.tag.signer if self.tag.state is SignatureState.SIGNED else None

    def lines(self) -> list[str]:
        return [v.line() for v in self.verdicts]

    def to_dict(self) -> Mapping[str, object]:
        return {
            "tag": self.tag.to_dict(),
            "manifest": self.manifest.to_dict() if self.manifest else None,
        }

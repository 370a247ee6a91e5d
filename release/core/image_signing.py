"""Image signatures in the containers' "simple signing" format: the rules and documents,
pure.

A signature is an OpenPGP-signed claim that a manifest digest is the image named by a
docker reference (its *identity*). Signatures are files in a *lookaside store* beside the
registry, one directory per manifest digest, ``<repository path>@sha256=<hex>/signature-N``
numbered from 1 with no gap (a reader stops at the first number missing). A client finds
the store through a ``registries.d`` YAML file (``sigstore:`` where it reads, the store's
URL) and judges a signature with a ``policy.json`` whose ``signedBy`` requirement names the
public key it trusts (``keyPath``).

Each platform image is signed for its own tag and for each tag of its variant's index (a
``docker pull`` of the index tag checks the platform image it resolves to against the tag
pulled); the index is signed for each of its tags. A check reads as one of :class:`State`,
in the words the tag and manifest signature checks use.
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass

from release.errors import UsageError

__all__ = [
    "ImageCheck",
    "ImageSignatureState",
    "fingerprint",
    "identities",
    "policy_document",
    "registries_d",
    "signature_dir",
]

_FINGERPRINT = re.compile(r"[0-9A-Fa-f]{40}|[0-9A-Fa-f]{64}")  # OpenPGP v4, v5
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


class ImageSignatureState(enum.Enum):
    SIGNED = "signed by"
    UNSIGNED = "unsigned"
    BAD = "signature does not verify"


@dataclass(frozen=True)
class ImageCheck:
    """What one published manifest's signatures said to the tester's key."""

    what: str  # the row (``cu129-amd64``) or the index (``cu129 index``)
    ref: str  # REPOSITORY@DIGEST
    state: ImageSignatureState
    signer: str = ""  # the key's fingerprint, when signed by it
    detail: str = ""  # why it does not verify: the verifier's words
    kind: str = "image"  # what is signed: an image, or a row's provenance

    def line(self) -> str:
        if self.state is ImageSignatureState.SIGNED:
            return f"{self.kind} {self.what}: signed by {self.signer}"
        if self.state is ImageSignatureState.UNSIGNED:
            return f"{self.kind} {self.what}: unsigned ({self.ref})"
        return f"{self.kind} {self.what}: signature does not verify ({self.ref}: {self.detail})"

    def to_dict(self) -> dict[str, str]:
        return {"ref": self.ref, "state": self.state.value, "signer": self.signer}


def fingerprint(value: str, what: str = "--sign-with") -> str:
    """A signing key's full fingerprint, upper case; anything else (a short id, a name,
    an e-mail: ambiguous in a keyring) is refused."""
    spelt = value.strip().replace(" ", "")
    if not _FINGERPRINT.fullmatch(spelt):
        raise UsageError(
            f"{what} takes a key's full fingerprint (40 hex digits, as gpg "
            "--list-secret-keys --with-colons prints it on its fpr line), not "
            f"{spelt[:80]!r}"
        )
    return spelt.upper()


def signature_dir(repository: str, digest: str) -> str:
    """The store's directory of ``digest``'s signatures, relative to the store's root:
    the repository's path without its registry host."""
    if not _DIGEST.fullmatch(digest):
        raise ValueError(f"not a manifest digest: {digest!r}")
    path = repository.split("/", 1)[1] if "/" in repository else repository
    if not path or ".." in path.split("/") or path.startswith("/"):
        raise ValueError(f"not a repository path: {repository!r}")
    return f"{path}@{digest.replace(':', '=', 1)}"


def identities(own: tuple[str, ...], index_tags: tuple[str, ...]) -> tuple[str, ...]:
    """The references a manifest is signed for: its own tags, then its index's, once."""
    return tuple(dict.fromkeys((*own, *index_tags)))


def registries_d(repository: str, lookaside: str) -> str:
    """A ``registries.d`` file telling a client where ``repository``'s signatures are
    read (JSON strings are YAML strings: nothing in a value is read as YAML syntax)."""
    return f"docker:\n  {json.dumps(repository)}:\n    sigstore: {json.dumps(lookaside)}\n"


def policy_document(repository: str, key_path: str) -> dict[str, object]:
    """A ``policy.json`` that accepts ``repository``'s images only with a signature by a
    key in ``key_path`` (identity: the repository, for a reference by digest), and
    rejects everything else."""
    signed_by = {"type": "signedBy", "keyType": "GPGKeys", "keyPath": key_path}
    return {"default": [{"type": "reject"}], "transports": {"docker": {repository: [signed_by]}}}

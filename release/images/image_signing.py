"""Signed images: ``images.publish`` signs what it published, ``reproduce`` checks it.

- **Signing** (:func:`sign_published`): after a variant's platform images and index are
  in the registry and read back, each is signed by digest (``skopeo standalone-sign``:
  the registry is not written, so no digest changes) by the key the maintainer names
  (``--sign-with FPR`` or ``RELEASE_IMAGE_SIGNING_KEY``; its private half in their GnuPG,
  in CI imported from a secret), into the lookaside store (``--signatures DIR`` or
  ``RELEASE_IMAGE_SIGNATURES``), which is then served beside the registry or attached to
  the release for testers. A platform image is signed for its own tag and its index's
  tags, the index for its tags. The fingerprint is recorded in each row's ``publish`` part
  (``signed_by``, and the index's). A re-run finds the signatures there and adds none.
- **Checking** (:func:`check_published`): against a public key file the tester names
  (``reproduce --image-key FILE``, never one from the repository or the remote) and the
  store they read (``--image-signatures URL|DIR``). Each published platform image and
  index reads ``signed by FPR``, ``unsigned`` or ``signature does not verify``, as the
  tag's and its manifest's signatures do: one that does not verify is refused (exit 7)
  before anything is pulled or built, and so is an unsigned one with ``--require-signed``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from release.adapters.image_signatures import ImageSigner, ImageVerifier, merge_stores
from release.adapters.openpgp_bytes import BytesSigner
from release.core.image_signing import ImageCheck, ImageSignatureState, fingerprint
from release.core.manifest_records import VariantEntry
from release.core.references import repository
from release.core.say import Say
from release.core.terminal_text import escaped
from release.errors import SignatureError, UsageError

__all__ = [
    "ImageSignatureError",
    "ImageSigning",
    "ImageTrust",
    "check_published",
    "image_signing",
    "provenance_signer",
    "sign_published",
]

KEY_ENV = "RELEASE_IMAGE_SIGNING_KEY"
STORE_ENV = "RELEASE_IMAGE_SIGNATURES"


class ImageSignatureError(SignatureError):
    """A published image's signature does not verify against the tester's key (or, with
    ``--require-signed``, it has none): nothing was pulled or built. Exit 7, as for the
    tag's and its manifest's."""


@dataclass(frozen=True)
class ImageSigning:
    """Who signs (a key's fingerprint) and where the signatures go (the store's root)."""

    key: str
    store: Path


@dataclass(frozen=True)
class ImageTrust:
    """What the tester holds: a public key file, and where the signatures are read;
    ``require_signed``: an unsigned image is refused too."""

    key_file: Path
    lookaside: str
    require_signed: bool = False


def image_signing(
    key: str | None, store: str | None, env: Mapping[str, str] = os.environ
) -> ImageSigning | None:
    """The signing asked for (options first, then the environment); None when no key is
    named. A key with no store, or a store that is not a directory, is refused."""
    key = key or env.get(KEY_ENV) or None
    store = store or env.get(STORE_ENV) or None
    if key is None:
        if store:
            raise UsageError(
                "--signatures names where signatures go; name the key: --sign-with FPR"
            )
        return None
    fpr = fingerprint(key)
    if not store:
        raise UsageError(f"signing by {fpr} needs a store: --signatures DIR (or {STORE_ENV})")
    path = Path(store.removeprefix("file://"))
    if path.is_symlink() or not path.is_dir():
        raise UsageError(f"--signatures {escaped(store)} is not a directory: make it first")
    ImageSigner(fpr, path).ready()  # before anything is pushed
    return ImageSigning(fpr, path.absolute())


def provenance_signer(key: str | None, env: Mapping[str, str] = os.environ) -> BytesSigner | None:
    """The key ``images.attest`` signs provenance with: the images' (``--sign-with``, else
    ``RELEASE_IMAGE_SIGNING_KEY``); None when none is named. A key this GnuPG holds no
    secret half of is refused before anything is pushed."""
    key = key or env.get(KEY_ENV) or None
    if key is None:
        return None
    signer = BytesSigner(fingerprint(key))
    signer.ready()
    return signer


def image_trust(
    repo: Path | str, key: str | None, lookaside: str | None, require_signed: bool = False
) -> ImageTrust | None:
    """The tester's key and store, from their command line; None when no key is named.
    A key file in the repository's work tree (the tag's own, or anyone's who can push)
    is refused: a key the rc brings cannot vouch for the rc."""
    from release.adapters.git import GitRepo

    if key is None:
        if lookaside:
            raise UsageError(
                "--image-signatures needs the key to check them with: --image-key FILE"
            )
        return None
    path = Path(key)
    if not path.is_file():
        raise UsageError(f"--image-key {escaped(key)} is not a file (gpg --export FPR > FILE)")
    if path.resolve().is_relative_to(GitRepo(repo).root.resolve()):
        raise UsageError(
            f"--image-key {escaped(key)} is in the repository's work tree: name a key you "
            "hold, kept outside what a checkout or a fetch writes"
        )
    if not lookaside:
        raise UsageError(
            "--image-key needs where the signatures are read: --image-signatures URL|DIR"
        )
    return ImageTrust(path.absolute(), lookaside, require_signed)


def sign_published(
    signing: ImageSigning,
    group: str,
    images: Sequence[tuple[str, str]],
    index: tuple[str, tuple[str, ...]],
    say: Say,
    step: str = "publish",
) -> None:
    """Sign a published variant: each platform image (its tag and digest) for its tag and
    the index's, then the index (its digest and tags) for its tags; ``step``: what says
    so (``publish``, or ``promote`` for a final's tags)."""
    signer = ImageSigner(signing.key, signing.store)
    digest, tags = index
    for ref, image_digest in images:
        _sign(signer, f"{step}({group})", ref, image_digest, (ref, *tags), say)
    _sign(signer, f"{step}({group})", tags[0], digest, tags, say)


def _sign(
    signer: ImageSigner, who: str, ref: str, digest: str, names: tuple[str, ...], say: Say
) -> None:
    written = signer.sign(repository(ref), digest, names)
    if written:
        say(f"{who}: signed {ref} ({digest}) by {signer.key}: {len(written)} signature(s)")
    else:
        say(f"{who}: {ref} is signed by {signer.key} already")


def check_published(
    recorded: Mapping[str, VariantEntry], trust: ImageTrust, say: Say
) -> list[ImageCheck]:
    """Each published row's platform image and its index, checked against the tester's
    key; refused (exit 7) where one does not verify (or, ``require_signed``, is unsigned). A row not published has
    nothing to check and is said so."""
    checks: list[ImageCheck] = []
    indexes: dict[str, tuple[str, tuple[str, ...]]] = {}
    with ImageVerifier(trust.key_file, trust.lookaside) as verifier:
        for row, entry in recorded.items():
            published = entry.publish
            if published is None:
                say(f"image {row}: not published; no signature to check")
                continue
            tags = published.index.tags
            own = (*published.tags, *tags)
            at = repository(published.tags[0])
            checks.append(verifier.check(row, at, published.digest, own, index=False))
            indexes.setdefault(published.index.digest, (at, tags))
        for digest, (at, tags) in indexes.items():
            checks.append(verifier.check(f"index {tags[0]}", at, digest, tags, index=True))
    for check in checks:
        say(escaped(check.line()))
    refused = (
        (ImageSignatureState.BAD, ImageSignatureState.UNSIGNED)
        if trust.require_signed
        else (ImageSignatureState.BAD,)
    )
    failed = [c for c in checks if c.state in refused]
    if failed:
        first = failed[0]
        raise ImageSignatureError(
            escaped(f"{first.line()}; nothing was pulled or built")
            + (f" (and {len(failed) - 1} more)" if len(failed) > 1 else "")
        )
    return checks


def merge_signatures(sources: Sequence[str], into: str, say: Say) -> list[str]:
    """The stores at ``sources`` (the signing jobs' artifacts) merged into the store at
    ``into``, the one served beside the registry: each signature once; the files added."""
    if not sources:
        raise UsageError("name a store to merge: --merge DIR (repeatable)")
    added = merge_stores([Path(s) for s in sources], Path(into))
    for rel in added:
        say(f"added {escaped(rel)}")
    say(
        f"{len(added)} signature(s) added to {escaped(into)}"
        if added
        else "nothing to add: every signature is there"
    )
    return added

"""The rehearsal's signed images: throwaway OpenPGP keys made in the sandbox (the
maintainer's, which ``images.publish`` signs with, and someone else's), the lookaside
store beside the sandbox's registry, and the tester's checks: rc1's images verified
against the public half the tester holds, and an image re-signed by the other key refused
before anything is pulled or built.

Without gpg, skopeo or a registry, the signing and its checks say *not run* and why.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from release.adapters import process
from release.adapters.image_signatures import ImageSigner
from release.errors import ReleaseError
from release.sample.rehearse_registry import RegistrySide
from release.sample.rehearse_terminal import StepOutcome, Terminal

__all__ = ["ImageKeys", "image_checks"]

MAINTAINER = "maintainer <maintainer@tinyengine.invalid>"
_SHORT = 60  # characters of a keyring's directory: its agent's socket path has a limit
_TMP = "/tmp" if Path("/tmp").is_dir() else None
OTHER = "someone else <other@tinyengine.invalid>"


@dataclass
class ImageKeys:
    home: Path | None = None  # the maintainer's GnuPG home
    fpr: str = ""
    public: Path | None = None  # its public half, as the tester holds it
    store: Path | None = None  # the lookaside store publish writes and the tester reads
    other_home: Path | None = None
    other_fpr: str = ""
    detail: str = ""  # why there are none

    @classmethod
    def make(cls, t: Terminal, root: Path, registry: RegistrySide) -> ImageKeys:
        """The keys and the store, said; none (and why) where nothing is published."""
        keys = cls._made(root, registry)
        if keys.ready:
            t.note(f"images signed by {keys.fpr} ({MAINTAINER}, a throwaway key)")
        else:
            t.note(f"image signing: not run: {keys.detail}")
        return keys

    @classmethod
    def _made(cls, root: Path, registry: RegistrySide) -> ImageKeys:
        if not registry.ready:
            return cls(detail=registry.detail)
        if shutil.which("gpg") is None:
            return cls(detail="no gpg here (apt-get install gpg)")
        root.mkdir(parents=True)
        # gpg-agent's socket lives in the keyring's directory, whose path must be short
        homes = (
            root
            if len(str(root)) <= _SHORT
            else Path(tempfile.mkdtemp(prefix="rel-gpg-", dir=_TMP))
        )
        try:
            home, fpr = _key(homes / "maintainer", MAINTAINER)
            other_home, other_fpr = _key(homes / "other", OTHER)
        except ReleaseError as err:
            if homes != root:
                shutil.rmtree(homes, ignore_errors=True)
            return cls(detail=err.one_line())
        public = root / "maintainer.gpg"
        public.write_bytes(_gpg(home, "--export", fpr).stdout.encode("utf-8", "surrogateescape"))
        (root / "sigstore").mkdir()
        return cls(home, fpr, public, root / "sigstore", other_home, other_fpr)

    @property
    def ready(self) -> bool:
        return self.home is not None

    def env(self) -> dict[str, str]:
        """What the publish step runs with: the maintainer's keyring (a CI secret's)."""
        return {"GNUPGHOME": str(self.home)} if self.home else {}

    def publish_args(self) -> tuple[str, ...]:
        return ("--sign-with", self.fpr, "--signatures", str(self.store)) if self.ready else ()

    def tester_args(self, store: Path | None = None) -> tuple[str, ...]:
        if not self.ready:
            return ()
        return ("--image-key", str(self.public), "--image-signatures", str(store or self.store))

    def stop(self) -> None:
        for home in (self.home, self.other_home):
            if home is not None and shutil.which("gpgconf"):
                process.run(
                    ["gpgconf", "--homedir", str(home), "--kill", "all"], error=ReleaseError
                )
        if self.home is not None and self.home.parent.name.startswith("rel-gpg-"):
            shutil.rmtree(self.home.parent, ignore_errors=True)  # made outside the sandbox


def _gpg(home: Path, *args: str) -> process.Result:
    return process.run(
        ["gpg", "--homedir", str(home), "--batch", *args],
        error=ReleaseError,
        timeout=120,
        errors="surrogateescape",
    )


def _key(home: Path, uid: str) -> tuple[Path, str]:
    """A new signing key in a keyring of its own; (its home, its fingerprint)."""
    home.mkdir(mode=0o700, parents=True)
    made = _gpg(home, "--passphrase", "", "--quick-gen-key", uid, "ed25519", "default", "never")
    listed = _gpg(home, "--with-colons", "--list-secret-keys").stdout.splitlines()
    found = [line.split(":")[9] for line in listed if line.startswith("fpr:")]
    if not made.ok or not found:
        raise ReleaseError(f"gpg could not make a key: {process.last_line(made.stderr, '')}")
    return home, found[0]


def image_checks(
    t: Terminal,
    keys: ImageKeys,
    reproduced: StepOutcome | None,
    tester: Path,
    tag: str,
    registry: str,
    allow_host: str,
) -> None:
    """The tester's reproduce found every published image and index of ``tag`` signed by
    the maintainer's key; one re-signed by another key is refused."""
    signed = f"signed by {keys.fpr}"
    said = [line for line in (reproduced.stdout if reproduced else "").splitlines()]
    lines = [line for line in said if line.startswith("image ")]
    t.check(
        f"the tester verifies every image and index of {tag} with the public half: {signed}",
        bool(lines) and all(line.endswith(signed) for line in lines) if keys.ready else None,
        keys.detail,
    )
    _resigned_refused(t, keys, tester, tag, registry, allow_host)


def _resigned_refused(
    t: Terminal, keys: ImageKeys, tester: Path, tag: str, registry: str, allow_host: str
) -> None:
    """Someone re-signs one of the tag's images with another key, in a copy of the store
    the tester reads: ``reproduce`` refuses it (exit 7) before anything is pulled or built."""
    what = (
        f"an image of {tag} re-signed by another key is refused before anything is built (exit 7)"
    )
    if not keys.ready or keys.store is None:
        t.check(what, None, keys.detail)
        return
    store = keys.store.parent / "sigstore-resigned"
    shutil.copytree(keys.store, store)
    first = sorted(p for p in store.rglob("*@sha256=*") if p.is_dir())[0]
    path, spelt = str(first.relative_to(store)).rsplit("@", 1)
    digest = spelt.replace("=", ":", 1)
    for signature in first.iterdir():
        signature.unlink()
    other = ImageSigner(keys.other_fpr, store)
    other.env["GNUPGHOME"] = str(keys.other_home)
    repository = f"{registry.split('/', 1)[0]}/{path}"
    other.sign(repository, digest, (f"{repository}:{tag}",))
    t.note(f"someone re-signs {repository}@{digest[:19]}... with {OTHER} in a copy of the store")
    refused: StepOutcome = t.release(
        tester, "reproduce", tag, "--allow-host", allow_host, *keys.tester_args(store), expect=None
    )
    t.check(
        what,
        refused.code == 7
        and "signature does not verify" in refused.stderr
        and "nothing was pulled or built" in refused.stderr,
    )

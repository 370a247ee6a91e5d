"""Image signatures made and checked with skopeo (Debian's ``skopeo`` 1.9) and GnuPG.

- :class:`ImageSigner`: a published manifest, read by digest, signed with ``skopeo
  standalone-sign`` by the key the maintainer's GnuPG holds (``GNUPGHOME``: in CI, the
  keyring the job imports from its secret), and put in the lookaside store. Nothing in the
  registry changes, so no digest does. Each signature is written beside its place and
  linked in under the next free ``signature-N``: a reader sees a whole file or none, and a
  file there already, ours or not, is never replaced. A re-run reads what is there and signs
  only the identities no signature by this key covers yet.
- :class:`ImageVerifier`: the tester's check, against a public key file *they* hold. A
  platform image is copied by digest under a ``policy.json`` whose ``signedBy`` names one
  of its keys (skopeo judges the signatures before it reads anything else; an accepted
  copy into an OCI layout stops right after, as the layout keeps no signatures: no layer
  is read either way); the key whose policy accepts it is the signer. An index is checked
  with ``skopeo standalone-verify`` against the same keys, since skopeo 1.9 evaluates the
  policy on the platform image a pull resolves to, not on the index.

The private key never passes through here: skopeo asks GnuPG to sign by fingerprint.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from release.adapters import process
from release.adapters.files import atomic_write
from release.adapters.registry import is_loopback
from release.core.image_signing import (
    ImageCheck,
    ImageSignatureState,
    identities,
    policy_document,
    registries_d,
    signature_dir,
)
from release.core.references import IMAGE_REFERENCE, repository
from release.core.terminal_text import escaped
from release.errors import EngineError, UsageError

__all__ = ["ImageSigner", "ImageVerifier", "SigningError", "lookaside_url", "merge_stores"]

TIMEOUT = 300.0
MAX_SIGNATURES = 64  # per manifest: far above identities x re-runs
_UNSIGNED = "no signature exists"
_NO_SIGNATURE_STORE = "Pushing signatures for OCI images is not supported"  # after the policy
_ACCEPT_ANY: dict[str, object] = {"default": [{"type": "insecureAcceptAnything"}]}


class SigningError(EngineError):
    """skopeo or GnuPG cannot sign or read signatures (not a verdict on one)."""


def lookaside_url(where: str) -> str:
    """A store's URL: a URL as given, a directory as ``file://`` its absolute path."""
    return where if "://" in where else Path(where).absolute().as_uri()


def _tool(name: str) -> str:
    return os.environ.get(f"RELEASE_{name.upper()}", name)


def _run(argv: list[str], env: dict[str, str] | None = None) -> process.Result:
    return process.run(
        argv,
        error=SigningError,
        env=env,
        timeout=TIMEOUT,
        errors="surrogateescape",
        missing="image signatures are made and checked with skopeo and gpg "
        "(apt-get install skopeo gpg)",
    )


def _said(result: process.Result) -> str:
    return escaped(process.last_line(result.stderr or result.stdout, "no output"))


def _rejected(said: str) -> str:
    """skopeo's refusal, short: what its policy said, without gpgme's records."""
    if "Invalid GPG signature" in said or "not accepted" in said:
        return (
            "skopeo's policy accepts no signature there (another key's, or changed after signing)"
        )
    text = said.split('msg="', 1)[-1].rstrip('"')
    return f"skopeo's policy refused it: {text[:200]}"


def _tls(flag: str, ref: str) -> list[str]:
    return [f"--{flag}=false"] if is_loopback(ref) else []


def _signatures(directory: Path) -> list[Path]:
    """``signature-1``, ``-2`` ... as a reader finds them: up to the first missing."""
    found = []
    for n in range(1, MAX_SIGNATURES + 1):
        path = directory / f"signature-{n}"
        if not path.is_file():
            break
        found.append(path)
    return found


def _verifies(
    manifest: Path, identity: str, key: str, signature: Path, env: dict[str, str]
) -> bool:
    argv = [_tool("skopeo"), "standalone-verify", str(manifest), identity, key, str(signature)]
    return _run(argv, env).ok


class ImageSigner:
    """Signs published manifests by ``key`` (a fingerprint) into the store at ``store``."""

    def __init__(self, key: str, store: Path) -> None:
        self.key, self.store = key, store
        self.env = dict(os.environ)

    def ready(self) -> None:
        """Refuse, before anything is pushed, a key this GnuPG holds no secret half of."""
        argv = [_tool("gpg"), "--batch", "--with-colons", "--list-secret-keys", self.key]
        if not any(line.startswith("sec:") for line in _run(argv, self.env).stdout.splitlines()):
            raise UsageError(
                f"no secret key {self.key} in this GnuPG keyring ($GNUPGHOME, else ~/.gnupg): "
                "import it (gpg --batch --import) before publishing"
            )

    def manifest(self, ref: str) -> bytes:
        """The manifest ``ref`` (``REPOSITORY@DIGEST``) serves, true to its digest."""
        argv = [_tool("skopeo"), "inspect", "--raw", *_tls("tls-verify", ref), f"docker://{ref}"]
        result = _run(argv)
        raw = result.stdout.encode("utf-8", "surrogateescape")
        if not result.ok or "sha256:" + hashlib.sha256(raw).hexdigest() != ref.rsplit("@", 1)[1]:
            raise SigningError(f"cannot read {ref} to sign it: {_said(result)}")
        return raw

    def sign(self, repository: str, digest: str, names: tuple[str, ...]) -> list[str]:
        """Signatures of ``digest`` for each of ``names`` (its tags), where none by this key
        is in the store yet; the files written, relative to the store."""
        raw = self.manifest(f"{repository}@{digest}")
        directory = self.store / signature_dir(repository, digest)
        written = []
        with tempfile.TemporaryDirectory(prefix="release-sign-") as scratch:
            manifest = Path(scratch) / "manifest.json"
            manifest.write_bytes(raw)
            there = _signatures(directory)
            for name in identities(names, ()):
                if any(_verifies(manifest, name, self.key, s, self.env) for s in there):
                    continue
                made = Path(scratch) / "signature"
                argv = [_tool("skopeo"), "standalone-sign", "--output", str(made),
                        str(manifest), name, self.key]  # fmt: skip
                result = _run(argv, self.env)
                if not result.ok:
                    raise SigningError(f"cannot sign {name} by {self.key}: {_said(result)}")
                path = self._place(directory, made.read_bytes())
                there.append(path)
                written.append(str(path.relative_to(self.store)))
        return written

    @staticmethod
    def _place(directory: Path, data: bytes) -> Path:
        """``data`` as the next free ``signature-N``, whole or not at all."""
        for n in range(len(_signatures(directory)) + 1, MAX_SIGNATURES + 1):
            path = directory / f"signature-{n}"
            try:
                atomic_write(path, data, exclusive=True)
                return path
            except FileExistsError:
                continue
        raise SigningError(f"{directory} holds {MAX_SIGNATURES} signatures already")


class ImageVerifier:
    """Checks published manifests against the public key(s) in ``key_file``, reading
    signatures from the store at ``lookaside`` (a URL or a directory). Use as a context:
    its scratch directory and keyring go at the end."""

    def __init__(self, key_file: Path, lookaside: str) -> None:
        self.key_file, self.lookaside = key_file.absolute(), lookaside_url(lookaside)
        self.scratch = Path(tempfile.mkdtemp(prefix="release-verify-"))
        self.env = {**os.environ, "GNUPGHOME": str(self.scratch / "gnupg")}
        self.keys: tuple[str, ...] = ()

    def __enter__(self) -> ImageVerifier:
        try:
            self.keys = self._import()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _import(self) -> tuple[str, ...]:
        """The key file's keys in a keyring of this run's own; their fingerprints."""
        home = Path(self.env["GNUPGHOME"])
        home.mkdir(mode=0o700)
        gpg = [_tool("gpg"), "--batch", "--no-autostart", "--homedir", str(home)]
        imported = _run([*gpg, "--import", str(self.key_file)], self.env)
        listed = _run([*gpg, "--with-colons", "--list-keys"], self.env)
        lines = listed.stdout.splitlines()
        keys = tuple(  # each primary key's fingerprint: the line after its pub line
            line.split(":")[9]
            for before, line in itertools.pairwise(lines)
            if before.startswith("pub:") and line.startswith("fpr:")
        )
        if not keys:
            raise SigningError(f"{self.key_file} holds no OpenPGP public key: {_said(imported)}")
        for key in keys:  # one file each, so the policy that accepts names the signer
            exported = _run([*gpg, "--export", key], self.env).stdout
            (self.scratch / f"{key}.gpg").write_bytes(exported.encode("utf-8", "surrogateescape"))
        return keys

    def __exit__(self, *raised: object) -> None:
        home = self.env["GNUPGHOME"]
        if shutil.which(_tool("gpgconf")):
            _run([_tool("gpgconf"), "--homedir", home, "--kill", "all"], self.env)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def _config(self, repository: str, policy: dict[str, object]) -> list[str]:
        where = Path(tempfile.mkdtemp(dir=self.scratch))
        (where / "registries.d").mkdir()
        (where / "registries.d" / "release.yaml").write_text(
            registries_d(repository, self.lookaside)
        )
        (where / "policy.json").write_text(json.dumps(policy))
        return [
            "--policy",
            str(where / "policy.json"),
            "--registries.d",
            str(where / "registries.d"),
        ]

    def check(
        self, what: str, repository: str, digest: str, names: tuple[str, ...], *, index: bool
    ) -> ImageCheck:
        """``repository@digest``'s signatures judged: a platform image by skopeo's policy
        (``index`` False), an index by ``standalone-verify`` of each of its signatures."""
        ref = f"{repository}@{digest}"
        return self._index(what, ref, names) if index else self._platform(what, ref)

    def _platform(self, what: str, ref: str) -> ImageCheck:
        """A copy under a ``signedBy`` policy for each of the tester's keys in turn, into
        an OCI layout: skopeo judges the signatures before it reads anything else, and an
        accepted copy then stops at once, since an OCI layout keeps no signatures; so no
        layer is read either way."""
        repository = ref.rsplit("@", 1)[0]
        refused = ""
        for key in self.keys:
            policy = policy_document(repository, str(self.scratch / f"{key}.gpg"))
            out = Path(tempfile.mkdtemp(dir=self.scratch)) / "layout"
            argv = [_tool("skopeo"), *self._config(repository, policy), "copy", "--quiet",
                    *_tls("src-tls-verify", ref), f"docker://{ref}", f"oci:{out}"]  # fmt: skip
            result = _run(argv, self.env)
            said = _said(result)
            if _NO_SIGNATURE_STORE in said:  # past the policy: accepted
                return ImageCheck(what, ref, ImageSignatureState.SIGNED, signer=key)
            if _UNSIGNED in said:
                return ImageCheck(what, ref, ImageSignatureState.UNSIGNED)
            if result.ok or "rejected" not in said.lower():
                raise SigningError(f"cannot read {ref} and its signatures: {said}")
            refused = _rejected(said)
        return ImageCheck(what, ref, ImageSignatureState.BAD, detail=refused)

    def _index(self, what: str, ref: str, names: tuple[str, ...]) -> ImageCheck:
        """The index and its signatures copied (``index-only``: no image, no layer), each
        signature verified by skopeo against the tester's keys and the index's tags."""
        out = Path(tempfile.mkdtemp(dir=self.scratch)) / "index"
        argv = [_tool("skopeo"), *self._config(ref.rsplit("@", 1)[0], _ACCEPT_ANY), "copy",
                "--quiet", "--multi-arch", "index-only", *_tls("src-tls-verify", ref),
                f"docker://{ref}", f"dir:{out}"]  # fmt: skip
        result = _run(argv, self.env)
        if not result.ok:
            raise SigningError(f"cannot read {ref} and its signatures: {_said(result)}")
        try:
            return self._signer(what, ref, out, names)
        finally:
            shutil.rmtree(out.parent, ignore_errors=True)

    def _claimed(self, signature: Path, ref: str) -> tuple[str, ...]:
        """The reference a signature claims (unverified: only tried as a name, and only
        one of ``ref``'s repository), so a final, whose tags were copied from an rc's,
        verifies by the rc's signatures, as a ``signedBy`` policy accepts a pull by digest."""
        argv = [_tool("gpg"), "--batch", "--no-autostart", "--decrypt", str(signature)]
        try:
            payload = json.loads(_run(argv, self.env).stdout)
            claimed = payload["critical"]["identity"]["docker-reference"]
        except (ValueError, KeyError, TypeError):
            return ()
        if not isinstance(claimed, str) or not IMAGE_REFERENCE.fullmatch(claimed):
            return ()
        return (claimed,) if repository(claimed) == repository(ref) else ()

    def _signer(self, what: str, ref: str, out: Path, names: tuple[str, ...]) -> ImageCheck:
        manifest = out / "manifest.json"
        if "sha256:" + hashlib.sha256(manifest.read_bytes()).hexdigest() != ref.rsplit("@", 1)[1]:
            return ImageCheck(
                what, ref, ImageSignatureState.BAD, detail="the manifest is not true to its digest"
            )
        found = _signatures(out)
        if not found:
            return ImageCheck(what, ref, ImageSignatureState.UNSIGNED)
        for signature in found:
            for key in self.keys:
                for name in (*names, *self._claimed(signature, ref)):
                    if _verifies(manifest, name, key, signature, self.env):
                        return ImageCheck(what, ref, ImageSignatureState.SIGNED, signer=key)
        detail = f"no signature by the key in {self.key_file.name} verifies for its tags"
        return ImageCheck(what, ref, ImageSignatureState.BAD, detail=detail)


# -- stores merged: the signatures several jobs made, in the one store that is served -----

_STORE_DIR = re.compile(r"^(?:[a-z0-9][a-z0-9._-]*/)*[a-z0-9][a-z0-9._-]*@sha256=[0-9a-f]{64}$")
_SIGNATURE = re.compile(r"^signature-[1-9][0-9]{0,3}$")
MAX_SIGNATURE_BYTES = 1 << 16  # a simple signing signature is well under a kilobyte


def _read_store(source: Path) -> dict[str, list[bytes]]:
    """Every signature in the store at ``source``, by its directory, as a reader finds
    them. A store is data from elsewhere (a CI job's artifact): anything but directories
    of the store's layout holding ``signature-N`` files (a link, another file, a file too
    large) is refused, naming it, before anything is written."""
    if source.is_symlink() or not source.is_dir():
        raise UsageError(f"{escaped(str(source))} is not a signature store's directory")
    held: dict[str, list[bytes]] = {}
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source).as_posix()
        if path.is_symlink():
            raise UsageError(f"{escaped(str(source))}: {escaped(rel)} is a link; nothing merged")
        if path.is_dir():
            continue
        where = path.parent.relative_to(source).as_posix()
        if not (_STORE_DIR.match(where) and _SIGNATURE.match(path.name)):
            raise UsageError(
                f"{escaped(str(source))}: {escaped(rel)} is not a signature in a store's "
                "layout (<repository path>@sha256=<hex>/signature-N); nothing merged"
            )
        if path.stat().st_size > MAX_SIGNATURE_BYTES:
            raise UsageError(f"{escaped(str(source))}: {escaped(rel)} is too large for a signature")
        held.setdefault(where, [])
    for where in held:
        held[where] = [p.read_bytes() for p in _signatures(source / where)]
    return held


def merge_stores(sources: list[Path], target: Path) -> list[str]:
    """The signatures of each store in ``sources`` added to the store at ``target`` (made
    where missing) under the next free ``signature-N`` of their directory, each once: one
    the target holds already, byte for byte, is not added again, so a re-run adds nothing
    and a run stopped part way is finished by the next. Every source is read and checked
    before anything is written. The files written, relative to ``target``."""
    read = [_read_store(source) for source in sources]
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise UsageError(f"{escaped(str(target))} is not a directory")
    written = []
    for held in read:
        for where, signatures in held.items():
            directory = target / where
            there = {p.read_bytes() for p in _signatures(directory)}
            for data in signatures:
                if data in there:
                    continue
                directory.mkdir(parents=True, exist_ok=True)
                path = ImageSigner._place(directory, data)
                there.add(data)
                written.append(path.relative_to(target).as_posix())
    return written

"""OpenPGP keys for the signing tests (ed25519: a fraction of a second each) and skopeo
as a tester runs it: an independent client's ``signedBy`` policy over a lookaside store."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Key", "make_key", "skopeo_accepts"]


@dataclass(frozen=True)
class Key:
    home: Path
    fpr: str
    public: Path  # the exported public half, as a tester holds it

    def env(self) -> dict[str, str]:
        return {"GNUPGHOME": str(self.home)}

    def close(self) -> None:
        """Its agent stopped and its GnuPG home removed."""
        subprocess.run(["gpgconf", "--homedir", str(self.home), "--kill", "all"], check=False)
        shutil.rmtree(self.home, ignore_errors=True)


def make_key(root: Path, who: str) -> Key:
    """A key for ``who``; its public half exported under ``root``. Its GnuPG home is a short
    directory of its own (gpg-agent's socket path has a limit that a test's temporary
    directory under parallel workers can pass): :meth:`Key.close` removes it."""
    home = Path(tempfile.mkdtemp(prefix=f"rel-gpg-{who[:8]}-", dir="/tmp"))
    gpg = ["gpg", "--homedir", str(home), "--batch"]
    subprocess.run(
        [*gpg, "--passphrase", "", "--quick-gen-key", f"{who} <{who}@example.invalid>",
         "ed25519", "default", "never"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    listed = subprocess.run(
        [*gpg, "--with-colons", "--list-secret-keys"], check=True, capture_output=True, text=True
    ).stdout
    fpr = next(line.split(":")[9] for line in listed.splitlines() if line.startswith("fpr:"))
    public = root / f"{who}.pub"
    public.write_bytes(
        subprocess.run([*gpg, "--export", fpr], check=True, capture_output=True).stdout
    )
    return Key(home, fpr, public)


def skopeo_accepts(ref: str, public: Path, store: Path, root: Path) -> tuple[bool, str]:
    """skopeo, as a tester runs it: a ``signedBy`` policy written here and a
    ``registries.d`` naming the store; whether a copy of ``ref`` is allowed, and why not."""
    where = root / f"client-{len(list(root.glob('client-*')))}"
    (where / "registries.d").mkdir(parents=True)
    host = ref.split("/", 1)[0]
    (where / "registries.d" / "store.yaml").write_text(
        f"docker:\n  {host}:\n    sigstore: file://{store}\n"
    )
    policy = {
        "default": [{"type": "reject"}],
        "transports": {"docker": {host: [
            {"type": "signedBy", "keyType": "GPGKeys", "keyPath": str(public)}
        ]}},
    }  # fmt: skip
    (where / "policy.json").write_text(json.dumps(policy))
    result = subprocess.run(
        ["skopeo", "--policy", str(where / "policy.json"), "--registries.d",
         str(where / "registries.d"), "copy", "--quiet", "--src-tls-verify=false",
         f"docker://{ref}", f"dir:{where / 'image'}"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return result.returncode == 0, result.stderr


def signature_files(store: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()
    }

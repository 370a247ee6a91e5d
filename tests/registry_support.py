"""A registry read as a client reads it (skopeo: a tag's digest and manifest, an index's
platforms), and a skopeo that stops its caller at a chosen call."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path


def served(ref: str) -> tuple[str, dict[str, object]] | None:
    """(digest, manifest) of ``ref`` as skopeo reads it from the registry."""
    raw = subprocess.run(
        ["skopeo", "inspect", "--raw", "--tls-verify=false", f"docker://{ref}"],
        capture_output=True,
        check=False,
        timeout=60,
    )
    if raw.returncode != 0:
        assert b"manifest unknown" in raw.stderr.lower(), raw.stderr
        return None
    return "sha256:" + hashlib.sha256(raw.stdout).hexdigest(), json.loads(raw.stdout)


def listed(manifest: dict[str, object]) -> dict[str, str]:
    """An index's platforms and their digests."""
    entries = manifest.get("manifests")
    assert isinstance(entries, list), manifest
    return {f"{e['platform']['os']}/{e['platform']['architecture']}": e["digest"] for e in entries}


def stopping_skopeo(tmp_path: Path, words: tuple[str, ...], nth: int, sig: int) -> Path:
    """A skopeo that, on its ``nth`` call whose arguments hold every one of ``words``,
    sends ``sig`` to the process that called it (the publish) before it answers: a run
    stopped exactly at that step."""
    real = shutil.which("skopeo")
    assert real is not None
    wrapper = tmp_path / "skopeo"
    counter = tmp_path / "calls"
    wrapper.write_text(
        f"#!{sys.executable}\n"
        "import os, subprocess, sys, time\n"
        f"counter = {str(counter)!r}\n"
        f"if all(w in ' '.join(sys.argv) for w in {list(words)!r}):\n"
        "    with open(counter, 'a') as f:\n"
        "        f.write('.')\n"
        f"    if len(open(counter).read()) == {nth}:\n"
        f"        os.kill(os.getppid(), {int(sig)})\n"
        "        time.sleep(30)\n"
        f"os.execv({real!r}, [{real!r}, *sys.argv[1:]])\n"
    )
    wrapper.chmod(0o755)
    return wrapper

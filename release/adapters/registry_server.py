"""A release registry of this machine's own: Debian's ``docker-registry`` (Distribution, an
OCI registry) serving a directory on a free port of 127.0.0.1, for the rehearsal (and the
tests). The Docker Engine and skopeo speak plain HTTP to loopback, so nothing else is
needed; nothing listens beyond this machine.

Its access log is kept, so what a step asked of the registry can be counted (the blob
uploads: ``POST``/``PATCH``/``PUT`` under ``/blobs/uploads/``), and its storage measured
(the bytes of the blobs it holds).
"""

from __future__ import annotations

import re
import shutil
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from release.adapters import process
from release.errors import EngineError

__all__ = ["BINARY", "LocalRegistry", "Traffic", "registry_binary"]

BINARY = "docker-registry"
_REQUEST = re.compile(
    r'"(?P<method>[A-Z]+) (?P<uri>/v2/\S*) HTTP/[0-9.]+" (?P<status>\d+) (?P<bytes>\d+)'
)
_UPLOAD = re.compile(r"^/v2/.+/blobs/uploads/")


def registry_binary() -> str | None:
    return shutil.which(BINARY) or (
        f"/usr/bin/{BINARY}" if Path(f"/usr/bin/{BINARY}").exists() else None
    )


@dataclass(frozen=True)
class Traffic:
    """What the registry was asked, counted from its access log."""

    requests: int
    uploads: int  # blob upload requests (a blob sent, or begun)
    manifests_written: int
    blob_bytes: int  # what the registry stores, in bytes of blobs


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LocalRegistry:
    """``docker-registry serve`` of ``root/data`` on 127.0.0.1; a ``with`` block starts it
    and stops it. :meth:`stop` and :meth:`start` again keep the port and the storage (a
    registry that goes away mid-run, then comes back)."""

    def __init__(self, root: Path, binary: str | None = None) -> None:
        found = binary or registry_binary()
        if found is None:
            raise EngineError(
                "no docker-registry here: a local registry needs Debian's docker-registry "
                "(apt-get install docker-registry)"
            )
        self.binary, self.root = found, root
        self.address = f"127.0.0.1:{_free_port()}"
        self.log = root / "registry.log"
        root.mkdir(parents=True, exist_ok=True)
        (root / "config.yml").write_text(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: false\n"
            f"storage:\n  filesystem:\n    rootdirectory: {root / 'data'}\n"
            f"  delete:\n    enabled: true\nhttp:\n  addr: {self.address}\n",
            encoding="utf-8",
        )
        self._server: process.Server | None = None

    def start(self, timeout: float = 20) -> None:
        self._server = process.Server(
            [self.binary, "serve", str(self.root / "config.yml")], log=self.log, error=EngineError
        )
        deadline = time.monotonic() + timeout
        while True:  # bounded: it answers within seconds, or it is an error
            try:
                with urllib.request.urlopen(f"http://{self.address}/v2/", timeout=1):
                    return
            except urllib.error.HTTPError:  # it answers (401: it asks for credentials)
                return
            except OSError:
                if not self._server.running or time.monotonic() > deadline:
                    said = process.last_line(self.log.read_text(errors="replace"), "no output")
                    self.stop()
                    raise EngineError(f"the local registry did not start: {said}") from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self) -> LocalRegistry:
        self.start()
        return self

    def __exit__(self, *raised: object) -> None:
        self.stop()

    def traffic(self) -> Traffic:
        """The requests logged so far, and the blobs stored."""
        requests = uploads = manifests = 0
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        for match in _REQUEST.finditer(text):
            requests += 1
            method, uri = match["method"], match["uri"]
            if method in ("POST", "PATCH", "PUT") and _UPLOAD.match(uri):
                uploads += 1
            if method == "PUT" and "/manifests/" in uri:
                manifests += 1
        blobs = self.root / "data" / "docker" / "registry" / "v2" / "blobs"
        stored = sum(f.stat().st_size for f in blobs.rglob("data") if f.is_file())
        return Traffic(requests, uploads, manifests, stored)

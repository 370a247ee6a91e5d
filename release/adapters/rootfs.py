"""A minimal Debian root file system as a tarball, made once with ``debootstrap`` and cached.

The mirror is ``$RELEASE_DEBIAN_MIRROR``, else the first Debian archive in this machine's
own apt sources (deb822 ``.sources`` files or one-line ``sources.list`` entries); no
mirror is named here. Making the tarball needs root and debootstrap; the cache is
shared by concurrent runs under a file lock, and a tarball is only ever complete (written
beside its final name, then renamed).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from release.adapters import process
from release.adapters.cache import file_lock, user_cache_dir
from release.adapters.leftovers import scratch
from release.errors import EngineError

__all__ = ["apt_mirror", "rootfs_tarball", "scrub_rootfs"]

_APT = Path("/etc/apt")
_NOT_AN_ARCHIVE = ("-security", "-updates", "-backports")  # suites a full system is not made of


def _source_entries(apt: Path) -> Iterator[tuple[str, str]]:
    """(URI, suites) of every ``deb`` entry in the apt sources under ``apt``."""
    one_line = [apt / "sources.list", *sorted((apt / "sources.list.d").glob("*.list"))]
    for path in one_line:
        text = path.read_text(errors="replace") if path.is_file() else ""
        for line in text.splitlines():
            fields = re.sub(r"\[[^\]]*\]", "", line.split("#", 1)[0]).split()
            if len(fields) >= 3 and fields[0] == "deb":
                yield fields[1], fields[2]
    for path in sorted((apt / "sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", path.read_text(errors="replace")):
            entry = {
                key.strip().lower(): value.strip()
                for key, _, value in (
                    line.partition(":") for line in stanza.splitlines() if not line.startswith("#")
                )
            }
            if "deb" in entry.get("types", "").split() and entry.get("enabled", "yes") != "no":
                for uri in entry.get("uris", "").split():
                    yield uri, entry.get("suites", "")


def apt_mirror(env: Mapping[str, str] | None = None, apt: Path = _APT) -> str | None:
    """The Debian mirror to debootstrap from, or None when none is known."""
    env = os.environ if env is None else env
    if env.get("RELEASE_DEBIAN_MIRROR"):
        return env["RELEASE_DEBIAN_MIRROR"]
    for uri, suites in _source_entries(apt):
        if any(not s.endswith(_NOT_AN_ARCHIVE) for s in suites.split()):
            return uri
    return None


def _debootstrap() -> str:
    found = shutil.which("debootstrap") or (
        "/usr/sbin/debootstrap" if os.path.exists("/usr/sbin/debootstrap") else None
    )
    if found is None:
        raise EngineError(
            "a stand-in base image needs debootstrap (apt-get install debootstrap), "
            "or make the real base image available"
        )
    if os.geteuid() != 0:
        raise EngineError("making a stand-in base image runs debootstrap, which needs root")
    return found


# What debootstrap leaves that depends on the day and the machine it ran on, not on the
# packages: logs, apt's downloads and lists, debconf's and dpkg's backups, ldconfig's
# cache of file times, the build host's name and resolver (the engine mounts its own).
_SCRUBBED = (
    "var/log/**/*",
    "var/cache/apt/**/*",
    "var/lib/apt/lists/**/*",
    "var/cache/debconf/*-old",
    "var/lib/dpkg/*-old",
    "var/cache/ldconfig/aux-cache",
)
_EMPTIED = ("etc/hostname", "etc/resolv.conf", "etc/mailname")
_SHADOW = ("etc/shadow", "etc/shadow-")


def scrub_rootfs(target: Path) -> None:
    """Make a debootstrapped tree the same wherever and whenever it was made from the same
    packages (what the stand-in's content digest, and so a build's input digest, rests
    on): files in :data:`_SCRUBBED` removed (directories kept), the host's name and
    resolver emptied, and the day of the last password change (set to the day debootstrap
    ran) cleared from ``/etc/shadow``."""
    for pattern in _SCRUBBED:
        for path in sorted(target.glob(pattern), reverse=True):
            if path.is_file() or path.is_symlink():
                path.unlink()
    for rel in _EMPTIED:
        if (target / rel).is_file():
            (target / rel).write_bytes(b"")
    for rel in _SHADOW:
        path = target / rel
        if path.is_file():
            lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
            fields = [line.split(":") for line in lines]
            for entry in fields:
                if len(entry) > 2:
                    entry[2] = ""
            path.write_text("".join(":".join(entry) for entry in fields), encoding="utf-8")


def _make(
    tarball: Path, suite: str, include: str, say: Callable[[str], None], arch: str | None
) -> None:
    debootstrap = _debootstrap()
    mirror = apt_mirror()
    if mirror is None:
        raise EngineError(
            "no Debian mirror for debootstrap: none in /etc/apt's sources; "
            "set RELEASE_DEBIAN_MIRROR to one"
        )
    of = f" for {arch}" if arch else ""
    say(
        f"making a Debian {suite} rootfs{of} with debootstrap for stand-in base images (once, cached)"
    )
    with scratch("rootfs") as tmp:
        target = Path(tmp) / "rootfs"
        # a foreign arch: debootstrap runs its second stage through the binfmt emulator
        foreign = [f"--arch={arch}"] if arch else []
        argv = [
            debootstrap,
            *foreign,
            "--variant=minbase",
            f"--include={include}",
            suite,
            str(target),
        ]
        made = process.run([*argv, mirror], error=EngineError, own_group=True)
        if not made.ok:
            raise EngineError(
                f"debootstrap failed: {process.last_line(made.stderr or made.stdout, 'no output')}"
            )
        scrub_rootfs(target)
        partial = tarball.with_suffix(".partial")
        packed = process.run(
            ["tar", "-C", str(target), "--sort=name", "--numeric-owner", "-cf", str(partial), "."],
            error=EngineError,
        )
        if not packed.ok:
            partial.unlink(missing_ok=True)
            raise EngineError(f"packing the rootfs failed: {process.last_line(packed.stderr)}")
        os.replace(partial, tarball)


def rootfs_tarball(
    name: str, suite: str, include: str, say: Callable[[str], None], arch: str | None = None
) -> Path:
    """The cached tarball ``name`` of a minbase ``suite`` rootfs with ``include`` (packages,
    comma separated), of Debian's ``arch`` (default: this machine's), made now if missing."""
    cache = user_cache_dir()
    tarball = cache / name
    with file_lock(cache / "rootfs.lock"):
        if not tarball.exists():
            _make(tarball, suite, include, say, arch)
    return tarball

"""Which platforms' binaries this host runs: its own, and others through the kernel's
binfmt_misc handlers (qemu-user-static). Read from ``/proc``; nothing is run.

The engine's containers run a foreign binary only through a handler registered with the
``F`` flag (the emulator is opened when it is registered, so it works inside a container's
own file system); ``apt-get install qemu-user-static`` registers them so once binfmt_misc
is mounted (``mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc``).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["BINFMT", "emulation_problem", "host_arch"]

BINFMT = Path("/proc/sys/fs/binfmt_misc")
# docker's architecture names -> qemu's (the handler is called qemu-<name>)
_QEMU = {
    "amd64": "x86_64",
    "arm64": "aarch64",
    "arm": "arm",
    "386": "i386",
    "ppc64le": "ppc64le",
    "s390x": "s390x",
    "riscv64": "riscv64",
    "mips64le": "mips64el",
}


def host_arch() -> str:
    """This machine's architecture, as docker names it (``amd64``, ``arm64``)."""
    machine = os.uname().machine
    return next((arch for arch, name in _QEMU.items() if name == machine), machine)


def emulation_problem(platform: str, root: Path = BINFMT) -> str | None:
    """None when the engine's containers can run ``platform``'s binaries here: natively, or
    through an emulator; else why not, and what to do (one phrase)."""
    arch = platform.split("/")[1] if "/" in platform else platform
    if arch == host_arch():
        return None
    name = _QEMU.get(arch)
    if name is None:
        return f"no emulator is known for {platform}"
    if not (root / "status").exists():
        return (
            "binfmt_misc is not mounted (mount -t binfmt_misc binfmt_misc "
            "/proc/sys/fs/binfmt_misc, then apt-get install qemu-user-static)"
        )
    try:
        text = (root / f"qemu-{name}").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return f"no binfmt handler for {arch} (apt-get install qemu-user-static)"
    if not text.startswith("enabled"):
        return f"the binfmt handler qemu-{name} is disabled"
    flags = next((line[6:].strip() for line in text.splitlines() if line.startswith("flags:")), "")
    if "F" not in flags:
        return f"the binfmt handler qemu-{name} lacks the F flag: containers cannot use it"
    return None

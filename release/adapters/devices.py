"""Whether this host has an accelerator's device for a container, and the ``docker run``
options that give it one (:mod:`release.core.devices` says what each needs)."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from release.adapters.engine import ContainerEngine
from release.core.devices import DEVICES, Device

__all__ = ["DeviceAccess", "device_access", "devices_here", "nodes_access"]


@dataclass(frozen=True)
class DeviceAccess:
    """``usable``: a device check may run here; else ``reason`` says why not."""

    usable: bool
    reason: str = ""
    options: tuple[str, ...] = ()  # run options that give the container the device
    gpus: bool = False  # CUDA: --gpus all (the engine adapter spells it)


def _found(patterns: tuple[str, ...]) -> list[str]:
    return sorted({path for pattern in patterns for path in glob.glob(pattern)})


def _vendor_matches(nodes: list[str], vendor: str) -> bool:
    for node in nodes:
        said = Path("/sys/class/drm") / os.path.basename(node) / "device" / "vendor"
        try:
            if said.read_text(encoding="ascii").strip() == vendor:
                return True
        except OSError:
            continue
    return False


def nodes_access(device: Device) -> DeviceAccess:
    """Whether ``device``'s nodes are here (of its vendor, where it names one), and the
    ``--device`` options that give the container the nodes it takes."""
    nodes = _found(device.nodes)
    if not nodes or (device.vendor and not _vendor_matches(nodes, device.vendor)):
        return DeviceAccess(False, device.absent)
    given = tuple(f"--device={path}" for path in _found(device.passed))
    return DeviceAccess(True, options=(*given, *device.options))


def devices_here(kinds: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The run options a device check of each of ``kinds`` (but CUDA, whose ``--gpus``
    the caller weighs) would be given here, for those whose device is here."""
    out: dict[str, tuple[str, ...]] = {}
    for kind in kinds:
        device = DEVICES.get(kind)
        if kind != "cuda" and device is not None:
            access = nodes_access(device)
            if access.usable:
                out[kind] = access.options
    return out


def device_access(engine: ContainerEngine, kind: str, device: Device | None) -> DeviceAccess:
    """How a device check of ``kind`` runs here: not at all (None device: a CPU variant
    has nothing to give), with ``--gpus all`` (CUDA: a device and the nvidia runtime), or
    with the ``--device`` nodes found."""
    if device is None:
        return DeviceAccess(True)
    if kind == "cuda":
        usable = engine.gpu_usable()
        return DeviceAccess(usable, "" if usable else device.absent, gpus=usable)
    return nodes_access(device)

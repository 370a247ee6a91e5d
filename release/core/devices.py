"""Each accelerator's device check: the command that shows the device from inside the
image, the host's device nodes that say one is here, and the ``docker run`` options that
give it to a container. Pure (the host is looked at by :mod:`release.adapters.devices`).

The commands are those each vendor's images carry: ``nvidia-smi`` (CUDA; the matrix's
``smoke.gpu-command`` replaces it), ``rocm-smi`` (ROCm), ``npu-smi info`` (Ascend, CANN),
``hl-smi`` (Intel Gaudi), ``xpu-smi discovery`` (Intel XPU), ``neuron-ls`` (AWS Neuron),
``tpu-info`` (TPU). A CPU variant has none. Where no such device is here the check is
*not run*, with the reason, never passed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["DEVICES", "Device", "device_of"]


@dataclass(frozen=True)
class Device:
    """What a device check of one accelerator needs."""

    what: str  # how the check and its reason name it: "GPU", "ROCm GPU", "Ascend NPU"
    command: tuple[str, ...]
    nodes: tuple[str, ...]  # host paths (globs) of which one must exist for a device to be here
    passed: tuple[str, ...]  # globs of the nodes a container is given (--device), where found
    options: tuple[str, ...] = ()  # further run options, as --flag=value
    vendor: str = ""  # the PCI vendor a node's /sys/class/drm entry must name (0x8086)

    @property
    def absent(self) -> str:
        """The reason the check is not run where none is here: "no usable GPU here"."""
        return f"no usable {self.what} here"


DEVICES: dict[str, Device] = {
    # --gpus all is given by the engine adapter (it also needs the nvidia runtime)
    "cuda": Device("GPU", ("nvidia-smi",), ("/dev/nvidiactl",), ()),
    "rocm": Device(
        "ROCm GPU",
        ("rocm-smi",),
        ("/dev/kfd",),
        ("/dev/kfd", "/dev/dri"),
        ("--group-add=video",),
    ),
    "cann": Device(
        "Ascend NPU",
        ("npu-smi", "info"),
        ("/dev/davinci_manager",),
        ("/dev/davinci[0-9]*", "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"),
    ),
    "hpu": Device(
        "Gaudi HPU",
        ("hl-smi",),
        ("/dev/accel/accel[0-9]*", "/dev/hl[0-9]*"),
        ("/dev/accel", "/dev/hl[0-9]*", "/dev/hl_controlD[0-9]*"),
    ),
    "xpu": Device(
        "Intel XPU",
        ("xpu-smi", "discovery"),
        ("/dev/dri/renderD*",),
        ("/dev/dri",),
        vendor="0x8086",
    ),
    "neuron": Device(
        "Neuron device", ("neuron-ls",), ("/dev/neuron[0-9]*",), ("/dev/neuron[0-9]*",)
    ),
    "tpu": Device(
        "TPU",
        ("tpu-info",),
        ("/dev/accel[0-9]*", "/dev/vfio/[0-9]*"),
        ("/dev/accel[0-9]*", "/dev/vfio"),
    ),
}


def device_of(kind: str, cuda_command: tuple[str, ...] = ()) -> Device | None:
    """The device check of an accelerator; None for ``cpu``. ``cuda_command``: the
    matrix's ``smoke.gpu-command``, which replaces ``nvidia-smi``."""
    device = DEVICES.get(kind)
    if device is not None and kind == "cuda" and cuda_command:
        return replace(device, command=cuda_command)
    return device

"""Which ``docker run`` options widen a container's reach into the host, and the consent
that lets them through. Pure.

A repository's own sessions run the options its ``[tool.release.images]`` gives. A tag
being reproduced is another matter: its configuration came from whoever could push the
tag, so ``reproduce`` runs none of the options below unless the tester named each of
them (``--allow-host``). What widens:

- ``--privileged``, ``--device``, ``--gpus`` (the host's devices);
- ``--cap-add`` of a capability outside docker's default set, ``ALL`` included;
- ``--security-opt`` that turns seccomp, AppArmor or SELinux labelling off or swaps the
  profile (``seccomp=``, ``apparmor=``, ``label=``; ``no-new-privileges`` narrows);
- ``--ipc host`` (the host's IPC namespace);
- ``--runtime`` (another OCI runtime than the engine's default).

Everything else a configuration may give (``--cap-drop``, limits, ``--tmpfs``, ``--env``,
``--user``, namespaced ``--sysctl``) stays inside the container. Options are compared in
the ``--flag=value`` form :func:`release.core.serving.parse_run_options` returns, with
capabilities spelt without ``CAP_`` and in capitals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from release.core.matrix import ImageMatrix, Variant
from release.core.serving import parse_run_options

__all__ = ["DEFAULT_CAPABILITIES", "GPUS", "asked_by", "consent", "spelt", "widening"]

# docker's default capability set (moby's oci/caps/defaults.go): adding one is a no-op
DEFAULT_CAPABILITIES = frozenset(
    {"CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD", "NET_RAW", "SETGID", "SETUID",
     "SETFCAP", "SETPCAP", "NET_BIND_SERVICE", "SYS_CHROOT", "KILL", "AUDIT_WRITE"}
)  # fmt: skip
GPUS = "--gpus=all"  # what a GPU check adds where a GPU is usable


def _canonical(option: str) -> str:
    flag, eq, value = option.partition("=")
    if flag in ("--cap-add", "--cap-drop"):
        value = value.upper().removeprefix("CAP_")
    return f"{flag}{eq}{value}"


def _widens(option: str) -> bool:
    flag, _, value = option.partition("=")
    if flag in ("--privileged", "--device", "--gpus", "--runtime"):
        return True
    if flag == "--cap-add":
        return value not in DEFAULT_CAPABILITIES
    if flag == "--security-opt":
        return not value.startswith("no-new-privileges")
    return flag == "--ipc" and value == "host"


def widening(options: Iterable[str]) -> tuple[str, ...]:
    """The options among ``options`` (``--flag=value`` strings) that reach into the host,
    canonical and in the order given, each once."""
    found = (_canonical(o) for o in options)
    return tuple(dict.fromkeys(o for o in found if _widens(o)))


def spelt(options: Iterable[str]) -> str:
    """``options`` as the tester writes them back: ``cap-add=SYS_ADMIN,privileged``."""
    return ",".join(o.removeprefix("--") for o in options)


def consent(values: Iterable[str]) -> frozenset[str]:
    """What the tester allows: ``--allow-host`` values, each one option or several comma
    separated, with or without the leading ``--``, the value after ``=`` or a space
    (``cap-add=SYS_ADMIN``, ``--security-opt seccomp=unconfined``, ``gpus=all``,
    ``privileged``)."""
    items = [item.split(None, 1) for value in values for item in value.split(",") if item.strip()]
    spelled = [word for flag, *value in items for word in (f"--{flag.removeprefix('--')}", *value)]
    return frozenset(_canonical(o) for o in parse_run_options(spelled, "--allow-host"))


def asked_by(
    matrix: ImageMatrix,
    variants: Sequence[Variant],
    *,
    gpu: bool,
    devices: Mapping[str, tuple[str, ...]] | None = None,
) -> dict[str, tuple[str, ...]]:
    """What reaches into the host, by what asks for it (``smoke check 'x'``, ``snapshot``),
    for the containers ``variants``' smoke and snapshot would start; ``gpu``: a GPU is
    usable here, so the GPU checks (the built-in one included) would get :data:`GPUS`;
    ``devices``: the run options another accelerator's device checks would get here, by
    kind (:func:`release.adapters.devices.devices_here`)."""
    asked: dict[str, tuple[str, ...]] = {}
    for kind in dict.fromkeys(v.accelerator.kind for v in variants):
        found = widening((devices or {}).get(kind, ()))
        if found:
            asked[f"the {kind} device smoke check"] = found
    for check in matrix.smoke.checks:
        options = check.serving.run_options if check.serving is not None else ()
        found = widening([*options, *([GPUS] if gpu and check.gpu else [])])
        if found:
            asked[f"smoke check {check.name!r}"] = found
    if gpu:
        asked["the GPU smoke check"] = (GPUS,)
    rule = matrix.snapshot
    if rule is not None and any(matrix.has_snapshot(v) for v in variants):
        found = widening(rule.serving.run_options)
        if found:
            asked["snapshot"] = found
    return asked

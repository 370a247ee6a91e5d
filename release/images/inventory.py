"""What is inside an image, as the manifest records it and ``reproduce`` compares it: the
runtime state :mod:`release.images.snapshot_probe` prints (run in the image, stdlib only),
and the inventory drawn from it: the CUDA toolkit version, Python and its packages, and
the shared libraries with their hashes.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources

from release.adapters.engine import ContainerEngine
from release.core.json_text import JSONValue, parse_json
from release.errors import EngineError

__all__ = ["inventory_of", "probe_state"]


def probe_state(
    engine: ContainerEngine,
    image_id: str,
    *,
    timeout: float,
    labels: Mapping[str, str] | None = None,
    what: str = "",
) -> dict[str, JSONValue]:
    """The runtime state of ``image_id``: the probe run in a throwaway container (no
    network; removed on timeout and Ctrl-C)."""
    probe = (resources.files("release.images") / "snapshot_probe.py").read_text(encoding="utf-8")
    run = engine.run_container(
        image_id, ["-"], entrypoint="python3", stdin=probe, timeout=timeout, labels=labels
    )
    if not run.ok:
        reason = "timed out" if run.timed_out else (run.stderr.strip().splitlines() or ["?"])[-1]
        raise EngineError(f"recording the runtime state of {what or image_id} failed: {reason}")
    try:
        state: dict[str, JSONValue] = parse_json(run.stdout)
    except ValueError:
        raise EngineError(
            f"recording the runtime state of {what or image_id} failed: the probe printed no JSON"
        ) from None
    return state


def inventory_of(state: Mapping[str, JSONValue]) -> dict[str, JSONValue]:
    """The manifest's inventory from a probe's state."""
    cuda, python = _table(state, "cuda"), _table(state, "python")
    return {
        "cuda": cuda.get("version.json") or cuda.get("CUDA_VERSION"),
        "python": python.get("version"),
        "python_packages": _table(python, "packages"),
        "libraries": _table(state, "libraries"),
    }


def _table(state: Mapping[str, JSONValue], key: str) -> dict[str, JSONValue]:
    """The object at ``key`` (a copy); {} where the probe gave none."""
    found = state.get(key)
    return dict(found) if isinstance(found, dict) else {}

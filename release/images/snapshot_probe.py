# mypy: disable-error-code="no-untyped-def,no-untyped-call"
"""Runs *inside* an image (stdlib only, sent on stdin to ``python3 -``): prints the runtime
state as JSON: OS, CUDA toolkit, driver probe, Python and its packages, shared libraries
with hashes, and the snapshot runtime's version."""

import hashlib
import json
import os
import shutil
import subprocess
import sys

LIB_DIRS = (
    "/lib",
    "/usr/lib",
    "/usr/local/lib",
    "/usr/local/cuda/lib64",
    "/usr/local/nvidia/lib64",
)


def os_release():
    info = {}
    try:
        with open("/etc/os-release", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.strip().partition("=")
                if key in ("ID", "VERSION_ID", "PRETTY_NAME"):
                    info[key.lower()] = value.strip('"')
    except OSError:
        pass
    return info


def cuda():
    out = {
        "CUDA_VERSION": os.environ.get("CUDA_VERSION"),
        "NVIDIA_REQUIRE_CUDA": os.environ.get("NVIDIA_REQUIRE_CUDA"),
    }
    try:
        with open("/usr/local/cuda/version.json", encoding="utf-8") as f:
            out["version.json"] = json.load(f).get("cuda", {}).get("version")
    except (OSError, ValueError):
        out["version.json"] = None
    return out


def driver():
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as f:
            return f.readline().strip()
    except OSError:
        pass
    smi = shutil.which("nvidia-smi")
    if smi:
        proc = subprocess.run(
            [smi, "--query-gpu=driver_version,name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode == 0 and proc.stdout.strip():
            return proc.stdout.strip()
    return "no GPU"


def python():
    from importlib import metadata

    packages = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            packages[name.lower()] = dist.version
    return {"version": sys.version.split()[0], "packages": dict(sorted(packages.items()))}


def libraries():
    """Each shared library once, by its real path: on a merged-/usr image ``/lib`` is a
    link to ``usr/lib``, and walking both would count every library twice."""
    found = {}
    for top in LIB_DIRS:
        for root, _dirs, files in os.walk(top):
            for name in files:
                if ".so" not in name:
                    continue
                path = os.path.join(root, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                path = os.path.realpath(path)
                if path in found:
                    continue
                digest = hashlib.sha256()
                with open(path, "rb") as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        digest.update(block)
                found[path] = digest.hexdigest()
    return dict(sorted(found.items()))


def snapshot_runtime():
    criu = shutil.which("criu") or ("/usr/sbin/criu" if os.path.exists("/usr/sbin/criu") else None)
    if criu is None:
        return {"criu": None}
    proc = subprocess.run([criu, "--version"], capture_output=True, text=True, check=False)
    return {"criu": proc.stdout.strip().splitlines()[0] if proc.stdout.strip() else None}


if __name__ == "__main__":  # run as ``python3 -`` inside an image
    print(
        json.dumps(
            {
                "os": os_release(),
                "cuda": cuda(),
                "driver": driver(),
                "python": python(),
                "libraries": libraries(),
                "snapshot_runtime": snapshot_runtime(),
            },
            sort_keys=True,
        )
    )

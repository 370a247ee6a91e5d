"""Base images: the real one when present or pullable, else a labelled local stand-in.

No registry may be reachable, so a missing CUDA base (``nvidia/cuda:12.9.1-base-...``)
is replaced by a minimal Debian rootfs (``debootstrap``, cached) imported into the
engine and given NVIDIA's layout for the variant's CUDA version: ``CUDA_VERSION``,
``NVIDIA_REQUIRE_CUDA`` and ``/usr/local/cuda/version.json``. It carries
``org.release.standin=true`` so every result obtained on it says so.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from release.adapters.engine import MANAGED_LABEL, ContainerEngine, user_cache_dir
from release.errors import EngineError

__all__ = ["STANDIN_LABEL", "BaseImage", "ensure_base", "rootfs_cache"]

STANDIN_LABEL = "org.release.standin"
ROOTFS_IMAGE = "release-standin-rootfs:bookworm"
ROOTFS_VERSION = "1"  # bump when the rootfs recipe changes
_PATH = "/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_lock = threading.Lock()


@dataclass(frozen=True)
class BaseImage:
    ref: str
    id: str
    standin: bool
    how: str  # "present", "pulled" or "stand-in made"


def rootfs_cache() -> Path:
    """The user cache dir (``RELEASE_CACHE_DIR`` overrides): the rootfs tarball, CLI probes."""
    return user_cache_dir()


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _rootfs_tarball(say: Callable[[str], None]) -> Path:
    cache = rootfs_cache()
    tarball = cache / f"rootfs-bookworm-python3-v{ROOTFS_VERSION}.tar"
    with _file_lock(cache / "rootfs.lock"):
        if tarball.exists():
            return tarball
        debootstrap = shutil.which("debootstrap") or (
            "/usr/sbin/debootstrap" if os.path.exists("/usr/sbin/debootstrap") else None
        )
        if debootstrap is None:
            raise EngineError(
                "a stand-in base image needs debootstrap (apt-get install debootstrap), "
                "or make the real base image available"
            )
        if os.geteuid() != 0:
            raise EngineError("making a stand-in base image runs debootstrap, which needs root")
        say(
            "making a Debian bookworm rootfs with debootstrap for stand-in base images (once, cached)"
        )
        with tempfile.TemporaryDirectory(prefix="release-rootfs-") as tmp:
            target = Path(tmp) / "rootfs"
            proc = subprocess.run(
                [
                    debootstrap,
                    "--variant=minbase",
                    "--include=python3-minimal",
                    "bookworm",
                    str(target),
                    os.environ.get("RELEASE_DEBIAN_MIRROR", "http://deb.debian.org/debian"),
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                raise EngineError(
                    f"debootstrap failed: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}"
                )
            partial = tarball.with_suffix(".partial")
            subprocess.run(["tar", "-C", str(target), "-cf", str(partial), "."], check=True)
            os.replace(partial, tarball)
    return tarball


def _rootfs_image(engine: ContainerEngine, say: Callable[[str], None]) -> str:
    existing = engine.image_id(ROOTFS_IMAGE)
    if existing:
        return existing
    tarball = _rootfs_tarball(say)
    engine.import_rootfs(
        tarball,
        ROOTFS_IMAGE,
        [
            f"ENV PATH={_PATH}",
            'CMD ["bash"]',
            f"LABEL {STANDIN_LABEL}=true {MANAGED_LABEL}=true",
        ],
    )
    image = engine.image_id(ROOTFS_IMAGE)
    if image is None:
        raise EngineError(f"importing the stand-in rootfs as {ROOTFS_IMAGE} failed")
    return image


def standin_dockerfile(ref: str, cuda: str) -> str:
    major_minor = ".".join(cuda.split(".")[:2])
    version_json = json.dumps(
        {
            "cuda": {"name": "CUDA SDK", "version": cuda},
            "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": cuda},
        },
        indent=3,
    )
    escaped = version_json.replace("\\", "\\\\").replace("\n", "\\n").replace("'", "'\\''")
    return (
        f"FROM {ROOTFS_IMAGE}\n"
        f'ENV CUDA_VERSION={cuda} NVIDIA_REQUIRE_CUDA="cuda>={major_minor}" '
        "NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility "
        "LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64\n"
        f"RUN mkdir -p /usr/local/cuda-{major_minor} && ln -s /usr/local/cuda-{major_minor} /usr/local/cuda "
        f"&& printf '{escaped}\\n' > /usr/local/cuda/version.json\n"
        f'LABEL {STANDIN_LABEL}=true {STANDIN_LABEL}.for="{ref}" {MANAGED_LABEL}=true '
        f'{STANDIN_LABEL}.note="local stand-in: Debian bookworm with NVIDIA\'s CUDA {cuda} layout, no CUDA libraries"\n'
    )


def _present(ref: str, data: Mapping[str, Any]) -> BaseImage:
    labels = (data.get("Config") or {}).get("Labels") or {}
    return BaseImage(ref, str(data["Id"]), labels.get(STANDIN_LABEL) == "true", "present")


def ensure_base(
    engine: ContainerEngine,
    ref: str,
    cuda: str,
    say: Callable[[str], None],
    *,
    pull: bool = True,
    inspected: Mapping[str, Any] | None = None,
) -> BaseImage:
    """The base image for a variant: present, pulled, or a stand-in made now.

    ``inspected``: the base's ``docker image inspect`` data when the caller already has it
    (a batched query); without it, or when that query found no image, it is looked up here,
    under the lock, since another variant may have made it meanwhile.
    """
    if inspected is not None:
        return _present(ref, inspected)
    with _lock:
        data = engine.inspect_image(ref)
        if data is not None:
            return _present(ref, data)
        if pull and not os.environ.get("RELEASE_NO_PULL"):
            result = engine.run(["pull", "--quiet", ref], timeout=120, check=False)
            if result.ok:
                image = engine.image_id(ref)
                if image:
                    return BaseImage(ref, image, False, "pulled")
            say(f"base {ref} is not here and cannot be pulled; making a labelled stand-in")
        _rootfs_image(engine, say)
        with tempfile.TemporaryDirectory(prefix="release-standin-") as tmp:
            dockerfile = Path(tmp) / "Dockerfile"
            dockerfile.write_text(standin_dockerfile(ref, cuda), encoding="utf-8")
            iid = Path(tmp) / "iid"
            result = engine.build(
                context=Path(tmp),
                dockerfile=dockerfile,
                build_args={},
                labels={},
                iidfile=iid,
                platform=None,
                log=Path(tmp) / "build.log",
                timeout=600,
            )
            if not result.ok or not iid.exists():
                raise EngineError(
                    f"making the stand-in for {ref} failed: "
                    f"{(Path(tmp) / 'build.log').read_text(errors='replace').strip().splitlines()[-1:]}"
                )
            image = iid.read_text().strip()
            engine.tag(image, [ref])
        return BaseImage(ref, image, True, "stand-in made")

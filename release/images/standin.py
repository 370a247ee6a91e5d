"""Base images: the real one when present or pullable, else a labelled local stand-in.

No registry may be reachable, so a missing CUDA base (``nvidia/cuda:12.9.1-base-...``)
is replaced by a minimal Debian rootfs (``debootstrap``, cached) imported into the
engine and given NVIDIA's layout for the variant's CUDA version: ``CUDA_VERSION``,
``NVIDIA_REQUIRE_CUDA`` and ``/usr/local/cuda/version.json``. It carries
``org.release.standin=true`` so every result obtained on it says so.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from release.adapters.engine import MANAGED_LABEL, ContainerEngine
from release.adapters.leftovers import scratch
from release.adapters.process import last_line
from release.adapters.rootfs import rootfs_tarball
from release.core.references import repository
from release.errors import EngineError

__all__ = ["STANDIN_LABEL", "BaseImage", "ensure_base", "registry_digest", "standin_dockerfile"]

STANDIN_LABEL = "org.release.standin"
ROOTFS_VERSION = "2"  # bump when the rootfs recipe changes: stand-ins made before are remade
ROOTFS_IMAGE = f"release-standin-rootfs:bookworm-v{ROOTFS_VERSION}"
RECIPE_LABEL = f"{STANDIN_LABEL}.recipe"  # the ROOTFS_VERSION a stand-in was made from
_PATH = "/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_lock = threading.Lock()


@dataclass(frozen=True)
class BaseImage:
    """A variant's base image as this engine has it.

    ``digest`` is the registry's manifest digest when it came from one (what the image's
    ``org.opencontainers.image.base.digest`` label carries); ``content`` the digest of its
    filesystem (:mod:`release.adapters.image_content`), which a base made here (a
    stand-in) has as well. Both are the same on every machine; :attr:`identity` is what
    the input digest takes."""

    ref: str
    id: str
    standin: bool
    how: str  # "present", "pulled" or "stand-in made"
    digest: str | None = None
    content: str | None = None

    @property
    def identity(self) -> str:
        """What the input digest takes for the base: its registry digest, else its content
        digest, else (neither known) its image id, which only this engine's images share."""
        return self.digest or self.content or self.id


def registry_digest(ref: str, data: Mapping[str, Any]) -> str | None:
    """The manifest digest a registry gave the image ``ref`` names (``RepoDigests`` of its
    inspect data: ``nvidia/cuda@sha256:...``), that of ``ref``'s own repository first;
    None for an image no registry gave."""
    entries = (str(entry).partition("@") for entry in data.get("RepoDigests") or ())
    found = [(name, digest) for name, _, digest in entries if digest]
    ranked = [d for name, d in found if repository(name) == repository(ref)] + [d for _, d in found]
    return ranked[0] if ranked else None


def _rootfs_image(engine: ContainerEngine, say: Callable[[str], None]) -> str:
    existing = engine.image_id(ROOTFS_IMAGE)
    if existing:
        return existing
    tarball = rootfs_tarball(
        f"rootfs-bookworm-python3-v{ROOTFS_VERSION}.tar", "bookworm", "python3", say
    )
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
        f"{RECIPE_LABEL}={ROOTFS_VERSION} "
        f'{STANDIN_LABEL}.note="local stand-in: Debian bookworm with NVIDIA\'s CUDA {cuda} layout, no CUDA libraries"\n'
    )


def _current(data: Mapping[str, Any]) -> bool:
    """Whether an image found under a base's name may be used: any image but a stand-in
    made by an older recipe."""
    labels = (data.get("Config") or {}).get("Labels") or {}
    return labels.get(STANDIN_LABEL) != "true" or labels.get(RECIPE_LABEL) == ROOTFS_VERSION


def _present(ref: str, data: Mapping[str, Any], how: str = "present") -> BaseImage:
    labels = (data.get("Config") or {}).get("Labels") or {}
    standin = labels.get(STANDIN_LABEL) == "true"
    return BaseImage(ref, str(data["Id"]), standin, how, registry_digest(ref, data))


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
    if inspected is not None and _current(inspected):
        return _present(ref, inspected)
    with _lock:
        data = engine.inspect_image(ref)
        if data is not None and _current(data):
            return _present(ref, data)
        if data is not None:
            say(f"the stand-in for {ref} was made by an older recipe; making it again")
        elif pull and not os.environ.get("RELEASE_NO_PULL"):
            if engine.pull(ref):
                pulled = engine.inspect_image(ref)
                if pulled is not None:
                    return _present(ref, pulled, "pulled")
            say(f"base {ref} is not here and cannot be pulled; making a labelled stand-in")
        _rootfs_image(engine, say)
        with scratch("standin") as tmp:
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
                log = (Path(tmp) / "build.log").read_text(errors="replace")
                raise EngineError(
                    f"making the stand-in for {ref} failed: {last_line(log, 'no output')}"
                )
            image = iid.read_text().strip()
            engine.tag(image, [ref])
        return BaseImage(ref, image, True, "stand-in made")

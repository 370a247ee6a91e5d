"""Base images: the real one when present or pullable, else a labelled local stand-in.

No registry may be reachable, so a missing base (``nvidia/cuda:12.9.1-base-...``,
``rocm/dev-ubuntu-22.04:6.4.1``, ``quay.io/ascend/cann:8.1.rc1-...``) is replaced by a
minimal Debian rootfs (``debootstrap``, cached) imported into the engine and given the
layout its variant's accelerator's images carry, for the variant's version, and nothing
else (:func:`standin_dockerfile`): NVIDIA's ``CUDA_VERSION``, ``NVIDIA_REQUIRE_CUDA`` and
``/usr/local/cuda/version.json``; ROCm's ``/opt/rocm/.info/version``; CANN's
``ASCEND_HOME_PATH`` and its toolkit's ``ascend_toolkit_install.info``; Gaudi's
``HABANA_*`` paths; for a CPU, TPU, XPU or Neuron variant the rootfs alone. It carries
``org.release.standin=true`` so every result obtained on it says so.

The engine keeps one image per name, so a base for a platform other than its own (a
variant's ``linux/arm64`` row on an amd64 engine) lives under a local name of its own
(:func:`platform_alias`), which the build's ``FROM`` is given (:attr:`BaseImage.build_ref`):
the real base pulled for that platform, or a stand-in made from a rootfs debootstrapped
for that architecture (its second stage runs under the binfmt emulator) and imported by a
``FROM scratch`` build for the platform (``docker import`` ignores ``--platform``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from release.adapters.cache import file_lock, user_cache_dir
from release.adapters.engine import MANAGED_LABEL, ContainerEngine
from release.adapters.image_info import ImageInfo
from release.adapters.leftovers import scratch
from release.adapters.process import last_line
from release.adapters.rootfs import rootfs_tarball
from release.core.accelerator import Accelerator
from release.core.references import repository
from release.errors import EngineError

__all__ = [
    "STANDIN_LABEL",
    "BaseImage",
    "ensure_base",
    "platform_alias",
    "registry_digest",
    "standin_dockerfile",
]

STANDIN_LABEL = "org.release.standin"
ROOTFS_VERSION = "2"  # bump when the rootfs recipe changes: stand-ins made before are remade
ROOTFS_IMAGE = f"release-standin-rootfs:bookworm-v{ROOTFS_VERSION}"
RECIPE_LABEL = f"{STANDIN_LABEL}.recipe"  # the ROOTFS_VERSION a stand-in was made from
_PATH = "/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_lock = threading.Lock()


@contextlib.contextmanager
def _making() -> Iterator[None]:
    """One maker of stand-ins at a time: this run's threads, and other runs on this
    machine (two rehearsals, a test suite's workers), which would each build and tag the
    same base, the later moving the tag under the earlier's build."""
    with _lock, file_lock(user_cache_dir() / "standin.lock"):
        yield


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
    build_ref: str | None = None  # what the build's FROM names, where not ``ref`` itself

    @property
    def identity(self) -> str:
        """What the input digest takes for the base: its registry digest, else its content
        digest, else (neither known) its image id, which only this engine's images share."""
        return self.digest or self.content or self.id


def registry_digest(ref: str, data: ImageInfo) -> str | None:
    """The manifest digest a registry gave the image ``ref`` names (its repo digests:
    ``nvidia/cuda@sha256:...``), that of ``ref``'s own repository first; None for an image
    no registry gave."""
    entries = (entry.partition("@") for entry in data.repo_digests)
    found = [(name, digest) for name, _, digest in entries if digest]
    ranked = [d for name, d in found if repository(name) == repository(ref)] + [d for _, d in found]
    return ranked[0] if ranked else None


# docker's os/arch[/variant] -> Debian's architecture
_DEBIAN_ARCH = {
    "linux/amd64": "amd64",
    "linux/arm64": "arm64",
    "linux/arm64/v8": "arm64",
    "linux/arm/v7": "armhf",
    "linux/arm/v5": "armel",
    "linux/386": "i386",
    "linux/ppc64le": "ppc64el",
    "linux/s390x": "s390x",
    "linux/riscv64": "riscv64",
}


def platform_alias(ref: str, platform: str) -> str:
    """The local name of ``ref``'s image for ``platform`` where that is not the engine's
    own (``release-base-linux-arm64:nvidia-cuda-12.9.1-base-ubuntu22.04``)."""
    tag = re.sub(r"[^A-Za-z0-9_.-]+", "-", ref).strip("-.")[:128]
    return f"release-base-{platform.replace('/', '-')}:{tag or 'base'}"


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


def _foreign_rootfs(engine: ContainerEngine, say: Callable[[str], None], platform: str) -> str:
    """The name of the stand-in rootfs for ``platform``: debootstrapped for its
    architecture, then a ``FROM scratch`` build for the platform, tagged
    ``release-standin-rootfs:...-linux-arm64``."""
    name = f"{ROOTFS_IMAGE}-{platform.replace('/', '-')}"
    existing = engine.inspect_image(name)
    if existing is not None and existing.platform == platform:
        return name
    arch = _DEBIAN_ARCH.get(platform)
    if arch is None:
        raise EngineError(f"no stand-in base can be made for {platform} (no Debian architecture)")
    tarball = rootfs_tarball(
        f"rootfs-bookworm-python3-v{ROOTFS_VERSION}-{arch}.tar", "bookworm", "python3", say, arch
    )
    dockerfile = (
        f'FROM scratch\nADD rootfs.tar /\nENV PATH={_PATH}\nCMD ["bash"]\n'
        f"LABEL {STANDIN_LABEL}=true {MANAGED_LABEL}=true\n"
    )
    with scratch("standin") as tmp:
        try:
            os.link(tarball, Path(tmp) / "rootfs.tar")
        except OSError:  # another file system: a copy
            import shutil

            shutil.copyfile(tarball, Path(tmp) / "rootfs.tar")
        _build_tagged(engine, Path(tmp), dockerfile, platform, name, f"the {platform} rootfs")
    return name


def _build_tagged(
    engine: ContainerEngine,
    context: Path,
    dockerfile: str,
    platform: str | None,
    tag: str,
    what: str,
) -> str:
    """Build ``dockerfile`` in ``context`` (for ``platform``) and tag the image ``tag``."""
    (context / "Dockerfile").write_text(dockerfile, encoding="utf-8")
    iid, log = context / "iid", context / "build.log"
    result = engine.build(
        context=context,
        dockerfile=context / "Dockerfile",
        build_args={},
        labels={},
        iidfile=iid,
        platform=platform,
        log=log,
        timeout=600,
    )
    if not result.ok or not iid.exists():
        said = (
            last_line(log.read_text(errors="replace"), "no output") if log.exists() else "no output"
        )
        raise EngineError(f"making {what} failed: {said}")
    image = iid.read_text().strip()
    engine.tag(image, [tag])
    return image


def _printf(text: str) -> str:
    """``text`` as a single-quoted ``printf`` format for a RUN line."""
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("'", "'\\''").replace("%", "%%")


def _cuda_layout(cuda: str) -> tuple[str, str]:
    major_minor = ".".join(cuda.split(".")[:2])
    version_json = json.dumps(
        {
            "cuda": {"name": "CUDA SDK", "version": cuda},
            "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": cuda},
        },
        indent=3,
    )
    escaped = version_json.replace("\\", "\\\\").replace("\n", "\\n").replace("'", "'\\''")
    env = (
        f'ENV CUDA_VERSION={cuda} NVIDIA_REQUIRE_CUDA="cuda>={major_minor}" '
        "NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility "
        "LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64\n"
    )
    run = (
        f"RUN mkdir -p /usr/local/cuda-{major_minor} && ln -s /usr/local/cuda-{major_minor} /usr/local/cuda "
        f"&& printf '{escaped}\\n' > /usr/local/cuda/version.json\n"
    )
    return env, run


_PLAIN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_CANN = "/usr/local/Ascend/ascend-toolkit"


def _layout(accelerator: Accelerator) -> tuple[str, str]:
    """The ENV and RUN lines that give a rootfs ``accelerator``'s layout, as the vendor's
    base images have it (see :func:`release.images.smoke_checks.layout_checks`)."""
    kind, version = accelerator.kind, accelerator.version
    if kind == "cuda":
        return _cuda_layout(version)
    if kind == "rocm":  # ROCm's packages install /opt/rocm-X, /opt/rocm links to it
        return (
            f"ENV PATH=/opt/rocm/bin:{_PLAIN_PATH}\n",
            f"RUN mkdir -p /opt/rocm-{version}/.info && ln -s /opt/rocm-{version} /opt/rocm "
            f"&& printf '{_printf(version)}\\n' > /opt/rocm/.info/version\n",
        )
    if kind == "cann":  # CANN's images: the toolkit's env, its version in RC capitals
        written = re.sub("rc", "RC", version)
        info = f"package_name=Ascend-cann-toolkit\nversion={written}\n"
        return (
            f"ENV ASCEND_TOOLKIT_HOME={_CANN}/latest ASCEND_HOME_PATH={_CANN}/latest "
            f"PATH={_CANN}/latest/bin:{_PLAIN_PATH}\n",
            f'RUN arch="$(uname -m)-linux" && mkdir -p "{_CANN}/{written}/$arch" '
            f"&& ln -s {written} {_CANN}/latest "
            f"&& printf '{_printf(info)}' > \"{_CANN}/latest/$arch/ascend_toolkit_install.info\"\n",
        )
    if kind == "hpu":  # Habana's base images: its paths in the env
        return (
            "ENV HABANA_SCAL_BIN_PATH=/opt/habanalabs/engines_fw "
            "HABANA_PLUGINS_LIB_PATH=/opt/habanalabs/habana_plugins "
            f"HABANA_LOGS=/var/log/habana_logs/ PATH={_PLAIN_PATH}\n",
            "RUN mkdir -p /opt/habanalabs/engines_fw /opt/habanalabs/habana_plugins\n",
        )
    return f"ENV PATH={_PLAIN_PATH}\n", ""


def standin_dockerfile(ref: str, accelerator: Accelerator, rootfs: str = ROOTFS_IMAGE) -> str:
    """The stand-in for ``ref``: the rootfs with ``accelerator``'s layout, labelled."""
    env, run = _layout(accelerator)
    vendor = "NVIDIA's " if accelerator.kind == "cuda" else ""
    what = (
        "no accelerator's layout"
        if accelerator.kind == "cpu"
        else f"{vendor}{accelerator.label} layout, no {accelerator.name} libraries"
    )
    return (
        f"FROM {rootfs}\n{env}{run}"
        f'LABEL {STANDIN_LABEL}=true {STANDIN_LABEL}.for="{ref}" {MANAGED_LABEL}=true '
        f"{RECIPE_LABEL}={ROOTFS_VERSION} {STANDIN_LABEL}.accelerator={accelerator.kind} "
        f'{STANDIN_LABEL}.note="local stand-in: Debian bookworm with {_label_text(what)}"\n'
    )


def _label_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _current(data: ImageInfo) -> bool:
    """Whether an image found under a base's name may be used: any image but a stand-in
    made by an older recipe."""
    labels = data.labels
    return labels.get(STANDIN_LABEL) != "true" or labels.get(RECIPE_LABEL) == ROOTFS_VERSION


def _present(ref: str, data: ImageInfo, how: str = "present") -> BaseImage:
    standin = data.labels.get(STANDIN_LABEL) == "true"
    return BaseImage(ref, data.id, standin, how, registry_digest(ref, data))


def ensure_base(
    engine: ContainerEngine,
    ref: str,
    accelerator: Accelerator,
    say: Callable[[str], None],
    *,
    pull: bool = True,
    inspected: ImageInfo | None = None,
    platform: str | None = None,
) -> BaseImage:
    """The base image for a variant: present, pulled, or a stand-in made now.

    ``inspected``: the base's ``docker image inspect`` data when the caller already has it
    (a batched query); without it, or when that query found no image, it is looked up here,
    under the lock, since another variant may have made it meanwhile. ``platform``: a
    platform other than the engine's own (its base is kept under :func:`platform_alias`).
    """
    if platform is not None and platform != engine.platform():
        return _foreign_base(engine, ref, accelerator, say, platform, pull=pull)
    if inspected is not None and _current(inspected):
        return _present(ref, inspected)
    with _making():
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
            image = _build_tagged(
                engine,
                Path(tmp),
                standin_dockerfile(ref, accelerator),
                None,
                ref,
                f"the stand-in for {ref}",
            )
        return BaseImage(ref, image, True, "stand-in made")


def _foreign_base(
    engine: ContainerEngine,
    ref: str,
    accelerator: Accelerator,
    say: Callable[[str], None],
    platform: str,
    *,
    pull: bool,
) -> BaseImage:
    """``ref`` for ``platform``, not the engine's own: ``ref`` itself when it is of that
    platform, else its local alias (found, pulled aside, or a stand-in made)."""
    alias = platform_alias(ref, platform)
    with _making():
        for name in (ref, alias):
            data = engine.inspect_image(name)
            if data is not None and data.platform == platform and _current(data):
                return replace(_present(ref, data), build_ref=None if name == ref else alias)
        if pull and not os.environ.get("RELEASE_NO_PULL"):
            pulled = _pull_aside(engine, ref, platform, alias)
            if pulled is not None:
                return pulled
            say(f"base {ref} for {platform} cannot be pulled; making a labelled stand-in")
        rootfs = _foreign_rootfs(engine, say, platform)
        with scratch("standin") as tmp:
            image = _build_tagged(
                engine,
                Path(tmp),
                standin_dockerfile(ref, accelerator, rootfs),
                platform,
                alias,
                f"the {platform} stand-in for {ref}",
            )
        return BaseImage(ref, image, True, "stand-in made", build_ref=alias)


def _pull_aside(engine: ContainerEngine, ref: str, platform: str, alias: str) -> BaseImage | None:
    """``ref`` pulled for ``platform`` and kept as ``alias``: ``ref`` names what it named
    before (the engine's own platform's image, or nothing)."""
    before = engine.image_id(ref)
    if not engine.pull(ref, platform):
        return None
    pulled = engine.inspect_image(ref)
    try:
        if pulled is None or pulled.platform != platform:
            return None
        engine.tag(pulled.id, [alias])
        return replace(_present(ref, pulled, "pulled"), build_ref=alias)
    finally:
        if before is not None:
            engine.tag(before, [ref])
        elif pulled is not None:
            engine.remove_image(ref)  # the tag only: the image keeps its alias

"""What a Dockerfile's path says of the image it builds: the words of its name
(``Dockerfile.310p.openEuler`` -> ``310p``, ``openeuler``), whether it builds a release
image at all (``Dockerfile.rocm_base``, ``Dockerfile.ci`` and files under ``tests/`` do
not), the CPU architecture it names, and the OS its name or base image names. Pure.
"""

from __future__ import annotations

import re

__all__ = ["ARCH_PLATFORMS", "name_parts", "not_a_release_image", "os_of"]

ARCH_PLATFORMS = {
    "arm": "linux/arm64", "arm64": "linux/arm64", "aarch64": "linux/arm64",
    "s390x": "linux/s390x", "ppc64le": "linux/ppc64le",
    "amd64": "linux/amd64", "x86_64": "linux/amd64",
}  # fmt: skip
# words that say nothing of a variant (Dockerfile.ubuntu.pytorch.vllm is "ubuntu")
_GENERIC = {"vllm", "pytorch", "torch", "openai", "docker", "dockerfile", "image", "release"}
# a word of the name, or a folder, that says the file builds no release image
_NOT_RELEASE = {
    "base": "a base image", "ci": "a CI image", "test": "a test image", "tests": "a test image",
    "lint": "a lint image", "docs": "a docs image", "doc": "a docs image",
    "dev": "a development image", "nightly": "a nightly image", "bench": "a benchmark image",
    "benchmark": "a benchmark image", "benchmarks": "a benchmark image",
    "buildwheel": "a wheel build", "wheel": "a wheel build", "tmp": "a scratch file",
    "example": "an example", "examples": "an example",
}  # fmt: skip
_OS_WORDS = ("ubuntu", "rhel", "ubi", "openeuler", "debian", "centos", "rocky", "alpine",
             "amzn", "sles", "fedora")  # fmt: skip
_OS_IN_BASE = re.compile(
    r"(?<![a-z])(ubuntu|openeuler|rhel|ubi|debian|centos|rockylinux|alpine|bookworm|bullseye"
    r"|trixie|jammy|noble|focal)[-_]?(\d+(?:\.\d+)?)?",
    re.I,
)


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    name = re.sub(r"^dockerfile[._-]?", "", name)
    return re.sub(r"[._-]?dockerfile$", "", name)


def name_parts(path: str) -> list[str]:
    """The words of a Dockerfile's name past ``Dockerfile``, lower case, without the
    ones that say nothing of a variant (``vllm``, ``pytorch``)."""
    return [p for p in re.split(r"[._]+", _stem(path)) if p and p not in _GENERIC]


def not_a_release_image(path: str) -> str:
    """Why the file builds no release image, by its name or folder ("" where it may)."""
    folders = [f.lower() for f in path.split("/")[:-1]]
    words = [w for part in name_parts(path) for w in part.split("-")]
    for word in (*folders, *words):
        if word in _NOT_RELEASE:
            return f"{_NOT_RELEASE[word]}, by its {'name' if word in words else 'folder'}"
    return ""


def os_of(path: str, base: str) -> str:
    """The OS the file's name or its base image names, and which said it; "" for none."""
    named = [p for p in name_parts(path) if p in _OS_WORDS]
    if named:
        return f"{'.'.join(named)} (the file's name)"
    found = _OS_IN_BASE.search(base)
    if found:
        return f"{found[0].lower()} (the base image {base})"
    return ""

"""Images made as files, for registry tests that need no Docker Engine: a one-layer OCI
image per platform and a multi-arch index over them, written as an OCI image layout and
copied into a registry with skopeo (``--preserve-digests``), so the digests the registry
serves are the ones computed here."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from release.adapters.registry_server import LocalRegistry
from tests.manifest_support import TAG

__all__ = ["OciImage", "copy_in", "oci_layout"]

MANIFEST = "application/vnd.oci.image.manifest.v1+json"
INDEX = "application/vnd.oci.image.index.v1+json"
CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"


@dataclass(frozen=True)
class OciImage:
    """One platform's image: its manifest's digest and its config's (the image id)."""

    platform: str
    digest: str
    config: str


def _blob(root: Path, data: bytes) -> tuple[str, int]:
    digest = hashlib.sha256(data).hexdigest()
    (root / "blobs" / "sha256" / digest).write_bytes(data)
    return f"sha256:{digest}", len(data)


def _layer(text: str) -> tuple[bytes, str]:
    """A gzipped tar holding one file; (its bytes, its uncompressed digest)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        data = text.encode()
        info = tarfile.TarInfo("etc/release-test")
        info.size, info.mtime = len(data), 0
        tar.addfile(info, io.BytesIO(data))
    plain = raw.getvalue()
    return gzip.compress(plain, mtime=0), "sha256:" + hashlib.sha256(plain).hexdigest()


def oci_layout(root: Path, platforms: list[str], seed: str) -> tuple[list[OciImage], str]:
    """An OCI layout at ``root``: per platform an image whose one file says ``seed`` and
    the platform, and one index over them, named ``index`` (each image is named by its
    platform's slug too: ``amd64``). The images, and the index's digest."""
    (root / "blobs" / "sha256").mkdir(parents=True, exist_ok=True)
    (root / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    images, entries, refs = [], [], []
    for platform in platforms:
        os_name, arch = platform.split("/")[:2]
        layer, diff_id = _layer(f"{seed} {platform}\n")
        layer_digest, layer_size = _blob(root, layer)
        config = {
            "architecture": arch,
            "os": os_name,
            "config": {"Labels": {"test.seed": seed}},
            "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        }
        config_digest, config_size = _blob(root, json.dumps(config).encode())
        manifest = {
            "schemaVersion": 2,
            "mediaType": MANIFEST,
            "config": {"mediaType": CONFIG, "digest": config_digest, "size": config_size},
            "layers": [{"mediaType": LAYER, "digest": layer_digest, "size": layer_size}],
        }
        digest, size = _blob(root, json.dumps(manifest).encode())
        images.append(OciImage(platform, digest, config_digest))
        entry = {"mediaType": MANIFEST, "digest": digest, "size": size}
        entries.append({**entry, "platform": {"os": os_name, "architecture": arch}})
        name = {"org.opencontainers.image.ref.name": arch}
        refs.append({**entry, "annotations": name})
    index = {"schemaVersion": 2, "mediaType": INDEX, "manifests": entries}
    index_digest, index_size = _blob(root, json.dumps(index).encode())
    named = {"org.opencontainers.image.ref.name": "index"}
    refs.append(
        {"mediaType": INDEX, "digest": index_digest, "size": index_size, "annotations": named}
    )
    (root / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": refs}))
    return images, index_digest


def copy_in(layout: Path, name: str, ref: str) -> None:
    """The layout's image ``name`` (a platform's slug, or ``index`` with its images) to
    ``ref`` in a registry on loopback (plain HTTP), digests kept."""
    subprocess.run(
        ["skopeo", "copy", "--all", "--preserve-digests", "--quiet", "--dest-tls-verify=false",
         f"oci:{layout}:{name}", f"docker://{ref}"],
        check=True,
        capture_output=True,
        timeout=120,
    )  # fmt: skip


NAME = "example/tinyengine"  # the sample's image name


@dataclass(frozen=True)
class Published:
    repository: str
    platform: str  # the platform image's digest
    index: str
    platform_tag: str
    index_tags: tuple[str, ...]


def published(registry: LocalRegistry, root: Path, seed: str, path: str = "rel") -> Published:
    """An image of one platform and its index in the registry, under the sample's name."""
    repository = f"{registry.address}/{path}/{NAME}"
    made, index = oci_layout(root / seed, ["linux/amd64"], seed)
    platform_tag, index_tags = (
        f"{repository}:{TAG}-amd64",
        (f"{repository}:{TAG}", f"{repository}:{TAG}-cu130"),
    )
    copy_in(root / seed, "amd64", platform_tag)
    for tag in index_tags:
        copy_in(root / seed, "index", tag)
    return Published(repository, made[0].digest, index, platform_tag, index_tags)


def recorded(image: Published) -> dict[str, Any]:
    """The cu130 row's publish record of ``image`` (its registry: the repository less the
    image's name)."""
    return {
        "registry": image.repository.removesuffix(f"/{NAME}"),
        "platform": "linux/amd64",
        "digest": image.platform,
        "tags": [image.platform_tag],
        "index": {"digest": image.index, "tags": list(image.index_tags)},
    }

"""The rehearsal's release registry: Debian's ``docker-registry`` on 127.0.0.1 with its
storage in the sandbox, where rc1 and rc2 are published and the final is promoted by
digest; and the checks that read it back as an rc tester would (``skopeo inspect``).

Without ``docker-registry`` (or skopeo, or an engine), the registry steps say *not run*
and why; they never pass without a registry.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from release.adapters.registry import Registry
from release.adapters.registry_server import LocalRegistry, Traffic, registry_binary
from release.core.manifest_records import Manifest
from release.core.matrix import ImageMatrix
from release.errors import ReleaseError
from release.sample.rehearse_images import DockerSide
from release.sample.rehearse_terminal import Terminal

__all__ = ["RegistrySide", "registry_checks"]

PATH = "rehearsal"  # the repository path the images are published under


@dataclass
class RegistrySide:
    server: LocalRegistry | None
    detail: str  # where it serves, or why there is none

    @classmethod
    def start(cls, root: Path, docker: DockerSide) -> RegistrySide:
        if not docker.ready:
            return cls(None, docker.not_run)
        if registry_binary() is None:
            return cls(None, "no docker-registry here (apt-get install docker-registry)")
        if shutil.which("skopeo") is None:
            return cls(None, "no skopeo here (apt-get install skopeo)")
        try:
            server = LocalRegistry(root)
            server.start()
        except ReleaseError as err:
            return cls(None, err.one_line())
        return cls(
            server,
            f"release registry {server.address}/{PATH} (docker-registry, storage in the sandbox)",
        )

    @property
    def ready(self) -> bool:
        return self.server is not None

    @property
    def prefix(self) -> str:
        assert self.server is not None
        return f"{self.server.address}/{PATH}"

    def traffic(self) -> Traffic | None:
        return self.server.traffic() if self.server is not None else None

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


def registry_checks(
    t: Terminal,
    side: RegistrySide,
    matrix: ImageMatrix,
    manifests: Mapping[str, Manifest | None],
    final_tag: str,
    rc_tag: str,
    promote_uploads: int | None,
) -> None:
    """The final's tags resolve to the rc's index digests, read from the registry; each
    index lists every platform of its variant; promote uploaded no blob."""
    what = f"{final_tag}'s tags in the registry resolve to {rc_tag}'s index digests"
    rc = manifests.get(rc_tag)
    if not side.ready or rc is None:
        t.check(what, None, side.detail if not side.ready else f"no {rc_tag} manifest")
        return
    reg = Registry()
    prefix = side.prefix
    wanted: dict[str, str] = {}  # final tag -> the rc's index digest
    platforms: dict[str, set[str]] = {}
    for row_id, entry in rc.variants.items():
        published = entry.publish
        if published is None:
            t.check(what, False, f"{row_id} of {rc_tag} was not published")
            return
        group = matrix.variant(row_id).group
        for tag in matrix.index_tags(group, final_tag):
            wanted[f"{prefix}/{tag}"] = published.index.digest
        platforms.setdefault(group, set()).add(published.platform)
    served = {ref: reg.served(ref) for ref in wanted}
    t.check(
        what,
        all(s is not None and s.digest == wanted[ref] for ref, s in served.items()),
        "; ".join(f"{ref}: {s.digest if s else 'nothing'}" for ref, s in served.items()),
    )
    lists = {ref.rsplit(":", 1)[1]: {p for p, _ in s.platforms} for ref, s in served.items() if s}
    several = {g: p for g, p in platforms.items() if len(p) > 1}
    t.check(
        "each index lists its variant's platforms"
        + (f" ({', '.join(f'{g}: {len(p)}' for g, p in several.items())})" if several else ""),
        all(
            lists.get(tag.split(":", 1)[1]) == platforms[g]
            for g in platforms
            for tag in matrix.index_tags(g, final_tag)
        ),
        ", ".join(f"{tag}: {sorted(p)}" for tag, p in lists.items()),
    )
    t.check(
        f"promote copied inside the registry: no blob uploaded ({promote_uploads} upload requests)",
        promote_uploads == 0 if promote_uploads is not None else None,
        "promote did not run",
    )

"""What an image is built from: the commit, its time, and the version to call it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from release.core.versions import ReleaseVersion, parse_version
from release.flows.context import ReleaseContext

__all__ = ["BuildSource", "dev_version", "read_source"]


@dataclass(frozen=True)
class BuildSource:
    root: Path
    revision: str
    epoch: int  # SOURCE_DATE_EPOCH: the commit time
    version: str  # PEP 440
    tagged: bool
    url: str = ""

    @property
    def image_version(self) -> str:
        return "v" + self.version


def dev_version(last: ReleaseVersion | None, distance: int) -> str:
    """An untagged build: a dev release of the version that would come next."""
    if last is None:
        return f"0.0.0.dev{distance}"
    if last.is_rc:
        return f"{last.next_rc().pep440()}.dev{distance}"
    return f"{last.major}.{last.minor}.{last.patch + 1}.dev{distance}"


def _explicit(text: str) -> str:
    """A release spelling (any of ours), or any PEP 440 version for ad-hoc builds."""
    from packaging.version import InvalidVersion, Version

    from release.errors import VersionError

    try:
        return parse_version(text).pep440()
    except VersionError:
        try:
            return str(Version(text.removeprefix("v")))
        except InvalidVersion:
            raise VersionError(f"--version {text!r} is not a version (e.g. 0.31.0rc1)") from None


def read_source(ctx: ReleaseContext, version: str | None = None) -> BuildSource:
    """Version from ``version``, else the tag at HEAD, else a dev version from the last tag."""
    repo = ctx.repo
    revision = repo.head()
    epoch = repo.commit_time("HEAD")
    url = ctx.repo_url or (repo.remote_url(ctx.config.remote) or "")
    if version is not None:
        return BuildSource(ctx.root, revision, epoch, _explicit(version), True, url)
    tags = ctx.tags(remote=False)
    at_head = [t for t in tags if t.commit == revision]
    if at_head:
        return BuildSource(ctx.root, revision, epoch, at_head[-1].version.pep440(), True, url)
    reachable = [t for t in tags if repo.is_ancestor(t.commit, revision)]
    last = reachable[-1] if reachable else None
    base = f"{last.commit}..{revision}" if last else revision
    distance = repo.count(base)
    return BuildSource(
        ctx.root, revision, epoch, dev_version(last.version if last else None, distance), False, url
    )

"""The invoke collection ``release.images``: build, smoke and snapshot the image matrix."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from invoke.collection import Collection
from invoke.context import Context
from invoke.tasks import task

from release.cli.console import say
from release.cli.entry import entry

__all__ = ["images"]


def _ids(variant: str | None) -> list[str] | None:
    return [v for v in (variant or "").replace(",", " ").split() if v] or None


def _workspace(  # type: ignore[no-untyped-def]
    version: str | None, allow_dirty: bool, allow_shallow: bool, *, inspect: bool = False
):
    from release.images.workspace import Workspace

    return Workspace.open(
        os.environ.get("RELEASE_REPO", "."),
        version,
        allow_dirty=allow_dirty,
        allow_shallow=allow_shallow,
        inspect=inspect,
    )


# a build refuses a work tree that is not the commit, and a clone cut short, unless told
_GUARDS_HELP = {
    "allow-dirty": "take uncommitted changes in: version +dirty, labelled org.release.dirty=true",
    "allow-shallow": "allow a shallow clone; a dev version it cannot count gets +shallow",
}


def _to_stderr(line: str) -> None:
    say(line, stream=sys.stderr)


@task(
    help={
        "variant": "variant ids, comma separated (default: all)",
        "jobs": "variants built in parallel",
        "keep-going": "build the other variants when one fails; report every failure",
        "version": "version to build as (default: the tag at HEAD, else a dev version)",
        "force": "rebuild even when the inputs are unchanged",
        "no-cache": "rebuild every layer (docker build --no-cache); implies --force",
        **_GUARDS_HELP,
    }
)
@entry
def build(
    c: Context,
    variant: str | None = None,
    jobs: int = 1,
    keep_going: bool = False,
    version: str | None = None,
    force: bool = False,
    no_cache: bool = False,
    allow_dirty: bool = False,
    allow_shallow: bool = False,
) -> None:
    """Build one image per CUDA variant (skipping variants whose inputs are unchanged)."""
    from release.images import workspace

    workspace.build(
        _workspace(version, allow_dirty, allow_shallow, inspect=True),
        _ids(variant),
        jobs=jobs,
        keep_going=keep_going,
        force=force,
        no_cache=no_cache,
        say=say,
    )


@task(
    help={
        "variant": "variant ids (default: all)",
        "version": "version to check for",
        "json": "print one JSON document for every variant (the run's lines go to stderr)",
        **_GUARDS_HELP,
    }
)
@entry
def smoke(
    c: Context,
    variant: str | None = None,
    version: str | None = None,
    json: bool = False,
    allow_dirty: bool = False,
    allow_shallow: bool = False,
) -> None:
    """Smoke-test each variant's image (builds it first if missing)."""
    from release.images import workspace

    ws = _workspace(version, allow_dirty, allow_shallow, inspect=True)
    workspace.smoke(ws, _ids(variant), say=say, as_json=json, note=_to_stderr)


@task(
    help={
        "variant": "variant ids (default: every variant the snapshot rule covers)",
        "version": "version to check",
        "baseline": "a snapshot record to diff against",
        "dry-run": "print the round trip's steps and container options, run nothing",
        **_GUARDS_HELP,
    }
)
@entry
def snapshot(
    c: Context,
    variant: str | None = None,
    version: str | None = None,
    baseline: str | None = None,
    dry_run: bool = False,
    allow_dirty: bool = False,
    allow_shallow: bool = False,
) -> None:
    """Checkpoint each variant's running server and restore it in a fresh container, then
    record the runtime state (not on CUDA 12.x variants)."""
    from release.images import workspace

    ws = _workspace(version, allow_dirty, allow_shallow, inspect=not dry_run)
    ids = _ids(variant) or list(ws.matrix.snapshot_ids())
    if dry_run:
        workspace.snapshot_plan(ws, ids, say=say)
        return
    workspace.snapshot(ws, ids, baseline=Path(baseline) if baseline else None, say=say)


_REGISTRY_HELP = {
    "variant": "variant ids (default: all)",
    "registry": "REGISTRY/PATH the image travels under (default: ci-registry in [tool.release.images])",
    "version": "version whose images to send (default: as a build would name them)",
}


@task(help=_REGISTRY_HELP)
@entry
def push(
    c: Context, variant: str | None = None, registry: str | None = None, version: str | None = None
) -> None:
    """Push this checkout's images to a registry, for the CI jobs after the build."""
    from release.images.transfer import push_images

    push_images(_workspace(version, False, False), _ids(variant), registry, say=say)


@task(help=_REGISTRY_HELP)
@entry
def pull(
    c: Context, variant: str | None = None, registry: str | None = None, version: str | None = None
) -> None:
    """Pull this checkout's images from a registry (refused when built from another commit)."""
    from release.images.transfer import pull_images

    pull_images(_workspace(version, False, False), _ids(variant), registry, say=say)


@task(help={"json": "print as JSON (for a CI fan-out)"})
@entry
def matrix(c: Context, json: bool = False) -> None:
    """Show the image matrix: variants, tags, build args and which sessions exist."""
    from release.flows.context import ReleaseContext
    from release.images.workspace import matrix_json

    m = ReleaseContext(os.environ.get("RELEASE_REPO", ".")).config.matrix
    if m is None:
        say("no [tool.release.images] in this repository")
        return
    if json:
        print(matrix_json(m))
        return
    for v in m.variants:
        snap = "snapshot" if m.has_snapshot(v) else "no snapshot"
        say(
            f"{v.id:8} CUDA {v.cuda_text:8} {m.tag(v, 'v{version}'):40} {snap:12} base {v.base_image}"
        )


images = Collection("images", build, smoke, snapshot, matrix, push, pull)

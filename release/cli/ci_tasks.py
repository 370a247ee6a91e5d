"""``release bake`` and ``release ci``: the image matrix as files for builders and CI
systems beyond this machine, made from the same config as the nox sessions."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from invoke.context import Context
from invoke.tasks import task

from release.cli.console import say
from release.cli.entry import entry
from release.errors import ConfigError, RefusedError, UsageError

__all__ = ["bake", "ci"]

DEFAULT_DIRS = {"buildkite": ".buildkite", "github": ".github/workflows"}  # by format


def _context() -> Any:
    from release.flows.context import ReleaseContext

    ctx = ReleaseContext(os.environ.get("RELEASE_REPO", "."))
    if ctx.config.matrix is None:
        raise ConfigError("[tool.release.images] is missing: no image matrix to write")
    return ctx


@task(
    help={
        "out": "the bake file to write (JSON; default docker-bake.json)",
        "version": "version to build as (default: the tag at HEAD, else a dev version)",
        "allow-dirty": "take uncommitted changes in: version +dirty, labelled org.release.dirty=true",
        "allow-shallow": "allow a shallow clone; a dev version it cannot count gets +shallow",
    }
)
@entry
def bake(
    c: Context,
    out: str = "docker-bake.json",
    version: str | None = None,
    allow_dirty: bool = False,
    allow_shallow: bool = False,
) -> None:
    """Write a docker buildx bake file: a target per variant with the args and tags of
    images.build, and its labels but the base's name and digest (known once the builder
    resolves the base). Run `docker buildx bake -f FILE` at the repository root."""
    from release.adapters.files import atomic_write, output_path
    from release.images.bake import bake_json
    from release.images.source import read_source

    ctx = _context()
    path = output_path(Path(out), "--out", tree=ctx.root)
    source = read_source(ctx, version, allow_dirty=allow_dirty, allow_shallow=allow_shallow)
    if source.refusal:
        raise RefusedError(source.refusal)
    for line in source.lines():
        say(line)
    atomic_write(path, bake_json(ctx.config.matrix, source))
    say(f"wrote {path}: {len(ctx.config.matrix.variants)} target(s) of {ctx.config.matrix.name}")


@task(
    help={
        "format": "buildkite (a pipeline, pipeline.yml) or github (a workflow, images.yml)",
        "out": "the directory to write it in, which must exist (default: .buildkite or "
        ".github/workflows at the repository's root, made when missing)",
        "setup": "the command each job runs first to install release and nox "
        "(default: python3 -m pip install -q -e .)",
        "runner": "GitHub: the runs-on label (default ubuntu-latest); Buildkite: the agents' "
        "queue (default: none)",
        "registry": "REGISTRY/PATH images travel through between jobs (default: ci-registry "
        "in [tool.release.images]; '' for artifacts: docker save, then docker load)",
    }
)
@entry
def ci(
    c: Context,
    format: str = "",
    out: str | None = None,
    setup: str | None = None,
    runner: str | None = None,
    registry: str | None = None,
) -> None:
    """Write a CI pipeline for the image matrix: a job per session of `nox -l -t images`
    (build, then smoke and snapshot from the built image, as an artifact or through a
    registry), then one that merges the manifest from every job's part."""
    from release.adapters.files import atomic_write, output_path
    from release.core.pipelines import (
        DEFAULT_SETUP,
        FORMATS,
        pipeline_jobs,
        pipeline_text,
        runner_label,
    )
    from release.core.references import registry_prefix

    if format not in FORMATS:
        raise UsageError(f"--format {format!r}: use {' or '.join(FORMATS)}")
    if runner is not None:
        runner = runner_label(runner, "--runner")
    ctx = _context()
    matrix = ctx.config.matrix
    # the default places are the repository's (made when missing, never through a symlink
    # out of it); a directory given is taken as given, from where the command runs
    where = Path(out) if out else ctx.root / DEFAULT_DIRS[format]
    path = output_path(where / FORMATS[format], "--out", tree=ctx.root, made=not out)
    made = ["release", "ci", "--format", format]
    made += ["--setup", repr(setup)] if setup else []
    made += ["--runner", runner] if runner else []
    made += ["--registry", registry] if registry is not None else []
    if registry:
        registry = registry_prefix(registry, "--registry")
    text = pipeline_text(
        matrix, format, setup=setup or DEFAULT_SETUP, runner=runner, command=made, registry=registry
    )
    atomic_write(path, text)
    jobs = pipeline_jobs(matrix)
    say(f"wrote {path}: {len(jobs)} jobs ({', '.join(j.label for j in jobs)})")

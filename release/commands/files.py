"""What ``release`` writes for builders and CI beyond this machine (``bake``, ``ci``), and the
rehearsal of the whole rc cycle (``rehearse``)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from release.commands.common import context
from release.commands.outcome import Report, Run
from release.errors import ConfigError, RefusedError

if TYPE_CHECKING:
    from release.flows.context import ReleaseContext

__all__ = ["BakeRequest", "CiFormat", "CiRequest", "RehearseRequest", "bake", "ci", "rehearse"]

DEFAULT_DIRS = {"buildkite": ".buildkite", "github": ".github/workflows"}  # by format


def _with_matrix(run: Run) -> ReleaseContext:
    ctx = context(run)
    if ctx.config.matrix is None:
        raise ConfigError("[tool.release.images] is missing: no image matrix to write")
    return ctx


@dataclass(frozen=True)
class BakeRequest:
    out: str = "docker-bake.json"
    version: str | None = None
    allow_dirty: bool = False
    allow_shallow: bool = False
    json: bool = False


def bake(request: BakeRequest, run: Run) -> Report:
    from release.adapters.files import atomic_write, output_path
    from release.images.bake import bake_json
    from release.images.source import read_source

    ctx = _with_matrix(run)
    matrix = ctx.config.matrix
    assert matrix is not None
    path = output_path(Path(request.out), "--out", tree=ctx.root)
    source = read_source(
        ctx, request.version, allow_dirty=request.allow_dirty, allow_shallow=request.allow_shallow
    )
    if source.refusal:
        raise RefusedError(source.refusal)
    for line in source.lines():
        run.say(line)
    atomic_write(path, bake_json(matrix, source))
    return Report(
        (f"wrote {path}: {len(matrix.variants)} target(s) of {matrix.name}",),
        {"path": str(path), "targets": [v.id for v in matrix.variants]},
    )


class CiFormat(enum.Enum):
    BUILDKITE = "buildkite"
    GITHUB = "github"


@dataclass(frozen=True)
class CiRequest:
    format: CiFormat
    out: str | None = None
    setup: str | None = None
    runner: str | None = None
    registry: str | None = None
    json: bool = False


def ci(request: CiRequest, run: Run) -> Report:
    from release.adapters.files import atomic_write, output_path
    from release.core.pipelines import (
        DEFAULT_SETUP,
        FORMATS,
        pipeline_jobs,
        pipeline_text,
        runner_label,
    )
    from release.core.references import registry_prefix

    fmt = request.format.value
    runner = runner_label(request.runner, "--runner") if request.runner is not None else None
    ctx = _with_matrix(run)
    matrix = ctx.config.matrix
    assert matrix is not None
    # the default places are the repository's (made when missing, never through a symlink
    # out of it); a directory given is taken as given, from where the command runs
    where = Path(request.out) if request.out else ctx.root / DEFAULT_DIRS[fmt]
    path = output_path(where / FORMATS[fmt], "--out", tree=ctx.root, made=not request.out)
    registry = request.registry
    made = ["release", "ci", "--format", fmt]
    made += ["--setup", repr(request.setup)] if request.setup else []
    made += ["--runner", runner] if runner else []
    made += ["--registry", registry] if registry is not None else []
    if registry:
        registry = registry_prefix(registry, "--registry")
    text = pipeline_text(
        matrix,
        fmt,
        setup=request.setup or DEFAULT_SETUP,
        runner=runner,
        command=made,
        registry=registry,
    )
    atomic_write(path, text)
    jobs = pipeline_jobs(matrix)
    return Report(
        (f"wrote {path}: {len(jobs)} jobs ({', '.join(j.label for j in jobs)})",),
        {"path": str(path), "jobs": [j.label for j in jobs]},
    )


@dataclass(frozen=True)
class RehearseRequest:
    keep: bool = False
    workdir: str | None = None
    json: bool = False


def rehearse(request: RehearseRequest, run: Run) -> Report:
    from release.sample.rehearse import rehearse as story

    ok = story(keep=request.keep, workdir=request.workdir, say=run.say)
    return Report((), {"passed": ok}, 0 if ok else 1)

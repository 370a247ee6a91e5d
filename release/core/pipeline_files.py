"""The files ``release ci`` writes, by format (:mod:`release.core.pipelines`). Pure."""

from __future__ import annotations

from collections.abc import Sequence

from release.core.pipeline_buildkite import buildkite_text
from release.core.pipeline_github import github_texts
from release.core.pipelines import FORMATS, Plan
from release.errors import ConfigError

__all__ = ["pipeline_files", "pipeline_text"]


def pipeline_files(plan: Plan, fmt: str, *, command: Sequence[str] = ()) -> dict[str, str]:
    """The files ``release ci --format fmt`` writes, by name (``command``: how it was
    made): Buildkite's one pipeline, GitHub's rc workflow and, where the final is promoted
    in CI, its promote workflow."""
    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r}: use {' or '.join(FORMATS)}")
    made = " ".join(command) or f"release ci --format {fmt}"
    if fmt == "buildkite":
        return {FORMATS[fmt][0]: buildkite_text(plan, made)}
    return dict(zip(FORMATS[fmt], github_texts(plan, made), strict=False))


def pipeline_text(plan: Plan, fmt: str, *, command: Sequence[str] = ()) -> str:
    """The rc pipeline's file of ``fmt``."""
    return pipeline_files(plan, fmt, command=command)[FORMATS.get(fmt, ("",))[0]]

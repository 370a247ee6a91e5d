"""The files ``release ci`` writes, by format (:mod:`release.core.pipelines`): their bodies,
to which the writer adds the header that says what wrote them
(:mod:`release.core.generated`). Pure."""

from __future__ import annotations

from release.core.pipeline_buildkite import buildkite_text
from release.core.pipeline_github import github_texts
from release.core.pipelines import FORMATS, PipelinePlan
from release.errors import ConfigError

__all__ = ["pipeline_files", "pipeline_text"]


def pipeline_files(plan: PipelinePlan, fmt: str) -> dict[str, str]:
    """The files ``release ci --format fmt`` writes, by name: Buildkite's one pipeline,
    GitHub's rc workflow and, where the final is promoted in CI, its promote workflow."""
    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r}: use {' or '.join(FORMATS)}")
    if fmt == "buildkite":
        return {FORMATS[fmt][0]: buildkite_text(plan)}
    return dict(zip(FORMATS[fmt], github_texts(plan), strict=False))


def pipeline_text(plan: PipelinePlan, fmt: str) -> str:
    """The rc pipeline's file of ``fmt``."""
    return pipeline_files(plan, fmt)[FORMATS.get(fmt, ("",))[0]]

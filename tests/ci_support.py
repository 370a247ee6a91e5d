"""The pipeline generators called as ``release ci`` calls them: a :class:`Plan` made from a
matrix and the options, for tests that check the documents."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from release import __version__
from release.adapters.config_file import load_config
from release.core.ci_config import CiSettings
from release.core.ci_triggers import tag_kinds
from release.core.generated import Spelling, WrittenBy, stamped
from release.core.matrix import ImageMatrix
from release.core.pipeline_buildkite import buildkite_pipeline as _buildkite
from release.core.pipeline_files import pipeline_files
from release.core.pipeline_files import pipeline_text as _text
from release.core.pipeline_github import github_workflows
from release.core.pipelines import (
    PipelinePlan,
    transfer_registry,
)
from release.core.tool_pins import PinKind, ToolInstall
from release.core.versions import TagTemplate

ROOT = Path(__file__).resolve().parents[1]  # the repository: its [tool.release] is the matrix
TAG = TagTemplate("v{version}", "tag")
COMMIT = "0123456789abcdef0123456789abcdef01234567"
# how the jobs of these documents install the tool: by a commit of a repository that is none
PINNED = ToolInstall(
    PinKind.COMMIT,
    f"release @ git+https://git.example.com/org/release@{COMMIT}",
    nox="nox==2024.10.9",
    origin="a test",
)


def plan_for(
    matrix: ImageMatrix,
    *,
    install: ToolInstall = PINNED,
    settings: CiSettings | None = None,
    runner: str | None = None,
    registry: str | None = None,
    tag: TagTemplate = TAG,
    github_release: bool = False,
) -> PipelinePlan:
    return PipelinePlan(
        matrix,
        settings or CiSettings(),
        install,
        transfer_registry(matrix, registry),
        tag_kinds(tag),
        runner,
        github_release,
    )


def buildkite_pipeline(matrix: ImageMatrix, **given: Any) -> dict[str, Any]:
    return _buildkite(plan_for(matrix, **given))


def github_workflow(matrix: ImageMatrix, **given: Any) -> dict[str, Any]:
    """The rc workflow (``images.yml``)."""
    return github_workflows(plan_for(matrix, **given))[0]


def github_promote(matrix: ImageMatrix, **given: Any) -> dict[str, Any] | None:
    """The final's workflow (``promote.yml``), where there is one."""
    made = github_workflows(plan_for(matrix, **given))
    return made[1] if len(made) > 1 else None


def pipeline_text(matrix: ImageMatrix, fmt: str, **given: Any) -> str:
    """The body of the rc pipeline's file (what ``release ci`` writes under its header)."""
    return _text(plan_for(matrix, **given), fmt)


def pipeline_texts(matrix: ImageMatrix, fmt: str, **given: Any) -> dict[str, str]:
    """The bodies of the files of ``fmt``, by name."""
    return pipeline_files(plan_for(matrix, **given), fmt)


def as_written(body: str, command: Sequence[str]) -> str:
    """``body`` as ``release ci`` writes it, by ``command``: under its header."""
    return stamped(body, Spelling.HASH, WrittenBy(__version__, tuple(command)))


def root_matrix() -> ImageMatrix:
    matrix = load_config(ROOT).matrix
    assert matrix is not None
    return matrix


REGISTRY = "registry.example.com:5000/org/ci"

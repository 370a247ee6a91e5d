"""Plans: frozen values a workflow computes before it acts.

A plan prints (the exact steps ``--dry-run`` shows), serializes (``--json``) and is
tested without git. What a plan knows beyond its steps is a record of its workflow's own
(``Plan[CutInfo]``, ``Plan[PushInfo]``, ...), read by attribute, serialized by its
``to_dict()`` into the plan's document. Executing it is the workflow's job; afterwards the workflow
re-reads the repository and confirms.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Generic, Protocol, TypeVar

__all__ = ["NoData", "NoInfo", "Plan", "PlanInfo", "Step", "StepData", "StepKind", "short"]


class StepKind(StrEnum):
    """What a plan's step does; its value is the ``action`` of the ``--json`` plan."""

    CREATE_BRANCH = "create-branch"
    SWITCH = "switch"
    CHERRY_PICK = "cherry-pick"
    COMMIT_CHANGELOG = "commit-changelog"
    BUMP_VERSION = "bump-version"  # main's version files, committed after a cut
    CREATE_TAG = "create-tag"
    PUSH_REF = "push-ref"
    COPY_IMAGE = "copy-image"  # a final's tag given an rc's digest, inside the registry
    TAG_IMAGE = "tag-image"  # a final's tags given an rc's image, in the engine
    RECORD_MANIFEST = "record-manifest"  # a manifest recorded as its tag's note
    OPEN_PULL_REQUEST = "open-pull-request"  # on GitHub, unless the branch has one
    SKIP = "skip"  # reported only: nothing is done for it
    HOLD = "hold"  # reported only: left for a person to decide
    NOT_PICKABLE = "not-pickable"  # reported only: a listed PR that cannot be picked, and why

    @property
    def acts(self) -> bool:
        """Whether the step changes something (``skip``, ``hold`` and ``not-pickable`` only report)."""
        return self not in (StepKind.SKIP, StepKind.HOLD, StepKind.NOT_PICKABLE)


def short(sha: str) -> str:
    """A commit as plans and messages show it: its first ten hex digits."""
    return sha[:10]


class StepData(Protocol):
    """What a step carries (:mod:`release.core.plan_steps`): the fields its document adds
    after ``action`` and ``detail``."""

    def to_dict(self) -> Mapping[str, object]: ...


DataT = TypeVar("DataT", bound=StepData)


@dataclass(frozen=True)
class NoData:
    """A step that carries nothing (a skip said only by its detail)."""

    def to_dict(self) -> dict[str, object]:
        return {}


@dataclass(frozen=True)
class Step:
    action: StepKind
    detail: str
    data: StepData = field(default_factory=NoData)

    def __post_init__(self) -> None:
        object.__setattr__(self, "action", StepKind(self.action))  # an unknown kind: ValueError

    def data_of(self, kind: type[DataT]) -> DataT:
        """The record this step carries, as ``kind``: what its action carries (TypeError
        where it carries another, a plan made wrong)."""
        if not isinstance(self.data, kind):
            raise TypeError(f"a {self.action.value} step carries {type(self.data).__name__}")
        return self.data

    def to_dict(self) -> dict[str, object]:
        return {"action": self.action.value, "detail": self.detail, **self.data.to_dict()}


class PlanInfo(Protocol):
    """What a plan knows beyond its steps: the fields its document adds after them."""

    def to_dict(self) -> Mapping[str, object]: ...


InfoT = TypeVar("InfoT", bound=PlanInfo, covariant=True)


@dataclass(frozen=True)
class NoInfo:
    """A plan that knows nothing beyond its steps."""

    def to_dict(self) -> dict[str, object]:
        return {}


@dataclass(frozen=True)
class Plan(Generic[InfoT]):
    command: str
    summary: str
    steps: tuple[Step, ...]
    info: InfoT

    @property
    def actions(self) -> tuple[Step, ...]:
        """Steps that change something (``skip`` and ``hold`` steps only report)."""
        return tuple(s for s in self.steps if s.action.acts)

    def to_dict(self) -> dict[str, object]:
        return {
            "command": self.command,
            "summary": self.summary,
            "steps": [s.to_dict() for s in self.steps],
            **self.info.to_dict(),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=str)

    def lines(self) -> list[str]:
        out = [self.summary]
        out += [f"  {i}. {s.detail}" for i, s in enumerate(self.steps, 1)]
        if not self.steps:
            out.append("  (nothing to do)")
        return out

"""The outcomes of the commands that plan and then act on git (``cut``, ``pick``, ``tag``,
``promote``, ``push``): the plan itself, whether it was a dry run, and the lines of what was
done, rendered only at the edge. As JSON, the plan's document with ``dry_run`` and the
report; as text, what was noticed, the plan (on a dry run, or where nothing was done), and
what was done."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from release.commands.common import as_json, plan_lines
from release.commands.outcome import JSONValue, OutcomeDefaults
from release.core.plan import Plan, PlanInfo
from release.errors import ExitCode

__all__ = [
    "CutOutcome",
    "PickOutcome",
    "PlanOutcome",
    "PromoteOutcome",
    "PushOutcome",
    "TagOutcome",
]


def _plan_text(
    plan: Plan[PlanInfo], dry_run: bool, report: tuple[str, ...] | None, before: tuple[str, ...]
) -> tuple[str, ...]:
    lines = list(before)
    if dry_run or not report:
        lines += plan_lines(plan.lines(), dry_run=dry_run, steps=len(plan.steps))
    return (*lines, *(report or ()))


def _plan_document(
    plan: Plan[PlanInfo], dry_run: bool, report: tuple[str, ...] | None
) -> dict[str, JSONValue]:
    data: dict[str, JSONValue] = {
        k: as_json(v) for k, v in cast(Mapping[str, object], plan.to_dict()).items()
    }
    data["dry_run"] = dry_run
    if report is not None:
        data["report"] = list(report)
    return data


@dataclass(frozen=True)
class PlanOutcome(OutcomeDefaults):
    """A plan, run or (``dry_run``) only shown. ``report``: what was done (None on a dry
    run); ``before``: notices said ahead of the plan; ``after``: lines that end a dry run's
    text (the version files' diff, the tag's message)."""

    plan: Plan[PlanInfo]
    dry_run: bool
    report: tuple[str, ...] | None = None
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.OK

    def text(self) -> tuple[str, ...]:
        return (*_plan_text(self.plan, self.dry_run, self.report, self.before), *self.after)

    def document(self) -> dict[str, JSONValue]:
        return _plan_document(self.plan, self.dry_run, self.report)


@dataclass(frozen=True)
class CutOutcome(PlanOutcome):
    """``cut``: the branch made (and main's version files bumped, where configured)."""


@dataclass(frozen=True)
class TagOutcome(PlanOutcome):
    """``tag``: the rc (or post, patch) tag made, or why none was."""


@dataclass(frozen=True)
class PromoteOutcome(PlanOutcome):
    """``promote``: the final tag, its changelog and its images."""


@dataclass(frozen=True)
class PushOutcome(PlanOutcome):
    """``push``: the refs sent to the remote."""


@dataclass(frozen=True)
class PickOutcome(OutcomeDefaults):
    """``pick``: the plan of picks and what was picked; or, with no plan (``--continue``,
    ``--abort``, a ``--reverts`` that found nothing to pick), only what was done.
    ``reverts``: the shas ``--reverts`` added (None: not asked)."""

    plan: Plan[PlanInfo] | None
    dry_run: bool = False
    report: tuple[str, ...] | None = None
    before: tuple[str, ...] = ()
    reverts: tuple[str, ...] | None = None

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.OK

    def text(self) -> tuple[str, ...]:
        if self.plan is None:
            return self.report or ()
        return _plan_text(self.plan, self.dry_run, self.report, self.before)

    def document(self) -> dict[str, JSONValue]:
        data: dict[str, JSONValue]
        if self.plan is None:
            data = {"report": list(self.report or ())}
        else:
            data = _plan_document(self.plan, self.dry_run, self.report)
        if self.reverts is not None:
            data["reverts"] = list(self.reverts)
        return data

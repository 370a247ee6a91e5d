"""``status``: the release branch, its tags, the next rc, the picks, what to run next."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from release.commands.common import context
from release.commands.outcome import JSONValue, OutcomeDefaults, Run
from release.errors import ExitCode

if TYPE_CHECKING:
    from release.flows.status import Status

__all__ = ["StatusOutcome", "StatusRequest", "status"]


@dataclass(frozen=True)
class StatusRequest:
    offline: bool = False
    json: bool = False


@dataclass(frozen=True)
class StatusOutcome(OutcomeDefaults):
    """The state read: lines for a person (:func:`~release.flows.status_lines.render_status`),
    its document for a program."""

    state: Status

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.OK

    def text(self) -> tuple[str, ...]:
        from release.flows.status_lines import render_status

        return tuple(render_status(self.state))

    def document(self) -> dict[str, JSONValue]:
        return self.state.to_dict()


def status(request: StatusRequest, run: Run) -> StatusOutcome:
    from release.flows.status import read_status

    return StatusOutcome(read_status(context(run), offline=request.offline))

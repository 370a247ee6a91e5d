"""``status``: the release branch, its tags, the next rc, the picks, what to run next."""

from __future__ import annotations

from dataclasses import dataclass

from release.commands.common import context
from release.commands.outcome import Report, Run

__all__ = ["StatusRequest", "status"]


@dataclass(frozen=True)
class StatusRequest:
    offline: bool = False
    json: bool = False


def status(request: StatusRequest, run: Run) -> Report:
    from release.flows.status import read_status
    from release.flows.status_lines import render_status

    s = read_status(context(run), offline=request.offline)
    return Report(tuple(render_status(s)), s.to_dict())

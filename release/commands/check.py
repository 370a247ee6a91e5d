"""``release check``: the configuration, git, docker and BuildKit, the engine, the snapshot
runtime's privileges, an engine repository's ``noxfile.py`` and the registry logins, one
line each (``ok``, ``problem``, ``not checked``) with what to do; exit 1 on a problem."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from release.commands.outcome import JSONValue, Run
from release.core.doctor import Item, Status
from release.flows.doctor import check_items

__all__ = ["CheckOutcome", "CheckRequest", "check"]


@dataclass(frozen=True)
class CheckRequest:
    json: bool = False


@dataclass(frozen=True)
class CheckOutcome:
    items: tuple[Item, ...]

    @property
    def problems(self) -> list[Item]:
        return [i for i in self.items if i.status is Status.PROBLEM]

    @property
    def exit_code(self) -> int:
        return 1 if self.problems else 0

    def text(self) -> Iterable[str]:
        yield from (item.line() for item in self.items)
        unchecked = sum(i.status is Status.NOT_CHECKED for i in self.items)
        yield (
            f"{len(self.problems)} problem(s), {unchecked} not checked"
            if self.problems
            else f"no problems ({unchecked} not checked)"
        )

    def document(self) -> Mapping[str, JSONValue]:
        return {
            "ok": not self.problems,
            "items": [
                {"name": i.name, "status": i.status.value, "detail": i.detail} for i in self.items
            ],
        }


def check(request: CheckRequest, run: Run) -> CheckOutcome:
    return CheckOutcome(tuple(check_items(run.repo)))

"""Plans: frozen values a workflow computes before it acts.

A plan prints (the exact steps ``--dry-run`` shows), serializes (``--json``) and is
tested without git. Executing it is the workflow's job; afterwards the workflow
re-reads the repository and confirms.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Plan", "Step", "short"]


def short(sha: str) -> str:
    """A commit as plans and messages show it: its first ten hex digits."""
    return sha[:10]


@dataclass(frozen=True)
class Step:
    action: str
    detail: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "detail": self.detail, **dict(self.data)}


@dataclass(frozen=True)
class Plan:
    command: str
    summary: str
    steps: tuple[Step, ...] = ()
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def actions(self) -> tuple[Step, ...]:
        """Steps that change something (``skip`` and ``hold`` steps only report)."""
        return tuple(s for s in self.steps if s.action not in ("skip", "hold"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "summary": self.summary,
            "steps": [s.to_dict() for s in self.steps],
            **dict(self.info),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=str)

    def lines(self) -> list[str]:
        out = [self.summary]
        out += [f"  {i}. {s.detail}" for i, s in enumerate(self.steps, 1)]
        if not self.steps:
            out.append("  (nothing to do)")
        return out

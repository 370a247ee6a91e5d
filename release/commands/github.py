"""``release github-release [TAG]``: the GitHub release of a pushed rc or final, made or
brought up to date in place through ``gh`` (:mod:`release.flows.github_release`).

``--dry-run`` prints the release, each ``gh`` command line exactly as it would be sent (for
a release not there yet, and for one ``gh release view`` finds) and the notes, and sends
nothing: it does not even ask GitHub which route applies, so it runs without ``gh``, a
login or a network. The notes and the assets are written into a temporary directory,
removed afterwards; nothing in the repository changes.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from release.commands.common import context
from release.commands.outcome import JSONValue, OutcomeDefaults, Run
from release.errors import ExitCode

if TYPE_CHECKING:
    from release.core.github_release import GitHubReleasePlan
    from release.flows.github_release import Applied

__all__ = ["GitHubReleaseOutcome", "GitHubReleaseRequest", "github_release"]


@dataclass(frozen=True)
class GitHubReleaseRequest:
    tag: str | None = None
    dry_run: bool = False
    json: bool = False


@dataclass(frozen=True)
class GitHubReleaseOutcome(OutcomeDefaults):
    """``github-release``: the release planned, and what ``gh`` did (None: a dry run,
    which sent nothing)."""

    plan: GitHubReleasePlan
    applied: Applied | None

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.OK

    def text(self) -> tuple[str, ...]:
        from release.core.terminal_text import escaped

        plan, applied = self.plan, self.applied
        if applied is None:
            return ("dry run, nothing sent:", *plan.plan_lines())
        where = f"{plan.kind} {plan.tag} on {plan.repo.spec}"
        said = f" ({', '.join(applied.differences)} set again)" if applied.differences else ""
        done = (
            f"made {where}" if not applied.found
            else f"updated {where}{said}" if applied.actions
            else f"{where} is up to date"
        )  # fmt: skip
        lines = [*plan.head(), f"{done}: {escaped(applied.url)}"]
        if plan.assets:
            lines.append(f"assets sent: {', '.join(a.name for a in plan.assets)}")
        return tuple(lines)

    def document(self) -> dict[str, JSONValue]:
        plan, applied = self.plan, self.applied
        data: dict[str, JSONValue] = {**plan.to_dict(), "dry_run": applied is None}
        if applied is None:
            commands = plan.commands()
            data["commands"] = {k: [list(a) for a in v] for k, v in commands.items()}
            return data
        return data | {
            "actions": [a.value for a in applied.actions],
            "found": applied.found,
            "differences": list(applied.differences),
            "url": applied.url,
        }


def github_release(request: GitHubReleaseRequest, run: Run) -> GitHubReleaseOutcome:
    from release.adapters.github import Gh
    from release.flows.github_release import (
        apply,
        github_repo,
        plan_release,
        release_tag,
        require_pushed,
    )

    ctx = context(run)
    repo = github_repo(ctx)
    tag = release_tag(ctx, request.tag or None)  # (invoke gives "" for one left out)
    require_pushed(ctx, tag)
    with tempfile.TemporaryDirectory(prefix="release-github-") as scratch:
        plan = plan_release(ctx, tag, Path(scratch), repo)
        if request.dry_run:
            return GitHubReleaseOutcome(plan, None)
        applied = apply(plan, Gh(repo), Path(scratch), run.say)
    return GitHubReleaseOutcome(plan, applied)

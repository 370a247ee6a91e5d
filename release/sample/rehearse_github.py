"""The rehearsal's GitHub step: the GitHub release of a tag, shown as the plan
``release github-release TAG --dry-run`` prints (each ``gh`` command line as it would be
sent, and the notes), never as a release made. The sandbox reaches no GitHub: its remote is
a bare repository, and the sample's ``repo-url`` names ``github.com/example/tinyengine``,
which is nobody's. Its check is that the plan was printed, said that nothing was sent,
and is of the right kind (a pre-release for an rc, latest for the final)."""

from __future__ import annotations

from pathlib import Path

from release.sample.rehearse_terminal import Terminal

__all__ = ["PLANNED", "github_plan"]

PLANNED = "a plan only (--dry-run): nothing sent to GitHub"


def github_plan(t: Terminal, where: Path, tag: str, *, prerelease: bool) -> bool:
    """The plan of ``tag``'s GitHub release, and its check; True when it holds."""
    outcome = t.release(where, "github-release", tag, "--dry-run", expect=None)
    lines = outcome.stdout.splitlines()
    create = [line for line in lines if line.strip().startswith(f"gh release create {tag} ")]
    kind = "a pre-release" if prerelease else "a release marked latest"
    ok = (
        outcome.code == 0
        and lines[:1] == ["dry run, nothing sent:"]
        and len(create) == 1
        and f"--prerelease={'true' if prerelease else 'false'}" in create[0].split()
    )
    t.check(f"the GitHub release of {tag} is shown as a plan of {kind}, nothing sent", ok)
    t.note(f"the GitHub release of {tag}: {PLANNED} (CI's tag job makes it: release ci)")
    return ok

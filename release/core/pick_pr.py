"""The PR route's names and words: the branch picks go onto where the release branch is
protected, and the pull request that brings them in. Pure.

- A pick branch is named from its release branch and its first pick:
  ``release-picks/<release>/<short sha>`` (``releases/v0.3.0`` gives ``<release>`` =
  ``v0.3.0``); a name that already holds other picks is never reused: the next free one
  is ``...-2``, ``...-3``, in that order (:func:`pick_branch_names`).
- The PR's title is the one pick's subject, or ``Picks for <rc>: N commits``; its body
  names each picked commit with its original sha, its PR link and the reason, and the
  milestone the picks came from. Subjects and reasons are untrusted: control characters
  are escaped, and the body goes to GitHub as a file, never on a command line.
- A push the server refuses because the branch is protected (GitHub's ``GH006``) is told
  from any other refusal by :func:`protected_refusal`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from release.core.commits import pr_number
from release.core.terminal_text import escaped

__all__ = [
    "PICK_BRANCH_ROOT",
    "PickedCommit",
    "pick_branch_names",
    "pick_branch_scope",
    "pick_pr_body",
    "pick_pr_title",
    "protected_refusal",
]

PICK_BRANCH_ROOT = "release-picks"
_NAME_TRIES = 100  # names tried before giving up: a hundred pick branches from one commit
_PROTECTED = ("GH006", "Protected branch update failed")


@dataclass(frozen=True)
class PickedCommit:
    """A main commit the pick branch carries (or will)."""

    sha: str
    subject: str
    reason: str | None = None


def pick_branch_scope(release_branch: str) -> str:
    """The prefix of every pick branch of ``release_branch``: ``release-picks/v0.3.0/``."""
    leaf = release_branch.rstrip("/").rsplit("/", 1)[-1]
    return f"{PICK_BRANCH_ROOT}/{leaf}/"


def pick_branch_names(release_branch: str, first_sha: str) -> Iterator[str]:
    """The names a pick branch starting with ``first_sha`` may take, in the order they are
    tried: the plain one, then ``-2``, ``-3``..."""
    plain = f"{pick_branch_scope(release_branch)}{first_sha[:10]}"
    yield plain
    for n in range(2, _NAME_TRIES + 1):
        yield f"{plain}-{n}"


def pick_pr_title(picks: Sequence[PickedCommit], rc: str) -> str:
    """One pick: its subject; more: ``Picks for v0.3.0rc2: 3 commits``."""
    if len(picks) == 1:
        return escaped(picks[0].subject)
    return f"Picks for {escaped(rc)}: {len(picks)} commits"


def _link(subject: str, repo_url: str) -> str | None:
    found = pr_number(subject)
    if found is None:
        return None
    return f"{repo_url}/pull/{found[0]}" if repo_url else f"#{found[0]}"


def pick_pr_body(
    picks: Sequence[PickedCommit],
    *,
    release_branch: str,
    repo_url: str,
    milestone: str | None = None,
) -> str:
    """Markdown: what the PR brings onto ``release_branch``, a line per picked commit."""
    lines = [f"Cherry-picks onto `{release_branch}`, each with `git cherry-pick -x`:", ""]
    for pick in picks:
        line = f"- {escaped(pick.subject)} (from `{pick.sha}`"
        link = _link(pick.subject, repo_url)
        line += f", {link})" if link else ")"
        if pick.reason:
            line += f"; reason: {escaped(pick.reason)}"
        lines.append(line)
    if milestone:
        lines += ["", f"Milestone: {escaped(milestone)}"]
    return "\n".join(lines) + "\n"


def protected_refusal(text: str) -> str | None:
    """What the server said when it refused a push because the branch is protected
    (GitHub's ``GH006``), as one line; None for any other refusal."""
    for raw in text.splitlines():
        line = raw.strip().removeprefix("remote:").strip().removeprefix("error:").strip()
        if any(mark in line for mark in _PROTECTED):
            return escaped(line)
    return None

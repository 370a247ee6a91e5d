"""Which main commits landed which PRs of this repository, by subject and, where it
decides, body (:func:`~release.core.pull_requests.commit_pr`): the one reading that
``pick`` resolves ``#N`` by and that both ``pick`` and ``status`` count a pick without
``-x`` by. Pure over what git said."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from release.core.commits import pr_number
from release.core.pull_requests import RepoIdentity, commit_pr

__all__ = ["commits_by_pr"]


def commits_by_pr(
    subjects: Iterable[tuple[str, str]],
    wanted: set[int],
    bodies: Callable[[list[str]], Mapping[str, str]] | None = None,
    repo: RepoIdentity | None = None,
) -> dict[int, list[str]]:
    """Main commits whose subject ends with ``(#N)``, for each wanted N (a revert's own
    number ends its subject too: ``Revert "..." (#N)``), in the order given. With
    ``bodies`` (the messages' bodies of shas), each is the PR its body leaves it in the
    repository ``repo`` (:func:`~release.core.pull_requests.commit_pr`): a subject with no
    number may name its PR landed (ghstack's ``Pull Request resolved: .../pull/N``), and a
    body may say the subject's number is another repository's."""
    asked: dict[str, int | None] = {}
    for sha, subject in subjects:
        found = pr_number(subject)
        if found is None or found[0] in wanted:
            asked[sha] = found[0] if found else None
    told = bodies(list(asked)) if bodies is not None and asked else {}
    by_pr: dict[int, list[str]] = {}
    for sha, number in asked.items():
        if sha in told:
            number = commit_pr(number, told[sha], repo)
        if number is not None and number in wanted:
            by_pr.setdefault(number, []).append(sha)
    return by_pr

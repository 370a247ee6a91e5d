"""What a pick request (a sha or ``#PR``) resolves to: main's commits, each with what the
release branch already has of it (:class:`release.flows.branch.ReleaseBranch`), its
category, and its place in main's order. Nothing here changes the repository.
"""

from __future__ import annotations

from collections.abc import Iterable

from release.adapters.git_log import Subject, parse_subjects
from release.core.commits import pr_number, subject_parser
from release.core.plan import short
from release.core.pull_requests import passed_over
from release.errors import RefusedError, UsageError
from release.flows.branch import ReleaseBranch
from release.flows.context import ReleaseContext
from release.flows.landed import commits_by_pr
from release.flows.pick_plan import PR_REF, SHA_REF, Candidate, RequestedPick

__all__ = ["commits_by_pr", "resolve_candidates"]


def _not_found(
    ctx: ReleaseContext, info: ReleaseBranch, subjects: list[Subject], number: int
) -> str:
    """Why no main commit is #number: a commit that names it without being this
    repository's #number (its body says otherwise), else the question whether it merged."""
    numbers = {sha: found[0] if (found := pr_number(s)) else None for sha, s in subjects}
    about = info.about([sha for sha, n in numbers.items() if n in (None, number)])
    for sha, subject in subjects:
        if sha not in about:
            continue
        why = passed_over(numbers[sha], about[sha].body, number, ctx.repo_identity)
        if why is not None:
            return (
                f"no commit on {ctx.config.main_branch} is this repository's #{number}: "
                f"{short(sha)} '{subject}' names it, but {why}; pick it by sha if it is the one meant"
            )
    return (
        f"no commit on {ctx.config.main_branch} ends with '(#{number})' or names it landed "
        f"(Pull Request resolved: .../pull/{number}); is #{number} merged?"
    )


def _refuse_ambiguous(ctx: ReleaseContext, prefix: str, what: str) -> None:
    candidates = ctx.repo.ambiguous(prefix) if SHA_REF.match(prefix) else []
    if candidates:
        shown = ", ".join(short(c) for c in candidates[:4])
        raise UsageError(
            f"{what}{prefix!r} is ambiguous: it could be {shown}; give more of the sha"
        )


def resolve_candidates(
    ctx: ReleaseContext, requests: Iterable[RequestedPick], info: ReleaseBranch
) -> list[Candidate]:
    requests = list(requests)
    if not requests:
        return []
    full = [r.ref.lower() for r in requests if len(r.ref) == 40 and SHA_REF.match(r.ref)]
    info.prefetch(full)
    info.prefetch_files(full)
    wanted = {int(number[1]) for r in requests if (number := PR_REF.match(r.ref))}
    pr_log = ctx.repo.history.start_subjects(info.main, wanted) if wanted else None
    order = info.main_order
    subjects = parse_subjects(pr_log.out()) if pr_log else []
    by_pr = commits_by_pr(
        subjects,
        wanted,
        lambda shas: {sha: found.body for sha, found in info.about(shas).items()},
        ctx.repo_identity,
    )
    # Full shas of main's commits are looked up here; anything else is asked of git, at once.
    asked = list(
        dict.fromkeys(
            r.ref
            for r in requests
            if SHA_REF.match(r.ref) and not (len(r.ref) == 40 and r.ref.lower() in order)
        )
    )
    answers = dict(zip(asked, ctx.repo.revs(asked), strict=True))
    resolved: list[tuple[RequestedPick, str]] = []
    for request in requests:
        pr_match = PR_REF.match(request.ref)
        if pr_match:
            shas = by_pr.get(int(pr_match[1]), [])
            if not shas:
                raise RefusedError(_not_found(ctx, info, subjects, int(pr_match[1])))
            if len(shas) > 1:
                raise RefusedError(
                    f"#{pr_match[1]} matches {len(shas)} commits on {ctx.config.main_branch} "
                    f"({', '.join(short(s) for s in shas)}); pick by sha"
                )
            resolved.append((request, shas[0]))
        else:
            sha = None
            if SHA_REF.match(request.ref):
                ref = request.ref.lower()
                sha = ref if len(ref) == 40 and ref in order else answers[request.ref]
            if sha is None:
                _refuse_ambiguous(ctx, request.ref, "")
                raise UsageError(f"{request.ref!r} is not a commit in this repository")
            resolved.append((request, sha))
    about = info.about(list(dict.fromkeys(sha for _, sha in resolved)))
    on_main = [sha for _, sha in resolved if sha in order]
    presence = info.assess(
        on_main,
        {sha: (about[sha].subject, about[sha].body) for sha in on_main},
        merges={sha for sha in on_main if len(about[sha].parents) > 1},
    )
    category_of = subject_parser(ctx.config.alias_map())
    before_cut: dict[str, bool] = {}
    out: list[Candidate] = []
    for request, sha in resolved:
        parents, subject = len(about[sha].parents), about[sha].subject
        category = category_of(subject)[0]
        position = order.get(sha)
        skip = likely = again = None
        if position is None:
            if sha not in before_cut:
                before_cut[sha] = ctx.repo.is_ancestor(sha, info.base)
            if before_cut[sha]:
                position, skip = -1, "already on the branch (before the cut)"
            else:
                raise RefusedError(
                    f"{short(sha)} '{subject}' is not on {ctx.config.main_branch}; only merged commits are picked"
                )
        else:
            found = presence[sha]
            skip, again = found.there, found.again
            likely = found.likely.describe() if found.likely else None
        out.append(
            Candidate(request, sha, subject, category, position, parents, skip, likely, again)
        )
    return out

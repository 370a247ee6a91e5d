"""The release branch as ``pick`` and ``status`` read it: what of main is already on it,
and what a request (sha or ``#PR``) resolves to.

A main commit is on the branch when a ``-x`` line there names it, or when ``git cherry``
finds a branch commit with the same patch. Reads are started together and run side by
side; nothing here changes the repository.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Sequence

from release.adapters.git import GitRead
from release.core.commits import pr_number, subject_parser
from release.core.plan import short
from release.errors import RefusedError, UsageError
from release.flows.context import ReleaseContext
from release.flows.pick_plan import PR_REF, SHA_REF, Candidate, PickRequest

__all__ = ["ReleaseBranch", "commits_by_pr", "files_changed", "resolve_candidates"]

_PICKED_FROM = re.compile(r"\(cherry picked from commit ([0-9a-f]{40})\)")


class ReleaseBranch:
    """What is already on the release branch, computed once.

    A main commit is there when a ``-x`` line on the branch names it, or when ``git cherry``
    finds a branch commit with the same patch. ``git cherry`` diffs every commit on both
    sides, so it is asked only when it could say yes: git matches patches only between
    commits that change the same files, so the files each commit changes (a tree diff,
    no file contents) are compared first. ``tip``, the branch's commit when the caller
    knows it, says at once that nothing is on a branch still at the merge-base.

    The reads are started together (:meth:`prefetch`) and run side by side.
    """

    def __init__(self, ctx: ReleaseContext, branch: str, main: str, tip: str | None = None) -> None:
        self.ctx = ctx
        self.branch = branch
        self.ref = f"refs/heads/{branch}"  # by full name: a tag called like it changes nothing
        self.main = main
        base = ctx.repo.merge_base(self.ref, main)
        if base is None:
            raise RefusedError(f"{branch} shares no history with {ctx.config.main_branch}")
        self.base = base
        self._order: dict[str, int] | None = None
        self._cherry: set[str] | None = set() if tip == base else None
        self._branch_files: set[frozenset[str]] | None = None
        self._picked: set[str] | None = None
        self._pending: dict[str, GitRead] = {}
        self._asked: dict[str, frozenset[str]] = {}  # what the pending per-commit reads cover

    def moved(self) -> None:
        """The branch has new commits: forget what was read of it (main and the merge-base
        stay: the branch only gained commits)."""
        self._cherry = self._branch_files = self._picked = None
        for what in ("picked", "files", "diff"):
            self._pending.pop(what, None)

    def _start(self, what: str) -> GitRead:
        repo = self.ctx.repo
        if what == "order":  # main's commits since the branch point, in main's order
            return repo.start_order(self.main, self.base)
        if what == "picked":
            return repo.start_messages(f"{self.base}..{self.ref}")
        # the files changed by git cherry's other side: the branch's own non-merge commits
        return repo.start_files_log(self.ref, self.main)

    def prefetch(self, shas: Iterable[str] = ()) -> None:
        """Start the reads that deciding what is on the branch takes, and (for ``shas``,
        full shas asked for) what the commits are."""
        known = {
            "order": self._order is not None,
            "picked": self._picked is not None,
            "files": self._branch_files is not None or self._cherry is not None,
        }
        for what, done in known.items():
            if not done and what not in self._pending:
                self._pending[what] = self._start(what)
        shas = list(dict.fromkeys(shas))
        if shas and "about" not in self._pending:
            self._pending["about"] = self._about(shas)

    def _read(self, what: str) -> str:
        pending = self._pending.pop(what, None)
        return (pending or self._start(what)).out()

    def _per_commit(self, what: str, shas: Sequence[str], start: Callable[[], GitRead]) -> str:
        """A per-commit read: the one started early if it covers ``shas`` (and worked),
        else one started now."""
        pending = self._pending.pop(what, None)
        if pending is not None and self._asked[what].issuperset(shas):
            result = pending.result()
            if result.ok:
                return result.stdout
        return start().out()

    def _about(self, shas: Sequence[str]) -> GitRead:
        self._asked["about"] = frozenset(shas)
        return self.ctx.repo.start_about(shas)

    def about(self, shas: Sequence[str]) -> dict[str, tuple[int, str]]:
        """Commit -> (number of parents, subject), for commits that exist."""
        if not shas:
            return {}
        text = self._per_commit("about", shas, lambda: self._about(shas))
        about: dict[str, tuple[int, str]] = {}
        for line in text.split("\n") if text else ():
            sha, parent_list, subject = line.split("\x1f", 2)
            about[sha] = (len(parent_list.split()), subject)
        return about

    @property
    def main_order(self) -> dict[str, int]:
        """Main's commits since the branch point -> their position in main's order."""
        if self._order is None:
            self._order = {sha: i for i, sha in enumerate(self._read("order").split())}
        return self._order

    @property
    def picked_from(self) -> set[str]:
        """Main commits named by ``-x`` trailers on the branch."""
        if self._picked is None:
            self._picked = set(_PICKED_FROM.findall(self._read("picked")))
        return self._picked

    @property
    def patch_equivalent(self) -> set[str]:
        """Main commits whose patch is already on the branch (``git cherry``)."""
        if self._cherry is None:
            self._cherry = self.ctx.repo.cherry(self.ref, self.main, self.base)
        return self._cherry

    def _same_patch(self, shas: Sequence[str]) -> set[str]:
        """Those of ``shas`` (main commits) whose patch ``git cherry`` finds on the branch."""
        if not shas:
            return set()
        if self._cherry is None:
            if self._branch_files is None:
                text = self._read("files")
                self._branch_files = set(files_changed(text, by_sha=False).values())
            if not self._branch_files:
                return set()
            text = self._per_commit("diff", shas, lambda: self._diff_tree(shas))
            files = files_changed(text, by_sha=True)  # no line: nothing changed
            if all(files.get(sha, frozenset()) not in self._branch_files for sha in shas):
                return set()
        return self.patch_equivalent.intersection(shas)

    def _diff_tree(self, shas: Sequence[str]) -> GitRead:
        self._asked["diff"] = frozenset(shas)
        return self.ctx.repo.start_files_of(shas)

    def prefetch_files(self, shas: Iterable[str]) -> None:
        """Start reading the files that these commits change, for those no ``-x`` line names
        (once the ``-x`` lines are read: that read is quick)."""
        if self._cherry is not None or "diff" in self._pending:
            return
        asked = [sha for sha in dict.fromkeys(shas) if sha not in self.picked_from]
        if asked:
            self._pending["diff"] = self._diff_tree(asked)

    def already_there(
        self, shas: Iterable[str], merges: Container[str] = ()
    ) -> dict[str, str | None]:
        """For each main commit, why it is already on the branch (``None``: it is not).

        ``merges``: those known to be merges, which git cherry never matches."""
        shas = list(dict.fromkeys(shas))
        same = self._same_patch(
            [sha for sha in shas if sha not in self.picked_from and sha not in merges]
        )
        why: dict[str, str | None] = {}
        for sha in shas:
            if sha in self.picked_from:
                why[sha] = "already on the branch (cherry-picked)"
            elif sha in same:
                why[sha] = "already on the branch (same patch)"
            else:
                why[sha] = None
        return why


_GITLINK = "160000"


def files_changed(text: str, *, by_sha: bool) -> dict[str, frozenset[str]]:
    """Commit -> the files it changes, from ``-z --raw`` output; commits start with their
    sha (:meth:`GitRepo.start_files_of`) or with a record separator
    (:meth:`GitRepo.start_files_log`, keyed by count).

    The sets are what git's patch ids hash first, made coarser so that two commits git
    could match always have the same set: whitespace is dropped from file names (as git
    does), each file counts once, submodules not at all.
    """
    out: dict[str, set[str]] = {}
    current: set[str] = set()
    tokens = text.split("\0")
    index = 0
    while index < len(tokens):
        token = tokens[index].lstrip("\n")
        index += 1
        if token.startswith(":"):  # ":<mode> <mode> <sha> <sha> <status>", then its paths
            fields = token[1:].split(" ")
            paths = tokens[index : index + (2 if fields[-1][:1] in ("R", "C") else 1)]
            index += len(paths)
            if _GITLINK not in fields[:2]:
                current.update("".join(p.split()) for p in paths)
        elif by_sha and token:
            current = out.setdefault(token, set())
        elif token == "\x1e":
            current = out.setdefault(str(len(out)), set())
    return {key: frozenset(paths) for key, paths in out.items()}


def commits_by_pr(text: str, wanted: set[int]) -> dict[int, list[str]]:
    """Main commits whose subject ends with ``(#N)``, for each wanted N, from
    ``git log --format=%H%x1f%s`` (a revert's own number ends its subject too:
    ``Revert "..." (#N)``)."""
    by_pr: dict[int, list[str]] = {}
    for line in text.splitlines():
        sha, _, subject = line.partition("\x1f")
        found = pr_number(subject)
        if found is not None and found[0] in wanted:
            by_pr.setdefault(found[0], []).append(sha)
    return by_pr


def _refuse_ambiguous(ctx: ReleaseContext, prefix: str, what: str) -> None:
    candidates = ctx.repo.ambiguous(prefix) if SHA_REF.match(prefix) else []
    if candidates:
        shown = ", ".join(short(c) for c in candidates[:4])
        raise UsageError(
            f"{what}{prefix!r} is ambiguous: it could be {shown}; give more of the sha"
        )


def resolve_candidates(
    ctx: ReleaseContext, requests: Iterable[PickRequest], info: ReleaseBranch
) -> list[Candidate]:
    requests = list(requests)
    if not requests:
        return []
    full = [r.ref.lower() for r in requests if len(r.ref) == 40 and SHA_REF.match(r.ref)]
    info.prefetch(full)
    info.prefetch_files(full)
    wanted = {int(number[1]) for r in requests if (number := PR_REF.match(r.ref))}
    pr_log = ctx.repo.start_subjects(info.main) if wanted else None
    order = info.main_order
    by_pr = commits_by_pr(pr_log.out(), wanted) if pr_log else {}
    # Full shas of main's commits are looked up here; anything else is asked of git, at once.
    asked = list(
        dict.fromkeys(
            r.ref
            for r in requests
            if SHA_REF.match(r.ref) and not (len(r.ref) == 40 and r.ref.lower() in order)
        )
    )
    answers = dict(zip(asked, ctx.repo.revs(asked), strict=True))
    resolved: list[tuple[PickRequest, str]] = []
    for request in requests:
        pr_match = PR_REF.match(request.ref)
        if pr_match:
            shas = by_pr.get(int(pr_match[1]), [])
            if not shas:
                raise RefusedError(
                    f"no commit on {ctx.config.main_branch} ends with '(#{pr_match[1]})'; is #{pr_match[1]} merged?"
                )
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
    there = info.already_there(on_main, merges={sha for sha in on_main if about[sha][0] > 1})
    category_of = subject_parser(ctx.config.alias_map())
    before_cut: dict[str, bool] = {}
    out: list[Candidate] = []
    for request, sha in resolved:
        parents, subject = about[sha]
        category = category_of(subject)[0]
        position = order.get(sha)
        skip = None
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
            skip = there[sha]
        out.append(Candidate(request, sha, subject, category, position, parents, skip))
    return out

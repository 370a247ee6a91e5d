"""The release branch as ``pick`` and ``status`` read it: what of main is already on it,
and what a request (sha or ``#PR``) resolves to.

A main commit is on the branch when a ``-x`` line there names it, or when ``git cherry``
finds a branch commit with the same patch, unless the branch reverted that copy since.
Otherwise it may be *likely* there: a backport without ``-x``, adapted to the branch,
found by PR numbers, title or changed lines (:mod:`release.core.backports`). Reads are
started together and run side by side; nothing here changes the repository.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass

from release.adapters.git import GitRead
from release.core import backports
from release.core.backports import Evidence, Message
from release.core.commits import LOG_FORMAT, Commit, parse_log, pr_number, subject_parser
from release.core.plan import short
from release.errors import RefusedError, UsageError
from release.flows.context import ReleaseContext
from release.flows.pick_plan import PR_REF, SHA_REF, Candidate, PickRequest

__all__ = ["Presence", "ReleaseBranch", "commits_by_pr", "files_changed", "resolve_candidates"]


@dataclass(frozen=True)
class Presence:
    """Whether a main commit is on the release branch."""

    there: str | None = None  # why it is (a pick skips it); None: it is not
    likely: Evidence | None = None  # not by -x or patch, but likely: an adapted backport
    again: str | None = None  # an earlier copy the branch has reverted since


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
        self._commits: list[Commit] | None = None
        self._undone: dict[str, str] | None = None
        self._again: dict[str, str] = {}  # main commit -> its copy the branch reverted
        self._files: dict[str, frozenset[str]] = {}  # commit -> the files it changes
        self._pending: dict[str, GitRead] = {}
        self._asked: dict[str, frozenset[str]] = {}  # what the pending per-commit reads cover

    def moved(self) -> None:
        """The branch has new commits: forget what was read of it (main and the merge-base
        stay: the branch only gained commits)."""
        self._cherry = self._branch_files = self._picked = None
        self._commits = self._undone = None
        self._again = {}
        for what in ("picked", "files", "diff"):
            self._pending.pop(what, None)

    def _start(self, what: str) -> GitRead:
        repo = self.ctx.repo
        if what == "order":  # main's commits since the branch point, in main's order
            return repo.start_order(self.main, self.base)
        if what == "picked":  # the branch's own commits: -x lines, reverts, backports
            return repo.start_log(f"{self.base}..{self.ref}", LOG_FORMAT)
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

    def about(self, shas: Sequence[str]) -> dict[str, tuple[int, str, str]]:
        """Commit -> (number of parents, subject, body), for commits that exist."""
        if not shas:
            return {}
        text = self._per_commit("about", shas, lambda: self._about(shas))
        about: dict[str, tuple[int, str, str]] = {}
        for record in text.split("\x1e"):
            parts = record.lstrip("\n").split("\x1f", 3)
            if len(parts) == 4:
                sha, parent_list, subject, body = parts
                about[sha] = (len(parent_list.split()), subject, body.strip("\n"))
        return about

    @property
    def main_order(self) -> dict[str, int]:
        """Main's commits since the branch point -> their position in main's order."""
        if self._order is None:
            self._order = {sha: i for i, sha in enumerate(self._read("order").split())}
        return self._order

    @property
    def commits(self) -> list[Commit]:
        """The branch's commits since the branch point, newest first."""
        if self._commits is None:
            self._commits = list(parse_log(self._read("picked"), self.ctx.config.alias_map()))
        return self._commits

    @property
    def undone(self) -> dict[str, str]:
        """Branch commit -> the revert on the branch that undid it (and still stands)."""
        if self._undone is None:
            self._undone = backports.undone(self.commits)
        return self._undone

    @property
    def picked_from(self) -> set[str]:
        """Main commits named by ``-x`` trailers on the branch (on picks it has not reverted)."""
        if self._picked is None:
            self._picked = set()
            for c in self.commits:
                names = [sha for sha in c.picked_from if len(sha) == 40]
                if c.sha not in self.undone:
                    self._picked.update(names)
                else:
                    for sha in names:
                        self._again.setdefault(sha, self._reverted(c.sha))
        return self._picked

    def _reverted(self, copy: str) -> str:
        return f"was on the branch as {short(copy)}, reverted by {short(self.undone[copy])}"

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
            files = self.files_of(shas)
            if all(files[sha] not in self._branch_files for sha in shas):
                return set()
        return self.patch_equivalent.intersection(shas)

    def files_of(self, shas: Sequence[str]) -> dict[str, frozenset[str]]:
        """Commit -> the files it changes (:func:`files_changed`), read once per commit:
        from the read started early when it covers ``shas``."""
        missing = [sha for sha in shas if sha not in self._files]
        if missing:
            text = self._per_commit("diff", missing, lambda: self._diff_tree(missing))
            self._files.update(dict.fromkeys(missing, frozenset()))  # no line: nothing changed
            self._files.update(files_changed(text, by_sha=True))
        return {sha: self._files[sha] for sha in shas}

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
        if same and self.undone:
            same -= self._only_reverted(same)
        why: dict[str, str | None] = {}
        for sha in shas:
            if sha in self.picked_from:
                why[sha] = "already on the branch (cherry-picked)"
            elif sha in same:
                why[sha] = "already on the branch (same patch)"
            else:
                why[sha] = None
        return why

    def _only_reverted(self, same: set[str]) -> set[str]:
        """Of ``same`` (main commits git cherry matched), those whose patch only branch
        commits the branch has reverted since carry; noted in :attr:`_again`."""
        ids = self.ctx.repo.patch_ids([*same, *(c.sha for c in self.commits)])
        standing = {ids[c.sha] for c in self.commits if c.sha not in self.undone and c.sha in ids}
        copies = {ids[sha]: sha for sha in self.undone if sha in ids}
        gone = {sha for sha in same if ids.get(sha) not in standing and ids.get(sha) in copies}
        for sha in gone:
            self._again.setdefault(sha, self._reverted(copies[ids[sha]]))
        return gone

    def assess(
        self,
        shas: Iterable[str],
        messages: Mapping[str, tuple[str, str]],
        merges: Container[str] = (),
    ) -> dict[str, Presence]:
        """For each main commit: on the branch, likely on it (with the evidence), or not;
        and whether an earlier copy was reverted there. ``messages``: subject and body."""
        shas = list(dict.fromkeys(shas))
        there = self.already_there(shas, merges)
        open_ = [sha for sha in shas if there[sha] is None and sha not in merges]
        likely = self._likely(open_, messages) if open_ else {}
        return {sha: Presence(there[sha], likely.get(sha), self._again.get(sha)) for sha in shas}

    def _likely(
        self, shas: Sequence[str], messages: Mapping[str, tuple[str, str]]
    ) -> dict[str, Evidence]:
        """Backports no -x line names and git cherry does not see: by PR numbers and title
        (:func:`backports.by_message`), then by changed lines, compared only with branch
        commits that change a file of the same name (a moved file keeps its name)."""
        # what stands on the branch (a revert there may be the backport of main's revert);
        # a -x pick carries the one commit it names, which is "already there"
        live = [c for c in self.commits if c.sha not in self.undone and not c.picked_from]
        if not live:
            return {}
        # all the main commits asked about: which one a port's quoted numbers belong to
        main = [Message(sha, *text) for sha, text in messages.items()]
        wanted = set(shas)
        found = {
            sha: evidence
            for sha, evidence in backports.by_message(main, (Message.of(c) for c in live)).items()
            if sha in wanted
        }
        rest = [sha for sha in shas if sha not in found]
        if not rest:
            return found
        unnamed = [c.sha for c in live]
        names = {
            sha: frozenset(posixpath.basename(path) for path in paths)
            for sha, paths in self.files_of([*rest, *unnamed]).items()
        }
        touching: dict[str, list[str]] = {}  # file name -> the branch commits changing it
        for b in unnamed:
            for name in names.get(b, ()):
                touching.setdefault(name, []).append(b)
        pairs = {
            sha: list(
                dict.fromkeys(b for name in names.get(sha, ()) for b in touching.get(name, ()))
            )
            for sha in rest
        }
        pairs = {sha: others for sha, others in pairs.items() if others}
        if pairs:
            both = list(dict.fromkeys([*pairs, *(b for bs in pairs.values() for b in bs)]))
            lines = {}
            for text in self.ctx.repo.patches_in_parts(both):
                lines.update(backports.patches(text))
            main_lines = {sha: lines.get(sha, Counter()) for sha in pairs}
            found.update(backports.by_lines(main_lines, lines, pairs))
        return found


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
    presence = info.assess(
        on_main,
        {sha: (about[sha][1], about[sha][2]) for sha in on_main},
        merges={sha for sha in on_main if about[sha][0] > 1},
    )
    category_of = subject_parser(ctx.config.alias_map())
    before_cut: dict[str, bool] = {}
    out: list[Candidate] = []
    for request, sha in resolved:
        parents, subject, _ = about[sha]
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

"""The release branch as ``pick`` and ``status`` read it: what of main is already on it
(what a request resolves to is :mod:`release.flows.candidates`).

A main commit is on the branch when a ``-x`` line there names it, or when ``git cherry``
finds a branch commit with the same patch, unless the branch reverted that copy since.
Otherwise it may be *likely* there: a backport without ``-x``, adapted to the branch,
found by PR numbers, title or changed lines (:mod:`release.core.backports`). Reads are
started together and run side by side. Nothing here changes the repository; what was
read of commits may be kept in the patch cache (:mod:`release.adapters.patch_cache`).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass

from release.adapters.git import GitRead
from release.adapters.git_log import About, parse_about, parse_log
from release.adapters.git_reads import cherry_equal, cherry_marked, files_changed, tree_paths
from release.core import backports
from release.core.backport_pairs import Moved, moved_between
from release.core.backports import Evidence
from release.core.commits import Commit
from release.core.plan import short
from release.errors import RefusedError
from release.flows.backport_evidence import Changes, likely_backports
from release.flows.context import ReleaseContext
from release.flows.landed import commits_by_pr

__all__ = ["EARLY_CHERRY", "Presence", "ReleaseBranch"]

EARLY_CHERRY = 64  # commits asked for at once from which git cherry is started at once


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

    def __init__(
        self,
        ctx: ReleaseContext,
        branch: str,
        main: str,
        tip: str | None = None,
        *,
        remember: bool = False,
        base: str | None = None,
    ) -> None:
        """``base``: the merge-base of the branch and main, when the caller read it."""
        self.ctx = ctx
        self.branch = branch
        self.ref = f"refs/heads/{branch}"  # by full name: a tag called like it changes nothing
        self.main = main
        finding = None if base else ctx.repo.history.start_merge_base(self.ref, main)
        # what commits change, from the patch cache: read while git finds the base
        self.changes = Changes(ctx.repo, remember=remember, identity=ctx.repo_identity)
        if finding is not None:
            found = finding.result()
            base = found.stdout.strip() if found.ok else None
        if base is None:
            raise RefusedError(f"{branch} shares no history with {ctx.config.main_branch}")
        self.base = base
        self._order: dict[str, int] | None = None
        self._cherry: set[str] | None = set() if tip == base else None
        self._tip = tip  # the branch's commit, when known
        self._cherry_since: set[str] | None = None  # an earlier tip's answer, to add to
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
        self._tip = None  # the new tip is not known here
        self._cherry_since = None
        self._commits = self._undone = None
        self._again = {}
        for what in ("picked", "files", "diff", "cherry"):
            self._pending.pop(what, None)

    def _start(self, what: str) -> GitRead:
        repo = self.ctx.repo
        if what == "order":  # main's commits since the branch point, in main's order
            return repo.history.start_order(self.main, self.base)
        if what == "picked":  # the branch's own commits: -x lines, reverts, backports
            return repo.history.start_commits(since=self.base, until=self.ref)
        # the files changed by git cherry's other side: the branch's own non-merge commits
        return repo.history.start_files_log(self.ref, self.main)

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
        if len(shas) >= EARLY_CHERRY and self._cherry is None and "cherry" not in self._pending:
            # a long list nearly always has a commit git cherry could match: it starts now,
            # not once the files say so (its answer is used only if they do)
            self._begin_cherry()

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
        return self.ctx.repo.history.start_about(shas)

    def about(self, shas: Sequence[str]) -> dict[str, About]:
        """Commit -> its parents, subject and body, for commits that exist."""
        if not shas:
            return {}
        return parse_about(self._per_commit("about", shas, lambda: self._about(shas)))

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
            aliases, repo = self.ctx.config.alias_map(), self.ctx.repo_identity
            self._commits = list(parse_log(self._read("picked"), aliases, repo=repo))
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
        if self._cherry is None and "cherry" not in self._pending:
            self._begin_cherry()
        if self._cherry is None:
            out = self._pending.pop("cherry").out()
            if self._cherry_since is not None:  # the new commits' finds, added
                self._cherry = self._cherry_since | cherry_equal(out)
            else:
                self._cherry = cherry_marked(out)
            if self._cherry_key:
                self.changes.keep_cherry(self._cherry_key, self._cherry)
        return self._cherry

    @property
    def _cherry_key(self) -> str | None:
        """What git cherry's answer is kept under: the three commits it is a fact of
        (branch tip, main, merge-base); None when the tip is not known."""
        tip = self._tip
        return f"{tip} {self.main} {self.base}" if tip and tip != self.base else None

    def _begin_cherry(self) -> None:
        """Start ``git cherry``, unless the patch cache holds its answer for these very
        commits (branch tip, main, merge-base): the answer is a fact of them. With an
        answer kept for an earlier tip of the branch (the same main and merge-base; as
        after a pick), only the commits the branch gained since are compared, and what
        they match is added to it."""
        repo, key, tip = self.ctx.repo, self._cherry_key, self._tip
        if key and tip:
            known = self.changes.cherry_of(key)
            if known is not None:
                self._cherry = known
                return
            for earlier, marked in self.changes.earlier_cherry(key):
                if repo.is_ancestor(earlier, tip):
                    self._pending["cherry"] = repo.history.start_cherry_since(
                        earlier, tip, self.main
                    )
                    self._cherry_since = marked
                    return
        self._pending["cherry"] = repo.history.start_cherry(self.ref, self.main, self.base)

    def _could_match(self, shas: Sequence[str]) -> bool:
        """Whether ``git cherry`` could find any of ``shas`` (main commits) on the branch:
        only when one changes the very files a branch commit changes."""
        if not shas:
            return False
        if self._cherry is not None:
            return True
        if self._branch_files is None:
            text = self._read("files")
            self._branch_files = set(files_changed(text, by_sha=False).values())
        if not self._branch_files:
            return False
        files = self.files_of(shas)
        return any(files[sha] in self._branch_files for sha in shas)

    def _same_patch(self, shas: Sequence[str]) -> set[str]:
        """Those of ``shas`` (main commits) whose patch ``git cherry`` finds on the branch."""
        if not self._could_match(shas):
            return set()
        return self.patch_equivalent.intersection(shas)

    def prefetch_cherry(self, shas: Sequence[str]) -> None:
        """Start ``git cherry`` when it could find any of ``shas``: it runs while the
        likely backports are worked out."""
        if self._cherry is None and "cherry" not in self._pending and self._could_match(shas):
            self._begin_cherry()

    def files_of(self, shas: Sequence[str]) -> dict[str, frozenset[str]]:
        """Commit -> the files it changes (:func:`files_changed`), read once per commit:
        from the patch cache, or from the read started early when it covers ``shas``."""
        missing = [sha for sha in shas if sha not in self._files]
        if missing:
            known = self.changes.known_files(missing)
            self._files.update(known)
            missing = [sha for sha in missing if sha not in known]
        if missing:
            text = self._per_commit("diff", missing, lambda: self._diff_tree(missing))
            read = dict.fromkeys(missing, frozenset[str]())  # no line: nothing changed
            read.update(files_changed(text, by_sha=True))
            self._files.update(read)
            self.changes.keep_files(read)
        return {sha: self._files[sha] for sha in shas}

    def _diff_tree(self, shas: Sequence[str]) -> GitRead:
        self._asked["diff"] = frozenset(shas)
        return self.ctx.repo.history.start_files_of(shas)

    def prefetch_files(self, shas: Iterable[str]) -> None:
        """Start reading the files that these commits change, for those no ``-x`` line names
        and the patch cache does not hold (once the ``-x`` lines are read: that read is
        quick)."""
        if self._cherry is not None or "diff" in self._pending:
            return
        asked = [sha for sha in dict.fromkeys(shas) if sha not in self.picked_from]
        known = self.changes.known_files(asked)
        self._files.update(known)
        asked = [sha for sha in asked if sha not in known]
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
        commits the branch has reverted since carry; noted in :attr:`_again`. The patch
        ids of the branch's standing commits are read only when a reverted copy matches."""
        repo = self.ctx.repo
        ids = repo.history.patch_ids([*same, *self.undone])
        copies = {ids[sha]: sha for sha in self.undone if sha in ids}
        suspects = {sha for sha in same if ids.get(sha) in copies}
        if not suspects:
            return set()
        # a patch id is only shared by commits that change the same files
        files = self.files_of([*suspects, *(c.sha for c in self.commits)])
        alike = {files[sha] for sha in suspects}
        standing_shas = [
            c.sha for c in self.commits if c.sha not in self.undone and files[c.sha] in alike
        ]
        ids.update(repo.history.patch_ids(standing_shas))
        standing = {ids[sha] for sha in standing_shas if sha in ids}
        gone = {sha for sha in suspects if ids[sha] not in standing}
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
        open_ = [sha for sha in shas if sha not in self.picked_from and sha not in merges]
        self.prefetch_cherry(open_)  # git cherry runs while the likely ones are found
        landed = self._landed(open_, messages)
        open_ = [sha for sha in open_ if sha not in landed]
        likely = self._likely(open_, messages) if open_ else {}
        there = self.already_there(shas, merges)
        for sha, number in landed.items():  # what status counts done: the same PR landed
            there[sha] = there[sha] or f"already on the branch (PR #{number})"
        self.changes.save()  # when this run may write the cache
        return {
            sha: Presence(there[sha], None if there[sha] else likely.get(sha), self._again.get(sha))
            for sha in shas
        }

    def _landed(
        self, shas: Sequence[str], messages: Mapping[str, tuple[str, str]]
    ) -> dict[str, int]:
        """Main commit -> its PR, for those a standing branch commit with no ``-x`` line
        landed as its own PR too (a pick made without ``-x`` keeps its "(#N)"): what
        ``status`` counts as done (:mod:`release.flows.branch_picks`)."""
        own = {
            c.pr
            for c in self.commits
            if c.pr is not None
            and c.changelog_for is None
            and not c.picked_from
            and c.sha not in self.undone
            and c.sha not in self.undone.values()
        }
        if not own:
            return {}
        subjects = [(sha, messages[sha][0]) for sha in shas if sha in messages]
        bodies = {sha: messages[sha][1] for sha, _ in subjects}
        by_pr = commits_by_pr(subjects, own, lambda asked: bodies, self.ctx.repo_identity)
        return {sha: number for number, found in by_pr.items() for sha in found}

    def _likely(
        self, shas: Sequence[str], messages: Mapping[str, tuple[str, str]]
    ) -> dict[str, Evidence]:
        # what stands on the branch (a revert there may be the backport of main's revert);
        # a -x pick carries the one commit it names, which is "already there"
        live = [c for c in self.commits if c.sha not in self.undone and not c.picked_from]
        moved = self._moved() if live else None
        return likely_backports(shas, messages, live, self.files_of, self.changes, moved)

    def _moved(self) -> Moved:
        """Whether a move explains a main and a branch commit changing files of one name at
        two paths (:func:`release.core.backport_pairs.moved_between`), from the paths of
        main and of the branch, read (side by side) when first asked."""
        history = self.ctx.repo.history
        reads = [history.start_paths(ref) for ref in (self.main, self.ref)]
        answer: list[Moved] = []

        def moved(path: str, other: str) -> bool:
            if not answer:
                on_main, on_branch = (tree_paths(read.out()) for read in reads)
                answer.append(moved_between(on_main, on_branch))
            return answer[0](path, other)

        return moved

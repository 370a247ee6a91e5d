"""Reads in bulk of commits, messages and patches: a range's commits by sha for the notes,
what ``git log`` output depends on besides the commits (``.mailmap``, replacement objects
and grafts, a shallow clone's boundary), and the patches that compare a release branch
with main.

``repo.history`` of a :class:`~release.adapters.git.GitRepo`: every read goes through
the repository's :meth:`~release.adapters.git.GitRepo.start` and
:meth:`~release.adapters.git.GitRepo.run`. Ranges are given by their ends (``since``,
``until``) and spelt here (:func:`span`); answers are records
(:mod:`release.adapters.git_log`), or started reads that its functions parse.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path

from release.adapters.git_log import (
    ABOUT_FORMAT,
    LOG_FORMAT,
    MESSAGE_FORMAT,
    PEOPLE_FORMAT,
    RECORD_END,
    SUBJECT_FORMAT,
    CommitMessage,
    Trailer,
    parse_log,
    parse_messages,
    parse_trailers,
    trailer_format,
)
from release.adapters.git_process import GitLog, GitRead, Repository, executable_stamp
from release.core.commits import Commit
from release.core.pull_requests import RepoIdentity

__all__ = [
    "History",
    "cherry_equal",
    "cherry_marked",
    "files_changed",
    "span",
    "tree_paths",
]

_PATCHES = ("diff-tree", "-p", "-U0", "-r", "-M", "-l1000", "--root", "--stdin")
# Each commit's tree diff, without file contents: every file changed (no rename pairing).
_TREE_DIFF = ("-z", "--raw", "-r", "--no-renames", "--root")


def span(since: str | None, until: str) -> tuple[str, str]:
    """The revision arguments of the commits after ``since`` (None: all history) up to
    ``until``, each end peeled to its commit (a tag names its commit; a tree fails)."""
    until = f"{until}^{{commit}}"
    return "--end-of-options", f"{since}^{{commit}}..{until}" if since is not None else until


class History:
    """Commits of a range, answered as records; commits by sha; the settings that change
    what git says of them; messages, patches and patch ids."""

    def __init__(self, repo: Repository) -> None:
        self.repo = repo

    # -- ranges: the commits after ``since`` (None: all history) up to ``until`` --------
    def log_commits(
        self,
        *,
        since: str | None,
        until: str,
        aliases: Mapping[str, str],
        repo: RepoIdentity | None,
    ) -> list[Commit]:
        """The range's commits, merges too, newest first (as ``git log`` lists them), as
        commits of ``repo`` (None: unknown)."""
        text = self.repo.out("log", f"--format={LOG_FORMAT}", *span(since, until), "--")
        return list(parse_log(text, aliases, repo=repo))

    def start_commits(self, *, since: str | None, until: str) -> GitRead:
        """:meth:`log_commits`, started now: its text is parsed by
        :func:`~release.adapters.git_log.parse_log`."""
        return self.repo.start("log", f"--format={LOG_FORMAT}", *span(since, until), "--")

    def messages(
        self, *, since: str | None, until: str, containing: str | None = None
    ) -> list[CommitMessage]:
        """Each commit's sha, subject and body, newest first; with ``containing``, only
        the commits whose message holds that text (git looks, as a fixed string)."""
        grep = ("--fixed-strings", f"--grep={containing}") if containing else ()
        fmt = f"--format={MESSAGE_FORMAT}"
        return parse_messages(self.repo.out("log", fmt, *grep, *span(since, until), "--"))

    def trailers(
        self, key: str, *, since: str | None, until: str, besides: Sequence[str] = ()
    ) -> list[Trailer]:
        """Each commit's values of trailer ``key``, newest first; ``besides``: commits
        whose history is left out too (one walk, however many)."""
        fmt = f"--format={trailer_format(key)}"
        others = [f"^{sha}^{{commit}}" for sha in besides]
        return parse_trailers(self.repo.out("log", fmt, *span(since, until), *others, "--"))

    def rev_list(self, *, since: str | None, until: str) -> list[str]:
        return self.repo.out("rev-list", *span(since, until), "--").split()

    def count(self, *, since: str | None = None, until: str) -> int:
        return int(self.repo.out("rev-list", "--count", *span(since, until), "--").strip())

    def start_range_shas(self, *, since: str | None, until: str) -> GitRead:
        """The non-merge commits of the range, one sha a line, in the order ``git log``
        lists them (the same walk)."""
        return self.repo.start("rev-list", "--no-merges", *span(since, until), "--")

    def stream_commits(self, *, since: str | None, until: str) -> GitLog:
        """The range's non-merge commits as ``LOG_FORMAT`` records, streamed: parsed by
        :func:`~release.adapters.git_log.parse_records` while git writes the rest."""
        args = ("log", f"--format={LOG_FORMAT}", "--no-merges", *span(since, until), "--")
        return self.repo.stream(*args, sep=RECORD_END)

    def log(self, *range_args: str, fmt: str) -> str:
        """``git log --format=fmt`` of ``range_args`` as git prints it (for tests and
        checks that compare with git itself)."""
        return self.repo.out("log", f"--format={fmt}", *range_args, "--")

    def log_stream(self, *range_args: str, fmt: str, sep: str) -> GitLog:
        """:meth:`log`, streamed: records (split at ``sep``) arrive while git writes them."""
        return self.repo.stream("log", f"--format={fmt}", *range_args, "--", sep=sep)

    def start_commit_log(self, shas: Sequence[str], fmt: str) -> GitRead:
        """``git log --format=fmt`` of exactly ``shas``, in the order given."""
        stdin = "".join(f"{sha}\n" for sha in shas)
        return self.repo.start(
            "log", "--no-walk=unsorted", "--stdin", f"--format={fmt}", stdin=stdin
        )

    def mailmap_fingerprint(self) -> str:
        """What the mailmap that ``%aN``/``%aE`` apply is made of: ``""`` when there is none,
        else a digest of the work tree's ``.mailmap`` and of ``mailmap.file`` and
        ``mailmap.blob`` (their settings and contents). Two calls answer the same exactly
        when git maps authors the same."""
        parts: list[bytes] = []
        local = self.repo.root / ".mailmap"
        if local.exists():
            parts.append(b".mailmap\0" + _read(local))
        found = self.repo.run("config", "--get-regexp", r"^mailmap\.(file|blob)$", check=False)
        for line in found.stdout.splitlines() if found.ok else ():
            key, _, value = line.partition(" ")
            parts.append(f"{key}\0{value}\0".encode("utf-8", "surrogateescape"))
            if key == "mailmap.file":
                parts.append(_read(self.repo.root / Path(os.path.expanduser(value))))
            elif key == "mailmap.blob":
                blob = self.repo.run("rev-parse", "--verify", "--quiet", value, check=False)
                parts.append(blob.stdout.strip().encode())
        if not parts:
            return ""
        import hashlib  # here: only a cache's key asks

        return hashlib.sha256(b"\0\0".join(parts)).hexdigest()

    def rewrites_history(self) -> bool:
        """Whether the history a sha names may not be the one its objects say: ``git
        replace`` refs (another message, tree or parents for a sha) or a grafts file (other
        parents: another history before a commit, another patch against its parent). What
        is kept by sha (parsed commits, who came before a range, patches, git cherry's
        answers, whole notes) is then neither read nor written. Read from the ref store and
        the file system, without git."""
        return self._replaces_objects() or self._grafted()

    def _replaces_objects(self) -> bool:
        """``git replace`` refs may change what ``git log`` shows for a sha. A ref store
        this cannot read (reftable) counts as yes."""
        if os.environ.get("GIT_NO_REPLACE_OBJECTS") is not None:
            return False
        if os.environ.get("GIT_REPLACE_REF_BASE") or (self.repo.common_dir / "reftable").exists():
            return True
        loose = self.repo.common_dir / "refs" / "replace"
        if loose.is_dir() and any(loose.iterdir()):
            return True
        return b" refs/replace/" in _read(self.repo.common_dir / "packed-refs")

    def _grafted(self) -> bool:
        """A grafts file gives commits other parents than they name: ``$GIT_GRAFT_FILE``
        (relative to the work tree, where git runs), else ``info/grafts`` of the common git
        directory. git honours it with replace refs turned off too."""
        graft_file = os.environ.get("GIT_GRAFT_FILE")
        return (
            self.repo.root / graft_file if graft_file else self.repo.common_dir / "info" / "grafts"
        ).exists()

    def git_stamp(self) -> str:
        """Which git answers (see :func:`~release.adapters.git_process.executable_stamp`)."""
        return executable_stamp()

    def is_shallow(self) -> bool:
        """Whether history is cut short here (a shallow clone: CI's default checkout)."""
        return (self.repo.common_dir / "shallow").exists()

    def shallow_boundary(self) -> set[str]:
        """The commits a shallow clone has without their parents (``.git/shallow``): a walk
        stops there as if history began. Empty in a whole clone."""
        path = self.repo.common_dir / "shallow"
        return set(path.read_text(encoding="ascii").split()) if path.exists() else set()

    def start_patches(self, shas: Sequence[str]) -> GitRead:
        """Each commit's patch against its first parent, led by its sha on a line of its own
        (``git diff-tree -p --stdin``; no context lines; renames found, so a moved file shows
        its changes, not all its lines; the rename limit given, not taken from the
        configuration, so a commit's patch reads the same everywhere)."""
        stdin = "".join(f"{sha}\n" for sha in shas)
        return self.repo.start(*_PATCHES, stdin=stdin)

    def patches_in_parts(
        self, shas: Sequence[str], part: int = 200, running: int = 2
    ) -> Iterator[str]:
        """:meth:`start_patches` of ``shas``, ``part`` commits at a time and ``running``
        parts read by git at once: each part's output comes as soon as it is read, while
        git reads the next (a long list's patches are parsed as they come, on another core
        than git's)."""
        parts = [shas[n : n + part] for n in range(0, len(shas), part)]
        reading = deque(self.start_patches(p) for p in parts[:running])
        try:
            for later in parts[running:]:
                done = reading.popleft()
                reading.append(self.start_patches(later))
                yield done.out()
            while reading:
                yield reading.popleft().out()
        finally:  # given up half way: the parts still read end before this does
            for left in reading:
                left.result()

    def start_merge_base(self, a: str, b: str) -> GitRead:
        """``git merge-base a b``: their best common ancestor (fails when they have none)."""
        return self.repo.start("merge-base", a, b)

    def start_cherry(self, upstream: str, head: str, limit: str) -> GitRead:
        """``git cherry``: which commits of ``head`` after ``limit`` have their patch in
        ``upstream`` (each ref peeled to its commit; read with :func:`cherry_marked`)."""
        return self.repo.start("cherry", *(f"{ref}^{{commit}}" for ref in (upstream, head, limit)))

    def start_cherry_since(self, earlier: str, tip: str, main: str) -> GitRead:
        """Which commits of ``main`` since its merge-base with ``tip`` have their patch in
        a commit of ``earlier..tip`` (read with :func:`cherry_equal`): with ``git cherry``'s
        answer for ``earlier``, an ancestor of ``tip``, its answer for ``tip`` (the same
        patch ids, ``git rev-list --cherry-mark``, over only the new commits)."""
        return self.repo.start(
            "rev-list", "--cherry-mark", "--right-only", "--no-merges",
            f"{tip}...{main}", f"^{earlier}", "--",
        )  # fmt: skip

    def added_blobs(self, shas: Sequence[str]) -> dict[str, set[str]]:
        """Path -> the blobs these commits add at it (files new in a commit)."""
        if not shas:
            return {}
        stdin = "".join(f"{sha}\n" for sha in shas)
        text = self.repo.run(
            "diff-tree", "--stdin", "-r", "--no-renames", "--diff-filter=A", "-z", "--root",
            stdin=stdin,
        ).stdout  # fmt: skip
        added: dict[str, set[str]] = {}
        tokens = text.split("\0")
        for index, token in enumerate(tokens[:-1]):
            fields = token.lstrip("\n").split(" ")
            if token.lstrip("\n").startswith(":") and len(fields) == 5:
                added.setdefault(tokens[index + 1], set()).add(fields[3])
        return added

    def newest_messages(self, count: int) -> list[str]:
        """The messages of HEAD and its first parents, ``count`` at most, newest first."""
        text = self.repo.run(
            "log", f"-{count}", "--first-parent", "-z", "--format=%B", "HEAD"
        ).stdout
        return text.split("\0")[:count]

    def patch_ids(self, shas: Sequence[str]) -> dict[str, str]:
        """Commit -> its patch id (``git patch-id --stable``: what ``git cherry`` compares);
        a commit that changes nothing has none."""
        if not shas:
            return {}
        stdin = "".join(f"{sha}\n" for sha in shas)
        patches = self.repo.run(
            "log", "-p", "--no-walk=unsorted", "--stdin", "--format=commit %H", stdin=stdin
        ).stdout
        ids = self.repo.run("patch-id", "--stable", stdin=patches + "\n").stdout
        pairs = (line.split() for line in ids.splitlines())
        return {sha: pid for pid, sha in pairs}

    # -- reads started now, collected later ------------------------------------------
    def start_order(self, tip: str, exclude: str) -> GitRead:
        """Commits of ``tip`` not in ``exclude``, oldest first in topological order."""
        return self.repo.start("rev-list", "--reverse", "--topo-order", tip, f"^{exclude}")

    def start_subjects(
        self, ref: str, prs: Collection[int] = (), since: str | None = None
    ) -> GitRead:
        """The commits of ``ref`` (after ``since``, when given), read by
        :func:`~release.adapters.git_log.parse_subjects`;
        with ``prs``, only those whose message has ``(#N)`` for one of them (leading zeros
        allowed), or a PR's URL ``/pull/N`` (a ghstack body's ``Pull Request resolved:``):
        git looks, so only they are written and parsed."""
        grep: tuple[str, ...] = ()
        if prs:
            numbers = "|".join(str(int(n)) for n in sorted(set(prs)))
            grep = (
                "--extended-regexp",
                rf"--grep=\(#0*({numbers})\)",
                rf"--grep=/pull/0*({numbers})([^0-9]|$)",
            )
        walk = span(since, ref) if since is not None else (ref,)
        return self.repo.start("log", f"--format={SUBJECT_FORMAT}", *grep, *walk, "--")

    def start_reverts(self, *, since: str, until: str) -> GitRead:
        """The range's commits whose message may say they revert one (``Revert``,
        ``Reapply``, git's ``This reverts commit``; git looks, as fixed strings, so only
        they are written and parsed), read by :func:`~release.adapters.git_log.parse_log`."""
        grep = ("--fixed-strings", "--grep=Revert", "--grep=Reapply", "--grep=This reverts commit")
        return self.repo.start("log", f"--format={LOG_FORMAT}", *grep, *span(since, until), "--")

    def outside(self, shas: Sequence[str], ref: str) -> set[str]:
        """Those of ``shas`` (commits, by full sha) that are not in ``ref``'s history: one
        walk for all of them, from each back to where it meets ``ref``."""
        if not shas:
            return set()
        stdin = "".join(f"{sha}\n" for sha in shas) + f"^{ref}\n"
        walked = set(self.repo.start("rev-list", "--stdin", stdin=stdin).out().split())
        return walked.intersection(shas)

    def start_about(self, shas: Sequence[str]) -> GitRead:
        """``shas`` (in the order given), read by :func:`~release.adapters.git_log.parse_about`."""
        return self.start_commit_log(shas, ABOUT_FORMAT)

    def start_files_of(self, shas: Sequence[str]) -> GitRead:
        """Each commit's tree diff without contents (``-z --raw``), led by its sha."""
        stdin = "".join(f"{sha}\n" for sha in shas)
        return self.repo.start("diff-tree", "--stdin", *_TREE_DIFF, stdin=stdin)

    def start_files_log(self, tip: str, exclude: str) -> GitRead:
        """The tree diffs (``-z --raw``) of ``tip``'s non-merge commits not in ``exclude``,
        each led by a record separator."""
        return self.repo.start(
            "log", *_TREE_DIFF, "--no-merges", "--format=%x1e", "--end-of-options",
            tip, f"^{exclude}", "--",
        )  # fmt: skip

    def start_paths(self, ref: str) -> GitRead:
        """Every file path of ``ref``'s tree (peeled to its commit), read by
        :func:`tree_paths`."""
        return self.repo.start(
            "ls-tree", "-r", "-z", "--name-only", "--full-tree", "--end-of-options",
            f"{ref}^{{commit}}",
        )  # fmt: skip

    def start_people(self, ref: str) -> GitRead:
        """Who authored and co-authored each commit of ``ref`` (peeled; authors as .mailmap
        says), one line a commit, read by :func:`~release.adapters.git_log.people_of`."""
        ref = f"{ref}^{{commit}}"
        return self.repo.start("log", f"--format={PEOPLE_FORMAT}", "--end-of-options", ref, "--")

    def has_mailmap(self) -> bool:
        if (self.repo.root / ".mailmap").exists():
            return True
        found = self.repo.run("config", "--get-regexp", r"^mailmap\.(file|blob)$", check=False)
        return found.ok and bool(found.stdout.strip())

    def check_mailmap(self, contacts: Sequence[str]) -> dict[str, str]:
        """``Name <email>`` -> the same as .mailmap maps it (``git check-mailmap``)."""
        mapped: dict[str, str] = {}
        wanted = [c for c in dict.fromkeys(contacts) if "<" in c and c.endswith(">")]
        for start in range(0, len(wanted), 200):
            chunk = wanted[start : start + 200]
            out = self.repo.run("check-mailmap", "--", *chunk, check=False).stdout.splitlines()
            mapped.update(zip(chunk, out, strict=False))
        return mapped


def cherry_marked(text: str) -> set[str]:
    """The commits ``git cherry`` marks ``-``: the same change is upstream, whatever its
    message or sha."""
    return {line[2:].strip() for line in text.splitlines() if line.startswith("- ")}


def cherry_equal(text: str) -> set[str]:
    """The commits ``git rev-list --cherry-mark`` marks ``=``: their patch is on the other
    side."""
    return {line[1:].strip() for line in text.splitlines() if line.startswith("=")}


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


def tree_paths(text: str) -> frozenset[str]:
    """The paths of a ``ls-tree -r -z --name-only`` listing, spelt as :func:`files_changed`
    spells them (whitespace dropped), so the two compare."""
    return frozenset("".join(p.split()) for p in text.split("\0") if p)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b"\0missing"

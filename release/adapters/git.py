"""The git adapter: the only module that runs git, and the vocabulary workflows use.

Every command is one ``git`` process (the first on ``PATH``) in the work tree, in the C
locale as GitPython's command interface runs it (so messages are in English: they are
parsed and quoted), run by :mod:`release.adapters.process`.
Mutating commands are echoed when asked (``RELEASE_ECHO``); failures become
:class:`GitError`. Output is decoded with ``surrogateescape`` (file names round-trip)
and loses one final newline. Ranges are read with one ``git log --format`` call, never
commit by commit; reads that should overlap other work are started
(:meth:`GitRepo.start`) or streamed (:meth:`GitRepo.stream`).

Workflows use the named methods below, by concern: :class:`GitRepo` reads refs and
commits one at a time and changes the repository; ``repo.history``
(:class:`~release.adapters.git_reads.History`) reads ranges and commits in bulk,
answering in records (:mod:`release.adapters.git_log`); ``repo.worktree``
(:class:`~release.adapters.git_worktree.WorkTree`) says what the work tree is in the
middle of and what changed in it; ``repo.remotes``
(:class:`~release.adapters.git_remotes.Remotes`) asks the remotes. Refs are peeled here:
callers pass names and get commits; ranges are passed as their ends (``since``,
``until``), never spelt as revision syntax by a caller. :meth:`GitRepo.run` is the
choke point every command goes through.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from release.adapters import process
from release.adapters.git_process import GitLog, GitRead, GitResult, execute, failed
from release.adapters.git_reads import History
from release.adapters.git_remotes import Remotes
from release.adapters.git_worktree import WorkTree
from release.errors import GitError, ReleaseError, UsageError

__all__ = ["GitLog", "GitRead", "GitRepo", "GitResult"]


class GitRepo:
    """A working copy, opened at (or above) a directory; its concerns are ``history``,
    ``worktree`` and ``remotes``."""

    def __init__(self, path: Path | str = ".") -> None:
        where = Path(path)
        not_a_repo = UsageError(
            f"not a git repository: {where.resolve()} (run inside the engine's checkout)"
        )
        if not where.exists():
            raise not_a_repo
        found_by = execute(
            where if where.is_dir() else where.parent,
            ("rev-parse", "--is-bare-repository", "--absolute-git-dir", "--path-format=absolute",
             "--git-common-dir", "--show-toplevel"),
        )  # fmt: skip
        found = found_by.stdout.splitlines()
        if len(found) < 3:
            reason = process.first_line(found_by.stderr)
            if reason.startswith("fatal: not a git repository") or not reason:
                raise not_a_repo
            raise UsageError(f"cannot open the git repository at {where.resolve()}: {reason}")
        if found[0] == "true":
            raise UsageError(f"{path} is a bare repository; run inside a checkout")
        self.git_dir = Path(found[1])  # this work tree's: HEAD, the index, MERGE_HEAD ...
        self.common_dir = Path(found[2])  # shared by linked worktrees: refs, objects, our lock
        # inside the git directory itself, the work tree is the directory that holds it
        self.root = Path(found[3]) if found_by.ok and len(found) == 4 else self.git_dir.parent
        self.history = History(self)
        self.worktree = WorkTree(self)
        self.remotes = Remotes(self)

    @classmethod
    def init(cls, path: Path, *, bare: bool = False, branch: str = "main") -> GitRepo | None:
        """``git init`` a new repository; returns it opened unless bare."""
        path.mkdir(parents=True, exist_ok=True)
        args = ["init", "--quiet", f"--initial-branch={branch}", *(["--bare"] if bare else [])]
        result = execute(path, args)
        if not result.ok:
            raise GitError(f"git init failed: {process.first_line(result.stderr)}")
        return None if bare else cls(path)

    def borrowing(self, path: Path) -> GitRepo:
        """A new repository at ``path`` that reads this one's objects (``alternates``) and
        shares its shallow boundary, with no ref yet: a scratch checkout. Unlike ``git
        clone --shared``, which a shallow source makes a plain (and shallow) clone of only
        the objects its refs reach, it sees every object here, those fetched later too."""
        made = GitRepo.init(path)
        assert made is not None
        info = made.common_dir / "objects" / "info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "alternates").write_text(f"{self.common_dir / 'objects'}\n", encoding="utf-8")
        if (self.common_dir / "shallow").exists():
            import shutil  # here: opening a repository needs none of it

            shutil.copyfile(self.common_dir / "shallow", made.common_dir / "shallow")
        return made

    # -- the choke point -------------------------------------------------
    def run(
        self,
        *args: str,
        check: bool = True,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        mutating: bool = False,
    ) -> GitResult:
        if mutating:
            process.echo(["git", *args])
        result = execute(self.root, args, stdin=stdin, env=env)
        if check and not result.ok:
            raise failed(args, result)
        return result

    def out(self, *args: str) -> str:
        return self.run(*args).stdout

    def start(self, *args: str, stdin: str | None = None) -> GitRead:
        """Start a read-only command now and collect its output in the background.

        For reads that can run while other work goes on; :meth:`GitRead.out` and
        :meth:`GitRead.result` wait for it and answer as :meth:`out` and :meth:`run` would.
        """
        return GitRead(self.root, args, stdin)

    def stream(self, *args: str, sep: str = "\n") -> GitLog:
        """Start a read-only command now; iterate the result for its output split at ``sep``
        (the pieces of ``out(*args).split(sep)``).

        The output is read while git writes it, so the caller can do other work (or parse
        what has arrived) while git runs. Failures raise :class:`GitError` at the end of
        the iteration, as :meth:`run` would; close the stream (or use it as a context
        manager) to stop git early.
        """
        return GitLog(self.root, args, sep)

    # -- queries ---------------------------------------------------------
    def current_branch(self) -> str | None:
        # the full name, trimmed here: --short says "heads/X" when a tag X exists too
        result = self.run("symbolic-ref", "--quiet", "HEAD", check=False)
        ref = result.stdout.strip() if result.ok else ""
        return ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None

    def ambiguous(self, prefix: str) -> list[str]:
        """The commits a sha prefix could name, when it names more than one."""
        result = self.run("rev-parse", f"--disambiguate={prefix}", check=False)
        shas = result.stdout.split() if result.ok else []
        kinds = self.run("cat-file", "--batch-check", stdin="".join(f"{s}\n" for s in shas))
        commits = [line.split()[0] for line in kinds.stdout.splitlines() if " commit " in line]
        return commits if len(commits) > 1 else []

    def rev(self, ref: str) -> str | None:
        result = self.run(
            "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False
        )
        return result.stdout.strip() if result.ok and result.stdout.strip() else None

    def first_parent(self, ref: str) -> str | None:
        """The first parent of the commit ``ref`` names; None for a root commit (or no
        such commit)."""
        return self.rev(f"{ref}^")

    def object_id(self, ref: str) -> str | None:
        """The object ``ref`` names as it is (a tag object stays a tag); None when there is
        no such object here."""
        result = self.run(
            "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{object}}", check=False
        )
        return result.stdout.strip() if result.ok and result.stdout.strip() else None

    def branch_exists(self, name: str) -> bool:
        return self.run("show-ref", "--verify", "--quiet", f"refs/heads/{name}", check=False).ok

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return self.run("merge-base", "--is-ancestor", ancestor, descendant, check=False).ok

    def merge_base(self, a: str, b: str) -> str | None:
        result = self.run("merge-base", a, b, check=False)
        return result.stdout.strip() if result.ok else None

    def local_tags(self) -> dict[str, str]:
        """Tag name -> commit it points to (peeled)."""
        text = self.out(
            "for-each-ref",
            "--format=%(refname:lstrip=2)%00%(objectname)%00%(*objectname)",
            "refs/tags",
        )
        tags: dict[str, str] = {}
        for line in text.splitlines():
            name, obj, peeled = line.split("\0")
            tags[name] = peeled or obj
        return tags

    def tags_merged_into(self, commit: str, among: Sequence[str] | None = None) -> set[str]:
        """Tags whose commit is ``commit`` or one of its ancestors; of the tags named
        ``among`` only, when given (git then walks only as far as they need: a few tags
        of a release, not the whole history that every tag of the repository takes)."""
        if among is not None and not among:
            return set()
        wanted = ["refs/tags"] if among is None else [f"refs/tags/{name}" for name in among]
        text = self.out(
            "for-each-ref", f"--merged={commit}", "--format=%(refname:lstrip=2)", *wanted
        )
        found = set(text.splitlines())
        # a name is a pattern to git (fnmatch, or the name itself): keep the names asked for
        return found if among is None else found & set(among)

    def revs(self, refs: Sequence[str]) -> list[str | None]:
        """The commit each ref names (as :meth:`rev` would), all read by one git process."""
        if not refs:
            return []
        if any("\n" in ref or not ref for ref in refs):
            return [self.rev(ref) for ref in refs]
        text = self.run(
            "cat-file", "--batch-check", stdin="".join(f"{ref}^{{commit}}\n" for ref in refs)
        ).stdout
        found: list[str | None] = []
        for line in text.splitlines():
            fields = line.split(" ")
            found.append(fields[0] if len(fields) == 3 and fields[1] == "commit" else None)
        if len(found) != len(refs):
            raise GitError(f"git cat-file --batch-check answered {len(found)} of {len(refs)} refs")
        return found

    def config_value(self, key: str) -> str | None:
        result = self.run("config", "--get", key, check=False)
        return result.stdout.strip() if result.ok else None

    def refs(self) -> dict[str, str]:
        text = self.out("for-each-ref", "--format=%(refname) %(objectname)")
        pairs = (line.split(" ", 1) for line in text.splitlines())
        return {name: sha for name, sha in pairs}

    def head(self) -> str:
        """The commit HEAD is at."""
        return self.out("rev-parse", "HEAD").strip()

    def commit_time(self, ref: str = "HEAD") -> int:
        """The committer time of ``ref`` (what ``SOURCE_DATE_EPOCH`` is set to)."""
        return int(self.out("log", "-1", "--format=%ct", ref).strip())

    def message(self, ref: str = "HEAD") -> str:
        return self.out("log", "-1", "--format=%B", ref)

    def committed_text(
        self, commit: str, path: str, what: str, *, limit: int, error: type[ReleaseError] = GitError
    ) -> str | None:
        """The text of the file ``path`` (from the top of the tree) as ``commit`` holds it;
        None when it holds none. What is not a regular file there (a symlink, a directory, a
        submodule), or is larger than ``limit`` bytes, is ``error`` naming ``what``, and is
        never read."""
        listed = self.run("ls-tree", "-l", "-z", "--full-tree", commit, "--", path).stdout
        if not listed:
            return None
        mode, _, blob, size = listed.partition("\t")[0].split()
        if mode not in ("100644", "100755"):
            raise error(f"{what} is not a regular file (git mode {mode})")
        if int(size) > limit:
            raise error(f"{what} is {int(size):,} bytes, more than the {limit:,} read here")
        return self.run("cat-file", "blob", blob).stdout

    def raw_message(self, ref: str = "HEAD") -> str:
        """A commit's message exactly as stored (no re-encoding, no trimming): bytes that
        are not UTF-8 come back as surrogates and are written back as they were."""
        result = self.run("cat-file", "commit", f"{ref}^{{commit}}")
        return result.stdout.split("\n\n", 1)[1] + "\n" if "\n\n" in result.stdout else ""

    def local_branches(self) -> list[str]:
        return self.out("for-each-ref", "--format=%(refname:lstrip=2)", "refs/heads").split()

    def authorship(self, sha: str) -> tuple[str, str, str]:
        """(author name, email, ISO date) of a commit."""
        name, email, date = self.out("show", "-s", "--format=%an%x1f%ae%x1f%aI", sha).split("\x1f")
        return name, email, date

    # -- actions (echoed when RELEASE_ECHO is set) ------------------------------------
    def create_branch(self, name: str, at: str) -> None:
        self.run("branch", "--no-track", name, at, mutating=True)

    def delete_branch(self, name: str) -> None:
        self.run("branch", "--delete", "--force", name, check=False, mutating=True)

    def switch(self, branch: str) -> None:
        self.run("switch", "--quiet", branch, mutating=True)

    def reset_hard(self, ref: str = "HEAD") -> None:
        self.run("reset", "--hard", "--quiet", ref, mutating=True)

    def cherry_pick(self, shas: Sequence[str]) -> GitResult:
        """``git cherry-pick -x`` (git's sequencer), each message as git writes it."""
        args = ["cherry-pick", "-x", "--no-rerere-autoupdate", *shas]
        return self.run(*args, check=False, env={"GIT_EDITOR": "true"}, mutating=True)

    def cherry_pick_continue(self) -> None:
        self.run("cherry-pick", "--continue", env={"GIT_EDITOR": "true"}, mutating=True)

    def cherry_pick_quit(self) -> None:
        """Forget a stopped cherry-pick (its state, not its changes)."""
        self.run("cherry-pick", "--quit", mutating=True)

    def add(self, *paths: str) -> None:
        self.run("add", "--", *paths, mutating=True)

    def commit(
        self,
        message: str,
        *,
        amend: bool = False,
        author: str | None = None,
        date: str | None = None,
        cleanup: str = "whitespace",
    ) -> None:
        """Commit the index with ``message`` as given (hooks skipped)."""
        args = ["commit", "--quiet", "--no-verify", f"--cleanup={cleanup}", "-F", "-"]
        if amend:
            args.insert(1, "--amend")
        if author is not None:
            args.append(f"--author={author}")
        env = {"GIT_AUTHOR_DATE": date} if date else None
        self.run(*args, stdin=message, env=env, mutating=True)

    def create_tag(self, name: str, target: str, message: str, *, sign: bool = False) -> None:
        """An annotated (or signed) tag; the message verbatim: the default cleanup would
        strip the notes' "### Category" lines."""
        args = ["tag", "-s" if sign else "-a", "--cleanup=verbatim", name, "-F", "-", target]
        self.run(*args, stdin=message, mutating=True)

    def delete_tag(self, name: str) -> None:
        self.run("tag", "-d", name, check=False, mutating=True)

    def set_remote_tracking(self, remote: str, branch: str, sha: str) -> None:
        """``refs/remotes/<remote>/<branch>`` at ``sha`` (what a push or fetch leaves)."""
        ref = f"refs/remotes/{remote}/{branch}"
        if self.rev(ref) != sha:
            self.run("update-ref", ref, sha, mutating=True)

    def set_ref(self, ref: str, sha: str) -> None:
        self.run("update-ref", ref, sha, mutating=True)

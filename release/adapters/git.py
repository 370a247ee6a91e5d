"""The git adapter: the only module that runs git.

Every command goes through :meth:`GitRepo.run` (one ``git`` process, in the work tree,
messages in English), which echoes mutating commands when asked and turns failures into
:class:`GitError`. Ranges are read with one ``git log --format`` call, never by loading
commit objects one by one. Reads that should overlap other work are started rather than
run: a long one is streamed (:meth:`GitRepo.stream`, parsed while git still writes it),
others are collected in the background (:meth:`GitRepo.start`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from release.errors import GitError, UsageError

__all__ = ["GitRead", "GitRepo", "GitResult", "GitStream"]

Echo = Callable[[str], None]


@dataclass(frozen=True)
class GitResult:
    status: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.status == 0


def _default_echo(line: str) -> None:
    if os.environ.get("RELEASE_ECHO"):
        print(line, file=sys.stderr)


class GitRepo:
    """A working copy, opened at (or above) a directory."""

    echo: Echo = staticmethod(_default_echo)

    def __init__(self, path: Path | str = ".") -> None:
        where = Path(path)
        not_a_repo = UsageError(
            f"not a git repository: {where.resolve()} (run inside the engine's checkout)"
        )
        if not where.exists():
            raise not_a_repo
        found_by = _execute(
            where if where.is_dir() else where.parent,
            ("rev-parse", "--is-bare-repository", "--absolute-git-dir", "--show-toplevel"),
        )
        found = found_by.stdout.splitlines()
        if len(found) < 2:
            reason = _first_line(found_by.stderr)
            if reason.startswith("fatal: not a git repository") or not reason:
                raise not_a_repo
            raise UsageError(f"cannot open the git repository at {where.resolve()}: {reason}")
        if found[0] == "true":
            raise UsageError(f"{path} is a bare repository; run inside a checkout")
        self.git_dir = Path(found[1])
        # inside the git directory itself, the work tree is the directory that holds it
        self.root = Path(found[2]) if found_by.ok and len(found) == 3 else self.git_dir.parent

    @classmethod
    def init(cls, path: Path, *, bare: bool = False, branch: str = "main") -> GitRepo | None:
        """``git init`` a new repository; returns it opened unless bare."""
        path.mkdir(parents=True, exist_ok=True)
        args = ["init", "--quiet", f"--initial-branch={branch}", *(["--bare"] if bare else [])]
        result = _execute(path, args)
        if not result.ok:
            raise GitError(f"git init failed: {_first_line(result.stderr)}")
        return None if bare else cls(path)

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
            type(self).echo("+ git " + " ".join(args))
        result = _execute(self.root, args, stdin=stdin, env=env)
        if check and not result.ok:
            raise GitError(
                f"git {' '.join(args[:3])} failed: {_first_line(result.stderr) or result.stdout}"
            )
        return result

    def out(self, *args: str) -> str:
        return self.run(*args).stdout

    def start(self, *args: str, stdin: str | None = None) -> GitRead:
        """Start a read-only command now and collect its output in the background.

        For reads that can run while other work goes on; :meth:`GitRead.out` and
        :meth:`GitRead.result` wait for it and answer as :meth:`out` and :meth:`run` would.
        """
        return GitRead(self.root, args, stdin)

    def stream(self, *args: str, sep: str = "\n") -> GitStream:
        """Start a read-only command now; iterate the result for its output split at ``sep``
        (the pieces of ``out(*args).split(sep)``).

        The output is read while git writes it, so the caller can do other work (or parse
        what has arrived) while git runs. Failures raise :class:`GitError` at the end of
        the iteration, as :meth:`run` would; close the stream (or use it as a context
        manager) to stop git early.
        """
        return GitStream(self.root, args, sep)

    # -- queries ---------------------------------------------------------
    def current_branch(self) -> str | None:
        result = self.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        return result.stdout.strip() or None if result.ok else None

    def rev(self, ref: str) -> str | None:
        result = self.run(
            "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False
        )
        return result.stdout.strip() if result.ok and result.stdout.strip() else None

    def branch_exists(self, name: str) -> bool:
        return self.run("show-ref", "--verify", "--quiet", f"refs/heads/{name}", check=False).ok

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return self.run("merge-base", "--is-ancestor", ancestor, descendant, check=False).ok

    def merge_base(self, a: str, b: str) -> str | None:
        result = self.run("merge-base", a, b, check=False)
        return result.stdout.strip() if result.ok else None

    def dirty_paths(self) -> list[str]:
        """Tracked files with staged or unstaged changes (untracked files do not count).

        Read without taking the index lock (no opportunistic index refresh): a query must
        not leave ``index.lock`` behind if it is killed, nor block a concurrent git.
        """
        text = self.run(
            "status", "--porcelain=v1", "--untracked-files=no", "-z", env=_NO_OPTIONAL_LOCKS
        ).stdout
        return [entry[3:] for entry in text.split("\0") if entry]

    def unmerged_paths(self) -> list[str]:
        text = self.out("diff", "--name-only", "--diff-filter=U", "-z")
        return sorted({p for p in text.split("\0") if p})

    def has_staged_changes(self) -> bool:
        return not self.run("diff", "--cached", "--quiet", check=False).ok

    def cherry_pick_head(self) -> str | None:
        path = self.git_dir / "CHERRY_PICK_HEAD"
        return path.read_text().strip() if path.exists() else None

    def sequencer_active(self) -> bool:
        return (self.git_dir / "sequencer").exists()

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

    def tags_merged_into(self, commit: str) -> set[str]:
        """Tags whose commit is ``commit`` or one of its ancestors."""
        text = self.out(
            "for-each-ref", f"--merged={commit}", "--format=%(refname:lstrip=2)", "refs/tags"
        )
        return set(text.splitlines())

    def has_remote(self, remote: str) -> bool:
        return remote in self.out("remote").split()

    def remote_tags(self, remote: str) -> dict[str, str]:
        """Tags on the remote (read with ls-remote; local refs are not touched)."""
        result = self.run("ls-remote", "--tags", remote, check=False)
        if not result.ok:
            raise GitError(f"cannot read tags of remote {remote!r}: {_first_line(result.stderr)}")
        tags: dict[str, str] = {}
        for line in result.stdout.splitlines():
            sha, ref = line.split("\t", 1)
            name = ref.removeprefix("refs/tags/")
            if name.endswith("^{}"):
                tags[name[:-3]] = sha
            else:
                tags.setdefault(name, sha)
        return tags

    def log(self, *range_args: str, fmt: str) -> str:
        return self.out("log", f"--format={fmt}", *range_args, "--")

    def log_stream(self, *range_args: str, fmt: str, sep: str) -> GitStream:
        """:meth:`log`, streamed: records (split at ``sep``) arrive while git writes them."""
        return self.stream("log", f"--format={fmt}", *range_args, "--", sep=sep)

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

    def rev_list(self, *args: str) -> list[str]:
        return self.out("rev-list", *args).split()

    def config_value(self, key: str) -> str | None:
        result = self.run("config", "--get", key, check=False)
        return result.stdout.strip() if result.ok else None

    def remote_url(self, remote: str) -> str | None:
        return self.config_value(f"remote.{remote}.url")

    def refs(self) -> dict[str, str]:
        text = self.out("for-each-ref", "--format=%(refname) %(objectname)")
        pairs = (line.split(" ", 1) for line in text.splitlines())
        return {name: sha for name, sha in pairs}

    def show_file(self, ref: str, path: str) -> str | None:
        result = self.run("show", f"{ref}:{path}", check=False)
        return result.stdout if result.ok else None


_NO_OPTIONAL_LOCKS = {"GIT_OPTIONAL_LOCKS": "0"}  # what --no-optional-locks sets


def _environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This environment, with git's messages in English (they are parsed and quoted)."""
    return {**os.environ, "LANGUAGE": "C", "LC_ALL": "C", **(extra or {})}


def _decode(data: bytes) -> str:
    return data.decode(sys.getfilesystemencoding(), "surrogateescape")


def _popen(
    cwd: Path, args: Sequence[str], *, stdin: bool = False, env: Mapping[str, str] | None = None
) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            ["git", *args],
            cwd=cwd,
            env=_environment(env),
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as err:
        raise GitError(f"cannot run git: {err}") from None


def _result(proc: subprocess.Popen[bytes], out: bytes, err: bytes) -> GitResult:
    # one final newline is not part of the answer
    return GitResult(
        proc.returncode, _decode(out).removesuffix("\n"), _decode(err).removesuffix("\n")
    )


def _execute(
    cwd: Path,
    args: Sequence[str],
    *,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
) -> GitResult:
    """Run git through GitPython's command interface and wait for it. An interrupt leaves
    git running, as it would in a shell: git is in this process group and gets the signal."""
    with contextlib.ExitStack() as stack:
        istream = None
        if stdin is not None:
            istream = stack.enter_context(tempfile.TemporaryFile())
            istream.write(stdin.encode())
            istream.seek(0)
        try:
            status, out, err = (
                _gitpython()
                .Git(str(cwd))
                .execute(
                    ["git", *args],
                    istream=istream,
                    with_extended_output=True,
                    with_exceptions=False,
                    stdout_as_string=False,
                    strip_newline_in_stdout=False,
                    env=_environment(env),
                )
            )
        except OSError as failure:
            raise GitError(f"cannot run git: {failure}") from None
    # one final newline is not part of the answer
    return GitResult(status, _decode(out).removesuffix("\n"), str(err).removesuffix("\n"))


@functools.cache
def _gitpython() -> Any:
    import logging

    import git  # lazy: ~60 ms; nox also turns on DEBUG logging for every logger

    logging.getLogger("git").setLevel(logging.WARNING)
    return git


class GitRead:
    """A read-only git command started at once, its output collected in the background."""

    def __init__(self, cwd: Path, args: Sequence[str], stdin: str | None) -> None:
        import threading

        self.args = tuple(args)
        self._proc = _popen(cwd, self.args, stdin=stdin is not None)
        self._input = None if stdin is None else stdin.encode()
        self._output: tuple[bytes, bytes] | BaseException = (b"", b"")
        self._collect = threading.Thread(target=self._communicate, daemon=True)
        self._collect.start()

    def _communicate(self) -> None:
        try:
            self._output = self._proc.communicate(self._input)
        except BaseException as err:  # handed to the thread that asks for the result
            self._output = err

    def result(self) -> GitResult:
        """Wait for git; what :meth:`GitRepo.run` with ``check=False`` returns."""
        self._collect.join()
        if isinstance(self._output, BaseException):
            raise self._output
        return _result(self._proc, *self._output)

    def out(self) -> str:
        """Wait for git; its output, or :class:`GitError` as :meth:`GitRepo.out` raises."""
        result = self.result()
        if not result.ok:
            raise GitError(
                f"git {' '.join(self.args[:3])} failed: {_first_line(result.stderr) or result.stdout}"
            )
        return result.stdout


class GitStream:
    """A read-only git command started at once, its output read as git writes it.

    Run and decoded as :meth:`GitRepo.run` runs commands (no stdin); stderr is collected
    on the side.
    """

    def __init__(self, cwd: Path, args: Sequence[str], sep: str) -> None:
        import threading

        self.args = tuple(args)
        self.sep = sep
        self._proc = _popen(cwd, self.args)
        self._stderr: list[bytes] = []
        self._read_all = False
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()

    def _read_stderr(self) -> None:
        assert self._proc.stderr is not None
        self._stderr.append(self._proc.stderr.read())

    def __iter__(self) -> Iterator[str]:
        import codecs

        stdout = self._proc.stdout
        assert stdout is not None
        decoder = codecs.getincrementaldecoder(sys.getfilesystemencoding())("surrogateescape")
        fd = stdout.fileno()
        pending = ""
        try:
            while chunk := os.read(fd, 1 << 16):
                text = pending + decoder.decode(chunk)
                # a final newline is not output (as run() strips it): keep it back till more comes
                held = "\n" if text.endswith("\n") else ""
                parts = text[: len(text) - len(held)].split(self.sep)
                pending = parts.pop() + held
                yield from parts
            self._read_all = True
            yield (pending + decoder.decode(b"", final=True)).removesuffix("\n")
        finally:
            status = self.close()
        if status != 0:
            err = _decode(self._stderr[0])
            raise GitError(f"git {' '.join(self.args[:3])} failed: {_first_line(err)}")

    def close(self) -> int:
        """Wait for git (stopping it first unless all its output was read); its exit status."""
        if not self._read_all and self._proc.poll() is None:
            self._proc.kill()
        status = self._proc.wait()
        self._drain.join()
        for pipe in (self._proc.stdout, self._proc.stderr):
            if pipe is not None:
                pipe.close()
        return status

    def __enter__(self) -> GitStream:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith("hint:")]
    return (useful or lines or [""])[0]


def short(sha: str) -> str:
    return sha[:10]


def quote_args(args: Sequence[str]) -> str:
    import shlex

    return " ".join(shlex.quote(a) for a in args)

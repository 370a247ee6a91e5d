"""``rehearse``: a whole rc cycle on the bundled sample engine, in a throwaway sandbox.

Every step runs the real ``release`` command as a maintainer would type it, against a
real repository and a local bare remote: cut, picks (one conflict, resolved by hand
and continued), a refused feature pick, rc1, push, a late fix from the picks file,
rc2, promote, push, notes. At the end the sandbox is checked: tags on the remote,
the final on the last rc's commit, each pick listed once, the changelog folded.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from release.adapters import process
from release.adapters.git import GitRepo
from release.errors import ReleaseError
from release.sample import (
    AFTER_CUT,
    LATE_FIX,
    RESOLVED_SCHEDULER_108,
    SampleEngine,
    make_sample_engine,
)

__all__ = ["Rehearsal", "rehearse"]

Say = Callable[[str], None]


class RehearsalError(Exception):
    pass


class Rehearsal:
    def __init__(self, sandbox: Path, say: Say) -> None:
        self.sandbox = sandbox
        self.say = say
        self.engine: SampleEngine | None = None
        self.checks: list[tuple[str, bool]] = []

    @property
    def repo(self) -> GitRepo:
        assert self.engine is not None
        return self.engine.repo

    def release(self, *args: str, expect: int = 0) -> str:
        """Run ``release ARGS`` in the engine checkout, echoing it like a terminal session."""
        assert self.engine is not None
        self.say("$ release " + " ".join(_quote(a) for a in args))
        env = {**os.environ, "RELEASE_REPO": str(self.engine.root)}
        env.pop("RELEASE_DEBUG", None)
        proc = process.run(
            [sys.executable, "-m", "release", *args],
            error=ReleaseError,
            cwd=self.engine.root,
            env=env,
        )
        for line in (proc.stdout + proc.stderr).rstrip().splitlines():
            self.say("    " + line)
        if proc.status != expect:
            raise RehearsalError(
                f"`release {' '.join(args)}` exited {proc.status}, expected {expect}"
            )
        return proc.stdout

    def git(self, *args: str, check: bool = True) -> str:
        self.say("$ git " + " ".join(_quote(a) for a in args))
        result = self.repo.run(*args, check=check)
        return result.stdout

    def check(self, what: str, ok: bool) -> None:
        self.checks.append((what, ok))
        self.say(f"{'ok  ' if ok else 'FAIL'} {what}")

    def run(self) -> bool:
        say = self.say
        say(f"sandbox: {self.sandbox}")
        self.engine = engine = make_sample_engine(self.sandbox)
        say(
            f"sample engine with {len(self.repo.rev_list('HEAD'))} commits on main, remote {engine.remote}"
        )
        self.release("status")
        self.release("cut", "0.1.0", "--no-switch")
        for change in AFTER_CUT:
            engine.commit(change)
        say("main moved on: #107 (a rename), #108 and #109 (fixes), #110 (a feature), #111 (CI)")
        self.git("push", "--quiet", "origin", "main")
        self.git("switch", "--quiet", "releases/v0.1.0")

        self.release("pick", "#109 #108 #106", "--reason", "regression", "--dry-run")
        self.release("pick", "#109 #108 #106", "--reason", "regression", expect=4)
        head_after_conflict = self.repo.rev("HEAD")
        self.check(
            "conflict left the branch at the cut and the tree clean",
            head_after_conflict == self.repo.rev("refs/heads/main~5")
            and not self.repo.dirty_paths(),
        )
        say("resolving #108 by hand (it was written against #107's rename):")
        self.git("cherry-pick", "-x", engine.shas[108], check=False)
        (engine.root / "tinyengine" / "scheduler.py").write_text(
            RESOLVED_SCHEDULER_108, encoding="utf-8"
        )
        self.git("add", "tinyengine/scheduler.py")
        self.release("pick", "--continue")
        self.release("pick", "#110", expect=3)  # feature work is refused
        self.release("pick", "#111", "--reason", "release-only")
        self.release("tag", "--dry-run")
        self.release("tag")
        self.release("push")

        self.git("switch", "--quiet", "main")
        engine.commit(LATE_FIX)
        self.git("push", "--quiet", "origin", "main")
        self.git("switch", "--quiet", "releases/v0.1.0")
        (engine.root / "release-picks.txt").write_text(
            "# picks for 0.1.0rc2\n#112 critical\n#108 regression\n", encoding="utf-8"
        )
        self.release("status")
        self.release("pick", "--file", "release-picks.txt")
        self.release("tag")
        self.release("notes", "--since", "v0.1.0rc1")
        self.release("promote", "--dry-run")
        self.release("promote")
        self.release("push")
        notes = self.release("notes", "--view", "final", "--until", "v0.1.0")
        self.release("status")
        self._verify(notes)
        return all(ok for _, ok in self.checks)

    def _verify(self, notes: str) -> None:
        assert self.engine is not None and self.engine.remote is not None
        remote_refs = self.repo.remote_refs(str(self.engine.remote))
        self.check(
            "remote has v0.1.0rc1, v0.1.0rc2 and v0.1.0",
            all(f"refs/tags/{t}" in remote_refs for t in ("v0.1.0rc1", "v0.1.0rc2", "v0.1.0")),
        )
        self.check(
            "the final is on the last rc's commit",
            self.repo.rev("v0.1.0") == self.repo.rev("v0.1.0rc2"),
        )
        self.check(
            "the remote branch matches the local one",
            remote_refs.get("refs/heads/releases/v0.1.0") == self.repo.rev("releases/v0.1.0"),
        )
        self.check(
            "each pick is listed once in the final notes",
            all(notes.count(f"#{n}]") == 1 for n in (108, 109, 111, 112)),
        )
        self.check(
            "the reverted kernel stub and its revert cancel out",
            "#104" not in notes and "#105" not in notes,
        )
        self.check("the feature #110 was not picked", "#110" not in notes)
        changelog = (self.engine.root / "CHANGELOG.md").read_text(encoding="utf-8")
        self.check(
            "CHANGELOG.md has the final and no rc sections",
            "## [0.1.0] - " in changelog and "[0.1.0rc" not in changelog,
        )


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


def rehearse(*, keep: bool = False, workdir: str | None = None, say: Say = print) -> bool:
    base = Path(workdir) if workdir else None
    if base is not None:
        base.mkdir(parents=True, exist_ok=True)
    sandbox = Path(tempfile.mkdtemp(prefix="release-rehearsal-", dir=base))
    rehearsal = Rehearsal(sandbox, say)
    try:
        ok = rehearsal.run()
    except RehearsalError as err:
        say(f"rehearsal failed: {err}")
        ok = False
    finally:
        if not keep and rehearsal.engine is not None:
            import shutil

            shutil.rmtree(sandbox, ignore_errors=True)
    passed = sum(1 for _, good in rehearsal.checks if good)
    say(
        f"rehearsal {'passed' if ok else 'FAILED'}: {passed}/{len(rehearsal.checks)} checks"
        + (f"; sandbox kept at {sandbox}" if keep else "")
    )
    return ok

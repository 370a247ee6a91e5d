"""``release pick`` of ten commits, killed with SIGKILL at chosen moments, then brought
home: a re-run of the same command, ``--continue`` or ``--abort``.

The kill comes from git's own hooks (the sequencer runs ``prepare-commit-msg``,
``reference-transaction`` and ``post-commit`` for every picked commit) or from the test
when a file appears or a hook signals that it is waiting. Each converged branch must
carry exactly the patches of an uninterrupted run on a twin repository: same messages
(with their ``-x`` lines), same tree, nothing lost or doubled; ``--abort`` must return
to the original head.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from release.adapters.git import GitRepo
from release.adapters.lock import process_group_alive
from release.sample import AFTER_CUT, ALICE, Change, SampleEngine, make_sample_engine
from tests.conftest import repo_state, run_cli
from tests.docker_support import default_sigint

pytestmark = pytest.mark.slow

BRANCH = "releases/v0.1.0"
FIXES = range(1, 11)
PICKS = " ".join(f"#2{n:02d}" for n in FIXES)
DEADLINE = 30.0  # seconds any single step may take before the test gives up


# -- repositories ------------------------------------------------------------------

_TEMPLATE: dict[str, tuple[Path, dict[int, str], str]] = {}


def _template(factory: pytest.TempPathFactory) -> tuple[Path, dict[int, str], str]:
    """cut_engine plus ten clean-applying fixes on main (#201-#210), built once."""
    if "ten" not in _TEMPLATE:
        base = factory.mktemp("fault-template")
        engine = make_sample_engine(base)
        engine.repo.run("branch", BRANCH, "main")
        for change in AFTER_CUT:
            engine.commit(change)
        for n in FIXES:
            engine.commit(
                Change(
                    f"[Bugfix] Fix thing {n} (#2{n:02d})",
                    ALICE,
                    {f"fixes/thing_{n:02d}.py": f"THING = {n}\n"},
                )
            )
        engine.repo.run("push", "--quiet", "origin", "main", BRANCH)
        engine.repo.run("switch", "--quiet", BRANCH)
        head = engine.repo.out("rev-parse", "HEAD").strip()
        _TEMPLATE["ten"] = (base, dict(engine.shas), head)
    return _TEMPLATE["ten"]


def _copy(base: Path, dest: Path, shas: dict[int, str]) -> SampleEngine:
    shutil.copytree(base, dest, symlinks=True)
    repo = GitRepo(dest / "engine")
    repo.run("remote", "set-url", "origin", str(dest / "remote.git"))
    repo.run("status", "--porcelain")  # refresh the copied index's stat data
    return SampleEngine(dest / "engine", dest / "remote.git", repo, dict(shas))


@dataclass(frozen=True)
class Outcome:
    messages: list[str]  # oldest first: subject, body, the -x line
    authors: list[str]
    tree: str


def _outcome(engine: SampleEngine, since: str) -> Outcome:
    repo = engine.repo
    messages = repo.out("log", "--reverse", "--format=%B%x1e", f"{since}..HEAD").split("\x1e")
    authors = repo.out("log", "--reverse", "--format=%an <%ae>", f"{since}..HEAD").splitlines()
    return Outcome(
        [m.strip() for m in messages if m.strip()],
        authors,
        repo.out("rev-parse", "HEAD^{tree}").strip(),
    )


@pytest.fixture
def ten(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[SampleEngine, str]:
    """A fresh copy of the template and the branch head before any pick."""
    base, shas, head = _template(tmp_path_factory)
    return _copy(base, tmp_path / "repo", shas), head


_TWIN: dict[tuple[tuple[str, ...], str | None], Outcome] = {}


def _twin(factory: pytest.TempPathFactory, *args: str, picks_file: str | None = None) -> Outcome:
    """The uninterrupted run of ``release ARGS`` on its own copy, computed once."""
    key = (args, picks_file)
    if key not in _TWIN:
        base, shas, head = _template(factory)
        engine = _copy(base, factory.mktemp("twin") / "repo", shas)
        if picks_file is not None:
            (engine.root / "picks.txt").write_text(picks_file, encoding="utf-8")
        result = run_cli(engine.root, *args)
        assert result.code == 0, result.output
        _TWIN[key] = _outcome(engine, head)
    return _TWIN[key]


@pytest.fixture
def twin(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    return _twin(tmp_path_factory, "pick", PICKS)


# -- kill points -------------------------------------------------------------------

KILL_GROUP = "kill -KILL 0  # the whole process group: release, git and this hook\n"


def _hook(engine: SampleEngine, name: str, body: str) -> None:
    path = engine.repo.git_dir / "hooks" / name
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)


def _counting(counter: Path, at: set[int], action: str, guard: str = "") -> str:
    """A hook body that counts its runs and does ``action`` on the listed ones."""
    cases = "|".join(str(n) for n in sorted(at))
    return (
        f"{guard}"
        f"n=$(( $(cat '{counter}' 2>/dev/null || echo 0) + 1 ))\n"
        f"echo $n > '{counter}'\n"
        f"case $n in {cases}) {action} ;; esac\n"
        "exit 0\n"
    )


@dataclass(frozen=True)
class KillPoint:
    id: str
    arm: Callable[[SampleEngine, Path], None]  # install hooks before the run
    wait_for: Callable[[SampleEngine, Path], Path] | None = None  # the test kills when it exists
    sig: int = signal.SIGKILL
    commits: int | None = None  # picks on the branch when the kill lands (None: any)
    debris: tuple[str, ...] = ()  # what the kill leaves under .git, proof of where it landed
    staged: bool = False  # the patch being picked sits in the index, uncommitted
    group: bool = True  # the signal goes to the whole group (a terminal), or to release alone


def _after_commit(n: int) -> KillPoint:
    def arm(engine: SampleEngine, work: Path) -> None:
        _hook(engine, "post-commit", _counting(work / "count", {n}, KILL_GROUP))

    return KillPoint(f"after-commit-{n}", arm, commits=n)


def _mid_commit(n: int) -> KillPoint:
    """Inside the nth commit: the patch is in the index, the commit not written yet."""

    def arm(engine: SampleEngine, work: Path) -> None:
        _hook(engine, "prepare-commit-msg", _counting(work / "count", {n}, KILL_GROUP))

    return KillPoint(
        f"mid-commit-{n}", arm, commits=n - 1, debris=("sequencer", "CHERRY_PICK_HEAD"), staged=True
    )


def _ref_locked(n: int) -> KillPoint:
    """The nth branch update is prepared: HEAD.lock and the branch's .lock are held."""
    guard = f'[ "$1" = prepared ] || exit 0\ngrep -q " refs/heads/{BRANCH}$" || exit 0\n'

    def arm(engine: SampleEngine, work: Path) -> None:
        _hook(engine, "reference-transaction", _counting(work / "count", {n}, KILL_GROUP, guard))

    return KillPoint(
        f"ref-locked-{n}",
        arm,
        commits=n - 1,
        staged=True,
        debris=("sequencer", "HEAD.lock", f"refs/heads/{BRANCH}.lock"),
    )


def _file_appears(name: str) -> KillPoint:
    def wait_for(engine: SampleEngine, work: Path) -> Path:
        return engine.repo.git_dir / "release" / name

    return KillPoint(f"at-{name.split('.')[0]}", lambda engine, work: None, wait_for)


def _hook_waits(n: int, sig: int = signal.SIGKILL, label: str = "killed") -> KillPoint:
    """A post-commit hook that signals and sleeps: the test sends the signal from outside."""

    def arm(engine: SampleEngine, work: Path) -> None:
        action = f"touch '{work / 'waiting'}'; sleep {DEADLINE:.0f}"
        _hook(engine, "post-commit", _counting(work / "count", {n}, action))

    return KillPoint(
        f"{label}-in-hook-{n}", arm, lambda engine, work: work / "waiting", sig, commits=n
    )


def _terminated_in_hook(n: int) -> KillPoint:
    """SIGTERM to release alone, as CI's cancel or ``timeout`` sends it, while git waits on a
    post-commit hook; the hook lives as long as its git does."""

    def arm(engine: SampleEngine, work: Path) -> None:
        action = f"touch '{work / 'waiting'}'; while kill -0 $PPID 2>/dev/null; do sleep 0.05; done"
        _hook(engine, "post-commit", _counting(work / "count", {n}, action))

    return KillPoint(
        f"sigterm-in-hook-{n}",
        arm,
        lambda engine, work: work / "waiting",
        signal.SIGTERM,
        commits=n,
        group=False,
    )


POINTS = {
    p.id: p
    for p in (
        _file_appears("lock"),
        _file_appears("pick.json"),
        _after_commit(1),
        _after_commit(6),
        _after_commit(10),
        _mid_commit(4),
        _ref_locked(3),
        _hook_waits(8),
        _hook_waits(5, signal.SIGINT, "ctrl-c"),
        _terminated_in_hook(7),
    )
}


def _run_killed(
    engine: SampleEngine,
    point: KillPoint,
    work: Path,
    args: tuple[str, ...] = ("pick", PICKS),
    *,
    wait_group: bool = True,
) -> tuple[int, int]:
    """Start the pick in its own process group, let the kill point fire, reap it."""
    point.arm(engine, work)
    with open(work / "out", "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "release", *args],
            cwd=engine.root,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=default_sigint,
        )
    try:
        if point.wait_for is not None:
            target = point.wait_for(engine, work)
            deadline = time.monotonic() + DEADLINE
            while not target.exists():
                assert proc.poll() is None, "the pick ended before the kill point:\n" + _out(work)
                assert time.monotonic() < deadline, "kill point never reached"
                time.sleep(0.002)
            (os.killpg if point.group else os.kill)(proc.pid, point.sig)
        code = proc.wait(timeout=DEADLINE)
        if wait_group:
            # Ctrl-C lets git and the hook exit on their own, a moment after release;
            # until then a re-run rightly refuses to recover under them.
            deadline = time.monotonic() + DEADLINE
            while process_group_alive(proc.pid):
                assert time.monotonic() < deadline, "the interrupted group never ended"
                time.sleep(0.005)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    for hook in ("post-commit", "prepare-commit-msg", "reference-transaction"):
        (engine.repo.git_dir / "hooks" / hook).unlink(missing_ok=True)
    return code, proc.pid


def _out(work: Path) -> str:
    return (work / "out").read_text(errors="replace")


def _assert_interrupted(
    code: int, point: KillPoint, work: Path, engine: SampleEngine, head: str
) -> None:
    """The run died where the kill point says, leaving what such a death leaves."""
    if point.sig == signal.SIGINT:
        assert code == 130, _out(work)
        assert "interrupted; re-run" in _out(work)
    elif point.sig == signal.SIGTERM:
        assert code == 143, _out(work)
        assert "terminated; re-run" in _out(work)
    else:
        assert code == -signal.SIGKILL, f"exit {code}:\n{_out(work)}"
    if point.commits is not None:
        done = engine.repo.out("rev-list", "--count", f"{head}..HEAD").strip()
        assert int(done) == point.commits
    for name in point.debris:
        assert (engine.repo.git_dir / name).exists(), f"{name} missing after {point.id}"
    if point.staged:
        assert not engine.repo.run("diff", "--cached", "--quiet", check=False).ok
    assert (engine.repo.git_dir / "release" / "pick.json").exists() or point.id == "at-lock"


def _assert_settled(engine: SampleEngine) -> None:
    """No leftovers: no state, no lock, no sequencer, no stray .lock files, clean tree."""
    git_dir = engine.repo.git_dir
    assert not (git_dir / "release").exists()
    assert not (git_dir / "sequencer").exists()
    assert not (git_dir / "CHERRY_PICK_HEAD").exists()
    assert sorted(p.name for p in git_dir.rglob("*.lock")) == []
    assert engine.repo.out("status", "--porcelain", "--untracked-files=no") == ""
    assert engine.repo.current_branch() == BRANCH


def _assert_converged(engine: SampleEngine, head: str, twin: Outcome) -> None:
    _assert_settled(engine)
    got = _outcome(engine, head)
    assert got == twin
    picked_from = [
        line
        for m in got.messages
        for line in m.splitlines()
        if line.startswith("(cherry picked from commit ")
    ]
    expected = [f"(cherry picked from commit {engine.shas[200 + n]})" for n in FIXES]
    assert picked_from == expected  # each fix exactly once, in main's order


# -- the tests ---------------------------------------------------------------------


def test_twin_run_picks_all_ten(twin: Outcome) -> None:
    assert [m.splitlines()[0] for m in twin.messages] == [
        f"[Bugfix] Fix thing {n} (#2{n:02d})" for n in FIXES
    ]


RERUN = [
    "at-pick",
    "after-commit-1",
    "after-commit-6",
    "after-commit-10",
    "mid-commit-4",
    "ref-locked-3",
    "killed-in-hook-8",
    "ctrl-c-in-hook-5",
    "sigterm-in-hook-7",
]


@pytest.mark.parametrize("point", [POINTS[p] for p in RERUN], ids=RERUN)
def test_rerun_converges(
    point: KillPoint, ten: tuple[SampleEngine, str], twin: Outcome, tmp_path: Path
) -> None:
    engine, head = ten
    code, _ = _run_killed(engine, point, tmp_path)
    _assert_interrupted(code, point, tmp_path, engine, head)

    result = run_cli(engine.root, "pick", PICKS, timeout=DEADLINE)

    assert result.code == 0, result.output
    _assert_converged(engine, head, twin)
    picked = [line for line in result.stdout.splitlines() if line.startswith("picked ")]
    skipped = [
        line
        for line in result.stdout.splitlines()
        if line.startswith("skipped ") and "already on the branch" in line
    ]
    assert len(picked) + len(skipped) == len(FIXES), result.stdout


@pytest.mark.parametrize(
    "point_id", ["at-pick", "mid-commit-4", "ref-locked-3", "killed-in-hook-8"]
)
def test_continue_converges(
    point_id: str, ten: tuple[SampleEngine, str], twin: Outcome, tmp_path: Path
) -> None:
    engine, head = ten
    point = POINTS[point_id]
    _assert_interrupted(_run_killed(engine, point, tmp_path)[0], point, tmp_path, engine, head)

    result = run_cli(engine.root, "pick", "--continue", timeout=DEADLINE)

    assert result.code == 0, result.output
    assert "recovered an interrupted pick" in result.stdout
    _assert_converged(engine, head, twin)


@pytest.mark.parametrize("lock", ["MERGE_MSG.lock", "AUTO_MERGE.lock", "ORIG_HEAD.lock"])
def test_continue_converges_past_a_lock_git_held_when_killed(
    lock: str, ten: tuple[SampleEngine, str], twin: Outcome, tmp_path: Path
) -> None:
    """git holds these a moment while it picks (the message, a conflict's merge result) or
    resets; a kill in that moment leaves the lock, which no hook can stop on, so it is
    planted after a real kill inside the fourth commit. Left there, the re-run's
    cherry-pick fails ("could not lock '.git/MERGE_MSG'", seen at the at-pick kill point)."""
    engine, head = ten
    point = POINTS["mid-commit-4"]
    _assert_interrupted(_run_killed(engine, point, tmp_path)[0], point, tmp_path, engine, head)
    (engine.repo.git_dir / lock).write_text("")

    result = run_cli(engine.root, "pick", "--continue", timeout=DEADLINE)

    assert result.code == 0, result.output
    assert f"removed {lock} left by the interrupted pick" in result.stdout
    _assert_converged(engine, head, twin)


@pytest.mark.parametrize("point_id", ["at-pick", "mid-commit-4", "ref-locked-3", "after-commit-10"])
def test_abort_returns_to_the_original_head(
    point_id: str, ten: tuple[SampleEngine, str], tmp_path: Path
) -> None:
    engine, head = ten
    before = repo_state(engine.root)
    staged_before = engine.repo.out("ls-files", "--stage")
    point = POINTS[point_id]
    _assert_interrupted(_run_killed(engine, point, tmp_path)[0], point, tmp_path, engine, head)

    result = run_cli(engine.root, "pick", "--abort", timeout=DEADLINE)

    assert result.code == 0, result.output
    assert f"back at {head[:10]}" in result.stdout
    _assert_settled(engine)
    assert engine.repo.out("rev-parse", "HEAD").strip() == head
    after = repo_state(engine.root)
    # reset --hard rewrites the index file (fresh stat data): compare its entries instead
    assert {k: v for k, v in after.items() if k != "index"} == {
        k: v for k, v in before.items() if k != "index"
    }
    assert engine.repo.out("ls-files", "--stage") == staged_before


def test_killed_before_the_state_file_continue_and_abort_refuse(
    ten: tuple[SampleEngine, str], twin: Outcome, tmp_path: Path
) -> None:
    """Killed while taking the lock: nothing to continue or abort, and a re-run still works."""
    engine, head = ten
    point = POINTS["at-lock"]
    _assert_interrupted(_run_killed(engine, point, tmp_path)[0], point, tmp_path, engine, head)
    if (engine.repo.git_dir / "release" / "pick.json").exists():
        pytest.skip("the kill landed after the state file was written")

    for flag in ("--continue", "--abort"):
        result = run_cli(engine.root, "pick", flag, timeout=DEADLINE)
        assert result.code == 3, result.output
        assert "no pick in progress" in result.stderr
    assert engine.repo.out("rev-parse", "HEAD").strip() == head

    assert run_cli(engine.root, "pick", PICKS, timeout=DEADLINE).code == 0
    _assert_converged(engine, head, twin)


def test_killed_twice_then_rerun(
    ten: tuple[SampleEngine, str], twin: Outcome, tmp_path: Path
) -> None:
    """The re-run is itself killed part-way; the third run still converges."""
    engine, head = ten
    counter = tmp_path / "count"
    twice = KillPoint(
        "twice", lambda e, w: _hook(e, "post-commit", _counting(counter, {3, 7}, KILL_GROUP))
    )
    assert _run_killed(engine, twice, tmp_path)[0] == -signal.SIGKILL
    assert engine.repo.out("rev-list", "--count", f"{head}..HEAD").strip() == "3"
    assert _run_killed(engine, twice, tmp_path)[0] == -signal.SIGKILL
    assert engine.repo.out("rev-list", "--count", f"{head}..HEAD").strip() == "7"

    result = run_cli(engine.root, "pick", PICKS, timeout=DEADLINE)

    assert result.code == 0, result.output
    _assert_converged(engine, head, twin)


def test_a_live_interrupted_pick_is_not_recovered_under_it(
    ten: tuple[SampleEngine, str], tmp_path: Path
) -> None:
    """While a process of the interrupted run's group still runs, recovery must wait."""
    engine, head = ten
    # Kill release, git and the hook, but leave one process of their group running.
    action = f"sleep {DEADLINE:.0f} & pg=$(ps -o pgid= -p $$ | tr -d ' '); kill -KILL $pg $PPID $$"
    point = KillPoint(
        "orphan", lambda e, w: _hook(e, "post-commit", _counting(w / "count", {2}, action))
    )
    code, pgid = _run_killed(engine, point, tmp_path, wait_group=False)
    try:
        assert code == -signal.SIGKILL, _out(tmp_path)
        state = repo_state(engine.root)
        assert state["release_dir"] is not None

        result = run_cli(engine.root, "pick", PICKS, timeout=DEADLINE)

        assert result.code == 3, result.output
        assert "may still be running" in result.stderr
        after = repo_state(engine.root)
        # The dead release's lock file is recovered (its flock died with it); all else stays.
        assert state["release_dir"].pop("lock")  # type: ignore[union-attr]
        assert after == state
    finally:
        os.killpg(pgid, signal.SIGKILL)  # the leftover sleep, and only it
    deadline = time.monotonic() + DEADLINE
    while process_group_alive(pgid):
        assert time.monotonic() < deadline
        time.sleep(0.005)
    result = run_cli(engine.root, "pick", PICKS, timeout=DEADLINE)
    assert result.code == 0, result.output
    assert engine.repo.out("rev-list", "--count", f"{head}..HEAD").strip() == "10"
    _assert_settled(engine)


# Three reasons; each pick carries its Cherry-pick-reason trailer, added to the message git
# wrote.
REASONED = "".join(
    f"#2{n:02d} {'regression' if n <= 4 else 'critical' if n <= 7 else 'docs'}\n" for n in FIXES
)


@pytest.mark.parametrize(
    ("point_id", "mode"),
    [
        ("after-commit-4", "rerun"),  # between a pick and its trailer
        ("after-trailer-4", "continue"),
        ("ref-locked-9", "continue"),
        ("mid-commit-6", "abort"),
    ],
)
def test_picks_with_reasons_converge(
    point_id: str,
    mode: str,
    ten: tuple[SampleEngine, str],
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    engine, head = ten
    expected = _twin(tmp_path_factory, "pick", "--file", "picks.txt", picks_file=REASONED)
    assert [m.splitlines()[-1] for m in expected.messages] == [
        f"Cherry-pick-reason: {line.split()[1]}" for line in REASONED.splitlines()
    ]
    (engine.root / "picks.txt").write_text(REASONED, encoding="utf-8")
    # A pick with a reason is two commits for git's hooks: the pick, then its trailer
    # added by amending. The kill lands in the nth pick's (the amend's) hooks.
    point = {
        "after-commit-4": replace(_after_commit(7), commits=4),  # picked, no trailer yet
        "after-trailer-4": replace(_after_commit(8), commits=4),
        # one commit per cherry-pick: no sequencer directory is left, only the git locks
        "mid-commit-6": replace(_mid_commit(11), commits=5, debris=()),
        "ref-locked-9": replace(
            _ref_locked(17), commits=8, debris=("HEAD.lock", f"refs/heads/{BRANCH}.lock")
        ),
    }[point_id]
    code, _ = _run_killed(engine, point, tmp_path, ("pick", "--file", "picks.txt"))
    _assert_interrupted(code, point, tmp_path, engine, head)

    args = {
        "rerun": ("pick", "--file", "picks.txt"),
        "continue": ("pick", "--continue"),
        "abort": ("pick", "--abort"),
    }[mode]
    result = run_cli(engine.root, *args, timeout=DEADLINE)

    assert result.code == 0, result.output
    _assert_settled(engine)
    if mode == "abort":
        assert engine.repo.out("rev-parse", "HEAD").strip() == head
    else:
        assert _outcome(engine, head) == expected


def test_recovery_removes_the_files_a_killed_pick_wrote_and_keeps_the_users_own(
    ten: tuple[SampleEngine, str],
) -> None:
    """A pick killed after git wrote a new file but before it added it leaves the file
    untracked, which ``reset --hard`` does not touch (the race behind the "at-pick" kill
    point). Recovery removes such a file when it holds exactly what a queued commit adds,
    and the directory git made for it; a file of the user's own at such a path stays."""
    from release.flows.context import ReleaseContext
    from release.flows.pick import Picker
    from release.flows.pick_journal import PickJournal, QueuedPick

    engine, head = ten
    first, second = engine.shas[201], engine.shas[202]
    added = {
        sha: engine.repo.out(
            "diff-tree", "--no-commit-id", "-r", "--diff-filter=A", "--name-only", sha
        ).split()
        for sha in (first, second)
    }
    (left,), (own,) = added[first], added[second]
    (engine.root / left).parent.mkdir(parents=True, exist_ok=True)
    (engine.root / left).write_bytes(engine.repo.out("show", f"{first}:{left}").encode() + b"\n")
    (engine.root / own).write_text("my own notes, not the fix\n")
    said: list[str] = []
    picker = Picker(ReleaseContext(engine.root), said.append)
    queue = (QueuedPick(first, "fix 1", None), QueuedPick(second, "fix 2", None))
    picker._remove_left_files(PickJournal(engine.repo.current_branch(), head, queue))
    assert not (engine.root / left).exists()
    assert (engine.root / own).read_text() == "my own notes, not the fix\n"
    assert said == [f"removed {left}, left by the interrupted pick"]
    if Path(left).parent != Path(own).parent:
        assert not (engine.root / left).parent.exists()


def test_recovery_removes_a_file_the_kill_cut_short_and_keeps_an_older_one(
    ten: tuple[SampleEngine, str],
) -> None:
    """git creates a new file, then writes it: a kill in between leaves it empty, or with
    only its first part (what failed CI once, at the "at-pick" kill point: the re-run's
    cherry-pick refused to overwrite it). Recovery removes such a file when it was written
    after the journal; the same bytes in a file older than the pick are the user's."""
    from release.flows.context import ReleaseContext
    from release.flows.pick import Picker
    from release.flows.pick_journal import PickJournal, QueuedPick

    engine, head = ten
    shas = [engine.shas[n] for n in (201, 202, 203)]
    paths = [
        engine.repo.out("diff-tree", "--no-commit-id", "-r", "--diff-filter=A", "--name-only", s)
        for s in shas
    ]
    contents = [
        subprocess.run(
            ["git", "cat-file", "blob", f"{s}:{p}"],
            cwd=engine.root,
            capture_output=True,
            check=True,
        ).stdout
        for s, p in zip(shas, paths, strict=True)
    ]
    assert len(set(paths)) == 3 and all(len(c) > 4 for c in contents)
    older = engine.root / paths[2]
    older.parent.mkdir(parents=True, exist_ok=True)
    older.write_bytes(contents[2][:4])
    os.utime(older, ns=(time.time_ns() - 10**10,) * 2)  # there before the pick began
    said: list[str] = []
    picker = Picker(ReleaseContext(engine.root), said.append)
    queue = tuple(QueuedPick(s, f"fix {n}", None) for n, s in enumerate(shas))
    journal = picker.journal.write(PickJournal(engine.repo.current_branch(), head, queue))
    for path, data in zip(paths[:2], (b"", contents[1][:4]), strict=True):
        (engine.root / path).parent.mkdir(parents=True, exist_ok=True)
        (engine.root / path).write_bytes(data)

    picker._remove_left_files(journal)

    assert not (engine.root / paths[0]).exists() and not (engine.root / paths[1]).exists()
    assert older.read_bytes() == contents[2][:4]
    assert sorted(said) == sorted(f"removed {p}, left by the interrupted pick" for p in paths[:2])


def test_a_users_file_in_the_way_stops_the_pick_with_gits_reason(
    ten: tuple[SampleEngine, str], twin: Outcome
) -> None:
    """An untracked file of the user's own where the third picked commit adds one: git
    picks the first two, then refuses to begin the third. The run says what it picked and
    git's reason (its ``error:`` line and the path, not its last ``fatal: cherry-pick
    failed``), leaves no git sequence behind, keeps the file, and the re-run once the file
    is moved away goes on from the third and ends where an uninterrupted pick does."""
    engine, head = ten
    shas = [engine.shas[200 + n] for n in FIXES]
    (path,) = engine.repo.out(
        "diff-tree", "--no-commit-id", "-r", "--diff-filter=A", "--name-only", shas[2]
    ).split()
    own = engine.root / path
    own.parent.mkdir(parents=True, exist_ok=True)
    own.write_text("my own draft\n")

    result = run_cli(engine.root, "pick", PICKS, timeout=DEADLINE)

    assert result.code == 3, result.output
    assert [line.split()[:2] for line in result.stdout.splitlines()] == [
        ["picked", shas[0][:10]],
        ["picked", shas[1][:10]],
    ]
    assert f"would not begin {shas[2][:10]}" in result.stderr
    assert f"would be overwritten by merge: {path};" in result.stderr
    assert "fatal" not in result.stderr
    assert engine.repo.history.count(since=head, until="HEAD") == 2
    assert not (engine.repo.git_dir / "sequencer").exists()
    assert own.read_text() == "my own draft\n"
    own.unlink()
    again = run_cli(engine.root, "pick", "--continue", timeout=DEADLINE)
    assert again.code == 0, again.output
    assert "skipped" not in again.stdout
    assert again.stdout.count("picked ") == len(FIXES) - 2
    _assert_converged(engine, head, twin)


def test_a_failure_after_the_last_pick_keeps_the_picks_and_their_reason(
    ten: tuple[SampleEngine, str],
) -> None:
    """git picked every commit it was given and still failed: nothing is begun again, the
    last pick gets its reason trailer as after a run that ended well, the journal goes on
    after it, and the refusal says git's reason."""
    from release.core.commits import REASON_TRAILER
    from release.errors import RefusedError
    from release.flows.context import ReleaseContext
    from release.flows.pick import Picker
    from release.flows.pick_journal import PickJournal, QueuedPick

    engine, head = ten
    first, second = engine.shas[201], engine.shas[202]
    engine.repo.run("cherry-pick", "-x", first)
    picker = Picker(ReleaseContext(engine.root), lambda line: None)
    queue = (QueuedPick(first, "fix 1", "CVE-1"), QueuedPick(second, "fix 2", None))
    journal = picker.journal.write(PickJournal(engine.repo.current_branch(), head, queue))

    with pytest.raises(RefusedError, match="failed after the last pick: it broke; "):
        picker._refused(journal, queue, [], 1, 1, "error: it broke\nfatal: cherry-pick failed\n")

    assert engine.repo.message().rstrip().endswith(f"{REASON_TRAILER}: CVE-1")
    assert engine.repo.history.count(since=head, until="HEAD") == 1
    saved = picker.journal.read()
    assert saved is not None and saved.queue == queue[1:]

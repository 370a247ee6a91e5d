"""The bundled sample engine and its realistic git history (used by rehearse and the tests).

History on main, vLLM-style: ``[Category]`` prefixes spelt many ways, noise prefixes,
PR numbers, co-authors and sign-offs, a revert pair, a refactor that makes a later fix
conflict when picked alone, and a feature that must not be picked.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from release.adapters.git import GitRepo

__all__ = [
    "AFTER_CUT",
    "BEFORE_CUT",
    "Change",
    "SampleEngine",
    "add_commit",
    "make_engine_repo",
    "make_sample_engine",
    "replace_text",
]

ALICE = ("Alice Chen", "alice@example.com")
BOB = ("Bob Okafor", "bob@example.com")
CAROL = ("Carol Diaz", "carol@example.com")
DAN = ("Dan Ivanov", "dan@example.com")
EVE = ("Eve Park", "eve@example.com")

Edit = Callable[[str], str]


@dataclass(frozen=True)
class Change:
    subject: str
    author: tuple[str, str]
    files: dict[str, str | Edit]
    body: str = ""
    revert_of: str | None = None  # subject of the commit this one reverts


def replace_text(old: str, new: str) -> Edit:
    """An edit that replaces ``old`` (which must be there) once."""

    def edit(text: str) -> str:
        if old not in text:
            raise ValueError(f"sample history: {old!r} not found")
        return text.replace(old, new, 1)

    return edit


def _append(extra: str) -> Edit:
    return lambda text: text + extra


BEFORE_CUT: tuple[Change, ...] = (
    Change(
        "[Frontend] Add --port flag to the server (#102)",
        BOB,
        {
            "tinyengine/server.py": replace_text(
                "    args = sys.argv[1:] if argv is None else argv\n",
                "    args = sys.argv[1:] if argv is None else argv\n"
                '    port = int(args[args.index("--port") + 1]) if "--port" in args else 8000\n',
            ),
        },
        body=f"Co-authored-by: {CAROL[0]} <{CAROL[1]}>",
    ),
    Change(
        "[Doc] Describe the batching policy (#103)",
        CAROL,
        {
            "README.md": _append("\nRequests are batched in arrival order up to `max_batch`.\n"),
        },
    ),
    Change(
        "[Kernel] Add fused add kernel stub (#104)",
        DAN,
        {
            "tinyengine/kernels.py": '"""Kernel stubs."""\n\n\ndef fused_add(a, b):\n    return [x + y for x, y in zip(a, b)]\n',
        },
    ),
    Change(
        'Revert "[Kernel] Add fused add kernel stub (#104)" (#105)',
        DAN,
        {},
        revert_of="[Kernel] Add fused add kernel stub (#104)",
    ),
    Change(
        "[Bugfix][V1] Handle an empty request list (#106)",
        ALICE,
        {
            "tinyengine/scheduler.py": replace_text(
                "    batch = []\n", "    batch = []\n    if not reqs:\n        return batch\n"
            ),
        },
        body=f"Signed-off-by: {ALICE[0]} <{ALICE[1]}>",
    ),
)

AFTER_CUT: tuple[Change, ...] = (
    Change(
        "[Misc] Rename scheduler variables (#107)",
        CAROL,
        {
            "tinyengine/scheduler.py": lambda t: (
                t.replace("reqs", "requests")
                .replace("batch = []", "picked = []")
                .replace("len(batch)", "len(picked)")
                .replace("batch.append(req)", "picked.append(req)")
                .replace("return batch", "return picked")
            ),
        },
    ),
    Change(
        "[BugFix] Fix off-by-one in the batch limit (#108)",
        ALICE,
        {
            "tinyengine/scheduler.py": replace_text(
                "if len(picked) > max_batch:", "if len(picked) >= max_batch:"
            ),
        },
        body=f"Signed-off-by: {ALICE[0]} <{ALICE[1]}>",
    ),
    Change(
        "[bugfix] Fix --port parsing when the value is missing (#109)",
        BOB,
        {
            "tinyengine/server.py": replace_text(
                'int(args[args.index("--port") + 1]) if "--port" in args else 8000',
                'int(args[args.index("--port") + 1]) if "--port" in args[:-1] else 8000',
            ),
        },
        body=f"Co-authored-by: {EVE[0]} <{EVE[1]}>\nSigned-off-by: {BOB[0]} <{BOB[1]}>",
    ),
    Change(
        "[Feature] Add priority scheduling (#110)",
        DAN,
        {
            "tinyengine/priority.py": '"""Priority scheduling."""\n\n\ndef by_priority(requests):\n    return sorted(requests, key=lambda r: r.get("priority", 0))\n',
        },
    ),
    Change(
        "[main][CI/Build] Pin the build tools (#111)",
        EVE,
        {
            "requirements-build.txt": "setuptools==80.9.0\nwheel==0.45.1\n",
        },
    ),
)

LATE_FIX = Change(
    "[Fix] Return 400 on a malformed request body (#112)",
    BOB,
    {
        "tinyengine/server.py": _append("\n\ndef bad_request():\n    return 400\n"),
    },
    body=f"Co-authored-by: {ALICE[0]} <{ALICE[1]}>",
)

# The resolution a maintainer writes for #108 picked without the #107 rename.
RESOLVED_SCHEDULER_108 = '''"""A toy scheduler: batches requests in arrival order."""


def schedule(reqs, max_batch):
    batch = []
    if not reqs:
        return batch
    for req in reqs:
        if len(batch) >= max_batch:
            break
        batch.append(req)
    return batch
'''


@dataclass
class SampleEngine:
    root: Path
    remote: Path | None
    repo: GitRepo
    shas: dict[int, str] = field(default_factory=dict)  # PR number -> main sha

    def commit(self, change: Change) -> str:
        sha = add_commit(self.repo, change, self.shas)
        pr = _pr(change.subject)
        if pr is not None:
            self.shas[pr] = sha
        return sha


def _pr(subject: str) -> int | None:
    import re

    match = re.search(r"\(#(\d+)\)\s*$", subject)
    return int(match[1]) if match else None


_EPOCH = 1_764_000_000
_CLOCK = [_EPOCH]  # commit times advance a minute per commit; reset for every new engine


def add_commit(repo: GitRepo, change: Change, shas: dict[int, str] | None = None) -> str:
    """Commit ``change`` on the current branch with its author and a steady clock."""
    if change.revert_of is not None:
        target = repo.out(
            "log", "--format=%H", "--fixed-strings", f"--grep={change.revert_of}", "-n1"
        ).strip()
        _CLOCK[0] += 60
        env = _env(change.author, _CLOCK[0])
        repo.run("revert", "--no-edit", target, env=env)
        message = f"{change.subject}\n\nThis reverts commit {target}.\n"
        repo.run("commit", "--amend", "--quiet", "-F", "-", stdin=message, env=env)
        return repo.head()
    for rel, content in change.files.items():
        path = repo.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        path.write_text(content(old) if callable(content) else content, encoding="utf-8")
        repo.run("add", "--", rel)
    _CLOCK[0] += 60
    message = change.subject + (f"\n\n{change.body}\n" if change.body else "\n")
    repo.run("commit", "--quiet", "-F", "-", stdin=message, env=_env(change.author, _CLOCK[0]))
    return repo.head()


def _env(author: tuple[str, str], when: int) -> dict[str, str]:
    stamp = f"@{when} +0000"
    return {
        "GIT_AUTHOR_NAME": author[0],
        "GIT_AUTHOR_EMAIL": author[1],
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_NAME": "Release Maintainer",
        "GIT_COMMITTER_EMAIL": "maintainer@example.com",
        "GIT_COMMITTER_DATE": stamp,
    }


def make_engine_repo(
    root: Path,
    *,
    first: str,
    author: tuple[str, str],
    prepare: Callable[[Path], None] | None = None,
    with_remote: bool = True,
) -> SampleEngine:
    """The bundled engine's files committed at ``root / "engine"`` as ``first`` (after
    ``prepare`` edits them), with a bare remote at ``root / "remote.git"``."""
    root = root.resolve()
    _CLOCK[0] = _EPOCH
    work = root / "engine"
    source = resources.files("release") / "sample" / "engine"
    with resources.as_file(source) as src:
        shutil.copytree(src, work, ignore=shutil.ignore_patterns("__pycache__"))
    if prepare is not None:
        prepare(work)
    repo = GitRepo.init(work)
    assert repo is not None
    repo.run("config", "user.name", "Release Maintainer")
    repo.run("config", "user.email", "maintainer@example.com")
    repo.run("config", "commit.gpgsign", "false")
    repo.run("config", "tag.gpgsign", "false")
    repo.run("add", "--all")
    _CLOCK[0] += 60
    repo.run("commit", "--quiet", "-m", first, env=_env(author, _CLOCK[0]))
    pr = _pr(first)
    engine = SampleEngine(work, None, repo, {pr: repo.head()} if pr is not None else {})
    if with_remote:
        remote = root / "remote.git"
        GitRepo.init(remote, bare=True)
        repo.run("remote", "add", "origin", str(remote))
        engine.remote = remote
    return engine


def make_sample_engine(root: Path, *, with_remote: bool = True) -> SampleEngine:
    """A fresh engine repository at ``root / "engine"`` with history up to the cut point.

    Identical inputs give identical shas: authors, messages and commit times are fixed.
    """
    engine = make_engine_repo(
        root,
        first="[Core] Add the toy scheduler and server (#101)",
        author=ALICE,
        with_remote=with_remote,
    )
    for change in BEFORE_CUT:
        engine.commit(change)
    if with_remote:
        engine.repo.run("push", "--quiet", "origin", "main")
    return engine

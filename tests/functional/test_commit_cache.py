"""The commit cache of ``release notes``: the notes are the same with a cold cache, a warm
one, a damaged or foreign one, after the category aliases or the mailmap change, and with
no cache at all; the file is in the common git directory, and written only where it may be.
"""

from __future__ import annotations

import marshal
import shutil
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from release.adapters.commit_cache import (
    EARLIER_KEPT,
    FORMAT,
    CommitCache,
    cache_key,
    cache_path,
    cache_policy,
)
from release.adapters.notes_cache import notes_cache_dir
from release.core.commits import make_commit
from release.core.config import Config
from release.errors import ConfigError
from release.flows.context import ReleaseContext
from release.sample import BOB, Change, SampleEngine, add_commit
from tests.conftest import run_cli
from tests.history_support import RunOnce

OFF = {"RELEASE_REPO_CACHE": "0"}


pytestmark = pytest.mark.usefixtures("no_ci")  # the runner's CI settings do not leak in


def notes(engine: SampleEngine, *args: str, env: dict[str, str] | None = None) -> str:
    # what is tested here is the commit cache: the notes cache would answer a repeated run
    # whole (tests/functional/test_notes_cache.py), so each run starts without it
    kept = notes_cache_dir(engine.repo.common_dir)
    if kept.is_dir():
        shutil.rmtree(kept)
    result = run_cli(engine.root, "notes", "--until", "main", *args, env=env)
    assert result.code == 0, result.output
    assert "Traceback" not in result.output
    return result.stdout + result.stderr


# ``notes(history, *args, env=OFF)`` of the untouched history, run once per argument list
uncached_notes = RunOnce(lambda history, *args: notes(history, *args, env=OFF))


def _path(engine: SampleEngine) -> Path:
    return cache_path(engine.repo.common_dir)


def _key(engine: SampleEngine) -> str:
    ctx = ReleaseContext(engine.root)
    fingerprint = engine.repo.history.mailmap_fingerprint()
    return cache_key(ctx.config.alias_map(), fingerprint, ctx.repo_identity)


SINCE = ("--since", "main~12")
FORMATS = [pytest.param((), id="md"), pytest.param(("--format", "json"), id="json")]


@pytest.mark.parametrize("fmt", FORMATS)
def test_cold_warm_and_no_cache_give_the_same_notes(
    parsing_history: SampleEngine, fmt: tuple[str, ...]
) -> None:
    args = (*SINCE, *fmt)
    uncached = notes(parsing_history, *args, env=OFF)
    assert not _path(parsing_history).exists()  # off: not written either
    assert notes(parsing_history, *args) == uncached  # cold: written
    written = _path(parsing_history).read_bytes()
    assert notes(parsing_history, *args) == uncached  # warm
    assert _path(parsing_history).read_bytes() == written  # nothing new: not written again
    assert "Faster batching" in uncached and ("Café" in uncached or "Caf\\u00e9" in uncached)


def test_the_warm_run_reads_the_cache_and_the_setting_turns_it_off(
    parsing_history: SampleEngine,
) -> None:
    """A record changed in the file (with the file's own key and checksum) shows in the
    notes: the warm run read it. With RELEASE_REPO_CACHE=0 it is not read."""
    uncached = uncached_notes(parsing_history, *SINCE)
    notes(parsing_history, *SINCE)
    cache = CommitCache.load(_path(parsing_history), _key(parsing_history))
    sha = parsing_history.shas[202]
    record = cache.records[sha]
    cache.records[sha] = (*record[:5], "A title only the cache holds", *record[6:])
    cache.changed = True
    cache.save()
    assert "A title only the cache holds" in notes(parsing_history, *SINCE)
    assert notes(parsing_history, *SINCE, env=OFF) == uncached


def _truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _flipped(data: bytes) -> bytes:
    at = len(data) - 20
    return data[:at] + bytes([data[at] ^ 0x20]) + data[at + 1 :]


def _header(payload: bytes, key: str) -> bytes:
    return b"release-commits %d %s %d %d\n" % (
        FORMAT,
        key.encode(),
        len(payload),
        zlib.crc32(payload),
    )


DAMAGE: list[tuple[str, Callable[[bytes, str], bytes]]] = [
    ("empty", lambda data, key: b""),
    ("truncated", lambda data, key: _truncated(data)),
    ("a flipped byte", lambda data, key: _flipped(data)),
    ("text", lambda data, key: b"not a cache\n" * 50),
    ("another key", lambda data, key: data.replace(key.encode(), b"0" * len(key), 1)),
    ("another format", lambda data, key: data.replace(b" %d " % FORMAT, b" 99 ", 1)),
    ("a length that lies", lambda data, key: data.replace(b"\n", b"0\n", 1)),
    ("a payload of another shape", lambda data, key: _header(marshal.dumps("x"), key) + marshal.dumps("x")),
    ("records of another shape", lambda data, key: _reshaped(data, key)),
    ("earlier people of another shape", lambda data, key: _earlier_reshaped(data, key)),
    ("bytes marshal cannot read", lambda data, key: _header(b"\xff" * 64, key) + b"\xff" * 64),
]  # fmt: skip


def _reshaped(data: bytes, key: str) -> bytes:
    """The same shas, each with a record that does not unpack, under a right header."""
    _, records, earlier = marshal.loads(data[data.index(b"\n") + 1 :])
    payload = marshal.dumps(([], {sha: (1,) for sha in records}, earlier))
    return _header(payload, key) + payload


def _earlier_reshaped(data: bytes, key: str) -> bytes:
    """Earlier people as a list, not a tuple of lines, under a right header."""
    people, records, earlier = marshal.loads(data[data.index(b"\n") + 1 :])
    payload = marshal.dumps((people, records, {sha: list(v) for sha, v in earlier.items()}))
    return _header(payload, key) + payload


@pytest.mark.parametrize("damage", [pytest.param(d, id=name) for name, d in DAMAGE])
def test_a_damaged_or_foreign_cache_is_ignored_and_written_anew(
    parsing_history: SampleEngine, damage: Callable[[bytes, str], bytes]
) -> None:
    uncached = uncached_notes(parsing_history, *SINCE)
    notes(parsing_history, *SINCE)
    path, key = _path(parsing_history), _key(parsing_history)
    path.write_bytes(damage(path.read_bytes(), key))
    assert notes(parsing_history, *SINCE) == uncached
    rewritten = CommitCache.load(path, key)  # whole again, and for this key
    shas = parsing_history.repo.out("rev-list", "--no-merges", "main~12..main").split()
    assert rewritten.take(shas) is not None and all(sha in rewritten for sha in shas)
    assert notes(parsing_history, *SINCE) == uncached
    left = [p.name for p in path.parent.iterdir()]
    assert sorted(left) == sorted([path.name, "notes"])  # no scratch left


def test_a_cache_that_cannot_be_written_changes_nothing(parsing_history: SampleEngine) -> None:
    uncached = uncached_notes(parsing_history, *SINCE)
    release_dir = parsing_history.repo.common_dir / "release"
    release_dir.write_text("a file where the directory would be\n", encoding="utf-8")
    assert notes(parsing_history, *SINCE) == uncached
    release_dir.unlink()
    _path(parsing_history).mkdir(parents=True)  # a directory where the file would be
    assert notes(parsing_history, *SINCE) == uncached
    assert notes(parsing_history, *SINCE) == uncached


def test_changed_aliases_give_the_notes_of_the_new_map(parsing_history: SampleEngine) -> None:
    notes(parsing_history, *SINCE)
    before = _path(parsing_history).read_bytes().split(b"\n", 1)[0]
    pyproject = parsing_history.root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8")
        + '\n[tool.release.categories]\n"Speed" = ["Perfomance", "Perf"]\n"Bug Fixes" = ["Fix", "Bugfix"]\n',
        encoding="utf-8",
    )
    changed = notes(parsing_history, *SINCE)
    assert changed == notes(parsing_history, *SINCE, env=OFF)
    assert "## Speed\n\n- Faster batching" in changed
    assert _path(parsing_history).read_bytes().split(b"\n", 1)[0] != before  # another key


def test_a_changed_mailmap_gives_the_notes_of_the_new_map(parsing_history: SampleEngine) -> None:
    first = notes(parsing_history, *SINCE)
    assert "by Bob Okafor" in first
    (parsing_history.root / ".mailmap").write_text(
        "Robert Okafor <bob@example.com> Bob Okafor <bob@example.com>\n", encoding="utf-8"
    )
    mapped = notes(parsing_history, *SINCE)
    assert "by Robert Okafor" in mapped and "by Bob Okafor" not in mapped
    assert mapped == notes(parsing_history, *SINCE, env=OFF)


def test_commits_the_cache_lacks_are_read_and_added(parsing_history: SampleEngine) -> None:
    notes(parsing_history, "--since", "main~3")
    sha = add_commit(
        parsing_history.repo, Change("[Core] Later work (#208)", BOB, {"g.txt": "g\n"})
    )
    wider = notes(parsing_history, *SINCE)
    assert wider == notes(parsing_history, *SINCE, env=OFF)
    assert "Later work" in wider
    cache = CommitCache.load(_path(parsing_history), _key(parsing_history))
    assert sha in cache and parsing_history.shas[201] in cache


def test_a_replaced_commit_is_read_from_git(parsing_history: SampleEngine) -> None:
    """``git replace`` changes what git says of a sha: the cache is not used then."""
    notes(parsing_history, *SINCE)
    repo = parsing_history.repo
    sha = parsing_history.shas[202]
    raw = repo.run("cat-file", "commit", sha).stdout
    replacement = raw.replace("Faster batching", "Batching, replaced")
    new = repo.run("hash-object", "-t", "commit", "-w", "--stdin", stdin=replacement).stdout
    repo.run("replace", sha, new.strip())
    replaced = notes(parsing_history, *SINCE)
    assert "Batching, replaced" in replaced
    assert replaced == notes(parsing_history, *SINCE, env=OFF)


@pytest.mark.parametrize("where", ["info/grafts", "GIT_GRAFT_FILE"])
def test_with_grafts_who_came_before_the_range_is_read_from_git(
    parsing_history: SampleEngine, where: str, tmp_path: Path
) -> None:
    """A grafts file gives a commit other parents: the history before the range, and so who
    is new in it, is not what was kept for that sha. The cache is not used then."""
    before = notes(parsing_history, *SINCE)  # the people before main~12 kept, for its sha
    first = before.count("made their first contribution")
    since = parsing_history.repo.rev("main~12")
    graft = (
        parsing_history.repo.common_dir / "info" / "grafts"
        if where == "info/grafts"
        else tmp_path / "g"
    )
    graft.write_text(f"{since}\n", encoding="ascii")  # main~12 has no parent now
    env = {} if where == "info/grafts" else {"GIT_GRAFT_FILE": str(graft)}
    grafted = notes(parsing_history, *SINCE, env=env)
    assert grafted == notes(parsing_history, *SINCE, env={**env, **OFF})
    assert grafted.count("made their first contribution") > first, grafted


def test_a_linked_worktree_uses_the_common_git_directory(parsing_history: SampleEngine) -> None:
    worktree = parsing_history.root.parent / "linked"
    parsing_history.repo.run("worktree", "add", "--quiet", "--detach", str(worktree), "main")
    result = run_cli(worktree, "notes", *SINCE, "--until", "main")
    assert result.code == 0, result.output
    assert (
        result.stdout
        == run_cli(parsing_history.root, "notes", *SINCE, "--until", "main", env=OFF).stdout
    )
    assert _path(parsing_history).is_file()
    assert _path(parsing_history).parent == parsing_history.root / ".git" / "release"
    assert not list((parsing_history.root / ".git" / "worktrees").rglob("release"))


@pytest.mark.parametrize(
    ("env", "written"),
    [
        pytest.param({}, True, id="default"),
        pytest.param({"CI": "true"}, False, id="CI"),
        pytest.param({"CI": "true", "RELEASE_REPO_CACHE": "1"}, True, id="CI, asked for"),
        pytest.param({"CI": "false"}, True, id="CI=false"),
        pytest.param(OFF, False, id="off"),
    ],
)
def test_where_the_cache_is_written(
    parsing_history: SampleEngine, env: dict[str, str], written: bool
) -> None:
    uncached = uncached_notes(parsing_history, *SINCE)
    assert notes(parsing_history, *SINCE, env=env) == uncached
    assert _path(parsing_history).is_file() == written


def test_a_bad_setting_is_bad_input(parsing_history: SampleEngine) -> None:
    result = run_cli(parsing_history.root, "notes", *SINCE, env={"RELEASE_REPO_CACHE": "maybe"})
    assert result.code == 2
    assert result.stderr.startswith("error: RELEASE_REPO_CACHE='maybe'")
    with pytest.raises(ConfigError):
        cache_policy({"RELEASE_REPO_CACHE": "maybe"})
    assert cache_policy({}) == (True, True)
    assert cache_policy({"CI": "1"}) == (True, False)


def test_tag_and_promote_leave_the_git_directory_to_their_journals(
    cut_engine_copy: SampleEngine,
) -> None:
    """Only ``release notes`` uses the caches: tag writes its notes without them."""
    result = run_cli(cut_engine_copy.root, "tag")
    assert result.code == 0, result.output
    assert not _path(cut_engine_copy).exists()
    assert not notes_cache_dir(cut_engine_copy.repo.common_dir).exists()


def test_cached_commits_equal_parsed_ones(tmp_path: Path) -> None:
    aliases = Config().alias_map()
    parsed = [
        make_commit(f"{n:040x}", name, email, subject, body, aliases)
        for n, (name, email, subject, body) in enumerate(
            [
                ("Alice Chen", "alice@example.com", "[Bugfix] Fix it (#1)", ""),
                ("Bob", "bob@example.com", 'Revert "[Bugfix] Fix it (#1)"', "Reverts org/repo#1"),
                ("Zoë", "", "Caf\udce9 in another encoding", "Co-authored-by: Carol <c@x>\n"),
                ("Alice Chen", "alice@example.com", "[Fix] Picked", "(cherry picked from "
                 f"commit {'a' * 40})\nCherry-pick-reason: critical\nRelease-changelog: v1"),
            ],
            start=1,
        )
    ]  # fmt: skip
    path = tmp_path / "release" / "commits.cache"
    cache = CommitCache(path, "k")
    cache.add(parsed)
    cache.save()
    again = CommitCache.load(path, "k")
    shas = [c.sha for c in reversed(parsed)]
    assert again.take(shas) == list(reversed(parsed))
    assert [vars(c) for c in again.take(shas) or []] == [vars(c) for c in reversed(parsed)]
    assert not CommitCache.load(path, "another").records
    assert sorted(again.records) == sorted(c.sha for c in parsed)


_EARLIER = "%aN%x1f%aE%x1f%(trailers:key=Co-authored-by,valueonly,separator=%x1d)"


def test_the_people_before_the_range_are_read_once_and_kept(parsing_history: SampleEngine) -> None:
    """Who had changes before the range (for "New Contributors") is read with git log over
    all the history before it: kept in the cache for the commit the range starts after,
    as git gives it, and read from there on the next run."""
    uncached = uncached_notes(parsing_history, *SINCE)
    new = "Zoë Ünal made their first contribution"
    assert new in uncached
    assert notes(parsing_history, *SINCE) == uncached  # cold: read from git, then kept
    since = parsing_history.repo.rev("main~12")
    assert since is not None
    cache = CommitCache.load(_path(parsing_history), _key(parsing_history))
    by_git = parsing_history.repo.run("log", f"--format={_EARLIER}", since).stdout.splitlines()
    assert cache.earlier == {since: tuple(sorted(set(by_git)))}
    # a changed entry shows in the notes: the warm run read it, and did not ask git
    cache.keep_earlier(since, [*cache.earlier[since], "Zoë Ünal\x1fzoe@example.com\x1f"])
    cache.save()
    warm = notes(parsing_history, *SINCE)
    assert new not in warm and warm.replace("\n", "") != uncached.replace("\n", "")
    assert notes(parsing_history, *SINCE, env=OFF) == uncached


def test_earlier_people_are_kept_for_the_last_few_starts(parsing_history: SampleEngine) -> None:
    starts = [f"main~{n}" for n in range(12, 12 - EARLIER_KEPT - 2, -1)]
    for start in starts:
        notes(parsing_history, "--since", start)
    cache = CommitCache.load(_path(parsing_history), _key(parsing_history))
    kept = [parsing_history.repo.rev(start) for start in starts[-EARLIER_KEPT:]]
    assert list(cache.earlier) == kept

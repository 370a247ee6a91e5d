"""The notes cache: a repeated ``release notes`` prints what a run without any cache
prints, after every change to what notes are made of (commits, refs, configuration,
mailmap, format, the previous final); it is read (what it holds is printed), kept small,
and bypassed where a sha does not fix what git says.
"""

from __future__ import annotations

import marshal
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from release.adapters import notes_cache
from release.adapters.cache_file import write_payload
from release.adapters.notes_cache import KEPT, Guessed, NotesCache, code_key, notes_cache_dir
from release.sample import BOB, Change, SampleEngine, add_commit
from tests.conftest import run_cli
from tests.history_support import RunOnce

OFF = {"RELEASE_REPO_CACHE": "0"}


pytestmark = pytest.mark.usefixtures("no_ci")  # the runner's CI settings do not leak in


def notes(engine: SampleEngine, *args: str, env: dict[str, str] | None = None) -> str:
    result = run_cli(engine.root, "notes", *args, env=env)
    assert result.code == 0, result.output
    assert "Traceback" not in result.output
    return result.stdout + result.stderr


# ``notes(history, *args, env=OFF)`` of the untouched history, run once per argument list
uncached_notes = RunOnce(lambda history, *args: notes(history, *args, env=OFF))


def _dir(engine: SampleEngine) -> Path:
    return notes_cache_dir(engine.repo.common_dir)


def _kept(engine: SampleEngine) -> dict[str, tuple[str, Guessed]]:
    """Every kept output, by key (each file read as a run reads it)."""
    cache = NotesCache(_dir(engine), writable=False)
    found = {path.name: cache.get(path.name) for path in _dir(engine).iterdir()}
    return {key: entry for key, entry in found.items() if entry is not None}


def _plant(engine: SampleEngine, text: str = "PLANTED\n") -> None:
    """Every kept output replaced by ``text`` (in files with the right keys and checksums):
    a run that prints it read the cache."""
    kept = _kept(engine)
    assert kept, "nothing kept to plant over"
    cache = NotesCache(_dir(engine), writable=True)
    for key, (_, guessed) in kept.items():
        cache.put(key, text, guessed)


def _same(engine: SampleEngine, *args: str) -> str:
    """The cached run's output, checked against a run without any cache."""
    cached = notes(engine, *args)
    assert cached == notes(engine, *args, env=OFF), f"stale notes for {args}"
    return cached


RANGE = ("--since", "main~12", "--until", "main")


@pytest.mark.parametrize("fmt", [(), ("--format", "json")], ids=["md", "json"])
def test_a_repeated_run_prints_what_an_uncached_run_prints(
    parsing_history: SampleEngine,
    fmt: tuple[str, ...],
) -> None:
    uncached = notes(parsing_history, *RANGE, *fmt, env=OFF)
    assert not _dir(parsing_history).exists()  # off: not written
    assert notes(parsing_history, *RANGE, *fmt) == uncached  # built, kept
    [file] = _dir(parsing_history).iterdir()
    written = file.read_bytes()
    assert notes(parsing_history, *RANGE, *fmt) == uncached  # kept
    assert [file] == list(_dir(parsing_history).iterdir()) and file.read_bytes() == written
    assert "note: [Perfomance] is no known spelling" in uncached  # the guesses are kept too


def test_the_kept_output_is_what_a_repeated_run_prints(parsing_history: SampleEngine) -> None:
    uncached = uncached_notes(parsing_history, *RANGE)
    notes(parsing_history, *RANGE)
    _plant(parsing_history)
    assert notes(parsing_history, *RANGE).startswith("PLANTED\nnote: [Perfomance]")
    assert notes(parsing_history, *RANGE, env=OFF) == uncached  # off: not read
    # on CI what is kept is read, and nothing is written
    shutil.rmtree(_dir(parsing_history))
    assert notes(parsing_history, *RANGE, env={"CI": "true"}) == uncached
    assert not _dir(parsing_history).exists()


@pytest.mark.slow
def test_every_input_of_the_notes_gives_a_new_output(parsing_history: SampleEngine) -> None:
    """Each change below changes the notes; the run after it prints the new notes, not
    the kept ones (a run without any cache is the reference)."""
    repo, root = parsing_history.repo, parsing_history.root
    repo.run("tag", "start", "main~12")
    rng = ("--since", "start", "--until", "main")
    seen = [_same(parsing_history, *rng)]

    def changed(what: str, *args: str) -> None:
        now = _same(parsing_history, *(args or rng))
        assert now not in seen, f"{what}: the notes did not change"
        seen.append(now)

    add_commit(repo, Change("[Core] Later work (#208)", BOB, {"g.txt": "g\n"}))
    changed("a new commit at the end")
    repo.run("tag", "--force", "start", "main~6")
    changed("the start's tag moved")
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(
        text + '\n[tool.release.categories]\n"Speed" = ["Perfomance", "Perf"]\n',
        encoding="utf-8",
    )
    changed("the category map")
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(
        text.replace("https://github.com/example/tinyengine", "https://github.com/other/engine"),
        encoding="utf-8",
    )
    changed("the repository URL")
    (root / ".mailmap").write_text(
        "Robert Okafor <bob@example.com> Bob Okafor <bob@example.com>\n", encoding="utf-8"
    )
    changed("the work tree's .mailmap")
    outside = root.parent / "people.mailmap"
    outside.write_text("Bobby O <bob@example.com> <bob@example.com>\n", encoding="utf-8")
    repo.run("config", "mailmap.file", str(outside))
    changed("mailmap.file")
    outside.write_text("Bobby Okafor <bob@example.com> <bob@example.com>\n", encoding="utf-8")
    changed("the file mailmap.file names")
    changed("the format", *rng, "--format", "json")


def test_the_previous_final_is_an_input(cut_engine_copy: SampleEngine) -> None:
    """``--view final`` leaves out what the previous final shipped: a final tagged again,
    with one more backport, gives other notes."""
    engine = cut_engine_copy
    repo = engine.repo
    repo.run("cherry-pick", engine.shas[109])  # no -x: only the patch says it is there
    repo.run("tag", "-a", "v0.1.0rc1", "-m", "v0.1.0rc1")
    repo.run("tag", "-a", "v0.1.0", "-m", "v0.1.0")
    repo.run("switch", "--quiet", "main")
    assert run_cli(engine.root, "cut", "0.2.0", "--offline").code == 0
    before = _same(engine, "--view", "final")
    assert "#109" not in before and "#111" in before
    repo.run("switch", "--quiet", "releases/v0.1.0")
    repo.run("cherry-pick", engine.shas[111])
    repo.run("tag", "--force", "-a", "v0.1.0", "-m", "v0.1.0")
    repo.run("switch", "--quiet", "releases/v0.2.0")
    after = _same(engine, "--view", "final")
    assert "#111" not in after


def test_another_git_builds_the_notes_anew(parsing_history: SampleEngine, tmp_path: Path) -> None:
    uncached = uncached_notes(parsing_history, *RANGE)
    notes(parsing_history, *RANGE)
    _plant(parsing_history)
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec {shutil.which("git")} "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    path = f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}"
    assert notes(parsing_history, *RANGE, env={"PATH": path}) == uncached
    assert notes(parsing_history, *RANGE).startswith(
        "PLANTED"
    )  # the first git's output is still kept


def test_linked_worktrees_share_the_cache_not_their_inputs(parsing_history: SampleEngine) -> None:
    """A linked worktree keeps its outputs in the common git directory; its own .mailmap
    (a work tree file) makes its notes its own."""
    linked = parsing_history.root.parent / "linked"
    parsing_history.repo.run("worktree", "add", "--quiet", "--detach", str(linked), "main")
    here = notes(parsing_history, *RANGE)
    (linked / ".mailmap").write_text(
        "Robert Okafor <bob@example.com> Bob Okafor <bob@example.com>\n", encoding="utf-8"
    )
    there = run_cli(linked, "notes", *RANGE)
    assert there.code == 0, there.output
    assert "by Robert Okafor" in there.stdout and there.stdout not in here
    assert there.stdout == run_cli(linked, "notes", *RANGE, env=OFF).stdout
    assert len(_kept(parsing_history)) == 2  # both kept where the main checkout keeps its own
    assert notes(parsing_history, *RANGE) == here


@pytest.mark.parametrize("how", ["replace", "grafts"])
def test_where_a_sha_does_not_fix_the_history_nothing_is_kept(
    parsing_history: SampleEngine,
    how: str,
) -> None:
    repo = parsing_history.repo
    repo.run("tag", "start", "main~12")
    rng = ("--since", "start", "--until", "main")
    before = notes(parsing_history, *rng)
    _plant(parsing_history)
    planted = _kept(parsing_history)
    if how == "replace":
        sha = parsing_history.shas[202]
        raw = repo.run("cat-file", "commit", sha).stdout
        new = repo.run(
            "hash-object", "-t", "commit", "-w", "--stdin",
            stdin=raw.replace("Faster batching", "Batching, replaced"),
        ).stdout  # fmt: skip
        repo.run("replace", sha, new.strip())
    else:
        grafts = repo.common_dir / "info" / "grafts"
        grafts.parent.mkdir(exist_ok=True)
        # main~3's parent is main~6: two commits leave the range
        grafts.write_text(f"{repo.rev('main~3')} {repo.rev('main~6')}\n", encoding="ascii")
    out = _same(parsing_history, *rng)
    assert "PLANTED" not in out and out != before
    assert _kept(parsing_history) == planted  # neither read nor written


def test_only_the_last_few_outputs_are_kept(parsing_history: SampleEngine) -> None:
    starts = [f"main~{n}" for n in range(2, 3 + KEPT)]
    outputs = [run_cli(parsing_history.root, "notes", "--since", start, "--until", "main").stdout
               for start in starts]  # fmt: skip
    assert len(set(outputs)) == len(outputs)
    kept = sorted(_dir(parsing_history).iterdir(), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    texts = [entry[0] for entry in map(_kept(parsing_history).get, (p.name for p in kept)) if entry]
    assert texts == outputs[::-1][:KEPT]  # the first range's output is gone


def test_what_a_killed_write_left_is_removed_once_old(parsing_history: SampleEngine) -> None:
    notes(parsing_history, "--since", "main~3", "--until", "main")
    old, fresh = (_dir(parsing_history) / f".{c * 64}-x1y2z3w4" for c in "ab")
    for path in (old, fresh):
        path.write_bytes(b"release-notes 1 ")  # a write cut short
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    notes(parsing_history, *RANGE)  # writes an output: what is old goes
    assert not old.exists() and fresh.exists()  # (a write under way is left alone)


@pytest.mark.parametrize(
    "damage",
    [b"", b"release-notes 1 0 3 0\nabc"],
    ids=["empty", "a checksum that lies"],  # (the format's other damage: test_commit_cache)
)
def test_a_damaged_file_is_ignored_and_written_anew(
    parsing_history: SampleEngine,
    damage: bytes,
) -> None:
    uncached = uncached_notes(parsing_history, *RANGE)
    notes(parsing_history, *RANGE)
    [path] = _dir(parsing_history).iterdir()
    path.write_bytes(damage)
    assert notes(parsing_history, *RANGE) == uncached
    assert [text for text, _ in _kept(parsing_history).values()] == [
        uncached.split("note: ")[0]
    ]  # written anew (the note lines are printed apart: stderr)


@pytest.mark.parametrize(
    "shape",
    [("text",), {"text": ()}, ("text", (("x",),)), (1, ()), "text"],
    ids=["one field", "a dict", "a guess of one field", "a number for text", "a string"],
)
def test_a_payload_of_another_shape_holds_nothing(tmp_path: Path, shape: Any) -> None:
    key = "a" * 64
    cache = NotesCache(tmp_path, writable=True)
    cache.put(key, "text\n", (("Perfomance", "Performance"),))
    assert cache.get(key) == ("text\n", (("Perfomance", "Performance"),))
    assert cache.get("b" * 64) is None
    (tmp_path / key).rename(tmp_path / ("c" * 64))  # another key's file under this name
    assert cache.get("c" * 64) is None
    write_payload(tmp_path / key, b"release-notes", notes_cache.FORMAT, key, marshal.dumps(shape))
    assert cache.get(key) is None


def test_nothing_is_written_where_it_may_not_be(tmp_path: Path) -> None:
    NotesCache(tmp_path / "notes", writable=False).put("a" * 64, "text\n", ())
    assert not (tmp_path / "notes").exists()
    (tmp_path / "release").write_text("a file where the directory would be\n")
    NotesCache(tmp_path / "release" / "notes", writable=True).put("a" * 64, "text\n", ())
    assert (tmp_path / "release").read_text() == "a file where the directory would be\n"


def test_the_code_is_part_of_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = Path(notes_cache.__file__).resolve().parent.parent
    copy = tmp_path / "release"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(notes_cache, "_PACKAGE", copy)
    same = code_key()
    assert same is not None and same == _key_of(package, monkeypatch)
    monkeypatch.setattr(notes_cache, "_PACKAGE", copy)
    people = copy / "core" / "people.py"
    people.write_text(people.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert code_key() != same
    monkeypatch.setattr(notes_cache, "_PACKAGE", tmp_path / "nowhere")
    assert code_key() is None  # no source: nothing may be kept


def _key_of(package: Path, monkeypatch: pytest.MonkeyPatch) -> str | None:
    monkeypatch.setattr(notes_cache, "_PACKAGE", package)
    return code_key()

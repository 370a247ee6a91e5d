"""The forged-output attack through the CLI, as a user meets it: a commit subject and an
author name with ESC sequences and a carriage return, and a tag's manifest note with a
newline and a forged ``reproduce ...: match``, shown by ``pick --dry-run``, ``pick``,
``status``, ``tag --dry-run`` and ``notes``. Output is read as bytes (text mode would turn
a raw ``\\r`` into a newline), on a pipe and on a pseudo-terminal. No engine needed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from release.adapters.git_notes import notes_ref
from release.sample import Change, SampleEngine
from tests.conftest import repo_state, run_on_terminal
from tests.manifest_support import all_parts, tagged
from tests.terminal_support import CURSOR, FORGED, SHOWN, controls

pytestmark = pytest.mark.slow

SUBJECT = f"[Bugfix] Fix the parser{CURSOR}\r{FORGED} (#120)"
SUBJECT_SHOWN = f"[Bugfix] Fix the parser\\x1b[1A\\x1b[2K\\r{FORGED} (#120)"
AUTHOR = ("Mallory\x1b[31m", "mallory@example.com")
FEATURE = f"[Feature] Add a mode{CURSOR}\r{FORGED} (#121)"


def run(cwd: Path, *args: str, terminal: bool = False) -> tuple[int, str, str]:
    """``release ARGS`` as a user runs it; stdout a pipe, or a terminal (a pty with its
    output left as written, no newline translation)."""
    if terminal:
        done = run_on_terminal(cwd, *args)
        return done.code, done.stdout, done.stderr
    argv = [sys.executable, "-m", "release", *args]
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=120, check=False)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def raw(text: str) -> list[str]:
    return controls(text, but="\n")


def own_lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.lstrip().startswith(FORGED)]


@pytest.fixture
def hostile(cut_engine_copy: SampleEngine) -> SampleEngine:
    """The cut engine with a fix on main whose subject and author hold ESC and CR, and a
    feature whose subject does."""
    engine = cut_engine_copy
    engine.repo.run("switch", "--quiet", "main")
    engine.commit(Change(SUBJECT, AUTHOR, {"tinyengine/parser.py": "x = 1\n"}))
    engine.commit(Change(FEATURE, AUTHOR, {"tinyengine/mode.py": "y = 1\n"}))
    engine.repo.run("push", "--quiet", "origin", "main")
    engine.repo.run("switch", "--quiet", "releases/v0.1.0")
    return engine


def test_pick_and_status_show_a_hostile_subject_escaped(hostile: SampleEngine) -> None:
    short = hostile.shas[120][:10]
    code, out, err = run(hostile.root, "pick", "#120", "--dry-run")
    assert code == 0, err
    assert f"  1. cherry-pick -x {short} {SUBJECT_SHOWN}\n" in out
    assert raw(out + err) == [] and own_lines(out) == []
    code, out, err = run(hostile.root, "pick", short)
    assert code == 0, err
    assert out.startswith(f"picked {short} {SUBJECT_SHOWN}\n") and raw(out + err) == []
    code, out, err = run(hostile.root, "status")
    assert f"  done     {short} {SUBJECT_SHOWN}\n" in out and raw(out + err) == []


def test_the_last_pass_escapes_the_tag_message_a_dry_run_shows(hostile: SampleEngine) -> None:
    """The tag message is the notes, a document no field escapes: the console does, on its
    way to the terminal."""
    code, out, err = run(hostile.root, "pick", hostile.shas[120][:10])
    assert code == 0, err
    code, out, err = run(hostile.root, "tag", "--dry-run", "--offline")
    assert code == 0, err
    assert f"- Fix the parser\\x1b[1A\\x1b[2K\\r{FORGED} (" in out
    assert "Mallory\\x1b[31m" in out
    assert raw(out + err) == [] and own_lines(out) == []


def test_a_refusal_quoting_a_hostile_subject_is_one_line(hostile: SampleEngine) -> None:
    before = repo_state(hostile.root)
    code, out, err = run(hostile.root, "pick", hostile.shas[121][:10])
    assert code == 3
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Add a mode\\x1b[1A\\x1b[2K\\r" in err and raw(out + err) == []
    assert repo_state(hostile.root) == before


def test_notes_are_the_document_as_it_is_on_a_pipe_and_escaped_on_a_terminal(
    hostile: SampleEngine,
) -> None:
    args = ("notes", "--since", "releases/v0.1.0", "--until", "main")
    code, piped, err = run(hostile.root, *args)
    assert code == 0, err
    assert f"Fix the parser{CURSOR}\r{FORGED}" in piped  # a file or a pipe: byte for byte
    code, shown, err = run(hostile.root, *args, terminal=True)
    assert code == 0, err
    assert raw(shown) == [] and own_lines(shown) == []
    assert shown == piped.replace(CURSOR, "\\x1b[1A\\x1b[2K").replace("\r", "\\r").replace(
        "\x1b[31m", "\\x1b[31m"
    )


@pytest.fixture
def hostile_note(cut_engine_copy: SampleEngine) -> SampleEngine:
    """v0.1.0rc1 with its manifest recorded, then the note rewritten as anyone who can push
    notes could: cu128's snapshot reason holds ESC sequences, a newline and a forged
    verdict."""
    release, parts = tagged(cut_engine_copy)
    all_parts(cut_engine_copy, parts, release)
    assert run(cut_engine_copy.root, "manifest")[0] == 0
    where = (f"--ref={notes_ref(release.tag)}", f"{release.tag}^{{commit}}")
    note = json.loads(cut_engine_copy.repo.out("notes", where[0], "show", where[1]))
    note["variants"]["cu128"]["snapshot"]["reason"] = f"CUDA 12.8.1{CURSOR}\n{FORGED}"
    cut_engine_copy.repo.run("notes", where[0], "add", "-f", "-m", json.dumps(note), where[1])
    return cut_engine_copy


@pytest.mark.parametrize("terminal", [False, True], ids=["piped", "terminal"])
def test_status_with_a_hostile_manifest_note(hostile_note: SampleEngine, terminal: bool) -> None:
    code, out, err = run(hostile_note.root, "status", terminal=terminal)
    assert code == 0, err
    assert f"snapshot omitted (CUDA 12.8.1{SHOWN.removeprefix('version')})\n" in out
    assert CURSOR not in out and own_lines(out) == [] and raw(err) == []

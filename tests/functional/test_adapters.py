"""The process runner, atomic writes, the apt mirror and the pick journal, on real processes
and files."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from release.adapters import files, process
from release.adapters.rootfs import apt_mirror
from release.errors import EngineError, GitError, RefusedError
from release.flows.pick_journal import (
    Conflict,
    Journal,
    JournalStatus,
    PickJournal,
    QueuedPick,
)

PY = sys.executable


def test_run_collects_output_status_and_stdin() -> None:
    code = "import sys; data = sys.stdin.read(); print(data.upper()); sys.exit(3)"
    result = process.run([PY, "-c", code], error=EngineError, stdin="hello")
    assert (result.status, result.stdout, result.ok) == (3, "HELLO\n", False)


@pytest.mark.slow
def test_a_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    """The child of the child dies too: nothing is left running after a timeout."""
    pid_file = tmp_path / "grandchild.pid"
    code = (
        "import subprocess, sys, time; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        f"open({str(pid_file)!r}, 'w').write(str(p.pid)); time.sleep(60)"
    )
    called = []
    started = time.monotonic()
    result = process.run(
        [PY, "-c", code],
        error=EngineError,
        timeout=2,
        own_group=True,
        on_timeout=lambda: called.append(True),
    )
    assert result.timed_out and not result.ok and called == [True]
    assert time.monotonic() - started < 30
    grandchild = int(pid_file.read_text())
    for _ in range(50):  # reaped by init: give it a moment
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"process {grandchild} outlived the timeout")


def test_a_program_that_cannot_start_raises_the_adapters_error(tmp_path: Path) -> None:
    with pytest.raises(GitError, match=r"cannot run .*no-such-program"):
        process.run([str(tmp_path / "no-such-program")], error=GitError)


def test_a_missing_program_says_what_it_is_for_and_one_that_cannot_start_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from release.adapters.image_signatures import SigningError
    from release.adapters.openpgp_bytes import BytesSigner
    from release.adapters.registry import Registry, RegistryError

    absent = str(tmp_path / "no-such-program")
    with pytest.raises(GitError, match=r"^no-such-program is not installed: it does x$"):
        process.run(["no-such-program"], error=GitError, missing="it does x", cwd=tmp_path)
    with pytest.raises(
        RegistryError, match=r"is not installed: publishing .*\(apt-get install skopeo\)"
    ):
        Registry(absent).raw("127.0.0.1:5000/rel/x:rc")
    monkeypatch.setenv("RELEASE_GPG", absent)
    with pytest.raises(SigningError, match=r"no-such-program is not installed: provenance .*gpg\)"):
        BytesSigner("0" * 40).sign(b"x")
    unrunnable = tmp_path / "not-executable"
    unrunnable.write_text("#!/bin/sh\n")  # there, but not executable: not "not installed"
    with pytest.raises(GitError, match=r"^cannot run .*not-executable: Permission denied"):
        process.run([str(unrunnable)], error=GitError, missing="it does x")


def test_output_goes_to_the_log_when_asked(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "out.log"
    code = "import sys; print('out'); print('err', file=sys.stderr)"
    result = process.run([PY, "-c", code], error=EngineError, log=log)
    assert result.stdout == "" and sorted(log.read_text().split()) == ["err", "out"]


def test_started_and_streamed_reads_answer_as_run_does() -> None:
    code = "print('a|b|c', end='')"
    ran = process.run([PY, "-c", code], error=EngineError)
    assert process.start([PY, "-c", code], error=EngineError).result() == ran
    with process.stream([PY, "-c", code], "|", error=EngineError) as pieces:
        assert list(pieces) == ran.stdout.split("|")
    assert pieces.status == 0


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        (
            "hint: try this\nfatal: bad thing\nhint: or that\n",
            "fatal: bad thing",
            "fatal: bad thing",
        ),
        ("\n  one \n\n two\n", "one", "two"),
        ("", "", ""),
        ("hint: only hints\n", "hint: only hints", "hint: only hints"),
    ],
)
def test_first_and_last_line(text: str, first: str, last: str) -> None:
    assert (process.first_line(text), process.last_line(text)) == (first, last)
    assert process.last_line("", "no output") == "no output"


def test_atomic_write_replaces_and_leaves_no_scratch(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "state.json"
    files.atomic_write(target, "one")
    files.atomic_write(target, "two\r\n")
    assert target.read_bytes() == b"two\r\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["state.json"]
    scratch = tmp_path / "state.tmp"
    files.atomic_write(target, "three", scratch=scratch)
    assert target.read_text() == "three" and not scratch.exists()


def test_atomic_write_gives_a_new_file_the_usual_mode_and_keeps_an_old_ones(
    tmp_path: Path,
) -> None:
    """A file written whole is still a file like any other: 0o666 less the umask when new
    (notes --output, bake --out), its own mode when replaced (an executable stays one)."""
    old = os.umask(0o027)
    try:
        new = tmp_path / "notes.md"
        files.atomic_write(new, "notes")
        assert new.stat().st_mode & 0o777 == 0o640
        script = tmp_path / "run.sh"
        script.write_text("#!/bin/sh\n")
        script.chmod(0o751)
        files.atomic_write(script, "#!/bin/sh\ntrue\n", scratch=tmp_path / "run.tmp")
        assert script.stat().st_mode & 0o777 == 0o751
    finally:
        os.umask(old)


def _apt(tmp_path: Path, sources: dict[str, str]) -> Path:
    (tmp_path / "sources.list.d").mkdir()
    for name, text in sources.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        pytest.param(
            {
                "sources.list.d/debian.sources": (
                    "Types: deb\n# a comment\nURIs: http://mirror.test/debian\n"
                    "Suites: bookworm bookworm-updates\nComponents: main\n\n"
                    "Types: deb\nURIs: http://mirror.test/debian-security\n"
                    "Suites: bookworm-security\n"
                )
            },
            "http://mirror.test/debian",
            id="deb822",
        ),
        pytest.param(
            {
                "sources.list": (
                    "# deb http://commented.test/debian bookworm main\n"
                    "deb-src http://src.test/debian bookworm main\n"
                    "deb http://security.test/debian-security bookworm-security main\n"
                    "deb [arch=amd64 signed-by=/k.gpg] http://one-line.test/debian bookworm main\n"
                )
            },
            "http://one-line.test/debian",
            id="one-line, options and comments",
        ),
        pytest.param(
            {
                "sources.list.d/x.sources": "Types: deb\nEnabled: no\nURIs: http://off.test\nSuites: bookworm\n"
            },
            None,
            id="disabled",
        ),
        pytest.param({}, None, id="none"),
    ],
)
def test_apt_mirror_is_read_from_the_machines_sources(
    tmp_path: Path, sources: dict[str, str], expected: str | None
) -> None:
    assert apt_mirror({}, _apt(tmp_path, sources)) == expected
    override = {"RELEASE_DEBIAN_MIRROR": "http://override.test/debian"}
    assert apt_mirror(override, tmp_path) == "http://override.test/debian"


def test_the_journal_round_trips_and_is_stamped(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    queue = (QueuedPick("a" * 40, "[Bugfix] one (#1)", "regression"), QueuedPick("b" * 40, "two"))
    written = journal.write(
        PickJournal("releases/v0.1.0", "c" * 40, queue).stopped(
            queue, Conflict("a" * 40, "[Bugfix] one (#1)", ("x.py",))
        )
    )
    assert written.pid == os.getpid() and written.pgid == os.getpgid(0)
    assert journal.read() == written
    assert written.status is JournalStatus.CONFLICT
    assert written.advanced(queue[1:]).conflict is None
    journal.clear()
    assert journal.read() is None and not any((tmp_path / "release").iterdir())


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ({"branch": "b", "orig_head": "h", "queue": []}, "no valid status"),
        ({"branch": "b", "orig_head": "h", "queue": [{"sha": 1}], "status": "running"}, "queue"),
        ({"branch": "b", "orig_head": "h", "queue": [], "status": "paused"}, "unknown status"),
        (
            {
                "branch": "b",
                "orig_head": "h",
                "queue": [{"sha": "a", "subject": "s"}],
                "status": "conflict",
            },
            "no valid conflict",
        ),
    ],
)
def test_a_damaged_journal_is_refused(tmp_path: Path, data: dict[str, object], why: str) -> None:
    (tmp_path / "release").mkdir()
    (tmp_path / "release" / "pick.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RefusedError, match=f"damaged .*{why}"):
        Journal(tmp_path).read()


def test_a_stand_in_rootfs_is_scrubbed_of_what_the_day_and_machine_put_in_it(
    tmp_path: Path,
) -> None:
    from release.adapters.rootfs import scrub_rootfs

    def tree(day: str, host: str) -> Path:
        root = tmp_path / f"{day}-{host}"
        files = {
            "var/log/dpkg.log": f"{day} 10:00:00 install python3\n",
            "var/log/apt/history.log": f"Start-Date: {day}\n",
            "var/cache/apt/archives/dash_0.5.12-2_amd64.deb": "deb",
            "var/cache/debconf/config.dat-old": day,
            "var/cache/debconf/config.dat": "Name: debconf/frontend\n",
            "var/lib/dpkg/status-old": day,
            "var/lib/dpkg/status": "Package: dash\n",
            "etc/hostname": host + "\n",
            "etc/resolv.conf": f"nameserver {host}\n",
            "etc/shadow": f"root:*:{day}:0:99999:7:::\nbin:*:{day}:0:99999:7:::\n",
            "usr/bin/dash": "ELF",
        }
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        scrub_rootfs(root)
        return root

    def listing(root: Path) -> dict[str, str]:
        return {
            str(p.relative_to(root)): p.read_text() if p.is_file() else "/"
            for p in sorted(root.rglob("*"))
        }

    one, other = tree("20788", "vm"), tree("20790", "ci-runner-7")
    assert listing(one) == listing(other)
    kept = listing(one)
    assert kept["etc/shadow"] == "root:*::0:99999:7:::\nbin:*::0:99999:7:::\n"
    assert kept["var/lib/dpkg/status"] == "Package: dash\n" and kept["usr/bin/dash"] == "ELF"
    assert kept["var/log/apt"] == "/" and "var/log/dpkg.log" not in kept
    assert kept["etc/hostname"] == ""

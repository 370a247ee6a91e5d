"""The git adapter: finding the repository, and reads that run beside other work."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from release.adapters.git import GitRepo
from release.errors import GitError, UsageError
from release.sample import SampleEngine


def test_opened_from_a_subdirectory(engine: SampleEngine) -> None:
    repo = GitRepo(engine.root / "tinyengine")
    assert repo.root == engine.root.resolve()
    assert repo.git_dir == (engine.root / ".git").resolve()


def test_not_a_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    (tmp_path / "plain").mkdir()
    for where in (tmp_path / "plain", tmp_path / "missing"):
        with pytest.raises(UsageError, match="not a git repository"):
            GitRepo(where)


def test_bare_repository(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "--quiet", "--bare", str(tmp_path / "bare.git")], check=True)
    with pytest.raises(UsageError, match="is a bare repository"):
        GitRepo(tmp_path / "bare.git")


def test_revs_answer_as_rev_does(engine: SampleEngine) -> None:
    repo = engine.repo
    refs = [
        engine.shas[103],
        engine.shas[104][:8],
        "main",
        "HEAD~1",
        "no-such-ref",
        "main:README.md",
    ]
    assert repo.revs(refs) == [repo.rev(ref) for ref in refs]
    assert repo.revs(["main", "two\nlines"]) == [repo.rev("main"), None]
    assert repo.revs([]) == []


def test_stream_yields_records_as_git_writes_them(engine: SampleEngine) -> None:
    expected = engine.repo.log("main", fmt="%H%x1e").split("\x1e")
    with engine.repo.log_stream("main", fmt="%H%x1e", sep="\x1e") as records:
        assert list(records) == expected


def test_stream_failure_is_a_git_error(engine: SampleEngine) -> None:
    records = engine.repo.log_stream("no-such-ref", fmt="%H", sep="\n")
    with pytest.raises(GitError, match="git log --format=%H no-such-ref failed: fatal: "):
        list(records)


def test_stream_stopped_early(engine: SampleEngine) -> None:
    with engine.repo.log_stream("main", fmt="%H", sep="\n") as records:
        first = next(iter(records))
    assert first == engine.repo.rev("main")


def test_started_reads_answer_as_run_does(engine: SampleEngine) -> None:
    repo = engine.repo
    assert repo.start("log", "-1", "--format=%s", "main").out() == repo.out(
        "log", "-1", "--format=%s", "main"
    )
    text = "HEAD\nmain\n"
    assert repo.start("cat-file", "--batch-check", stdin=text).result() == repo.run(
        "cat-file", "--batch-check", stdin=text
    )
    failed = repo.start("rev-parse", "--verify", "no-such-ref")
    assert failed.result() == repo.run("rev-parse", "--verify", "no-such-ref", check=False)
    with pytest.raises(GitError, match="git rev-parse --verify no-such-ref failed"):
        failed.out()


def test_stream_across_reads_and_characters(engine: SampleEngine) -> None:
    # more than one read of output, multi-byte characters wherever a read happens to end
    body = "\n".join(f"Zeile {n}: Größe ä ö ü ß € 𝄞 {'x' * (n % 7)}" for n in range(6000))
    engine.repo.run("commit", "--allow-empty", "--quiet", "-F", "-", stdin=f"Long\n\n{body}\n")
    for sep in ("\n", "€", "\x1e"):
        expected = engine.repo.log("-3", "main", fmt="%B%x1e").split(sep)
        with engine.repo.log_stream("-3", "main", fmt="%B%x1e", sep=sep) as pieces:
            assert list(pieces) == expected


@pytest.mark.parametrize(("part", "running"), [(1, 1), (2, 2), (3, 5), (100, 2)])
def test_patches_in_parts_are_the_patches_of_the_whole_list(
    engine: SampleEngine, part: int, running: int
) -> None:
    repo = engine.repo
    shas = repo.rev_list("--reverse", "main")[:7]
    whole = repo.start_patches(shas).out()
    parts = list(repo.patches_in_parts(shas, part=part, running=running))
    assert len(parts) == -(-len(shas) // part)
    assert "\n".join(parts) == whole
    assert [line for line in "\n".join(parts).splitlines() if line in shas] == shas


def test_patches_in_parts_given_up_half_way(engine: SampleEngine) -> None:
    repo = engine.repo
    shas = repo.rev_list("--reverse", "main")[:6]
    parts = repo.patches_in_parts(shas, part=1, running=3)
    assert next(parts).startswith(shas[0])
    parts.close()  # the parts still read end with it: nothing is left running
    assert list(parts) == []


def test_checkout_form_is_what_a_checkout_writes(tmp_path: Path) -> None:
    """The bytes git writes for a blob at a path, line-ending conversion included, compared
    with what ``git checkout`` really writes; a path with no such blob has none."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)
        return done.stdout.decode().strip()

    git("init", "--quiet")
    (tmp_path / ".gitattributes").write_text("*.txt text eol=crlf\n")
    (tmp_path / "a b.txt").write_bytes(b"one\ntwo\n")
    (tmp_path / "raw.bin").write_bytes(b"one\ntwo\n\n")
    (tmp_path / "empty").write_bytes(b"")
    git("add", ".")
    git("-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "--quiet", "-m", "c")
    for path in ("a b.txt", "raw.bin", "empty"):
        (tmp_path / path).unlink()
    git("checkout", "--", ".")
    repo = GitRepo(tmp_path)

    for path in ("a b.txt", "raw.bin", "empty"):
        form = repo.checkout_form(git("rev-parse", f"HEAD:{path}"), path)
        assert form == (tmp_path / path).read_bytes()
    assert repo.checkout_form("1" * 40, "a b.txt") is None
    assert (tmp_path / "a b.txt").read_bytes() == b"one\r\ntwo\r\n"


def test_cause_is_gits_error_line_and_the_paths_it_names() -> None:
    from release.adapters.git_process import cause

    paths = [f"dir/file {n}.py" for n in range(7)]
    stderr = (
        "error: The following untracked working tree files would be overwritten by merge:\n"
        + "".join(f"\t{p}\n" for p in paths)
        + "Please move or remove them before you merge.\nAborting\nfatal: cherry-pick failed\n"
    )
    assert cause(stderr) == (
        "The following untracked working tree files would be overwritten by merge: "
        + " ".join(paths[:5])
        + " and 2 more"
    )
    assert cause("error: could not lock '.git/MERGE_MSG': File exists\nfatal: x\n") == (
        "could not lock '.git/MERGE_MSG': File exists"
    )
    assert cause("warning: w\nfatal: cherry-pick failed\n") == "fatal: cherry-pick failed"
    assert cause("", "no reason given") == "no reason given"


def test_git_runs_in_the_c_locale_unless_the_environment_sets_one(
    engine: SampleEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's messages are parsed and quoted: they are in English (LC_ALL and LANGUAGE are C,
    as GitPython sets them), unless the environment chose a locale itself."""

    def seen() -> dict[str, str]:
        text = engine.repo.out("-c", "alias.seen=!env", "seen")
        pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
        return {k: v for k, v in pairs if k in ("LC_ALL", "LANGUAGE")}

    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LANGUAGE", raising=False)
    assert seen() == {"LC_ALL": "C", "LANGUAGE": "C"}
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    assert seen() == {"LC_ALL": "C.UTF-8", "LANGUAGE": "C"}


def test_running_git_loads_no_gitpython(engine: SampleEngine) -> None:
    """Importing GitPython costs ~60 ms and two ``git version`` processes: no read needs it."""
    code = (
        "import sys\nfrom release.adapters.git import GitRepo\n"
        "repo = GitRepo('.')\nassert repo.rev('HEAD')\nrepo.start('status').out()\n"
        "print(sorted(m for m in sys.modules if m == 'git' or m.startswith('git.')))"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], cwd=engine.root, capture_output=True, text=True, check=False
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines() == ["[]"]


def test_tags_merged_into_among_named_tags(engine: SampleEngine) -> None:
    repo = engine.repo
    old, new = engine.shas[103], engine.shas[104]
    repo.run("switch", "--quiet", "--detach", old)
    for name, at in (("v1", old), ("v10", old), ("v2", new), ("v1+", old)):
        repo.create_tag(name, at, name)
    assert repo.tags_merged_into("HEAD") == {"v1", "v10", "v1+"}
    assert repo.tags_merged_into("HEAD", ["v1", "v2"]) == {"v1"}
    # the names only ("v1?" is a pattern to git, which "v10" and "v1+" match)
    assert repo.tags_merged_into("HEAD", ["v1?"]) == set()
    assert repo.tags_merged_into(new, ["v2", "v10"]) == {"v2", "v10"}
    assert repo.tags_merged_into("HEAD", []) == set()


def test_status_without_a_picks_file_loads_no_backport_evidence(cut_engine: SampleEngine) -> None:
    """Without a picks file only the branch point is read: what is already on the branch
    (the backport evidence, the manifest) is not even imported."""
    code = (
        "import sys\nfrom release.flows.context import ReleaseContext\n"
        "from release.flows.status import read_status\n"
        "assert read_status(ReleaseContext('.'), offline=True).release\n"
        "print(sorted(m for m in sys.modules if m.startswith(('release.core.backports', "
        "'release.flows.branch', 'release.core.manifest', 'tempfile', 'difflib'))))"
    )
    found = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cut_engine.root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines() == ["[]"]

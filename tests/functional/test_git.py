"""The git adapter: finding the repository, and reads that run beside other work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from release.adapters.config_file import CONFIG_ENV, committed_config
from release.adapters.git import GitRepo
from release.errors import ConfigError, GitError, UsageError
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
    expected = engine.repo.history.log("main", fmt="%H%x1e").split("\x1e")
    with engine.repo.history.log_stream("main", fmt="%H%x1e", sep="\x1e") as records:
        assert list(records) == expected


def test_stream_failure_is_a_git_error(engine: SampleEngine) -> None:
    records = engine.repo.history.log_stream("no-such-ref", fmt="%H", sep="\n")
    with pytest.raises(GitError, match="git log --format=%H no-such-ref failed: fatal: "):
        list(records)


def test_stream_stopped_early(engine: SampleEngine) -> None:
    with engine.repo.history.log_stream("main", fmt="%H", sep="\n") as records:
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
        expected = engine.repo.history.log("-3", "main", fmt="%B%x1e").split(sep)
        with engine.repo.history.log_stream("-3", "main", fmt="%B%x1e", sep=sep) as pieces:
            assert list(pieces) == expected


@pytest.mark.parametrize(("part", "running"), [(1, 1), (2, 2), (3, 5), (100, 2)])
def test_patches_in_parts_are_the_patches_of_the_whole_list(
    engine: SampleEngine, part: int, running: int
) -> None:
    repo = engine.repo
    shas = repo.out("rev-list", "--reverse", "main").split()[:7]
    whole = repo.history.start_patches(shas).out()
    parts = list(repo.history.patches_in_parts(shas, part=part, running=running))
    assert len(parts) == -(-len(shas) // part)
    assert "\n".join(parts) == whole
    assert [line for line in "\n".join(parts).splitlines() if line in shas] == shas


def test_patches_in_parts_given_up_half_way(engine: SampleEngine) -> None:
    repo = engine.repo
    shas = repo.out("rev-list", "--reverse", "main").split()[:6]
    parts = repo.history.patches_in_parts(shas, part=1, running=3)
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
        form = repo.worktree.checkout_form(git("rev-parse", f"HEAD:{path}"), path)
        assert form == (tmp_path / path).read_bytes()
    assert repo.worktree.checkout_form("1" * 40, "a b.txt") is None
    assert (tmp_path / "a b.txt").read_bytes() == b"one\r\ntwo\r\n"


def test_a_commits_config_is_read_as_committed_and_only_from_a_regular_file(
    cut_engine_copy: SampleEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tag's configuration is its commit's ``pyproject.toml``, whatever the work tree
    holds now; a symlink or a directory there, or a file past the size read, is refused and
    never read; where the run's configuration comes from outside the tree, it is that."""
    engine = cut_engine_copy
    repo = engine.repo
    tagged = repo.head()
    pyproject = engine.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"example/tinyengine"', '"other/name"'))
    repo.run("commit", "--quiet", "-am", "renamed")
    matrix = committed_config(repo, tagged, "v0.1.0rc1").matrix
    assert matrix is not None and matrix.name == "example/tinyengine"
    assert repo.committed_text(tagged, "no/such.toml", "it", limit=10) is None
    text = repo.committed_text(tagged, "pyproject.toml", "it", limit=2**20)
    assert text is not None and text.rstrip("\n") == repo.out("show", f"{tagged}:pyproject.toml")
    with pytest.raises(GitError, match=r"it is [\d,]+ bytes, more than the 10 read here"):
        repo.committed_text(tagged, "pyproject.toml", "it", limit=10)

    pyproject.unlink()
    pyproject.symlink_to("tinyengine")
    repo.run("commit", "--quiet", "-am", "a link")
    with pytest.raises(
        ConfigError, match=r"pyproject.toml of v9 is not a regular file \(git mode 120000\)"
    ):
        committed_config(repo, repo.head(), "v9")
    with pytest.raises(GitError, match=r"it is not a regular file \(git mode 040000\)"):
        repo.committed_text(repo.head(), "tinyengine", "it", limit=2**20)

    outside = engine.root.parent / "outside.toml"
    outside.write_text('[tool.release]\nremote = "upstream"\n')
    monkeypatch.setenv(CONFIG_ENV, str(outside))
    assert committed_config(repo, tagged, "v0.1.0rc1").remote == "upstream"


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


# -- records: the adapter peels refs and parses git's fields itself ----------------------
def _git(repo: GitRepo, *args: str, message: str = "") -> str:
    env = {"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com"}
    env |= {"GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.com"}
    return repo.run(*args, stdin=message or None, env=env).stdout


def test_ranges_are_given_by_their_ends_and_peeled(engine: SampleEngine) -> None:
    repo, history = engine.repo, engine.repo.history
    base = repo.rev("main~3")
    assert base is not None
    _git(repo, "tag", "-a", "-m", "an annotated tag", "annotated", base)
    expected = repo.out("rev-list", f"{base}..main").split()
    assert history.rev_list(since="annotated", until="main") == expected
    assert history.count(since="annotated", until="main") == len(expected) == 3
    assert history.count(until="annotated") == int(repo.out("rev-list", "--count", base))
    commits = history.log_commits(since=base, until="main", aliases={}, repo=None)
    assert [c.sha for c in commits] == expected
    messages = history.messages(since="annotated", until="main")
    assert [m.sha for m in messages] == expected
    assert all(not m.body.startswith("\n") and not m.body.endswith("\n") for m in messages)
    tree = repo.out("rev-parse", "main^{tree}").strip()
    with pytest.raises(GitError):  # a range's end names a commit (a tag peels to one)
        history.count(since=tree, until="main")
    assert repo.first_parent("main") == repo.rev("main~1")


def test_messages_containing_a_text_are_those_git_finds(engine: SampleEngine) -> None:
    repo = engine.repo
    head = repo.head()
    for n, text in enumerate(("plain change", "(cherry picked from commit abc)", "other")):
        (repo.root / f"file{n}").write_text(text)
        repo.add(f"file{n}")
        _git(repo, "commit", "--quiet", "-F", "-", message=f"change {n}\n\n{text}\n")
    found = repo.history.messages(since=head, until="HEAD", containing="(cherry picked from")
    assert [m.body for m in found] == ["(cherry picked from commit abc)"]
    assert [m.subject for m in found] == ["change 1"]


def test_subjects_of_pr_numbers_are_found_by_git(engine: SampleEngine) -> None:
    from release.adapters.git_log import parse_subjects

    everything = parse_subjects(engine.repo.history.start_subjects("main").out())
    numbered = [s for s in everything if s.subject.endswith(")") and "(#" in s.subject]
    assert numbered, "the sample history has PR numbers"
    wanted = int(numbered[0].subject.rsplit("(#", 1)[1].rstrip(")"))
    only = parse_subjects(engine.repo.history.start_subjects("main", {wanted}).out())
    assert numbered[0] in only and len(only) < len(everything)
    assert all(f"#{wanted})" in s.subject or f"#0{wanted})" in s.subject for s in only)


def test_trailer_values_that_span_lines_stay_with_their_commit() -> None:
    from release.adapters.git_log import Trailer, parse_trailers

    text = "a\x1fv0.1.0\nsecond\nb\x1f\n\nc\x1f\n"
    assert parse_trailers(text) == [
        Trailer("a", "v0.1.0\nsecond"),
        Trailer("b", ""),
        Trailer("c", ""),
    ]


def test_remote_refs_peel_annotated_tags(engine: SampleEngine) -> None:
    repo = engine.repo
    assert engine.remote is not None
    remote = str(engine.remote)
    _git(repo, "tag", "-a", "-m", "annotated", "t-annotated", "main~1")
    _git(repo, "tag", "t-light", "main~2")
    repo.run("push", "--quiet", remote, "t-annotated", "t-light")
    refs = repo.remotes.refs(remote, "refs/tags/t-annotated", "refs/tags/t-light")
    annotated, light = refs["refs/tags/t-annotated"], refs["refs/tags/t-light"]
    assert annotated.sha == repo.object_id("t-annotated") != annotated.target
    assert annotated.target == repo.rev("main~1")
    assert light.peeled is None and light.target == light.sha == repo.rev("main~2")
    every = repo.remotes.refs(remote, "refs/tags/*")
    assert every["refs/tags/t-annotated"] == annotated
    assert not any(name.endswith("^{}") for name in every)
    assert repo.remotes.tags(remote)["t-annotated"] == annotated.target


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
        "print(sorted(m for m in sys.modules if m == 'release.flows.branch' or m.startswith(("
        "'release.core.backports', 'release.flows.backport_evidence', 'release.core.manifest', "
        "'tempfile', 'difflib'))))"
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


def test_the_git_a_cache_is_keyed_on_is_the_one_path_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from release.adapters.git_process import executable_stamp

    real = shutil.which("git")
    assert real is not None
    stat = os.stat(real)
    assert executable_stamp() == f"{os.path.realpath(real)} {stat.st_size} {stat.st_mtime_ns}"
    # a file named git that cannot run is passed over, as the shell passes it over
    (tmp_path / "git").write_text("not a program\n")
    (tmp_path / "git").chmod(0o644)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.path.dirname(real)}")
    assert executable_stamp().startswith(os.path.realpath(real) + " ")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert executable_stamp() == ""

"""``release push`` against a real bare remote: atomic, and safe to retry after a failure."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from release.adapters.git import GitRepo
from release.adapters.git_notes import notes_ref, read_note, write_note
from release.sample import ALICE, Change, SampleEngine, add_commit
from tests.conftest import repo_state, run_cli

BRANCH = "releases/v0.1.0"


def _remote_refs(engine: SampleEngine) -> dict[str, str]:
    """The remote's refs as ``git ls-remote`` reports them (peeled tags included)."""
    text = engine.repo.out("ls-remote", str(engine.remote))
    return {ref: sha for sha, ref in (line.split("\t") for line in text.splitlines())}


def _one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


def _hook(engine: SampleEngine, name: str, body: str) -> Path:
    assert engine.remote is not None
    path = engine.remote / "hooks" / name
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def ready(cut_engine_copy: SampleEngine) -> SampleEngine:
    """A fix committed on the release branch and rc1 tagged on it, none of it pushed."""
    add_commit(
        cut_engine_copy.repo,
        Change(
            "[Bugfix] Fix the release-only thing (#140)", ALICE, {"release_only.txt": "fixed\n"}
        ),
    )
    cut_engine_copy.repo.run("tag", "-a", "v0.1.0rc1", "-m", "v0.1.0rc1")
    cut_engine_copy.repo.run("tag", "scratch")  # not a release tag: never pushed
    cut_engine_copy.repo.run("status", "--porcelain")
    return cut_engine_copy


def _local(engine: SampleEngine, ref: str) -> str:
    return engine.repo.out("rev-parse", ref).strip()


def test_accepted_push_lands_the_branch_and_the_new_tags(ready: SampleEngine) -> None:
    result = run_cli(ready.root, "push")

    assert result.code == 0, result.output
    assert "pushed 2 ref(s) to origin" in result.stdout
    remote = _remote_refs(ready)
    assert remote[f"refs/heads/{BRANCH}"] == _local(ready, BRANCH)
    assert remote["refs/tags/v0.1.0rc1"] == _local(ready, "refs/tags/v0.1.0rc1")  # the tag object
    assert remote["refs/tags/v0.1.0rc1^{}"] == _local(ready, "HEAD")
    assert "refs/tags/scratch" not in remote

    again = run_cli(ready.root, "push")
    assert again.code == 0, again.output
    assert "up to date" in again.stdout
    assert _remote_refs(ready) == remote


def test_push_after_release_tag(cut_engine_copy: SampleEngine) -> None:
    """The tag task's output (changelog commit and rc tag) is what push sends."""
    assert run_cli(cut_engine_copy.root, "pick", "#109").code == 0
    assert run_cli(cut_engine_copy.root, "tag").code == 0
    result = run_cli(cut_engine_copy.root, "push")
    assert result.code == 0, result.output
    remote = _remote_refs(cut_engine_copy)
    assert remote[f"refs/heads/{BRANCH}"] == _local(cut_engine_copy, "HEAD")
    assert remote["refs/tags/v0.1.0rc1^{}"] == _local(cut_engine_copy, "HEAD")


REJECT_RC1 = (
    "while read old new ref; do\n"
    '  if [ "$ref" = refs/tags/v0.1.0rc1 ]; then\n'
    '    echo "v0.1.0rc1 is frozen by policy" >&2; exit 1\n'
    "  fi\n"
    "done\n"
    "exit 0\n"
)

# ``update`` decides ref by ref; only --atomic keeps the accepted branch from landing alone.
REJECT_RC1_PER_REF = (
    'if [ "$1" = refs/tags/v0.1.0rc1 ]; then echo "v0.1.0rc1 is frozen by policy" >&2; exit 1; fi\n'
    "exit 0\n"
)


@pytest.mark.parametrize(
    ("hook", "body"),
    [("pre-receive", REJECT_RC1), ("update", REJECT_RC1_PER_REF)],
    ids=["pre-receive", "update"],
)
def test_rejected_push_lands_nothing_and_retries(hook: str, body: str, ready: SampleEngine) -> None:
    installed = _hook(ready, hook, body)
    remote_before = _remote_refs(ready)
    local_before = repo_state(ready.root)

    result = run_cli(ready.root, "push")

    line = _one_line(result.stderr)
    assert result.code not in (0, 2, 3), result.output  # a failure, not a refusal
    assert "nothing was pushed" in line
    assert "retry" in line
    assert _remote_refs(ready) == remote_before  # neither the branch nor the tag
    assert repo_state(ready.root) == local_before

    installed.unlink()
    retry = run_cli(ready.root, "push")

    assert retry.code == 0, retry.output
    remote = _remote_refs(ready)
    assert remote[f"refs/heads/{BRANCH}"] == _local(ready, BRANCH)
    assert remote["refs/tags/v0.1.0rc1^{}"] == _local(ready, "HEAD")


def test_rejection_reason_reaches_the_message(ready: SampleEngine) -> None:
    _hook(ready, "update", REJECT_RC1_PER_REF)
    result = run_cli(ready.root, "push")
    line = _one_line(result.stderr)
    assert "v0.1.0rc1" in line


def test_unreachable_remote_changes_nothing_and_retry_works(ready: SampleEngine) -> None:
    assert ready.remote is not None
    remote_before = _remote_refs(ready)
    ready.repo.run("remote", "set-url", "origin", str(ready.remote.parent / "moved.git"))
    local_before = repo_state(ready.root)

    result = run_cli(ready.root, "push")

    line = _one_line(result.stderr)
    assert result.code == 3
    assert "cannot reach origin" in line and "nothing was pushed" in line
    assert repo_state(ready.root) == local_before
    assert _remote_refs(ready) == remote_before

    ready.repo.run("remote", "set-url", "origin", str(ready.remote))
    retry = run_cli(ready.root, "push")

    assert retry.code == 0, retry.output
    assert _remote_refs(ready)[f"refs/heads/{BRANCH}"] == _local(ready, BRANCH)


def test_dry_run_changes_nothing(ready: SampleEngine) -> None:
    remote_before = _remote_refs(ready)
    local_before = repo_state(ready.root)

    result = run_cli(ready.root, "push", "--dry-run")

    assert result.code == 0, result.output
    assert result.stdout.startswith("dry run, nothing changed: would push to origin atomically")
    assert f"update {BRANCH} on origin from " in result.stdout
    assert "push tag v0.1.0rc1" in result.stdout
    assert "scratch" not in result.stdout
    assert _remote_refs(ready) == remote_before
    assert repo_state(ready.root) == local_before


def test_dry_run_json_lists_the_refs(ready: SampleEngine) -> None:
    import json

    result = run_cli(ready.root, "push", "--dry-run", "--json")
    assert result.code == 0, result.output
    data = json.loads(result.stdout)
    assert data["dry_run"] is True
    assert [s["ref"] for s in data["steps"]] == [f"refs/heads/{BRANCH}", "refs/tags/v0.1.0rc1"]


def test_remote_branch_moved_on_is_refused_until_merged(
    ready: SampleEngine, tmp_path: Path
) -> None:
    """Another maintainer pushed to the release branch: refuse up front, then merge and retry."""
    assert ready.remote is not None
    other = tmp_path / "other"
    ready.repo.run("clone", "--quiet", "--branch", BRANCH, str(ready.remote), str(other))
    (other / "elsewhere.txt").write_text("pushed from another clone\n", encoding="utf-8")
    for args in (
        ("add", "elsewhere.txt"),
        ("commit", "--quiet", "-m", "[Doc] Elsewhere (#150)"),
        ("push", "--quiet", "origin", BRANCH),
    ):
        ready.repo.run("-C", str(other), *args)
    remote_before = _remote_refs(ready)
    local_before = repo_state(ready.root)

    for args in (("push", "--dry-run"), ("push",)):
        result = run_cli(ready.root, *args)
        line = _one_line(result.stderr)
        assert result.code == 3, result.output
        assert "has commits that are not here" in line and f"merge origin/{BRANCH}" in line
    assert _remote_refs(ready) == remote_before
    assert repo_state(ready.root) == local_before

    ready.repo.run("fetch", "--quiet", "origin")
    ready.repo.run("merge", "--quiet", "--no-edit", f"origin/{BRANCH}")
    retry = run_cli(ready.root, "push")

    assert retry.code == 0, retry.output
    remote = _remote_refs(ready)
    assert remote[f"refs/heads/{BRANCH}"] == _local(ready, BRANCH)
    assert remote["refs/tags/v0.1.0rc1"] == _local(ready, "refs/tags/v0.1.0rc1")


def test_a_tags_manifest_goes_with_it_and_one_written_elsewhere_is_refused(
    ready: SampleEngine,
) -> None:
    """The manifest (the tag's notes ref) lands in the same atomic push as the tag; a newer
    one is pushed on its own later; one the remote got from elsewhere is never overwritten."""
    tip = _local(ready, "v0.1.0rc1^{commit}")
    write_note(ready.repo, "v0.1.0rc1", tip, '{"manifest": 1}\n')
    result = run_cli(ready.root, "push")
    assert result.code == 0, result.output
    remote = _remote_refs(ready)
    ref = notes_ref("v0.1.0rc1")
    assert remote[ref] == _local(ready, ref)
    assert remote["refs/tags/v0.1.0rc1"] == _local(ready, "v0.1.0rc1")

    write_note(ready.repo, "v0.1.0rc1", tip, '{"manifest": 2}\n')  # rewritten here: a child
    assert run_cli(ready.root, "push").code == 0
    assert _remote_refs(ready)[ref] == _local(ready, ref)
    assert run_cli(ready.root, "push").stdout.startswith("origin is up to date")

    assert ready.remote is not None  # another clone writes its own manifest and pushes it
    clone = ready.root.parent / "other-clone"
    subprocess.run(["git", "clone", "-q", str(ready.remote), str(clone)], check=True)
    theirs = GitRepo(clone)
    write_note(theirs, "v0.1.0rc1", tip, '{"manifest": "theirs"}\n')
    theirs.run("push", "-q", "origin", f"+{ref}:{ref}")
    write_note(ready.repo, "v0.1.0rc1", tip, '{"manifest": 3}\n')
    before = repo_state(ready.root)
    refused = run_cli(ready.root, "push")
    assert refused.code == 3
    assert "the manifest of v0.1.0rc1 on origin was written elsewhere" in _one_line(refused.stderr)
    assert repo_state(ready.root) == before
    assert read_note(theirs, "v0.1.0rc1", tip) == '{"manifest": "theirs"}\n'


# What GitHub's server answers a push to a protected branch, word for word (its pre-receive
# hook; git prints it behind "remote: ").
PROTECTED = (
    "while read old new ref; do\n"
    '  case "$ref" in refs/heads/releases/*)\n'
    '    echo "error: GH006: Protected branch update failed for $ref." >&2\n'
    '    echo "error: Changes must be made through a pull request." >&2\n'
    "    exit 1 ;;\n"
    "  esac\n"
    "done\n"
    "exit 0\n"
)


def test_a_protected_branch_is_said_with_the_setting_that_routes_picks_by_pr(
    ready: SampleEngine,
) -> None:
    installed = _hook(ready, "pre-receive", PROTECTED)
    remote_before = _remote_refs(ready)
    local_before = repo_state(ready.root)

    result = run_cli(ready.root, "push")

    line = _one_line(result.stderr)
    assert result.code == 3, result.output
    assert f"GH006: Protected branch update failed for refs/heads/{BRANCH}." in line
    assert "protected = true under [tool.release.github]" in line
    assert "nothing was pushed" in line
    assert _remote_refs(ready) == remote_before
    assert repo_state(ready.root) == local_before

    installed.write_text("#!/bin/sh\necho 'v0.1.0rc1 is frozen by policy' >&2\nexit 1\n")
    other = run_cli(ready.root, "push")  # any other refusal is not taken for protection
    assert other.code not in (0, 3), other.output
    assert "protected" not in other.stderr

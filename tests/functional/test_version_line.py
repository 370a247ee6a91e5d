"""Versions as real projects write them, made by ``release`` through the CLI on histories
of their shapes: pytorch/ao's ``version.txt`` and patch rcs ``v0.18.1-rc1`` on its
``release/0.18.0`` branch, llm-compressor's four-part patch releases ``0.12.0.1`` on
``release-0.12.0`` (tags without ``v``, no rcs), and a PyTorch-style ``release/0.14``
going rc, final, patch rc, patch with its version file set at each tag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from release.sample import AFTER_CUT, LATE_FIX, Change, SampleEngine
from tests.config_support import run, status
from tests.conftest import repo_state

pytestmark = pytest.mark.slow

ME = ("Release Maintainer", "maintainer@example.com")
AO = """\
main-branch = "main"
branch = "release/{version}"
tag = "v{version}"
rc-spelling = "-rc{n}"
changelog = ""
version-files = ["version.txt"]
"""
LLM_COMPRESSOR = """\
main-branch = "main"
branch = "release-{version}"
tag = "{version}"
changelog = ""
"""
PYTORCH = """\
main-branch = "main"
branch = "release/{major}.{minor}"
tag = "v{version}"
rc-spelling = "-rc{n}"
version-files = ["version.txt", "tinyengine/__init__.py"]
"""


def _setup(engine: SampleEngine, tmp_path: Path, table: str, branch: str) -> Path:
    """``table`` as a config outside the tree; ``branch`` cut where main was (main's
    ``version.txt`` saying 0.14.0), main moved on."""
    config = tmp_path / "release.toml"
    config.write_text(table, encoding="utf-8")
    engine.commit(Change("Keep the version in version.txt", ME, {"version.txt": "0.14.0\n"}))
    init = engine.root / "tinyengine" / "__init__.py"
    text = init.read_text(encoding="utf-8") if init.exists() else ""
    engine.commit(
        Change("Say the version", ME, {"tinyengine/__init__.py": text + '__version__ = "0.14.0"\n'})
    )
    engine.repo.run("branch", branch, "main")
    for change in (*AFTER_CUT, LATE_FIX):
        engine.commit(change)
    engine.repo.run("push", "--quiet", "origin", "main", branch)
    engine.repo.run("switch", "--quiet", branch)
    return config


def at(engine: SampleEngine, tag: str, path: str = "version.txt") -> str:
    return engine.repo.out("show", f"{tag}:{path}").strip()


def test_release_0_14_goes_rc_final_patch_rc_patch_with_its_version_files(
    engine: SampleEngine, tmp_path: Path
) -> None:
    config = _setup(engine, tmp_path, PYTORCH, "release/0.14")
    run(engine, config, "pick", "#109", "--reason", "regression")
    dry = run(engine, config, "tag", "--dry-run").stdout
    # nothing to set: main's files say 0.14.0 already
    assert "set version.txt" not in dry
    assert "tagged v0.14.0-rc1" in run(engine, config, "tag").stdout
    assert at(engine, "v0.14.0-rc1") == "0.14.0"
    run(engine, config, "push")
    assert "tagged v0.14.0 on v0.14.0-rc1" in run(engine, config, "promote").stdout
    run(engine, config, "push")

    engine.repo.run("cherry-pick", "-x", engine.shas[112])
    before = repo_state(engine.root)
    dry = run(engine, config, "tag", "--dry-run").stdout
    assert "set version.txt to 0.14.1, set tinyengine/__init__.py to 0.14.1; commit them" in dry
    assert "-0.14.0\n+0.14.1" in dry and '-__version__ = "0.14.0"' in dry
    assert repo_state(engine.root) == before  # a dry run shows the diff, changes nothing
    assert "tagged v0.14.1-rc1" in run(engine, config, "tag").stdout
    assert at(engine, "v0.14.1-rc1") == "0.14.1"
    assert '__version__ = "0.14.1"' in at(engine, "v0.14.1-rc1", "tinyengine/__init__.py")
    subject = engine.repo.out("log", "-1", "--format=%s", "v0.14.1-rc1")
    assert subject == "Update CHANGELOG.md, version.txt and tinyengine/__init__.py for v0.14.1-rc1"
    assert status(engine, config)["untagged_commits"] == 0  # the release commit is no change
    run(engine, config, "push")
    assert "tagged v0.14.1 on v0.14.1-rc1" in run(engine, config, "promote").stdout
    assert at(engine, "v0.14.1") == "0.14.1"
    made = ["v0.14.0-rc1", "v0.14.0", "v0.14.1-rc1", "v0.14.1"]
    assert sorted(engine.repo.out("tag", "--list", "v0.14*").split()) == sorted(made)


def test_ao_makes_a_patch_rc_on_its_version_named_branch(
    engine: SampleEngine, tmp_path: Path
) -> None:
    """ao: ``release/0.14.0`` after ``v0.14.0`` makes ``v0.14.1-rc1`` (its tags have patch
    releases and never a post release), its ``version.txt`` set to 0.14.1."""
    config = _setup(engine, tmp_path, AO, "release/0.14.0")
    engine.repo.run("tag", "-a", "-m", "v0.14.0-rc1", "v0.14.0-rc1")
    engine.repo.run("tag", "-a", "-m", "v0.14.0", "v0.14.0")
    engine.repo.run("tag", "-a", "-m", "v0.13.1", "v0.13.1", "main~8")  # a patch shipped once
    engine.repo.run("cherry-pick", "-x", engine.shas[112])
    state = status(engine, config)
    assert (state["next_rc"], state["next_command"]) == ("v0.14.1-rc1", "release tag")
    assert "tagged v0.14.1-rc1" in run(engine, config, "tag").stdout
    assert at(engine, "v0.14.1-rc1") == "0.14.1"


@pytest.mark.parametrize(
    ("shipped", "command", "upcoming"),
    [
        pytest.param(None, "release tag --version 0.14.0.post1", None, id="no-evidence-post"),
        pytest.param("v0.13.1", "release tag", "v0.14.1rc1", id="patch-releases"),
        pytest.param("v0.13.0.2", "release tag", "v0.14.0.1", id="four-part"),
        pytest.param("v0.13.0.post1", "release tag --version 0.14.0.post1", None, id="post"),
    ],
)
def test_after_a_final_the_spelling_the_tags_use_is_proposed(
    engine: SampleEngine, tmp_path: Path, shipped: str | None, command: str, upcoming: str | None
) -> None:
    """A version-named branch after its final, with a fix: the project's earlier releases
    past X.Y.0 say how the fix ships (with none, vLLM's post release)."""
    table = AO.replace('rc-spelling = "-rc{n}"\n', "")
    config = _setup(engine, tmp_path, table, "release/0.14.0")
    engine.repo.run("tag", "-a", "-m", "v0.14.0", "v0.14.0")
    if shipped is not None:
        engine.repo.run("tag", "-a", "-m", shipped, shipped, "main~8")
    engine.repo.run("cherry-pick", "-x", engine.shas[112])
    state = status(engine, config)
    assert (state["next_command"], state["next_rc"]) == (command, upcoming)
    before = repo_state(engine.root)
    made = run(
        engine, config, "tag", *(["--version", command.split()[-1]] if upcoming is None else [])
    )
    assert f"tagged {upcoming or 'v' + command.split()[-1]}" in made.stdout
    assert repo_state(engine.root) != before


def test_a_version_tagged_in_another_spelling_is_not_made_again(
    engine: SampleEngine, tmp_path: Path
) -> None:
    config = _setup(engine, tmp_path, AO, "release/0.14.0")
    engine.repo.run("tag", "-a", "-m", "v0.14.0", "v0.14.0")
    engine.repo.run("cherry-pick", "-x", engine.shas[112])
    engine.repo.run("tag", "-a", "-m", "other", "v0.14.1rc1", "v0.14.0")  # PEP 440's spelling
    before = repo_state(engine.root)
    again = run(engine, config, "tag", "--version", "v0.14.1-rc1", code=3)
    assert "0.14.1rc1 is tagged already, as v0.14.1rc1; not tagged again" in again.stderr
    assert repo_state(engine.root) == before
    assert "tagged v0.14.1-rc2" in run(engine, config, "tag").stdout


def test_llm_compressor_makes_four_part_patch_releases(
    engine: SampleEngine, tmp_path: Path
) -> None:
    """``release-0.12.0`` after ``0.12.0`` (no rcs, no ``v``): a fix ships as ``0.12.0.1``,
    then ``0.12.0.2``; a HEAD that is ``0.12.0.1`` proposes nothing, never a post."""
    config = _setup(engine, tmp_path, LLM_COMPRESSOR, "release-0.12.0")
    engine.repo.run("tag", "-a", "-m", "0.12.0", "0.12.0")
    engine.repo.run("tag", "-a", "-m", "0.10.0.3", "0.10.0.3", "main~8")
    engine.repo.run("cherry-pick", "-x", engine.shas[112])
    state = status(engine, config)
    assert (state["next_rc"], state["next_command"]) == ("0.12.0.1", "release tag")
    assert "tagged 0.12.0.1" in run(engine, config, "tag").stdout
    state = status(engine, config)
    assert (state["release"], state["final"]) == ("0.12.0.1", "0.12.0.1")
    assert state["next_command"].startswith(("nothing", "release push"))
    assert "post" not in json.dumps(state)
    before = repo_state(engine.root)
    back = run(engine, config, "tag", "--version", "0.12.0.1", code=3)
    assert "not greater than the latest tag of this release, 0.12.0.1; next valid: 0.12.0.2" in (
        back.stderr
    )
    assert repo_state(engine.root) == before
    engine.repo.run("cherry-pick", "-x", engine.shas[111])
    assert "tagged 0.12.0.2" in run(engine, config, "tag", "--version", "0.12.0.2").stdout


AO_BUMP = AO + "bump-main-after-cut = true\n"


def _ao_main(engine: SampleEngine, tmp_path: Path) -> Path:
    config = tmp_path / "release.toml"
    config.write_text(AO_BUMP, encoding="utf-8")
    engine.commit(Change("Keep the version in version.txt", ME, {"version.txt": "0.15.0\n"}))
    return config


def test_cut_bumps_main_after_the_cut_as_ao_does(engine: SampleEngine, tmp_path: Path) -> None:
    """ao: "bump torchao version after 0.15.0 branch cut": the branch keeps 0.15.0, main
    gets a commit setting version.txt to 0.16.0; the dry run shows it and changes nothing."""
    config = _ao_main(engine, tmp_path)
    at = engine.repo.head()
    before = repo_state(engine.root)
    dry = run(engine, config, "cut", "0.15.0", "--dry-run").stdout
    assert "commit on main: set version.txt to 0.16.0 (after the cut)" in dry
    assert "-0.15.0\n+0.16.0" in dry
    assert repo_state(engine.root) == before
    done = run(engine, config, "cut", "0.15.0").stdout
    assert "commit on main: set version.txt to 0.16.0" in done
    assert engine.repo.current_branch() == "release/0.15.0"
    assert engine.repo.rev("release/0.15.0") == at  # the cut is where main was
    assert at_ref(engine, "release/0.15.0") == "0.15.0"
    assert at_ref(engine, "main") == "0.16.0" and engine.repo.rev("main~1") == at
    subject = engine.repo.out("log", "-1", "--format=%s", "main").strip()
    assert subject == "Bump the version to 0.16.0 after the 0.15.0 branch cut"
    assert engine.repo.out("status", "--porcelain") == ""


def test_cut_from_another_branch_bumps_main_without_touching_the_work_tree(
    engine: SampleEngine, tmp_path: Path
) -> None:
    config = _ao_main(engine, tmp_path)
    at = engine.repo.head()
    engine.repo.run("switch", "--quiet", "-c", "topic")
    (engine.root / "notes.txt").write_text("mine\n", encoding="utf-8")  # untracked: kept
    run(engine, config, "cut", "0.15.0", "--no-switch")
    assert engine.repo.current_branch() == "topic"
    assert (engine.root / "version.txt").read_text(encoding="utf-8") == "0.15.0\n"
    assert at_ref(engine, "main") == "0.16.0" and engine.repo.rev("main~1") == at
    assert engine.repo.out("status", "--porcelain").strip() == "?? notes.txt"


def test_cut_leaves_a_main_that_says_the_next_version_already(
    engine: SampleEngine, tmp_path: Path
) -> None:
    config = _ao_main(engine, tmp_path)
    engine.commit(Change("Bump early", ME, {"version.txt": "0.16.0a0\n"}))
    at = engine.repo.head()
    dry = run(engine, config, "cut", "0.15.0", "--dry-run").stdout
    assert "set version.txt" not in dry
    run(engine, config, "cut", "0.15.0")
    assert engine.repo.rev("main") == at


def test_cut_refuses_a_bump_over_uncommitted_changes_and_changes_nothing(
    engine: SampleEngine, tmp_path: Path
) -> None:
    config = _ao_main(engine, tmp_path)
    (engine.root / "version.txt").write_text("0.15.1\n", encoding="utf-8")
    before = repo_state(engine.root)
    refused = run(engine, config, "cut", "0.15.0", code=3)
    assert "version.txt has uncommitted changes on main, and cut sets it" in refused.stderr
    assert repo_state(engine.root) == before


def at_ref(engine: SampleEngine, ref: str) -> str:
    return engine.repo.out("show", f"{ref}:version.txt").strip()


@pytest.mark.parametrize(
    ("files", "untracked", "why"),
    [
        (
            '["missing.txt"]',
            None,
            "version file missing.txt (version-files in [tool.release]) is not",
        ),
        (
            '["draft.txt"]',
            "draft.txt",
            "version file draft.txt (version-files in [tool.release]) is not",
        ),
        ('["README.md"]', None, "version file README.md keeps no version on its first line"),
        ('["link.txt"]', "link.txt", "version file link.txt is a symlink"),
    ],
    ids=["missing", "untracked", "no-version", "symlink"],
)
def test_a_version_file_tag_cannot_set_is_refused_and_nothing_changes(
    engine: SampleEngine, tmp_path: Path, files: str, untracked: str | None, why: str
) -> None:
    table = PYTORCH.replace('["version.txt", "tinyengine/__init__.py"]', files)
    config = _setup(engine, tmp_path, table, "release/0.14")
    if untracked == "link.txt":  # committed, pointing at the real one
        (engine.root / untracked).symlink_to("version.txt")
        engine.repo.run("add", untracked)
        engine.repo.run("commit", "--quiet", "-m", "A link to the version")
    elif untracked:
        (engine.root / untracked).write_text("0.1.0\n", encoding="utf-8")
    run(engine, config, "pick", "#109", "--reason", "regression")
    before = repo_state(engine.root)
    refused = run(engine, config, "tag", code=3)
    assert why in refused.stderr
    assert repo_state(engine.root) == before

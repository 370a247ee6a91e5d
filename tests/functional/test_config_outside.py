"""A configuration from outside the tree (``--config FILE``, ``$RELEASE_CONFIG``): tried
without committing it, the work tree left clean, and each run saying where it came from."""

from __future__ import annotations

import subprocess
from pathlib import Path

from release.sample import SampleEngine
from tests.conftest import run_cli


def _status(engine: SampleEngine) -> str:
    return subprocess.run(
        ["git", "status", "--porcelain"],
        cwd=engine.root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_a_file_outside_the_tree_is_the_configuration(
    cut_engine: SampleEngine, tmp_path: Path
) -> None:
    engine = cut_engine
    text = (engine.root / "pyproject.toml").read_text(encoding="utf-8")
    tried = tmp_path / "pytorch.toml"
    tried.write_text(
        text.replace('tag = "v{version}"', 'tag = "v{version}"\nrc-spelling = "-rc{n}"')
    )
    planned = run_cli(engine.root, "--config", str(tried), "tag", "--dry-run")
    assert planned.code == 0, planned.output
    assert "v0.1.0-rc1" in planned.stdout
    assert f"configuration: {tried} (RELEASE_CONFIG), not pyproject.toml's" in planned.stderr
    assert _status(engine) == ""  # nothing to commit first, nothing changed
    # the table's keys alone, through the environment
    keys = tmp_path / "keys.toml"
    keys.write_text(
        'main-branch = "main"\nbranch = "releases/v{version}"\nrc-spelling = "-rc.{n}"\n'
    )
    by_env = run_cli(engine.root, "tag", "--dry-run", env={"RELEASE_CONFIG": str(keys)})
    assert by_env.code == 0, by_env.output
    assert "v0.1.0-rc.1" in by_env.stdout
    checked = run_cli(engine.root, "check", env={"RELEASE_CONFIG": str(keys)})
    assert f"{keys} (RELEASE_CONFIG) loads; pyproject.toml is not read" in checked.stdout
    # without it, the tree's own
    assert "v0.1.0rc1" in run_cli(engine.root, "tag", "--dry-run").stdout


def test_a_missing_or_wrong_file_is_refused(cut_engine: SampleEngine, tmp_path: Path) -> None:
    missing = run_cli(cut_engine.root, "--config", str(tmp_path / "none.toml"), "status")
    assert missing.code == 2 and "none.toml: no such file" in missing.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("[tool.release]\nmain-brnch = 'main'\n")
    refused = run_cli(cut_engine.root, "--config", str(bad), "status")
    assert refused.code == 2 and "unknown key 'main-brnch'" in refused.stderr
    assert run_cli(cut_engine.root, "--config", "", "status").code == 2


def test_a_configuration_that_reads_the_tags_otherwise_is_refused(
    cut_engine: SampleEngine, tmp_path: Path
) -> None:
    """Tags made under the tree's configuration keep what they recorded: a file that would
    read them as other versions (or as no release at all) tags and promotes nothing."""
    from tests.conftest import repo_state

    engine = cut_engine
    assert run_cli(engine.root, "tag").code == 0  # v0.1.0rc1, under the tree's own table
    text = (engine.root / "pyproject.toml").read_text(encoding="utf-8")
    other = tmp_path / "other.toml"
    other.write_text(text.replace('tag = "v{version}"', 'tag = "release-v{version}"'))
    before = repo_state(engine.root)
    for command in ("tag", "promote"):
        refused = run_cli(engine.root, "--config", str(other), command)
        assert refused.code == 3, refused.output
        assert (
            f"{other} reads tag v0.1.0rc1 as none of its releases, where pyproject.toml's "
            "[tool.release] reads it as 0.1.0rc1" in refused.stderr
        )
        assert repo_state(engine.root) == before
    # a release branch the tree's table names, read as another release
    swapped = tmp_path / "swapped.toml"
    swapped.write_text(
        text.replace(
            'branch = "releases/v{version}"', 'branch = "releases/v{major}.{patch}.{minor}"'
        )
    )
    refused = run_cli(engine.root, "--config", str(swapped), "tag")
    assert refused.code == 3, refused.output
    assert f"{swapped} reads branch releases/v0.1.0 as 0.0.1, where" in refused.stderr
    assert repo_state(engine.root) == before
    # a file that only spells the next rc otherwise reads the same tags: it may tag
    (engine.root / "NEWS").write_text("more\n")
    engine.repo.run("add", "NEWS")
    engine.repo.run("commit", "--quiet", "-m", "[Doc] News")
    spelled = tmp_path / "spelled.toml"
    spelled.write_text(
        text.replace('tag = "v{version}"', 'tag = "v{version}"\nrc-spelling = "-rc{n}"')
    )
    agreed = run_cli(engine.root, "--config", str(spelled), "tag")
    assert agreed.code == 0, agreed.output
    assert "tagged v0.1.0-rc2" in agreed.stdout


def test_the_run_carries_main_branch_and_config_to_the_image_workflows(
    cut_engine: SampleEngine, tmp_path: Path, monkeypatch
) -> None:
    """``--main-branch`` and ``--config`` are the run's (not the environment's): the
    repository the command floor opens is the one the image workflows and a tag's clone
    are read with."""
    from release.commands.common import opened
    from release.commands.outcome import Run
    from release.images.manifest import ManifestCheckout
    from release.images.workspace import Workspace

    monkeypatch.delenv("RELEASE_CONFIG", raising=False)
    monkeypatch.delenv("RELEASE_MAIN_BRANCH", raising=False)
    text = (cut_engine.root / "pyproject.toml").read_text(encoding="utf-8")
    tried = tmp_path / "renamed.toml"
    tried.write_text(text.replace('name = "example/tinyengine"', 'name = "tried/engine"'))
    assert tried.read_text() != text  # the image name the test looks for is there to change
    run = Run(cut_engine.root, lambda _: None, main_branch="trunk", config=tried)
    ctx = opened(run)
    ws = Workspace.open(ctx, "0.1.0rc1", engine=False)
    checkout = ManifestCheckout.open(opened(run), "0.1.0rc1")
    for seen in (ws.ctx, checkout.ctx, ctx.elsewhere(cut_engine.root)):
        assert seen.config.main_branch == "trunk"
        assert seen.config.matrix is not None and seen.config.matrix.name == "tried/engine"
        assert seen.config_file == tried
    own = opened(Run(cut_engine.root, lambda _: None))
    assert own.config.main_branch == "main" and own.config_file is None
    assert own.config.matrix is not None and own.config.matrix.name != "tried/engine"

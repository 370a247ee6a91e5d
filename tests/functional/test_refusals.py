"""Bad inputs, through the CLI as a user types them: one line on stderr, the right exit
code, and the repository byte for byte as it was (every ref, the index, the work tree,
``.git/release/``).

Exit codes: 2 for usage, config and version errors; 3 for refusals.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from release.errors import ConflictError
from release.flows.context import ReleaseContext
from release.flows.pick import pick as run_pick
from release.flows.pick_plan import parse_requests
from release.sample import ALICE, Change, SampleEngine, add_commit
from tests.conftest import repo_state, run_cli

USAGE, REFUSED = 2, 3
BRANCH = "releases/v0.1.0"

Setup = Callable[[SampleEngine], "dict[str, str] | None"]

# -- setups: each leaves the repository in the state a case refuses ----------------


def _git(engine: SampleEngine, *args: str) -> str:
    return engine.repo.run(*args).stdout.strip()


def _on_main(engine: SampleEngine) -> None:
    _git(engine, "switch", "--quiet", "main")


def _dirty(engine: SampleEngine) -> None:
    path = engine.root / "tinyengine" / "server.py"
    path.write_text(path.read_text(encoding="utf-8") + "# local edit\n", encoding="utf-8")


def _tags(*names: str, at: str = "HEAD") -> Setup:
    def setup(engine: SampleEngine) -> None:
        for name in names:
            _git(engine, "tag", "-a", name, "-m", name, at)

    return setup


def _remote_only_tag(engine: SampleEngine) -> None:
    _git(engine, "tag", "-a", "v0.1.0rc1", "-m", "v0.1.0rc1")
    _git(engine, "push", "--quiet", "origin", "refs/tags/v0.1.0rc1")
    _git(engine, "tag", "-d", "v0.1.0rc1")


def _rc_then_commit(engine: SampleEngine) -> None:
    _tags("v0.1.0rc1")(engine)
    late = Change("[Bugfix] A fix after the rc (#120)", ALICE, {"late.txt": "late\n"})
    add_commit(engine.repo, late)


def _remote_only_branch(engine: SampleEngine) -> None:
    _git(engine, "push", "--quiet", "origin", "main:refs/heads/releases/v0.2.0")


def _side_commit(engine: SampleEngine) -> dict[str, str]:
    _git(engine, "switch", "--quiet", "-c", "side", "main")
    never = Change("[Bugfix] Never merged (#130)", ALICE, {"side.txt": "x\n"})
    sha = add_commit(engine.repo, never)
    _git(engine, "switch", "--quiet", BRANCH)
    return {"side": sha}


def _merge_on_main(engine: SampleEngine) -> dict[str, str]:
    _git(engine, "switch", "--quiet", "-c", "topic", "main~1")
    add_commit(engine.repo, Change("[Bugfix] Topic fix (#131)", ALICE, {"topic.txt": "t\n"}))
    _git(engine, "switch", "--quiet", "main")
    _git(engine, "merge", "--quiet", "--no-ff", "topic", "-m", "Merge branch 'topic' (#132)")
    sha = _git(engine, "rev-parse", "HEAD")
    _git(engine, "switch", "--quiet", BRANCH)
    return {"merge": sha}


def _pr_twice_on_main(engine: SampleEngine) -> None:
    _git(engine, "switch", "--quiet", "main")
    add_commit(
        engine.repo,
        Change("[Bugfix] Follow-up to the batch limit (#108)", ALICE, {"followup.txt": "f\n"}),
    )
    _git(engine, "switch", "--quiet", BRANCH)


def _picks_file(text: str) -> Setup:
    def setup(engine: SampleEngine) -> None:
        (engine.root / "picks.txt").write_text(text, encoding="utf-8")

    return setup


def _stopped_on_conflict(engine: SampleEngine) -> None:
    """#108 without the #107 rename conflicts: a pick is left waiting for --continue."""
    with pytest.raises(ConflictError):
        run_pick(ReleaseContext(engine.root), parse_requests("#108"), say=lambda _: None)


def _state_file(text: str) -> Setup:
    """A pick state file cut short or edited by hand."""

    def setup(engine: SampleEngine) -> None:
        directory = engine.repo.git_dir / "release"
        directory.mkdir()
        (directory / "pick.json").write_text(text, encoding="utf-8")

    return setup


def _config(old: str, new: str) -> Setup:
    def setup(engine: SampleEngine) -> None:
        path = engine.root / "pyproject.toml"
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new, 1), encoding="utf-8")

    return setup


def _config_line(line: str) -> Setup:
    """Add a line at the top of ``[tool.release]``."""
    return _config("[tool.release]\n", f"[tool.release]\n{line}\n")


def _remote_url(url: str) -> Setup:
    def setup(engine: SampleEngine) -> None:
        _git(engine, "remote", "set-url", "origin", url)

    return setup


def _no_remote(engine: SampleEngine) -> None:
    _git(engine, "remote", "remove", "origin")


def _moved_tag_on_remote(engine: SampleEngine) -> None:
    _git(engine, "tag", "-a", "v0.1.0rc1", "-m", "first try", "HEAD~1")
    _git(engine, "push", "--quiet", "origin", "refs/tags/v0.1.0rc1")
    _git(engine, "tag", "-d", "v0.1.0rc1")
    _git(engine, "tag", "-a", "v0.1.0rc1", "-m", "second try", "HEAD")


def _nothing(engine: SampleEngine) -> None:
    return None


# -- git in the middle of something, and the tool's own unfinished work ---------------


def _try(engine: SampleEngine, *args: str, env: dict[str, str] | None = None) -> None:
    """A git command that is meant to stop half-way (it exits non-zero)."""
    engine.repo.run(*args, check=False, env=env)


def _mid_merge(engine: SampleEngine) -> None:
    """Merged, nothing left to resolve, not committed: MERGE_HEAD and a clean tree."""
    _git(engine, "merge", "--no-commit", "--no-ff", "-s", "ours", "main")


def _mid_cherry_pick_conflict(engine: SampleEngine) -> None:
    _try(engine, "cherry-pick", "-x", engine.shas[108])  # needs #107's rename: conflicts


def _mid_cherry_pick_empty(engine: SampleEngine) -> None:
    """A commit already on the branch, picked again: git stops on the empty result."""
    _try(engine, "cherry-pick", "main~6")


def _mid_cherry_pick_sequence(engine: SampleEngine) -> None:
    _try(engine, "cherry-pick", "main~6", "main~7")


def _mid_revert(engine: SampleEngine) -> None:
    add_commit(engine.repo, Change("[Misc] One (#140)", ALICE, {"same.txt": "one\n"}))
    add_commit(engine.repo, Change("[Misc] Two (#141)", ALICE, {"same.txt": "two\n"}))
    _try(engine, "revert", "--no-edit", "HEAD~1")


def _mid_rebase(engine: SampleEngine) -> None:
    _try(engine, "rebase", "-i", "HEAD~1", env={"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"})


def _mid_am(engine: SampleEngine) -> None:
    patch = engine.root.parent / "108.patch"
    patch.write_text(_git(engine, "format-patch", "-1", "--stdout", engine.shas[108]) + "\n")
    _try(engine, "am", str(patch))


def _mid_bisect(engine: SampleEngine) -> None:
    _git(engine, "bisect", "start")


def _pick_interrupted(engine: SampleEngine) -> None:
    """What a pick killed between two cherry-picks leaves: its journal, status running."""
    head = _git(engine, "rev-parse", "HEAD")
    queue = f'[{{"sha": "{engine.shas[109]}", "subject": "fix", "reason": null}}]'
    _state_file(
        f'{{"branch": "{BRANCH}", "orig_head": "{head}", "queue": {queue}, "status": "running"}}'
    )(engine)


def _tagged_during_pick(engine: SampleEngine) -> None:
    """A pick waits on a conflict; meanwhile a commit is made and tagged by hand."""
    _stopped_on_conflict(engine)
    _git(engine, "commit", "--quiet", "--allow-empty", "-m", "[Misc] Made by hand (#142)")
    _git(engine, "tag", "-a", "v0.1.0rc1", "-m", "v0.1.0rc1")


def _journal_text(name: str, text: str) -> Setup:
    def setup(engine: SampleEngine) -> None:
        directory = engine.repo.git_dir / "release"
        directory.mkdir(exist_ok=True)
        (directory / name).write_text(text, encoding="utf-8")

    return setup


def _task_journal(command: str, ref: str, orig: str, target: str = "HEAD") -> Setup:
    """What a killed cut, tag or promote leaves: its journal (its process group gone)."""

    def setup(engine: SampleEngine) -> None:
        journal = {
            "command": command,
            "ref": ref,
            "orig_head": _git(engine, "rev-parse", orig),
            "target": _git(engine, "rev-parse", target),
            "pgid": 0,
        }
        _journal_text(f"{command}.json", json.dumps(journal))(engine)

    return setup


# -- odd files and paths --------------------------------------------------------------


def _write(rel: str, data: bytes, *, commit: bool = False) -> Setup:
    def setup(engine: SampleEngine) -> None:
        path = engine.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if commit:
            _git(engine, "add", "--", rel)
            _git(engine, "commit", "--quiet", "-m", f"[Misc] Add {rel}")

    return setup


def _directory(rel: str) -> Setup:
    def setup(engine: SampleEngine) -> None:
        (engine.root / rel).mkdir(parents=True)
        (engine.root / rel / "keep").write_text("x\n", encoding="utf-8")

    return setup


def _changelog_symlink_out(engine: SampleEngine) -> None:
    outside = engine.root.parent / "elsewhere.md"
    outside.write_text("# Changelog\n", encoding="utf-8")
    (engine.root / "CHANGELOG.md").symlink_to(outside)
    _git(engine, "add", "CHANGELOG.md")
    _git(engine, "commit", "--quiet", "-m", "[Misc] Changelog elsewhere")


def _ignored_draft(engine: SampleEngine) -> None:
    (engine.root / ".git" / "info" / "exclude").write_text("CHANGELOG.md\n", encoding="utf-8")
    (engine.root / "CHANGELOG.md").write_text("# my draft, not for the rc\n", encoding="utf-8")


def _both(*setups: Setup) -> Setup:
    def setup(engine: SampleEngine) -> dict[str, str] | None:
        values: dict[str, str] = {}
        for one in setups:
            values.update(one(engine) or {})
        return values or None

    return setup


NOT_UTF8 = b'[tool.release]\nremote = "origin"\n# caf\xe9\n'


# -- the table ------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str, ...]
    code: int
    says: str  # a fragment of the one-line message (case-insensitive)
    setup: Setup = _nothing


def case(
    id: str, args: str | tuple[str, ...], code: int, says: str, setup: Setup = _nothing
) -> Case:
    return Case(id, tuple(args.split()) if isinstance(args, str) else args, code, says, setup)


CASES = [
    # versions given to cut
    case("cut-two-parts", "cut 0.31", USAGE, "'0.31'"),
    case("cut-four-parts", "cut v0.31.0.0", USAGE, "'v0.31.0.0'"),
    case("cut-alpha", "cut 0.31.0a1", USAGE, "0.31.0a1"),
    case("cut-rc", "cut 0.31.0rc1", USAGE, "X.Y.Z"),
    case("cut-rc-semver", "cut 0.31.0-rc.1", USAGE, "X.Y.Z"),
    case("cut-post", "cut 0.31.0.post1", USAGE, "X.Y.Z"),
    case("cut-banana", "cut banana", USAGE, "'banana'"),
    case("cut-dev", "cut 0.31.0.dev1", USAGE, "0.31.0.dev1"),
    case("cut-epoch", "cut 1!0.31.0", USAGE, "1!0.31.0"),
    case("cut-local", "cut 0.31.0+local", USAGE, "0.31.0+local"),
    case("cut-rc0", "cut 0.31.0rc0", USAGE, "0.31.0rc0"),
    # cut: branches and commits
    case("cut-existing-branch", "cut 0.1.0", REFUSED, "already exists"),
    case(
        "cut-branch-only-on-remote",
        "cut 0.2.0",
        REFUSED,
        "already exists on the remote",
        _remote_only_branch,
    ),
    case("cut-at-side-commit", "cut 0.2.0 --at {side}", REFUSED, "not on main", _side_commit),
    case("cut-at-nonexistent-ref", "cut 0.2.0 --at no-such-ref", USAGE, "no-such-ref"),
    case("cut-released-version", "cut 0.3.0", REFUSED, "already released", _tags("v0.3.0")),
    case(
        "cut-main-branch-missing",
        "cut 0.2.0",
        REFUSED,
        "trunk",
        _config('main-branch = "main"', 'main-branch = "trunk"'),
    ),
    # tag
    case("tag-other-release", "tag --version 0.2.0rc1", USAGE, "0.2.0rc1"),
    case("tag-final", "tag --version 0.1.0", USAGE, "promote"),
    case(
        "tag-not-greater",
        "tag --version 0.1.0rc1",
        REFUSED,
        "not greater",
        _tags("v0.1.0rc1", "v0.1.0rc2"),
    ),
    case("tag-exists-locally", "tag --version 0.1.0rc1", REFUSED, "0.1.0rc2", _tags("v0.1.0rc1")),
    case(
        "tag-exists-only-on-remote", "tag --version 0.1.0rc1", REFUSED, "0.1.0rc2", _remote_only_tag
    ),
    case(
        "tag-next-rc-after-final", "tag", REFUSED, "already released", _tags("v0.1.0rc1", "v0.1.0")
    ),
    case(
        "tag-post-before-final", "tag --version 0.1.0.post1", REFUSED, "promote", _tags("v0.1.0rc1")
    ),
    case("tag-dirty-tree", "tag", REFUSED, "uncommitted changes", _dirty),
    case("tag-not-on-release-branch", "tag", REFUSED, "not on a release branch", _on_main),
    case(
        "tag-remote-unreachable",
        "tag",
        REFUSED,
        "--offline",
        _remote_url("/nonexistent/remote.git"),
    ),
    # promote
    case("promote-without-rc", "promote", REFUSED, "no rc"),
    case("promote-untagged-commits", "promote", REFUSED, "tag the next rc", _rc_then_commit),
    case("promote-twice", "promote", REFUSED, "already released", _tags("v0.1.0rc1", "v0.1.0")),
    case("promote-rc-only-on-remote", "promote", REFUSED, "fetch", _remote_only_tag),
    case("promote-other-version", "promote --version 0.2.0", USAGE, "0.2.0"),
    # pick
    case("pick-side-branch-commit", "pick {side}", REFUSED, "not on main", _side_commit),
    case("pick-unknown-sha", "pick deadbeefdeadbeef", USAGE, "deadbeefdeadbeef"),
    case("pick-not-a-sha", "pick HEAD~1", USAGE, "neither a commit sha, a #PR number"),
    case("pick-not-a-pr-number", "pick #12a", USAGE, "'#12a'"),
    case("pick-unknown-pr", "pick #999", REFUSED, "#999"),
    case("pick-pr-on-two-commits", "pick #108", REFUSED, "pick by sha", _pr_twice_on_main),
    case("pick-feature", "pick #110", REFUSED, "--allow-feature"),
    case("pick-feature-among-fixes", ("pick", "#109 #110"), REFUSED, "--allow-feature"),
    case("pick-bad-reason", "pick #109 --reason because", USAGE, "because"),
    case(
        "pick-file-line-too-long",
        "pick --file picks.txt",
        USAGE,
        "line 2",
        _picks_file("#109 regression\n#108 regression and more\n"),
    ),
    case(
        "pick-file-bad-reason",
        "pick --file picks.txt",
        USAGE,
        "line 1",
        _picks_file("#109 urgent\n"),
    ),
    case("pick-file-missing", "pick --file nowhere.txt", USAGE, "nowhere.txt"),
    case(
        "pick-nothing",
        "pick --file picks.txt",
        USAGE,
        "nothing to pick",
        _picks_file("# only comments\n\n"),
    ),
    case("pick-continue-nothing", "pick --continue", REFUSED, "no pick in progress"),
    case("pick-abort-nothing", "pick --abort", REFUSED, "no pick in progress"),
    case("pick-dirty-tree", "pick #109", REFUSED, "uncommitted changes", _dirty),
    case("pick-not-on-release-branch", "pick #109", REFUSED, "not on a release branch", _on_main),
    case("pick-merge-commit", "pick {merge}", REFUSED, "merge commit", _merge_on_main),
    case("pick-while-conflict-waits", "pick #109", REFUSED, "--continue", _stopped_on_conflict),
    case(
        "pick-damaged-state",
        "pick #109",
        REFUSED,
        "damaged",
        _state_file('{"branch": "releases/v0.1.0", "queue": ['),
    ),
    case(
        "pick-continue-state-without-branch",
        "pick --continue",
        REFUSED,
        "branch",
        _state_file('{"status": "running", "queue": []}'),
    ),
    case("pick-abort-state-not-an-object", "pick --abort", REFUSED, "damaged", _state_file("[]")),
    # config
    case(
        "config-unknown-key",
        "status",
        USAGE,
        "did you mean 'main-branch'",
        _config_line('mainbranch = "main"'),
    ),
    case(
        "config-wrong-type", "status", USAGE, "remote", _config('remote = "origin"', "remote = 3")
    ),
    case(
        "config-unknown-field",
        "cut 0.2.0",
        USAGE,
        "versio",
        _config('tag = "v{version}"', 'tag = "v{versio}"'),
    ),
    case(
        "config-unbalanced-brace",
        "status",
        USAGE,
        "tag",
        _config('tag = "v{version}"', 'tag = "v{version"'),
    ),
    case(
        "config-scheme-typo",
        "status",
        USAGE,
        "semverr",
        _config('version-scheme = "pep440"', 'version-scheme = "semverr"'),
    ),
    case(
        "config-invalid-toml", "status", USAGE, "toml", _config_line('picks-file = "unterminated')
    ),
    case(
        "config-bad-branch-ref",
        "status",
        USAGE,
        "branch",
        _config('branch = "releases/v{version}"', 'branch = "releases/v{version}..x"'),
    ),
    case(
        "config-unknown-feature-category",
        "pick #109",
        USAGE,
        "feature-categories",
        _config_line('feature-categories = ["Featurez"]'),
    ),
    # notes
    case("notes-since-bad-ref", "notes --since no-such-tag", USAGE, "no-such-tag"),
    case("notes-format-xml", "notes --format xml", USAGE, "xml"),
    case("notes-view-weekly", "notes --view weekly", USAGE, "weekly"),
    # push
    case("push-no-remote", "push", REFUSED, "no remote", _no_remote),
    case(
        "push-unreachable-remote",
        "push",
        REFUSED,
        "cannot reach",
        _remote_url("/nonexistent/remote.git"),
    ),
    case("push-moved-tag", "push", REFUSED, "never moved", _moved_tag_on_remote),
    # git in the middle of something: every mutating task names it and how to finish it
    *[
        case(f"{cmd.split()[0]}-mid-{name}", cmd, REFUSED, says, setup)
        for name, says, setup in [
            ("merge", "git merge --abort", _mid_merge),
            ("cherry-pick-conflict", "git cherry-pick --abort", _mid_cherry_pick_conflict),
            ("cherry-pick-empty", "git cherry-pick --abort", _mid_cherry_pick_empty),
            ("cherry-pick-sequence", "git cherry-pick --abort", _mid_cherry_pick_sequence),
            ("revert", "git revert --abort", _mid_revert),
            ("rebase", "git rebase --abort", _mid_rebase),
            ("am", "git am --abort", _mid_am),
            ("bisect", "git bisect reset", _mid_bisect),
        ]
        for cmd in ("tag", "pick #109")
    ],
    case("promote-mid-merge", "promote", REFUSED, "a merge", _both(_tags("v0.1.0rc1"), _mid_merge)),
    case("push-mid-merge", "push", REFUSED, "a merge", _mid_merge),
    case("cut-mid-bisect", "cut 0.2.0", REFUSED, "a bisect", _mid_bisect),
    case(
        "pick-continue-mid-merge",
        "pick --continue",
        REFUSED,
        "a merge",
        _both(_stopped_on_conflict, _mid_merge),
    ),
    case(
        "pick-abort-mid-rebase",
        "pick --abort",
        REFUSED,
        "a rebase",
        _both(_pick_interrupted, _mid_rebase),
    ),
    # the tool's own work unfinished: finish or undo the pick first
    case(
        "tag-while-pick-conflict", "tag", REFUSED, "release pick --continue", _stopped_on_conflict
    ),
    case("tag-while-pick-interrupted", "tag", REFUSED, "interrupted", _pick_interrupted),
    case(
        "promote-while-pick",
        "promote",
        REFUSED,
        "release pick --abort",
        _both(_tags("v0.1.0rc1"), _pick_interrupted),
    ),
    case("push-while-pick", "push", REFUSED, "release pick --continue", _stopped_on_conflict),
    case("cut-while-pick", "cut 0.2.0", REFUSED, "release pick --continue", _stopped_on_conflict),
    case(
        "pick-abort-would-strand-a-tag", "pick --abort", REFUSED, "v0.1.0rc1", _tagged_during_pick
    ),
    # paths in [tool.release] stay inside the work tree
    case(
        "config-changelog-in-git-dir",
        "status",
        USAGE,
        "git directory",
        _config('changelog = "CHANGELOG.md"', 'changelog = ".git/config"'),
    ),
    case(
        "config-changelog-parent",
        "status",
        USAGE,
        "out of the work tree",
        _config('changelog = "CHANGELOG.md"', 'changelog = "../CHANGELOG.md"'),
    ),
    case(
        "config-changelog-absolute",
        "status",
        USAGE,
        "inside the work tree",
        _config('changelog = "CHANGELOG.md"', 'changelog = "/tmp/CHANGELOG.md"'),
    ),
    case(
        "config-picks-file-in-git-dir",
        "status",
        USAGE,
        "git directory",
        _config('picks-file = "release-picks.txt"', 'picks-file = ".git/picks.txt"'),
    ),
    case(
        "config-changelog-symlink-out",
        "tag",
        USAGE,
        "outside the work tree",
        _changelog_symlink_out,
    ),
    case(
        "config-changelog-directory", "tag", USAGE, "not a regular file", _directory("CHANGELOG.md")
    ),
    case("tag-ignored-changelog-draft", "tag", REFUSED, "not committed", _ignored_draft),
    # odd bytes and odd input: one line, the right code
    case("config-not-utf8", "status", USAGE, "not UTF-8", _write("pyproject.toml", NOT_UTF8)),
    case(
        "config-directory",
        "status",
        USAGE,
        "directory",
        _both(lambda e: (e.root / "pyproject.toml").unlink(), _directory("pyproject.toml")),
    ),
    case(
        "pick-file-not-utf8",
        "pick --file picks.txt",
        USAGE,
        "not UTF-8",
        _write("picks.txt", b"#109 regression # caf\xe9\n"),
    ),
    case(
        "pick-file-directory", "pick --file picks.txt", USAGE, "directory", _directory("picks.txt")
    ),
    case(
        "tag-changelog-not-utf8",
        "tag",
        USAGE,
        "not UTF-8",
        _write("CHANGELOG.md", b"# Changelog\n\xff\n", commit=True),
    ),
    case(
        "pick-huge-pr-number",
        ("pick", "#" + "9" * 5000),
        USAGE,
        "neither a commit sha, a #PR number",
    ),
    case("pick-unicode-pr-number", ("pick", "#\u0661\u0660\u0669"), USAGE, "neither"),
    case("cut-unicode-digits", ("cut", "\u0660.\u0663\u0661.\u0660"), USAGE, "not a version"),
    case("cut-huge-version", ("cut", "0.31." + "9" * 5000), USAGE, "not a version"),
    case("tag-unicode-rc", ("tag", "--version", "0.1.0-rc\u0661"), USAGE, "not a version"),
    case("tag-empty-version", ("tag", "--version", ""), USAGE, "empty version"),
    case("promote-empty-version", ("promote", "--version", ""), USAGE, "empty version"),
    case("cut-empty-at", ("cut", "0.2.0", "--at", ""), USAGE, "--at ''"),
    case("notes-empty-since", ("notes", "--since", ""), USAGE, "''"),
    case("config-bots-not-a-list", "status", USAGE, "bots", _config_line('bots = "*[bot]"')),
    case(
        "config-merge-by-name-not-bool",
        "status",
        USAGE,
        "merge-by-name",
        _config_line('merge-by-name = "yes"'),
    ),
    # names git would refuse, or read as an option
    case(
        "config-branch-leading-dash",
        "status",
        USAGE,
        "begins with '-'",
        _config('branch = "releases/v{version}"', 'branch = "-releases/v{version}"'),
    ),
    case(
        "config-branch-dot-part",
        "status",
        USAGE,
        "begins with '.'",
        _config('branch = "releases/v{version}"', 'branch = "releases/.v{version}"'),
    ),
    case(
        "config-tag-lock-part",
        "status",
        USAGE,
        "ends with '.lock'",
        _config('tag = "v{version}"', 'tag = "v{version}.lock/x"'),
    ),
    case(
        "config-tag-control-char",
        "status",
        USAGE,
        "control character",
        _config('tag = "v{version}"', 'tag = "v{version}\\u0007"'),
    ),
    # a killed run's journal that does not fit the repository any more
    case(
        "tag-interrupted-then-branch-moved",
        "tag",
        REFUSED,
        "interrupted tag",
        _task_journal("tag", "refs/tags/v0.1.0rc1", "HEAD~1"),
    ),
    case(
        "promote-interrupted-then-branch-moved",
        "promote",
        REFUSED,
        "interrupted promote",
        _both(_tags("v0.1.0rc1"), _task_journal("promote", "refs/tags/v0.1.0", "HEAD~1")),
    ),
    case(
        "cut-interrupted-branch-elsewhere",
        "cut 0.2.0",
        REFUSED,
        "interrupted cut",
        _both(
            lambda e: _git(e, "branch", "releases/v0.2.0", "main~1"),
            _task_journal("cut", "refs/heads/releases/v0.2.0", "HEAD", "main"),
        ),
    ),
    case("tag-journal-damaged", "tag", REFUSED, "damaged", _journal_text("tag.json", "[]")),
    # history that is not all there; a remote that is not there
    case("tag-missing-remote", "tag", REFUSED, "no remote named", _no_remote),
]


def _one_line_error(result_stderr: str) -> str:
    lines = result_stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{result_stderr}"
    assert lines[0].startswith("error: "), lines[0]
    return lines[0]


def test_table_is_large_and_ids_unique() -> None:
    assert len(CASES) >= 30
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("bad", CASES, ids=[c.id for c in CASES])
def test_refused_without_a_trace(bad: Case, cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    values = bad.setup(engine) or {}
    args = [a.format(**values) if values else a for a in bad.args]
    engine.repo.run("status", "--porcelain")  # settle the index's stat data first
    before = repo_state(engine.root)
    remote_before = _remote_refs(engine)

    result = run_cli(engine.root, *args)

    line = _one_line_error(result.stderr)
    assert result.code == bad.code, f"exit {result.code}, expected {bad.code}: {line}"
    assert bad.says.lower() in line.lower(), line
    assert "Traceback" not in result.stdout
    assert repo_state(engine.root) == before
    assert _remote_refs(engine) == remote_before


def _remote_refs(engine: SampleEngine) -> str:
    assert engine.remote is not None
    return engine.repo.run("--git-dir", str(engine.remote), "for-each-ref").stdout


def _listing(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"/"
        for p in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize("args", [("status",), ("pick", "#109")], ids=lambda a: a[0])
def test_outside_a_git_repository(tmp_path: Path, args: tuple[str, ...]) -> None:
    cwd = tmp_path / "not-a-repo"
    cwd.mkdir()
    (cwd / "pyproject.toml").write_text('[tool.release]\nremote = "origin"\n', encoding="utf-8")
    before = _listing(tmp_path)

    result = run_cli(cwd, *args, env={"GIT_CEILING_DIRECTORIES": str(tmp_path)})

    line = _one_line_error(result.stderr)
    assert result.code == USAGE
    assert "not a git repository" in line
    assert _listing(tmp_path) == before

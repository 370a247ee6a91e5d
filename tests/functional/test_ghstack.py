"""PyTorch-family commits land through ghstack or Phabricator: the subject has no ``(#N)``,
the body says ``Pull Request resolved: https://github.com/ORG/REPO/pull/N`` (the pattern of
pytorch/tensordict's and pytorch/torchtune's histories). That number is the commit's PR
for notes and links, and ``pick '#N'`` finds the commit by it, when ORG/REPO is this
repository (``repo-url``, else the remote's GitHub URL) and the line is the body's only
one. Another repository's PR, or one of two, is no PR of this one: not for ``pick``, not
for the notes, not for ``status``'s picks; without this repository's URL no landing line
is, and ``pick`` says to set it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from release.core.commits import make_commit
from release.core.pull_requests import RepoIdentity, resolved_pr
from release.sample import ALICE, BOB, Change, SampleEngine, add_commit, make_engine_repo
from tests.conftest import CliResult, repo_state, run_cli

# a ghstack commit as it lands (tensordict's shape: summary, the stack, the landing lines)
GHSTACK_BODY = """Summary: Keep the lazy stack's device when it is indexed.

Stack from [ghstack](https://github.com/ezyang/ghstack) (oldest at bottom):
* __->__ #1187
* #1186

Pull Request resolved: https://github.com/pytorch/tensordict/pull/1187
ghstack-source-id: 5a1f0e2
Differential Revision: [D67891234](https://our.internmc.facebook.com/intern/diff/D67891234)
"""
TENSORDICT = "https://github.com/pytorch/tensordict"
URL = "https://github.com/example/tinyengine"  # the sample engine's repo-url
EVIL = "https://github.com/evil/other"
CACHED = {"RELEASE_REPO_CACHE": "1"}  # the caches read and written, wherever this runs


def on_main(engine: SampleEngine, change: Change) -> str:
    """Commit ``change`` on main, pushed, and come back to the release branch."""
    engine.repo.run("switch", "--quiet", "main")
    sha = engine.commit(change)
    engine.repo.run("push", "--quiet", "origin", "main")
    engine.repo.run("switch", "--quiet", "releases/v0.1.0")
    return sha


def ghstack(subject: str, body: str, name: str) -> Change:
    return Change(subject, ALICE, {f"tinyengine/{name}.py": f"{name.upper()} = ()\n"}, body=body)


def notes_line(engine: SampleEngine, text: str, *config: str) -> str:
    notes = run_cli(engine.root, *config, "notes", "--since", engine.shas[101], "--until", "main")
    assert notes.code == 0, notes.output
    return next(row for row in notes.stdout.splitlines() if text in row)


def planned(engine: SampleEngine, ref: str, *config: str) -> list[str]:
    result = run_cli(engine.root, *config, "pick", ref, "--dry-run", "--json")
    assert result.code == 0, result.output
    return [s["sha"] for s in json.loads(result.stdout)["steps"] if s.get("sha")]


def refused(engine: SampleEngine, *pick: str, config: tuple[str, ...] = ()) -> CliResult:
    """``pick ARGS``, refused, with the repository as it was."""
    before = repo_state(engine.root)
    result = run_cli(engine.root, *config, "pick", *pick)
    assert result.code == 3, result.output
    assert repo_state(engine.root) == before
    return result


def test_the_pr_a_body_names_landed_is_the_commits() -> None:
    tensordict = RepoIdentity.of(TENSORDICT)
    assert resolved_pr(GHSTACK_BODY, tensordict) == 1187  # not #1186, another PR of the stack
    commit = make_commit(
        "a" * 40, "A", "a@example.com", "[BugFix] Keep the device", GHSTACK_BODY, {},
        repo=tensordict,
    )  # fmt: skip
    assert commit.pr == 1187
    numbered = make_commit(
        "b" * 40, "A", "a@example.com", "Fix it (#12)", GHSTACK_BODY, {}, repo=tensordict
    )
    assert numbered.pr == 12  # the subject's own number wins
    for body in (
        "Pull Request resolved: https://github.com/pytorch/tensordict/pull/1234567890",
        "Pull Request resolved: https://github.com/pytorch/tensordict/issues/5",
        "See Pull Request resolved: https://github.com/pytorch/tensordict/pull/5",
        "Differential Revision: D123",
    ):
        assert resolved_pr(body, tensordict) is None, body


def test_notes_link_and_pick_find_a_ghstack_commit(cut_engine: SampleEngine) -> None:
    engine = cut_engine
    body = GHSTACK_BODY.replace(f"{TENSORDICT}/pull/1187", f"{URL}/pull/1301")
    sha = on_main(
        engine, ghstack("[BugFix] Keep the scheduler's order on an empty batch", body, "empty")
    )
    assert planned(engine, "#1301")[:1] == [sha]
    missing = run_cli(engine.root, "pick", "#1302", "--dry-run")
    assert missing.code == 3 and "Pull Request resolved: .../pull/1302" in missing.stderr
    line = notes_line(engine, "empty batch")
    assert f"{URL}/pull/1301" in line


def test_another_repositorys_pr_is_not_picked_nor_linked(cut_engine: SampleEngine) -> None:
    engine = cut_engine
    subject = "[BugFix] Keep the batch order when a request is cancelled"
    sha = on_main(engine, ghstack(subject, f"Pull Request resolved: {EVIL}/pull/203\n", "order"))
    for args in (("#203",), ("#203", "--dry-run")):
        said = refused(engine, *args).stderr
        assert f"{sha[:10]} '{subject}' names it" in said
        assert f"{EVIL}/pull/203, another repository's PR (this one is {URL})" in said
    assert planned(engine, sha) == [sha]  # by sha, as the message says
    line = notes_line(engine, "cancelled")
    assert "203" not in line and line.endswith("by Alice Chen")
    notes = run_cli(engine.root, "notes", "--until", "main", "--format", "json")
    entries = [e for c in json.loads(notes.stdout)["sections"] for e in c["entries"]]
    assert [(e["pr"], e["pr_url"]) for e in entries if "cancelled" in e["title"]] == [(None, None)]


def test_two_landing_lines_name_no_pr(cut_engine: SampleEngine) -> None:
    engine = cut_engine
    real = on_main(engine, ghstack("[BugFix] Keep the queue bounded (#201)", "", "queue"))
    body = f"Pull Request resolved: {URL}/pull/201\nPull Request resolved: {URL}/pull/202\n"
    on_main(engine, ghstack("[Misc] Land a stack of two", body, "stack"))
    assert planned(engine, "#201") == [real]
    said = refused(engine, "#202").stderr
    assert "its body has 2 'Pull Request resolved:' lines, so it names none of them" in said
    assert f"[#201]({URL}/pull/201)" in notes_line(engine, "queue bounded")
    assert "#20" not in notes_line(engine, "stack of two")


@pytest.mark.parametrize(("url", "counted"), [(URL, True), (EVIL, False)])
def test_status_counts_a_pick_by_this_repositorys_pr_only(
    cut_engine: SampleEngine, url: str, counted: bool
) -> None:
    """A pick made without ``-x`` whose subject keeps the PR number is counted by it: only
    when the main commit's landing line is this repository's PR."""
    engine = cut_engine
    main = on_main(
        engine, ghstack("[BugFix] Keep the order", f"Pull Request resolved: {url}/pull/203", "keep")
    )
    picked = add_commit(
        engine.repo,
        Change("[BugFix] Keep the order, adapted (#203)", BOB, {"tinyengine/kept.py": "K = 1\n"}),
    )
    result = run_cli(engine.root, "status", "--json", env=CACHED)
    assert result.code == 0, result.output
    done = {p["sha"]: (p["from"], p["how"]) for p in json.loads(result.stdout)["picks_done"]}
    assert (done.get(picked) == (main, "PR #203")) is counted
    assert (picked in done) is counted


def test_without_this_repositorys_url_no_landing_line_is_a_pr(
    cut_engine: SampleEngine, tmp_path: Path
) -> None:
    """A local-path remote and no repo-url: whose PR a body names cannot be told, so none is,
    and ``pick`` says what would tell; the remote's GitHub URL tells as repo-url does."""
    engine = cut_engine
    unknown = tmp_path / "unknown.toml"
    pyproject = (engine.root / "pyproject.toml").read_text(encoding="utf-8")
    unknown.write_text(pyproject.replace(f'repo-url = "{URL}"\n', ""), encoding="utf-8")
    config = ("--config", str(unknown))
    subject = "[BugFix] Keep the scheduler's order on an empty batch"
    sha = on_main(engine, ghstack(subject, f"Pull Request resolved: {URL}/pull/1301\n", "empty"))
    said = refused(engine, "#1301", config=config).stderr
    assert f"{sha[:10]} '{subject}' names it, but its body names {URL}/pull/1301" in said
    assert "this repository's URL is unknown" in said and "set repo-url in [tool.release]" in said
    assert "1301" not in notes_line(engine, "empty batch", *config)
    # the same commit, this repository's URL configured
    assert planned(engine, "#1301") == [sha]
    # or read from a GitHub remote (spelt in another case), which reaches the bare one here
    assert engine.remote is not None
    github = "git@github.com:Example/TinyEngine.git"
    engine.repo.run("remote", "set-url", "origin", github)
    engine.repo.run("config", f"url.{engine.remote}.insteadOf", github)
    assert planned(engine, "#1301", *config) == [sha]
    assert "[#1301](https://github.com/Example/TinyEngine/pull/1301)" in notes_line(
        engine, "empty batch", *config
    )


def test_the_caches_keep_prs_by_the_repository_they_are_of(
    cut_engine: SampleEngine, tmp_path: Path
) -> None:
    """What the commit and picks caches keep was worked out for one repository URL: another
    repo-url reads its own PRs, not what was kept for the first."""
    engine = cut_engine
    main = on_main(
        engine, ghstack("[BugFix] Keep it", f"Pull Request resolved: {EVIL}/pull/203", "it")
    )
    picked = add_commit(engine.repo, Change("[BugFix] Keep it (#203)", BOB, {"k.txt": "k\n"}))
    other = tmp_path / "other.toml"
    pyproject = (engine.root / "pyproject.toml").read_text(encoding="utf-8")
    other.write_text(pyproject.replace(URL, EVIL), encoding="utf-8")

    def counted(*config: str) -> dict[str, str]:
        result = run_cli(engine.root, *config, "status", "--json", env=CACHED)
        assert result.code == 0, result.output
        return {p["sha"]: p["from"] for p in json.loads(result.stdout)["picks_done"]}

    def linked(*config: str) -> bool:
        notes = run_cli(engine.root, *config, "notes", "--until", "main", env=CACHED)
        assert notes.code == 0, notes.output
        return f"{EVIL}/pull/203" in notes.stdout

    for _ in range(2):  # cold, then from what the first runs kept
        assert picked not in counted() and not linked()
        assert counted("--config", str(other)).get(picked) == main
        assert linked("--config", str(other))


def pytorch_data(root: Path) -> SampleEngine:
    """A few of pytorch/data's main commits, their subjects and bodies as they are there,
    after a release branch cut (``repo-url`` https://github.com/pytorch/data)."""

    def configure(work: Path) -> None:
        pyproject = work / "pyproject.toml"
        text = pyproject.read_text(encoding="utf-8")
        pyproject.write_text(text.replace(URL, DATA), encoding="utf-8")

    engine = make_engine_repo(root, first="Initial commit", author=ALICE, prepare=configure)
    engine.repo.run("branch", "releases/v0.1.0")
    for n, (subject, body) in enumerate(PYTORCH_DATA):
        engine.commit(Change(subject, ALICE, {f"torchdata/change{n}.py": f"N = {n}\n"}, body=body))
    engine.repo.run("push", "--quiet", "origin", "main", "releases/v0.1.0")
    engine.repo.run("switch", "--quiet", "releases/v0.1.0")
    return engine


DATA = "https://github.com/pytorch/data"
# pytorch/data db216c1b, e53afb72 (exported from pytorch/pytorch, whose PR numbers their
# subjects keep) and 8d97fbb4 (landed from pytorch/data's own PR, named in the body only)
PYTORCH_DATA = (
    (
        "Adding StreamWrapper to ensure file object will be closed (#66715)",
        "Summary:\nPull Request resolved: https://github.com/pytorch/pytorch/pull/66715\n\n"
        "Adding StreamWrapper to streams produced by DataPipes within PyTorch Core and "
        "TorchData\n\nReviewed By: ejguan\n\nDifferential Revision: D31695248",
    ),
    (
        "Fix OOM when traverse IterDataPipe due to pickling (#72209)",
        "Summary:\nPull Request resolved: https://github.com/pytorch/pytorch/pull/72209\n\n"
        "This PR would fix https://fburl.com/jtfyksyr\n\nTest Plan: Imported from OSS\n\n"
        "Reviewed By: dagitses, NivekT\n\nDifferential Revision: D33955933\n\nPulled By: ejguan",
    ),
    (
        "Make parallel mapper work on dataset specific transformations",
        "Differential Revision: D73187135\n\n"
        "Pull Request resolved: https://github.com/pytorch/data/pull/1486",
    ),
)


def test_pytorch_data_links_only_its_own_prs(tmp_path: Path) -> None:
    engine = pytorch_data(tmp_path)
    notes = run_cli(engine.root, "notes", "--until", "main")
    assert notes.code == 0, notes.output
    rows = notes.stdout.splitlines()
    mapper = next(row for row in rows if "parallel mapper" in row)
    assert f"[#1486]({DATA}/pull/1486)" in mapper
    for number, title in ((66715, "StreamWrapper"), (72209, "Fix OOM")):
        row = next(row for row in rows if title in row)
        assert str(number) not in row, row  # pytorch/pytorch's number, not linked as data's
        said = refused(engine, f"#{number}").stderr
        assert (
            f"its subject's (#{number}) is https://github.com/pytorch/pytorch/pull/{number}" in said
        )
    assert len(planned(engine, "#1486")) == 1

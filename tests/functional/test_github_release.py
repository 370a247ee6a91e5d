"""``release github-release`` end to end, on a real repository with a bare remote, against
the recording stand-in for ``gh`` (its record of calls is what is asserted): an rc made a
pre-release with its notes, rc page and manifest; a final made latest; a release found
edited in place and never made twice (a run stopped after the create is finished by the
next); ``gh``'s faults one line with nothing changed; a tag not pushed, or a project that
makes no GitHub release, refused with nothing sent; ``--dry-run`` sends nothing at all."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from release.adapters.github import Gh
from release.core.github import GitHubRepo
from release.core.github_release import Asset, GitHubReleasePlan
from release.errors import RefusedError
from release.flows.github_release import apply
from release.sample import SampleEngine
from release.sample.rehearse_github import github_plan
from release.sample.rehearse_terminal import Terminal
from tests.conftest import repo_state, run_cli
from tests.github_support import GhStandIn

SPEC = "example/tinyengine"  # the sample's repo-url
RC = "v0.1.0rc1"
PAGE, MANIFEST = f"{RC}.html", f"{RC}-manifest.json"
HALF_MADE = {
    "tagName": RC, "name": RC, "body": "half made", "isPrerelease": True, "isDraft": False,
    "assets": [], "url": f"https://github.com/{SPEC}/releases/tag/{RC}",
}  # fmt: skip


NO_CACHE = {"RELEASE_REPO_CACHE": "0"}


def env(standin: GhStandIn) -> dict[str, str]:
    """The stand-in first on PATH. The notes' caches off: what ``release notes`` keeps
    under ``.git/release`` to be quicker is no change of the repository's, and would
    otherwise show in the state compared before and after."""
    return standin.env({**os.environ, **NO_CACHE})


def pushed(engine: SampleEngine, *refs: str) -> SampleEngine:
    engine.repo.run("push", "--quiet", "origin", *refs)
    return engine


@pytest.fixture
def pushed_rc(rc1_tagged: SampleEngine) -> SampleEngine:
    """v0.1.0rc1 with its manifest note, pushed."""
    return pushed(rc1_tagged, RC)


def notes(engine: SampleEngine, view: str, until: str) -> str:
    made = run_cli(engine.root, "notes", "--view", view, "--until", until, env=NO_CACHE)
    assert made.code == 0, made.output
    return made.stdout


def kinds(calls: list[list[str]]) -> list[str]:
    """``gh release view``, ``create``... as ``view``, ``create``, in order."""
    return [c[1] for c in calls if c[:1] == ["release"]]


def test_the_dry_run_prints_what_would_be_sent_and_sends_nothing(
    pushed_rc: SampleEngine,
    gh_standin: GhStandIn,
) -> None:
    before = repo_state(pushed_rc.root)
    said = run_cli(pushed_rc.root, "github-release", "--dry-run", env=env(gh_standin))
    assert said.code == 0, said.output
    assert gh_standin.calls() == []  # not even gh release view
    assert repo_state(pushed_rc.root) == before
    lines = said.stdout.splitlines()
    assert lines[0] == "dry run, nothing sent:"
    assert lines[1] == f"the GitHub release of {RC} on {SPEC}: a pre-release, titled {RC}"
    assert lines[2] == f"assets: {PAGE} (the rc page), {MANIFEST} (the release manifest)"
    create = [line.strip() for line in lines if line.startswith("  gh release create")]
    assert len(create) == 1 and create[0].split()[3:6] == [RC, PAGE, MANIFEST]
    assert "--prerelease=true" in create[0].split() and f"--repo {SPEC}" in create[0]
    upload = [line.strip() for line in lines if line.startswith("  gh release upload")]
    assert len(upload) == 1 and "--clobber" in upload[0].split()
    shown = lines[lines.index("the notes (notes.md):") + 1 :]
    expected = notes(pushed_rc, "rc", RC).rstrip("\n").splitlines()
    assert [s.removeprefix("  ") for s in shown] == expected
    document = json.loads(
        run_cli(
            pushed_rc.root, "github-release", RC, "--dry-run", "--json", env=env(gh_standin)
        ).stdout
    )
    assert document["dry_run"] is True and document["prerelease"] is True
    assert document["commands"]["none"][0][:4] == ["gh", "release", "create", RC]
    assert [a["name"] for a in document["assets"]] == [PAGE, MANIFEST]
    assert gh_standin.calls() == []


def test_an_rc_is_made_a_prerelease_once_then_updated_in_place(
    pushed_rc: SampleEngine,
    gh_standin: GhStandIn,
) -> None:
    gh_standin.link_remote(SPEC, pushed_rc.remote)  # gh's --verify-tag: the tag is on GitHub
    before = repo_state(pushed_rc.root)
    made = run_cli(pushed_rc.root, "github-release", env=env(gh_standin))
    assert made.code == 0, made.output
    assert kinds(gh_standin.calls()) == ["view", "create", "view"]
    create = gh_standin.calls()[1]
    assert "--prerelease=true" in create and [Path(a).name for a in create[3:5]] == [PAGE, MANIFEST]
    (release,) = gh_standin.releases(SPEC)
    assert release["tagName"] == RC and release["isPrerelease"] is True
    assert release["body"].strip() == notes(pushed_rc, "rc", RC).strip()
    assert sorted(a["name"] for a in release["assets"]) == sorted([PAGE, MANIFEST])
    manifest = json.loads(gh_standin.asset(SPEC, RC, MANIFEST))
    assert manifest["tag"] == RC and manifest == json.loads(
        run_cli(pushed_rc.root, "manifest", "show", RC, "--json", env=NO_CACHE).stdout
    )
    assert b"<!DOCTYPE html>" in gh_standin.asset(SPEC, RC, PAGE)
    assert f"made a pre-release {RC} on {SPEC}" in made.stdout
    assert (
        repo_state(pushed_rc.root) == before
    )  # the notes and assets lived in a temporary directory
    again = run_cli(pushed_rc.root, "github-release", RC, "--json", env=env(gh_standin))
    assert again.code == 0, again.output
    assert kinds(gh_standin.calls())[3:] == ["view", "upload", "view"]  # same notes: no edit
    assert len(gh_standin.releases(SPEC)) == 1 and json.loads(again.stdout)["found"] is True


def test_a_run_stopped_after_the_create_is_finished_by_the_next(
    pushed_rc: SampleEngine,
    gh_standin: GhStandIn,
) -> None:
    """What a run killed between gh's create and its upload leaves: the release, with other
    notes (an older run's) and no assets. The next run edits it and uploads; none is made."""
    gh_standin.add_release(SPEC, HALF_MADE)
    finished = run_cli(pushed_rc.root, "github-release", RC, env=env(gh_standin))
    assert finished.code == 0, finished.output
    assert kinds(gh_standin.calls()) == ["view", "edit", "upload", "view"]
    (release,) = gh_standin.releases(SPEC)
    assert release["body"].strip() == notes(pushed_rc, "rc", RC).strip()
    assert sorted(a["name"] for a in release["assets"]) == sorted([PAGE, MANIFEST])
    assert "(its notes set again)" in finished.stdout


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("not-logged-in", "gh auth login"),
        ("rate-limit", "rate limit"),
        ("network", "cannot reach"),
    ],
)
def test_a_gh_fault_is_one_line_and_changes_nothing(
    pushed_rc: SampleEngine,
    gh_standin: GhStandIn,
    kind: str,
    said: str,
) -> None:
    before = repo_state(pushed_rc.root)
    gh_standin.fault("release create", kind)
    failed = run_cli(pushed_rc.root, "github-release", env=env(gh_standin))
    assert failed.code == 1, failed.output
    (line,) = failed.stderr.strip().splitlines()
    assert line.startswith("error: ") and said in line, line
    assert gh_standin.releases(SPEC) == []
    assert repo_state(pushed_rc.root) == before
    # the fault gone, the re-run makes it
    assert run_cli(pushed_rc.root, "github-release", env=env(gh_standin)).code == 0
    assert len(gh_standin.releases(SPEC)) == 1


def test_a_release_gone_between_view_and_upload_is_one_line(
    pushed_rc: SampleEngine,
    gh_standin: GhStandIn,
) -> None:
    """gh's 404 where a release was expected: one line, nothing changed here."""
    gh_standin.add_release(SPEC, HALF_MADE)
    gh_standin.fault("release upload", "404")
    before = repo_state(pushed_rc.root)
    failed = run_cli(pushed_rc.root, "github-release", RC, env=env(gh_standin))
    assert failed.code == 1, failed.output
    assert failed.stderr.strip().splitlines() == [
        f"error: gh release upload: {SPEC} has no release {RC}"
    ]
    assert repo_state(pushed_rc.root) == before
    again = run_cli(pushed_rc.root, "github-release", RC, env=env(gh_standin))
    assert again.code == 0, again.output
    assert len(gh_standin.releases(SPEC)[0]["assets"]) == 2


def test_a_tag_not_pushed_is_refused_with_nothing_sent(
    rc1_tagged: SampleEngine,
    gh_standin: GhStandIn,
) -> None:
    before = repo_state(rc1_tagged.root)
    for args in ([], ["--dry-run"]):
        refused = run_cli(rc1_tagged.root, "github-release", *args, env=env(gh_standin))
        assert refused.code == 3, refused.output
        assert f"{RC} is not on origin: push it first (release push); nothing sent" in (
            refused.stderr
        )
    assert gh_standin.calls() == [] and repo_state(rc1_tagged.root) == before
    rc1_tagged.repo.run("tag", "-f", RC, "HEAD~1")  # here, and on the remote at another commit
    pushed(rc1_tagged, "--force", RC)
    rc1_tagged.repo.run("tag", "-f", RC, "HEAD")
    moved = run_cli(rc1_tagged.root, "github-release", RC, env=env(gh_standin))
    assert moved.code == 3 and "make them agree first; nothing sent" in moved.stderr
    assert gh_standin.calls() == []


def test_a_tag_without_a_manifest_says_what_is_left_out(
    cut_engine_copy: SampleEngine,
    gh_standin: GhStandIn,
) -> None:
    engine = cut_engine_copy
    assert run_cli(engine.root, "tag").code == 0
    pushed(engine, RC)
    made = run_cli(engine.root, "github-release", env=env(gh_standin))
    assert made.code == 0, made.output
    assert (
        f"left out: the rc page and the release manifest: {RC} has no manifest here" in made.stdout
    )
    create = gh_standin.calls()[1]
    assert create[:3] == ["release", "create", RC] and not any(
        a.endswith((".html", ".json")) for a in create
    )
    (release,) = gh_standin.releases(SPEC)
    assert release["assets"] == [] and release["isPrerelease"] is True
    again = run_cli(engine.root, "github-release", env=env(gh_standin))
    assert again.code == 0 and kinds(gh_standin.calls())[3:] == ["view", "view"]  # nothing to do
    assert f"a pre-release {RC} on {SPEC} is up to date: " in again.stdout


def test_a_final_is_made_latest_with_the_finals_notes(
    pushed_rc: SampleEngine,
    gh_standin: GhStandIn,
) -> None:
    promoted = run_cli(pushed_rc.root, "promote", "--no-images")
    assert promoted.code == 0, promoted.output
    pushed(pushed_rc, "v0.1.0", "HEAD")
    made = run_cli(pushed_rc.root, "github-release", env=env(gh_standin))
    assert made.code == 0, made.output
    create = gh_standin.calls()[1]
    assert create[:3] == ["release", "create", "v0.1.0"] and "--prerelease=false" in create
    assert "--latest=true" in create and create[3] == "--repo"  # no assets
    (final,) = [r for r in gh_standin.releases(SPEC) if r["tagName"] == "v0.1.0"]
    assert final["isPrerelease"] is False and final["assets"] == []
    assert final["body"].strip() == notes(pushed_rc, "final", "v0.1.0").strip()
    assert "made a release, marked latest v0.1.0" in made.stdout
    again = run_cli(pushed_rc.root, "github-release", "v0.1.0", env=env(gh_standin))
    assert again.code == 0 and kinds(gh_standin.calls())[3:] == ["view", "edit", "view"]


def test_a_project_that_makes_no_github_release_is_refused(
    pushed_rc: SampleEngine,
    gh_standin: GhStandIn,
) -> None:
    pyproject = pushed_rc.root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8") + "\n[tool.release.github]\nrelease = false\n",
        encoding="utf-8",
    )
    refused = run_cli(pushed_rc.root, "github-release", env=env(gh_standin))
    assert refused.code == 3 and "release = false" in refused.stderr, refused.output
    assert gh_standin.calls() == []


class _Forgetful(Gh):
    """A ``gh`` whose upload is lost: the release reads back without its assets."""

    def upload(self, tag: str, files: object) -> None:  # type: ignore[override]
        return None


def test_a_release_that_does_not_read_back_as_made_is_an_error(
    tmp_path: Path,
    gh_standin: GhStandIn,
) -> None:
    repo = GitHubRepo("github.com", "example", "tinyengine")
    (tmp_path / "a.html").write_text("<!DOCTYPE html>\n")
    plan = GitHubReleasePlan(
        repo, RC, RC, "notes\n", prerelease=True, assets=(Asset("a.html", "the rc page"),)
    )
    gh_standin.add_release(
        SPEC,
        {
            "tagName": RC, "name": RC, "body": "notes\n", "isPrerelease": True,
            "isDraft": False, "assets": [], "url": "https://github.com/x",
        },
    )  # fmt: skip
    gh = _Forgetful(repo, env=env(gh_standin))
    with pytest.raises(RefusedError, match=r"does not read back as made \(no a\.html\)"):
        apply(plan, gh, tmp_path, lambda _: None)
    done = apply(plan, Gh(repo, env=env(gh_standin)), tmp_path, lambda _: None)
    assert done.found and done.actions[-1].value == "upload"


def test_the_rehearsals_github_check_fails_on_a_plan_that_cannot_be_made(
    rc1_tagged: SampleEngine,
) -> None:
    """Not pushed: the plan is refused, and the rehearsal's check says FAIL."""
    said: list[str] = []
    t = Terminal(said.append, rc1_tagged.root.parent)
    assert github_plan(t, rc1_tagged.root, RC, prerelease=True) is False
    assert any(line.startswith("FAIL the GitHub release of v0.1.0rc1") for line in said)
    pushed(rc1_tagged, RC)
    assert github_plan(t, rc1_tagged.root, RC, prerelease=True) is True
    assert github_plan(t, rc1_tagged.root, RC, prerelease=False) is False  # the wrong kind

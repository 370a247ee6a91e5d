"""The GitHub release as a plan, without git or gh: what is sent for an rc and a final, for
a release not there yet and for one found (never made twice), and what a dry run prints."""

from __future__ import annotations

from dataclasses import replace

from release.core import gh_commands
from release.core.github import GitHubRelease, GitHubRepo
from release.core.github_release import (
    NOTES_FILE,
    Action,
    Asset,
    GitHubReleasePlan,
    manifest_asset,
    page_asset,
)

REPO = GitHubRepo("github.com", "vllm-project", "vllm-gaudi")
NOTES = "## Bug Fixes\n\n- Fix the scheduler (#12)\n"
ASSETS = (
    Asset(page_asset("v0.31.0rc1"), "the rc page"),
    Asset(manifest_asset("v0.31.0rc1"), "the release manifest"),
)
RC = GitHubReleasePlan(REPO, "v0.31.0rc1", "v0.31.0rc1", NOTES, prerelease=True, assets=ASSETS)
FINAL = GitHubReleasePlan(REPO, "v0.31.0", "v0.31.0", NOTES, prerelease=False)


def found(plan: GitHubReleasePlan, **changes: object) -> GitHubRelease:
    """The release ``plan`` makes, as ``gh release view`` reads it back."""
    made = GitHubRelease(
        plan.tag,
        plan.title,
        plan.notes,
        plan.prerelease,
        False,
        tuple(a.name for a in plan.assets),
        f"{REPO.url}/releases/tag/{plan.tag}",
    )
    return replace(made, **changes)  # type: ignore[arg-type]


def test_an_rc_is_made_a_prerelease_with_its_page_and_manifest() -> None:
    argv = RC.argv(Action.CREATE, notes_file="/tmp/n.md", directory="/tmp/assets")
    assert argv == [
        "gh",
        *gh_commands.release_create(
            REPO,
            "v0.31.0rc1",
            title="v0.31.0rc1",
            notes_file="/tmp/n.md",
            prerelease=True,
            latest=False,
            files=["/tmp/assets/v0.31.0rc1.html", "/tmp/assets/v0.31.0rc1-manifest.json"],
        ),
    ]
    assert "--prerelease=true" in argv and "--latest=false" in argv
    assert argv[argv.index("--repo") + 1] == "vllm-project/vllm-gaudi"
    assert [a.name for a in RC.assets] == ["v0.31.0rc1.html", "v0.31.0rc1-manifest.json"]


def test_a_final_is_made_latest_with_no_prerelease() -> None:
    argv = FINAL.argv(Action.CREATE)
    assert "--prerelease=false" in argv and "--latest=true" in argv
    assert argv == [
        "gh",
        *gh_commands.release_create(
            REPO, "v0.31.0", title="v0.31.0", notes_file=NOTES_FILE, prerelease=False,
            latest=True, files=(),
        ),
    ]  # fmt: skip
    assert FINAL.latest and not RC.latest


def test_a_release_found_is_never_made_again() -> None:
    assert RC.actions(None) == (Action.CREATE,)
    # a run stopped after the release was made, before its assets: they are uploaded
    assert RC.actions(found(RC, assets=())) == (Action.UPLOAD,)
    assert RC.actions(found(RC)) == (Action.UPLOAD,)  # --clobber: the page may have changed
    edited = RC.actions(found(RC, body="old notes", is_prerelease=False))
    assert edited == (Action.EDIT, Action.UPLOAD)
    assert RC.differences(found(RC, body="old notes", is_prerelease=False)) == [
        "its notes",
        "pre-release or not",
    ]
    # GitHub's CRLF and trimmed ends are the same notes
    assert RC.differences(found(RC, body=NOTES.replace("\n", "\r\n").strip())) == []
    # whether a final is latest cannot be read back: it is set again, never made twice
    assert FINAL.actions(found(FINAL)) == (Action.EDIT,)
    assert FINAL.differences(found(FINAL, name="Final")) == ["its title", "latest"]
    assert RC.argv(Action.UPLOAD)[:3] == ["gh", "release", "upload"] and "--clobber" in RC.argv(
        Action.UPLOAD
    )


def test_the_dry_run_shows_both_routes_exactly_and_the_notes_escaped() -> None:
    hostile = replace(RC, notes="- \x1b[2J cleared (#1)\n\n- fine\n")
    lines = hostile.plan_lines()
    create = " ".join(RC.argv(Action.CREATE))
    edit = " ".join(RC.argv(Action.EDIT))
    upload = " ".join(RC.argv(Action.UPLOAD))
    assert f"  {create}" in lines and f"  {edit}" in lines and f"  {upload}" in lines
    assert lines.index(f"  {create}") < lines.index(f"  {edit}") < lines.index(f"  {upload}")
    assert "\x1b" not in "".join(lines) and "  - \\x1b[2J cleared (#1)" in lines
    assert lines[-3:] == ["  - \\x1b[2J cleared (#1)", "", "  - fine"]
    assert hostile.commands() == {
        "none": [RC.argv(Action.CREATE)],
        "found": [RC.argv(Action.EDIT), RC.argv(Action.UPLOAD)],
    }
    assert FINAL.commands()["found"] == [FINAL.argv(Action.EDIT)]  # no assets: no upload
    left = replace(RC, assets=(), left_out=("the rc page: no manifest",)).head()
    assert left == [
        "the GitHub release of v0.31.0rc1 on vllm-project/vllm-gaudi: a pre-release, titled "
        "v0.31.0rc1",
        "left out: the rc page: no manifest",
    ]


def test_an_enterprise_host_is_named_as_gh_takes_it() -> None:
    enterprise = replace(FINAL, repo=GitHubRepo("git.example.com", "org", "engine"))
    argv = enterprise.argv(Action.EDIT)
    assert argv[argv.index("--repo") + 1] == "git.example.com/org/engine"

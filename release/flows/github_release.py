"""``github-release``: the GitHub release of a pushed tag, made or brought up to date.

Read, plan, act, in that order (:mod:`release.core.github_release` holds the plan):

1. **Read.** The tag (given, or the newest rc or final of the checked-out release branch)
   must be here and on the remote at the same commit: a release is made only of a tag
   that is published. Its notes are what ``release notes --view rc`` (an rc, a post
   release) or ``--view final`` (a final) print for it. An rc's (a post release's) rc page
   and release manifest are written into a temporary directory the caller owns, where the
   tag has a manifest; where it has none, what is left out is said.
2. **Plan.** Where GitHub lives: ``[tool.release.github] repo``, else ``repo-url``, else
   the remote's URL (:func:`~release.adapters.github.repo_for`).
3. **Act** (not in a dry run, which sends nothing and reads nothing of GitHub):
   ``gh release view`` says whether the release is there; none is made with its assets;
   one found is edited where it differs and its assets uploaded again (``--clobber``). A
   run stopped after the release was made is finished so by the next.

Nothing in the repository or the work tree is written: a refused or failed run leaves
them as they were, and ``gh``'s own faults come up as one line (``GitHubError``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from release.adapters.generated_files import written_by
from release.adapters.git_notes import NOTES_PREFIX, notes_ref
from release.adapters.github import Gh, repo_for
from release.core.generated import Spelling, stamped
from release.core.github import GitHubRepo
from release.core.github_release import (
    Action,
    Asset,
    GitHubReleasePlan,
    manifest_asset,
    page_asset,
)
from release.core.rc_page import render
from release.core.versions import ref_format_problem
from release.errors import ConfigError, RefusedError, UsageError
from release.flows.context import ReleaseContext, TagInfo
from release.flows.manifest_store import published_manifest
from release.flows.notes_output import notes_output
from release.flows.notes_range import default_range
from release.flows.rc_page import gather

__all__ = ["Applied", "apply", "github_repo", "plan_release", "release_tag"]


def github_repo(ctx: ReleaseContext) -> GitHubRepo:
    """Where the release goes; refused where the configuration does not allow it, or
    names no GitHub repository."""
    if not ctx.config.github.release:
        raise RefusedError(
            "[tool.release.github] release = false: this project makes no GitHub release "
            "(set it to true, or leave it out, to make them)"
        )
    repo = repo_for(ctx.config, ctx.remote_url)
    if repo is None:
        raise ConfigError(
            f"no GitHub repository: neither [tool.release.github] repo, [tool.release] "
            f"repo-url nor the remote {ctx.config.remote}'s URL names one (set "
            '[tool.release.github] repo = "OWNER/REPO")'
        )
    return repo


def release_tag(ctx: ReleaseContext, given: str | None) -> TagInfo:
    """The tag whose release is made: ``given``, else the newest rc or final of the
    release branch checked out. It must be here (its notes and assets are read here)."""
    local = [t for t in ctx.tags(remote=False) if t.local]
    if given is None:
        branch, named = ctx.current_release()
        line = ctx.release_line(branch, named, local)
        if not line.tags:
            raise RefusedError(f"{branch} has no rc or final tagged yet: release tag first")
        return line.tags[-1]
    problem = ref_format_problem(given) or ("not one tag name" if given.startswith("refs/") else "")
    if problem:
        raise UsageError(f"{given!r} is not a tag name ({problem}), e.g. v0.31.0rc1")
    found = next((t for t in local if t.name == given), None)
    if found is not None:
        return found
    if ctx.config.tag.parse_any(given) is None:
        raise UsageError(f"{given} is not a release tag as [tool.release] tag spells them")
    remote = ctx.config.remote
    raise RefusedError(f"no tag {given} here: get it with git fetch {remote} tag {given}")


def require_pushed(ctx: ReleaseContext, tag: TagInfo) -> None:
    """A release is made only of a published tag: on the remote, at the same commit."""
    remote = ctx.config.remote
    if not ctx.repo.remotes.has(remote):
        raise RefusedError(f"there is no remote {remote}: {tag.name} is not published")
    tags, _ = ctx.repo.remotes.tags_and_heads(remote)
    there = tags.get(tag.name)
    if there is None:
        raise RefusedError(
            f"{tag.name} is not on {remote}: push it first (release push); nothing sent"
        )
    if there != tag.commit:
        raise RefusedError(
            f"{tag.name} on {remote} is at {there[:10]}, here at {tag.commit[:10]}: make "
            "them agree first; nothing sent"
        )


def plan_release(
    ctx: ReleaseContext, tag: TagInfo, directory: Path, repo: GitHubRepo
) -> GitHubReleasePlan:
    """The release of ``tag``: its notes, and its assets written into ``directory``."""
    view = "final" if tag.version.is_final else "rc"
    text, _ = notes_output(ctx, default_range(ctx, tag.name, view), "md")
    assets: list[Asset] = []
    left_out: list[str] = []
    if not tag.version.is_final:
        found = published_manifest(ctx.repo, tag.name, tag.commit)
        if found is None:
            left_out.append(
                f"the rc page and the release manifest: {tag.name} has no manifest here "
                f"({notes_ref(tag.name)}; fetch it with git fetch {ctx.config.remote} "
                f"'{NOTES_PREFIX}*:{NOTES_PREFIX}*', or record it with release manifest)"
            )
        else:
            page = render(gather(ctx, tag.name))
            by = written_by(["release", "report", tag.name])
            _write(directory / page_asset(tag.name), stamped(page, Spelling.HTML, by))
            assets.append(Asset(page_asset(tag.name), "the rc page"))
            document = json.dumps(found.document, indent=2, sort_keys=True) + "\n"
            _write(directory / manifest_asset(tag.name), document)
            assets.append(Asset(manifest_asset(tag.name), "the release manifest"))
    return GitHubReleasePlan(
        repo,
        tag.name,
        tag.name,
        text,
        prerelease=tag.version.is_rc,
        assets=tuple(assets),
        left_out=tuple(left_out),
    )


def _write(path: Path, text: str) -> None:
    with open(path, "x", encoding="utf-8") as out:  # a new file in a directory of ours
        out.write(text)


@dataclass(frozen=True)
class Applied:
    """What a run sent: the actions in order, what differed in a release found, and the
    release's URL as ``gh`` gave it (empty where it did not)."""

    actions: tuple[Action, ...]
    differences: tuple[str, ...]
    found: bool
    url: str


def apply(plan: GitHubReleasePlan, gh: Gh, directory: Path, say: Callable[[str], None]) -> Applied:
    """Make the release, or bring the one found up to date; then read it back."""
    found = gh.release(plan.tag)
    actions = plan.actions(found)
    files = [directory / a.name for a in plan.assets]
    for action in actions:
        say(f"gh release {action.value} {plan.tag}")
        if action is Action.CREATE:
            gh.create_release(
                plan.tag,
                title=plan.title,
                notes=plan.notes,
                prerelease=plan.prerelease,
                latest=plan.latest,
                files=files,
            )
        elif action is Action.EDIT:
            gh.edit_release(
                plan.tag,
                title=plan.title,
                notes=plan.notes,
                prerelease=plan.prerelease,
                latest=plan.latest,
            )
        else:
            gh.upload(plan.tag, files)
    after = gh.release(plan.tag)
    missing = [a.name for a in plan.assets if after is None or a.name not in after.assets]
    if after is None or missing:
        raise RefusedError(
            f"{plan.repo.spec}'s release {plan.tag} does not read back as made"
            + (f" (no {', '.join(missing)})" if after is not None else "")
            + ": run release github-release again"
        )
    differences = tuple(plan.differences(found)) if found is not None else ()
    return Applied(actions, differences, found is not None, after.url)

"""What ``release init`` reads of the repository it runs in: branch and tag names, the
main branch, the remote, and, through :mod:`release.adapters.tree_scan`, its Dockerfiles,
requirements files, changelog and the files that keep its version, as a
:class:`~release.core.init_text.RepoFacts`. Files are read as files of the work tree
(:mod:`release.adapters.files`): nothing is followed out of it.
"""

from __future__ import annotations

import re

from release.adapters.git import GitRepo
from release.adapters.tree_scan import (
    changelog_files,
    dockerfiles,
    requirement_files,
    version_files,
)
from release.core.init_text import RepoFacts
from release.core.references import repository_url
from release.core.version_files import kept_version
from release.core.version_sources import version_sources

__all__ = ["read_facts"]

_MAINS = ("main", "master", "trunk", "develop")


def read_facts(repo: GitRepo) -> RepoFacts:
    refs = repo.refs()
    remotes = repo.out("remote").split()
    branches = [r.removeprefix("refs/heads/") for r in refs if r.startswith("refs/heads/")]
    for name in remotes:
        prefix = f"refs/remotes/{name}/"
        branches += [r.removeprefix(prefix) for r in refs if r.startswith(prefix)]
    tags = [r.removeprefix("refs/tags/") for r in refs if r.startswith("refs/tags/")]
    main, main_from = _main_branch(repo, remotes, branches)
    remote = remotes[0] if remotes and "origin" not in remotes else None
    found, unread, primary = dockerfiles(repo.root)
    changelog, other_log = changelog_files(repo.root)
    kept = version_files(repo.root)
    return RepoFacts(
        branches=tuple(dict.fromkeys(b for b in branches if b != "HEAD")),
        tags=tuple(tags),
        main_branch=main,
        main_from=main_from,
        remote=remote,
        image_name=_image_name(repo, remote or "origin"),
        changelog=changelog,
        other_changelog=other_log,
        dockerfiles=tuple(found),
        unread=tuple(unread),
        primary_dockerfile=primary,
        requirements=tuple(requirement_files(repo.root)) if found else (),
        versions=tuple(version_sources(kept)),
        version_files=tuple((p, v) for p, t in kept.items() if (v := kept_version(p, t))),
    )


def _main_branch(repo: GitRepo, remotes: list[str], branches: list[str]) -> tuple[str | None, str]:
    for remote in ("origin", *remotes):
        result = repo.run("symbolic-ref", "--quiet", f"refs/remotes/{remote}/HEAD", check=False)
        target = result.stdout.strip().removeprefix(f"refs/remotes/{remote}/")
        if result.ok and target and remote in remotes:
            return target, f"{remote}/HEAD, which names {target}"
    for name in _MAINS:
        if name in branches:
            return name, f"the branch {name}"
    current = repo.current_branch()
    if current:
        return current, f"the checked-out branch {current}"
    return None, ""


def _image_name(repo: GitRepo, remote: str) -> str:
    url = repository_url(repo.remotes.url(remote) or "")
    path = url.split("/", 3)[3] if url and url.count("/") >= 4 else repo.root.name
    name = "/".join(re.sub(r"[^a-z0-9._-]+", "-", p.lower()).strip("-._") for p in path.split("/"))
    return name if re.fullmatch(r"[a-z0-9][a-z0-9._/-]*[a-z0-9]", name) else "org/engine"

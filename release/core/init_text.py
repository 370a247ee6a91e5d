"""The ``[tool.release]`` table ``release init`` writes: the guesses of
:mod:`release.core.conventions` as TOML, each after a comment saying what it was guessed
from; ``changelog`` as the repository has one (``""``, keep none, where it has none); a
comment on where the version is kept; and the image matrix proposed from its Dockerfiles,
commented (:mod:`release.core.init_images`). Pure: :mod:`release.adapters.repo_facts`
reads the repository.
"""

from __future__ import annotations

from dataclasses import dataclass

from release.core.conventions import Guess, guess_branch, guess_tags
from release.core.init_images import comment, images_lines, toml_string
from release.core.variant_guess import DockerfileSource, TextSource, propose_images
from release.core.versions import TagTemplate

__all__ = ["LOOKED", "RepoFacts", "render_table", "toml_string"]

LOOKED = "looked in the root, docker/, .cd/ and one level of folders below them"


@dataclass(frozen=True)
class RepoFacts:
    """What ``release init`` reads of a repository."""

    branches: tuple[str, ...] = ()  # local, and remote-tracking without the remote's name
    tags: tuple[str, ...] = ()
    main_branch: str | None = None
    main_from: str = ""  # what the main branch was read from
    remote: str | None = None  # set only when it is not "origin"
    image_name: str = ""  # a guess for the images' name (org/repo)
    changelog: str | None = None  # a Markdown changelog
    other_changelog: str | None = None  # one in another format, where there is no Markdown one
    dockerfiles: tuple[DockerfileSource, ...] = ()
    unread: tuple[tuple[str, str], ...] = ()  # Dockerfiles not read, and why
    primary_dockerfile: str | None = None
    requirements: tuple[TextSource, ...] = ()
    versions: tuple[str, ...] = ()  # where the version is kept, one line each
    version_files: tuple[tuple[str, str], ...] = ()  # files to set when tagging, and theirs


def _value(value: str | int | bool | tuple[str, ...]) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(toml_string(v) for v in value) + "]"
    return str(value) if isinstance(value, int) else toml_string(value)


def guesses(facts: RepoFacts) -> list[Guess]:
    out: list[Guess] = []
    if facts.main_branch:
        out.append(Guess("main-branch", facts.main_branch, facts.main_from))
    if facts.remote:
        out.append(Guess("remote", facts.remote, "the repository's only remote (no origin)"))
    branch = guess_branch(facts.branches)
    out.append(branch or Guess("branch", None, "no release branches yet"))
    tags = guess_tags(facts.tags)
    out += tags or [Guess("tag", None, "no release tags yet")]
    if facts.version_files:
        said = ", ".join(f"{path} says {value}" for path, value in facts.version_files)
        paths = tuple(path for path, _ in facts.version_files)
        out.append(Guess("version-files", paths, f"the files that keep the version: {said}"))
        out += _bump_main(facts, branch)
    if facts.changelog:
        out.append(Guess("changelog", facts.changelog, f"the file {facts.changelog}"))
    else:
        out.append(Guess("changelog", "", _no_changelog(facts)))
    return out


def _bump_main(facts: RepoFacts, branch: Guess | None) -> list[Guess]:
    """``bump-main-after-cut`` where the version files here are past the newest release
    branch (ao's ``version.txt`` says 0.19.0 on main beside ``release/0.18.0``)."""
    from packaging.version import InvalidVersion, Version

    if branch is None or not isinstance(branch.value, str) or not facts.main_branch:
        return []
    template = TagTemplate(branch.value, "branch")
    found = {b: v for b in facts.branches if (v := template.parse(b)) is not None}
    if not found:
        return []
    newest = max(found, key=lambda b: found[b])
    path, value = facts.version_files[0]
    try:
        said = Version(value).release
    except InvalidVersion:
        return []
    if said[:2] <= (found[newest].major, found[newest].minor):
        return []
    why = (
        f"{path} says {value} here, past the newest release branch {newest}: "
        f"{facts.main_branch} is set to the next release after each cut"
    )
    return [Guess("bump-main-after-cut", True, why)]


def _no_changelog(facts: RepoFacts) -> str:
    if facts.other_changelog:
        return (
            f"no Markdown changelog ({facts.other_changelog} is not one: release writes Keep "
            "a Changelog Markdown); release tag and promote keep none (name a .md file to "
            "keep one)"
        )
    return (
        "no changelog found (CHANGELOG.md, CHANGES.md, HISTORY.md, NEWS.md, any case, here "
        "or in docs/); release tag and promote keep none (name a file to keep one)"
    )


_DEFAULTS = {
    "branch": '"releases/v{version}"',
    "tag": '"v{version}"',
    "version-scheme": '"pep440"',
}


def render_table(facts: RepoFacts, *, newline: str = "\n") -> tuple[str, list[Guess]]:
    """The table's text (ending in a newline) and the guesses it holds."""
    made = guesses(facts)
    lines = [
        "[tool.release]",
        "# Written by release init: each value says what it was guessed from; the rest",
        "# are the defaults. release check checks it; release schema prints its JSON Schema.",
    ]
    for guess in made:
        if guess.value is None:
            lines += comment(f"{guess.key}: not guessed: {guess.why}")
            if guess.key in _DEFAULTS:
                lines.append(f"# {guess.key} = {_DEFAULTS[guess.key]}  # the default")
            continue
        lines += comment(f"{guess.key}: {'' if guess.value == '' else 'guessed from '}{guess.why}")
        lines.append(f"{guess.key} = {_value(guess.value)}")
    lines += _versions(facts)
    lines += _images(facts)
    return newline.join(lines) + newline, made


def _versions(facts: RepoFacts) -> list[str]:
    if not facts.versions:
        return comment(
            "The version: not found in version.txt, pyproject.toml, setup.py or a "
            "package's __version__; release reads it from the tags."
        )
    lines = comment("The version is kept here (said only; release reads it from the tags):")
    return lines + [line for found in facts.versions for line in comment(f"  {found}")]


def _images(facts: RepoFacts) -> list[str]:
    proposal = propose_images(facts.dockerfiles, facts.requirements, facts.primary_dockerfile)
    lines = images_lines(proposal, facts.image_name or "org/engine", LOOKED)
    if facts.unread:
        shown = "; ".join(f"{path} ({why})" for path, why in facts.unread)
        lines[1:1] = comment(f"Not read: {shown}.")
    return lines

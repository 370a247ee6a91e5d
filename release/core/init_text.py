"""The ``[tool.release]`` table ``release init`` writes: the guesses of
:mod:`release.core.conventions` as TOML, each after a comment saying what it was guessed
from, and a commented ``[tool.release.images]`` skeleton made from a Dockerfile's
``ARG``s. Pure: :mod:`release.adapters.repo_facts` reads the repository.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

from release.core.conventions import DockerArg, Guess, expand, guess_branch, guess_tags
from release.core.terminal_text import escaped

__all__ = ["RepoFacts", "render_table", "toml_string"]

# ARGs the matrix sets from a variant's keys (ImageMatrix.build_args_for)
_VARIANT_ARGS = {"CUDA_VERSION": "cuda", "BASE_IMAGE": "base-image", "PYTHON_VERSION": "python"}


@dataclass(frozen=True)
class RepoFacts:
    """What ``release init`` reads of a repository."""

    branches: tuple[str, ...] = ()  # local, and remote-tracking without the remote's name
    tags: tuple[str, ...] = ()
    main_branch: str | None = None
    main_from: str = ""  # what the main branch was read from
    remote: str | None = None  # set only when it is not "origin"
    image_name: str = ""  # a guess for the images' name (org/repo)
    changelog: str | None = None
    dockerfile: str | None = None
    docker_args: tuple[DockerArg, ...] = ()


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string: quotes, backslashes and control characters escaped."""

    def one(match: re.Match[str]) -> str:
        c = match[0]
        return {'"': '\\"', "\\": "\\\\"}.get(c) or f"\\u{ord(c):04x}"

    return '"' + re.sub(r'["\\\x00-\x1f\x7f]', one, text) + '"'


def _value(value: str | int) -> str:
    return str(value) if isinstance(value, int) else toml_string(value)


def _comment(text: str) -> list[str]:
    """``text`` as comment lines of at most 88 characters."""
    return ["# " + line for line in textwrap.wrap(escaped(text), 86, break_on_hyphens=False)]


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
    if facts.changelog:
        out.append(Guess("changelog", facts.changelog, f"the file {facts.changelog}"))
    return out


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
            lines += _comment(f"{guess.key}: not guessed: {guess.why}")
            if guess.key in _DEFAULTS:
                lines.append(f"# {guess.key} = {_DEFAULTS[guess.key]}  # the default")
            continue
        lines += _comment(f"{guess.key}: guessed from {guess.why}")
        lines.append(f"{guess.key} = {_value(guess.value)}")
    if not facts.changelog:
        lines.append('# changelog = "CHANGELOG.md"  # the default (no changelog file found)')
    lines += _images(facts)
    return newline.join(lines) + newline, made


def _images(facts: RepoFacts) -> list[str]:
    if facts.dockerfile is None:
        return ["", "# No Dockerfile found: an image matrix goes in [tool.release.images]."]
    args = {a.name: a.default for a in facts.docker_args}
    shown = ", ".join(args) or "none"
    lines = [
        "",
        *_comment(f"The image matrix, a skeleton from {facts.dockerfile}'s ARGs ({shown}):"),
        "# uncomment it, then add one [[tool.release.images.variants]] per CUDA variant.",
        "# [tool.release.images]",
        f"# name = {toml_string(facts.image_name or 'org/engine')}",
        f"# dockerfile = {toml_string(facts.dockerfile)}",
    ]
    version_arg = next((n for n in args if n.endswith("VERSION") and n not in _VARIANT_ARGS), None)
    if version_arg:
        lines += _comment(f"version-arg: the ARG {version_arg} receives the version built")
        lines.append(f"# version-arg = {toml_string(version_arg)}")
    cuda = expand(args.get("CUDA_VERSION") or "", args) or None
    base = expand(args.get("BASE_IMAGE") or "", args) or None
    lines.append("# [[tool.release.images.variants]]")
    if cuda and re.fullmatch(r"\d+\.\d+(\.\d+)*", cuda):
        major, minor = cuda.split(".")[:2]
        lines.append(f"# id = {toml_string(f'cu{major}{minor}')}")
        lines += _comment(f"cuda: the default of ARG CUDA_VERSION ({cuda})")
        lines.append(f"# cuda = {toml_string(cuda)}")
    else:
        lines.append('# id = "cu130"')
        lines.append("# cuda: no ARG CUDA_VERSION with a default; the variant's CUDA version")
        lines.append('# cuda = "13.0.1"')
    if base and "$" not in base:
        lines += _comment("base-image: the default of ARG BASE_IMAGE")
        lines.append(f"# base-image = {toml_string(base)}")
    else:
        lines.append("# base-image: no ARG BASE_IMAGE with a default; the variant's base image")
        lines.append('# base-image = "nvidia/cuda:13.0.1-base-ubuntu24.04"')
    python = args.get("PYTHON_VERSION")
    if python and "$" not in python:
        lines.append(f"# python = {toml_string(python)}")
    rest = [n for n in args if n not in _VARIANT_ARGS and n != version_arg]
    if rest:
        lines += _comment(
            f"Other ARGs ({', '.join(rest)}): set them in build-args of the images table "
            "(all variants) or of a variant."
        )
    return lines

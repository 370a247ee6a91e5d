"""The commands that set a repository up and check it (``init``, ``check``, ``schema``),
declared (see :mod:`release.commands.registry`): imports nothing but the declarations."""

from __future__ import annotations

from release.commands.declare import Command, Kind, Option
from release.commands.options import DRY_RUN, JSON, REQUIRE_SIGNED, TRUST

__all__ = ["SETUP_COMMANDS"]

SETUP_COMMANDS: tuple[Command, ...] = (
    Command(
        name="init",
        summary="Write a commented [tool.release] into pyproject.toml, guessed from this "
        "repository's tags, files and Dockerfiles.",
        options=(
            Option(
                "out",
                "write the table to this new file instead (to try with release --config FILE)",
                Kind.TEXT,
                metavar="FILE",
            ),
            Option(
                "force",
                "with --out: replace FILE where release did not write it, or it was changed "
                "since (refused otherwise, exit 3)",
            ),
            DRY_RUN,
            JSON,
        ),
        target="release.commands.init:init",
        description=(
            "Each value is guessed from what the repository has (release branches, tag "
            "spellings, the main branch, a changelog, a Dockerfile's ARGs) and says so in a "
            "comment; the rest of pyproject.toml is kept byte for byte. A pyproject.toml "
            "that has [tool.release] already is refused (exit 3) and left as it was. With "
            "--out FILE the table goes into FILE, under a header saying what wrote it and "
            "the sha256 of the rest, and nothing in the tree changes: a FILE there already "
            "is replaced only if release wrote it and nobody changed it since, else with "
            "--force."
        ),
    ),
    Command(
        name="check",
        summary="Check the configuration, the tag template, git, docker, the engine and the "
        "registry logins, one line each.",
        options=(
            Option(
                "tag",
                "check only that this checkout is TAG's, release reads TAG's version here and "
                "no other tag names that version on another commit (what a CI job checks "
                "before it builds)",
                Kind.TEXT,
                metavar="TAG",
            ),
            Option(
                "job",
                "with --tag: the CI job's kind the tag must fit: build (an rc or a post "
                "release) or promote (a final)",
                Kind.TEXT,
                choices=("build", "promote"),
            ),
            TRUST,
            REQUIRE_SIGNED,
            JSON,
        ),
        target="release.commands.check:check",
        description=(
            "Each line says ok, problem or not checked (with why), and what to do; exit 1 "
            "when any is a problem."
        ),
    ),
    Command(
        name="schema",
        summary="Print the JSON Schema of [tool.release], for editors to complete and check it.",
        options=(JSON,),
        target="release.commands.schema:schema",
    ),
)

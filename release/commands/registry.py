"""Every command of ``release``, declared once (see :mod:`release.commands.declare`).

The console script and ``inv release.*`` are made from :data:`COMMANDS`; a command's
function is imported only when it runs. This module imports nothing but the declarations,
so ``release --help`` and ``release --list`` read it at once.
"""

from __future__ import annotations

from release.commands.declare import Command, Kind, Option

__all__ = ["COMMANDS", "PICK_REASONS", "by_name"]

# as release.core.config names them (a test holds the two in step): no import of core here
PICK_REASONS = ("regression", "critical", "fix-new-feature", "docs", "release-only")

# the options many commands share, spelt and explained once
DRY_RUN = Option("dry-run", "print the plan, change nothing")
JSON = Option("json", "print a JSON document (with a schema key) instead of text")
OFFLINE = Option("offline", "do not ask the remote")
SIGN = Option("sign", "sign the tag (GPG or SSH, as git config says)")
VARIANT = Option("variant", "variant ids, comma separated (default: all)", Kind.TEXT, metavar="IDS")
VERSION_AS = Option(
    "version",
    "version to build as (default: the tag at HEAD, else a dev version)",
    Kind.TEXT,
    metavar="VERSION",
)
ALLOW_DIRTY = Option(
    "allow-dirty", "take uncommitted changes in: version +dirty, labelled org.release.dirty=true"
)
ALLOW_SHALLOW = Option(
    "allow-shallow", "allow a shallow clone; a dev version it cannot count gets +shallow"
)
REGISTRY = Option(
    "registry",
    "REGISTRY/PATH the images travel under (default: ci-registry in [tool.release.images])",
    Kind.TEXT,
)
GUARDS = (ALLOW_DIRTY, ALLOW_SHALLOW)

_REPO = "release.commands.repo"
_IMAGES = "release.commands.images"
_TAGS = "release.commands.tags"
_FILES = "release.commands.files"

COMMANDS: tuple[Command, ...] = (
    Command(
        "status",
        "Show the release branch, its tags, the next rc, the picks done and pending, and what "
        "to run next.",
        (JSON, Option("offline", "do not read the remote's tags")),
        f"{_REPO}:status",
    ),
    Command(
        "cut",
        "Create the release branch (releases/vX.Y.Z) at the tip of main or at a main commit.",
        (
            Option("version", "the release, X.Y.Z", Kind.TEXT, positional=True, required=True),
            Option("at", "main commit to cut at (default: the tip of main)", Kind.TEXT),
            Option("no-switch", "create the branch without switching to it"),
            Option("offline", "do not ask the remote whether the branch or tag exists there"),
            DRY_RUN,
            JSON,
        ),
        f"{_REPO}:cut",
    ),
    Command(
        "pick",
        "Cherry-pick main commits (-x) onto the release branch in main's order, skipping what "
        "is there.",
        (
            Option(
                "commits",
                "shas and/or #PR numbers: several arguments, or one separated by spaces or commas",
                Kind.MANY,
                positional=True,
            ),
            Option("file", "a picks file: one '<sha or #PR> [reason]' per line", Kind.TEXT),
            Option("reason", "why it is picked", Kind.TEXT, choices=PICK_REASONS),
            Option("allow-feature", "pick feature work too (refused by default)"),
            Option(
                "repick",
                "pick this commit (sha or #PR) although it is likely backported already (held "
                "back by default); repeat it or separate by commas for several",
                Kind.MANY,
            ),
            Option("continue", "go on after you resolved a conflict"),
            Option("abort", "undo the whole pick in progress"),
            DRY_RUN,
            JSON,
        ),
        f"{_REPO}:pick",
    ),
    Command(
        "tag",
        "Tag the next rc (vX.Y.ZrcN) on the release branch tip, with the notes in its message "
        "and CHANGELOG.md.",
        (
            Option("version", "rc or post version to tag (default: the next rc)", Kind.TEXT),
            SIGN,
            Option("offline", "use local tags only to choose the next rc"),
            Option("dry-run", "print the plan and the tag message, change nothing"),
            JSON,
        ),
        f"{_TAGS}:tag",
    ),
    Command(
        "promote",
        "Tag the final vX.Y.Z on the last rc's commit and give it the rc's images, with no "
        "rebuild.",
        (
            Option(
                "version", "the final X.Y.Z (default: the release of the current branch)", Kind.TEXT
            ),
            SIGN,
            Option("offline", "use local tags only"),
            DRY_RUN,
            JSON,
        ),
        f"{_TAGS}:promote",
        "The rc changelog sections are folded into the final's; where the rc has a manifest, "
        "its images get the final's tags by image id.",
    ),
    Command(
        "push",
        "Push the release branch, its new tags and their manifest notes in one atomic push.",
        (Option("dry-run", "print the refs that would be pushed"), JSON),
        f"{_TAGS}:push",
    ),
    Command(
        "notes",
        "Print release notes grouped by category, with PRs linked, authors credited and "
        "reverts cancelled.",
        (
            Option("since", "start (exclusive); default: the previous rc or final", Kind.TEXT),
            Option("until", "end (inclusive)", Kind.TEXT, default="HEAD"),
            Option("format", "md or json", Kind.TEXT, choices=("md", "json"), default="md"),
            Option(
                "view",
                "rc (since the previous rc) or final (since the last final)",
                Kind.TEXT,
                choices=("rc", "final"),
                default="rc",
            ),
            Option("out", "write to this file instead of stdout", Kind.TEXT, metavar="FILE"),
            Option("json", "the notes as JSON (the same as --format json)"),
        ),
        f"{_REPO}:notes",
    ),
    Command(
        "manifest",
        "Merge the release's manifest from its parts and record it with the tag, or show a "
        "tag's (show TAG).",
        (
            Option(
                "action",
                "show: print the published manifest of TAG (checked against its schema)",
                Kind.TEXT,
                positional=True,
                choices=("show",),
            ),
            Option("tag", "the tag whose manifest to show", Kind.TEXT, positional=True),
            Option(
                "parts",
                "a directory of parts (CI artifacts), read instead of this checkout's; comma "
                "separated for several",
                Kind.TEXT,
            ),
            Option("version", "the release (default: the tag at HEAD)", Kind.TEXT),
            Option("partial", "show what is there, even when parts are missing (records nothing)"),
            Option("json", "print the manifest as JSON"),
            Option("out", "also write the manifest to this file", Kind.TEXT, metavar="FILE"),
            Option("push", "send the tag's manifest to the remote now (release push also does)"),
            Option("no-record", "merge and check only: record no note (for a CI job)"),
        ),
        "release.commands.manifest:manifest",
    ),
    Command(
        "reproduce",
        "Rebuild a tag's images from its sources and compare them with its manifest (exit 1 "
        "on drift).",
        (
            Option("tag", "the published tag", Kind.TEXT, positional=True, required=True),
            Option(
                "variant",
                "only these variants (comma separated; default: every one the manifest has)",
                Kind.TEXT,
                metavar="IDS",
            ),
            Option(
                "allow-host",
                "a container option of the tag's that reaches into this host, allowed (e.g. "
                "cap-add=SYS_ADMIN; repeat it, or comma separate them): without each one the "
                "tag asks for, nothing is built",
                Kind.MANY,
                metavar="OPTION",
            ),
            Option("standin", "build on a stand-in where the recorded base cannot be had"),
            Option("keep", "keep the temporary checkout and the rebuilt images"),
            Option("cache", "let the builder use its cache (default: every layer built again)"),
            Option("jobs", "variants built at once", Kind.NUMBER, default=1),
            JSON,
        ),
        f"{_IMAGES}:reproduce",
    ),
    Command(
        "report",
        "Write a tag's rc page: one static HTML file of its images, digests, checks and notes.",
        (
            Option("tag", "the rc or final tag", Kind.TEXT, positional=True, required=True),
            Option(
                "out",
                "the directory to write TAG.html in (made when missing, in a directory that "
                "exists)",
                Kind.TEXT,
                metavar="DIR",
                required=True,
            ),
            JSON,
        ),
        "release.commands.report:report",
        "Made from the tag's release manifest (its note, refs/notes/release/TAG), the tag's "
        "message and the verdict of a release reproduce TAG run on this machine, if any. "
        "Nothing on the page is fetched: no script, no external resource.",
    ),
    Command(
        "rehearse",
        "Run the v0.31.0rc1 story on the bundled sample engine in a sandbox, from the picks "
        "to a tester's reproduce.",
        (
            Option("keep", "keep the sandbox directory and the image tags it made; print where"),
            Option("workdir", "make the sandbox here", Kind.TEXT, metavar="DIR"),
            JSON,
        ),
        f"{_FILES}:rehearse",
        "Picks, two rcs, their images, a tester's reproduce, the final and a drift on "
        "purpose; the image steps need a Docker Engine and say 'not run' without one.",
    ),
    Command(
        "bake",
        "Write a docker buildx bake file with a target per variant, as images.build would "
        "build them.",
        (
            Option(
                "out",
                "the bake file to write (JSON)",
                Kind.TEXT,
                default="docker-bake.json",
                metavar="FILE",
            ),
            VERSION_AS,
            *GUARDS,
            JSON,
        ),
        f"{_FILES}:bake",
        "Each target has the args, tags and labels of images.build but the base's name and "
        "digest (known once the builder resolves the base). Run `docker buildx bake -f FILE` "
        "at the repository's root.",
    ),
    Command(
        "ci",
        "Write a CI pipeline for the image matrix: a job per image session, then one that "
        "merges the manifest.",
        (
            Option(
                "format",
                "buildkite (a pipeline, pipeline.yml) or github (a workflow, images.yml)",
                Kind.TEXT,
                choices=("buildkite", "github"),
                required=True,
            ),
            Option(
                "out",
                "the directory to write it in, which must exist (default: .buildkite or "
                ".github/workflows at the repository's root, made when missing)",
                Kind.TEXT,
                metavar="DIR",
            ),
            Option(
                "setup",
                "the command each job runs, in the Python it set up, to install release and nox "
                "(default: pip install [tool.release.ci] install, else this release, and nox)",
                Kind.TEXT,
            ),
            Option(
                "runner",
                "GitHub: the runs-on label, Buildkite: the agents' queue, of every job "
                "[tool.release.ci] runners gives none (default: ubuntu-latest; no queue)",
                Kind.TEXT,
            ),
            Option(
                "registry",
                "REGISTRY/PATH images travel through between jobs (default: ci-registry in "
                "[tool.release.images]; '' for artifacts: docker save, then docker load)",
                Kind.TEXT,
            ),
            Option(
                "write-noxfile", "write the two-line noxfile.py the jobs run, where there is none"
            ),
            JSON,
        ),
        f"{_FILES}:ci",
    ),
    Command(
        "images.build",
        "Build one image per CUDA variant, skipping variants whose inputs are unchanged.",
        (
            VARIANT,
            Option("jobs", "variants built in parallel", Kind.NUMBER, default=1),
            Option("keep-going", "build the other variants when one fails; report every failure"),
            VERSION_AS,
            Option("force", "rebuild even when the inputs are unchanged"),
            Option("no-cache", "rebuild every layer (docker build --no-cache); implies --force"),
            *GUARDS,
            JSON,
        ),
        f"{_IMAGES}:build",
    ),
    Command(
        "images.smoke",
        "Smoke-test each variant's image, building it first if it is missing.",
        (VARIANT, Option("version", "version to check for", Kind.TEXT), *GUARDS, JSON),
        f"{_IMAGES}:smoke",
    ),
    Command(
        "images.snapshot",
        "Checkpoint each variant's running server, restore it in a fresh container, and "
        "record the runtime state.",
        (
            Option(
                "variant",
                "variant ids, comma separated (default: every variant the snapshot rule covers)",
                Kind.TEXT,
                metavar="IDS",
            ),
            Option("version", "version to check", Kind.TEXT),
            Option("baseline", "a snapshot record to diff against", Kind.TEXT, metavar="FILE"),
            Option("dry-run", "print the round trip's steps and container options, run nothing"),
            *GUARDS,
            JSON,
        ),
        f"{_IMAGES}:snapshot",
        "Variants the snapshot rule omits (CUDA 12.x in the sample) are not snapshotted.",
    ),
    Command(
        "images.push",
        "Push this checkout's images to a registry, for the CI jobs after the build.",
        (
            VARIANT,
            REGISTRY,
            Option(
                "version",
                "version whose images to send (default: as a build names them)",
                Kind.TEXT,
            ),
            JSON,
        ),
        f"{_IMAGES}:push",
    ),
    Command(
        "images.publish",
        "Publish this checkout's images to the release registry, each tag read back; "
        "published tags never move.",
        (
            VARIANT,
            Option(
                "registry",
                "REGISTRY/PATH to publish under (default: registry in [tool.release.images])",
                Kind.TEXT,
            ),
            Option(
                "version",
                "version whose images to publish (default: as a build names them)",
                Kind.TEXT,
            ),
            DRY_RUN,
            JSON,
        ),
        f"{_IMAGES}:publish",
        "Every tag is read first: one that serves this image is kept, one that serves "
        "another refuses the run (exit 3, both digests) before anything is pushed. A "
        "variant's image is pushed once; its other tags are copied by digest inside the "
        "registry. The digests are recorded as the variant's publish part of the manifest. "
        "A re-run pushes only what is missing.",
    ),
    Command(
        "images.pull",
        "Pull this checkout's images from a registry, refused when they were built from "
        "another commit.",
        (
            VARIANT,
            REGISTRY,
            Option(
                "version",
                "version whose images to fetch (default: as a build names them)",
                Kind.TEXT,
            ),
            JSON,
        ),
        f"{_IMAGES}:pull",
    ),
    Command(
        "images.matrix",
        "Show the image matrix: variants, tags, build args and which sessions exist.",
        (JSON,),
        f"{_IMAGES}:matrix",
    ),
    Command(
        name="init",
        summary="Write a commented [tool.release] into pyproject.toml, guessed from this repository.",
        options=(DRY_RUN, JSON),
        target="release.commands.init:init",
        description=(
            "Each value is guessed from what the repository has (release branches, tag "
            "spellings, the main branch, a changelog, a Dockerfile's ARGs) and says so in a "
            "comment; the rest of pyproject.toml is kept byte for byte. A pyproject.toml "
            "that has [tool.release] already is refused (exit 3) and left as it was."
        ),
    ),
    Command(
        name="check",
        summary="Check the configuration, git, docker, the engine and the registry login, one line each.",
        options=(
            Option(
                "tag",
                "check only that this checkout is TAG's and release reads TAG's version here "
                "(what a CI job checks before it builds)",
                Kind.TEXT,
                metavar="TAG",
            ),
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


def by_name() -> dict[str, Command]:
    return {c.name: c for c in COMMANDS}

"""Every command of ``release``, declared once (see :mod:`release.commands.declare`).

The console script and ``inv release.*`` are made from :data:`COMMANDS`; a command's
function is imported only when it runs. This module imports nothing but the declarations,
so ``release --help`` and ``release --list`` read it at once.
"""

from __future__ import annotations

from release.commands.declare import Command, Kind, Option
from release.commands.options import (
    DRY_RUN,
    FORCE,
    GUARDS,
    JSON,
    REQUIRE_SIGNED,
    SIGN,
    TRUST,
    VERSION_AS,
)
from release.commands.registry_images import IMAGE_COMMANDS
from release.commands.registry_setup import SETUP_COMMANDS

__all__ = ["COMMANDS", "PICK_REASONS", "by_name"]

# as release.core.config names them (a test holds the two in step): no import of core here
PICK_REASONS = ("regression", "critical", "fix-new-feature", "docs", "release-only")

_REPO = "release.commands.repo"
_IMAGES = "release.commands.images"
_TAGS = "release.commands.tags"
_FILES = "release.commands.files"

COMMANDS: tuple[Command, ...] = (
    Command(
        "status",
        "Show the release branch, its tags, the next rc, the picks done and pending, and what "
        "to run next.",
        (JSON, Option("offline", "do not read the remote's tags and branch")),
        "release.commands.status:status",
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
                "shas, #PR numbers and/or this repository's PR addresses "
                "(https://HOST/ORG/REPO/pull/N): several arguments, or one separated by spaces "
                "or commas",
                Kind.MANY,
                positional=True,
                stand_ins=("milestone", "label", "file", "repick", "reverts", "continue", "abort"),
            ),
            Option(
                "milestone",
                "pick the merged PRs of this GitHub milestone (asked of gh); repeat it for several",
                Kind.MANY,
                metavar="NAME",
            ),
            Option(
                "label",
                "pick the merged PRs with this GitHub label (asked of gh); repeat it for several",
                Kind.MANY,
                metavar="NAME",
            ),
            Option(
                "file",
                "a picks file: one '<sha, #PR or PR address> [reason]' per line, or "
                "'milestone: NAME [reason]' / 'label: NAME [reason]'",
                Kind.TEXT,
            ),
            Option(
                "reverts",
                "pick every revert on main since the cut of a commit the branch carries (from "
                "before the cut, or picked) that is not on the branch yet, as status lists them",
            ),
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
        "Tag the next rc (vX.Y.ZrcN) on the release branch tip, notes in its message, "
        "CHANGELOG.md and version-files set.",
        (
            Option(
                "version",
                "rc, post, patch rc or four-part patch release to tag (default: the next rc; "
                "once final, the next one the project's patch-releases ship)",
                Kind.TEXT,
            ),
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
            Option(
                "no-images",
                "tag the final and commit its changelog only; its images later, with "
                "release images.promote (CI's promote job)",
            ),
            DRY_RUN,
            JSON,
        ),
        f"{_TAGS}:promote",
        "The rc changelog sections are folded into the final's. Where the rc has a manifest, "
        "its images get the final's tags in the same run: by digest in the registry it was "
        "published to, else by image id in this engine. Everything the registry or the "
        "engine could refuse is read before git changes; a run stopped anywhere is "
        "finished by the next.",
    ),
    Command(
        "push",
        "Push the release branch, its new tags and their manifest notes in one atomic push.",
        (Option("dry-run", "print the refs that would be pushed"), JSON),
        f"{_TAGS}:push",
    ),
    Command(
        "github-release",
        "Make or update in place the GitHub release of a pushed rc (a pre-release) or final "
        "(latest), through gh.",
        (
            Option(
                "tag",
                "the rc or final tag (default: the newest of the release branch checked out)",
                Kind.TEXT,
                positional=True,
            ),
            Option(
                "dry-run",
                "print the release, each gh command line as it would be sent and the notes; "
                "send nothing (and ask GitHub nothing)",
            ),
            JSON,
        ),
        "release.commands.github:github_release",
        "The tag must be on the remote at the same commit. Its notes are release notes "
        "--view rc (an rc) or --view final (a final); an rc's assets are its rc page "
        "(release report's) and its release manifest, where it has one (else it says what is "
        "left out). A release gh release view finds is edited and its assets uploaded again "
        "(--clobber), never made twice. gh's login (gh auth login, or GH_TOKEN) is used; no "
        "token is printed or written. [tool.release.github] release = false refuses.",
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
        "release.commands.notes:notes",
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
            Option(
                "allow-host-signed-by",
                "a signer (as your trust root names it) whose tags' container options that "
                "reach into this host you allow, where the tag's signature verifies (also "
                "release.allowHostSignedBy in your git config); repeat it for several",
                Kind.MANY,
                metavar="NAME",
            ),
            TRUST,
            REQUIRE_SIGNED,
            Option(
                "image-key",
                "an OpenPGP public key file you hold (gpg --export FPR) to check every published "
                "image and index against, with skopeo, before anything is pulled or built "
                "(exit 7 when one does not verify, or with --require-signed is unsigned)",
                Kind.TEXT,
                metavar="FILE",
            ),
            Option(
                "image-signatures",
                "where the rc's image signatures are read: the lookaside store's URL, or a "
                "directory (needed with --image-key)",
                Kind.TEXT,
                metavar="URL|DIR",
            ),
            Option("standin", "build on a stand-in where the recorded base cannot be had"),
            Option("keep", "keep the temporary checkout and the rebuilt images"),
            Option("cache", "let the builder use its cache (default: every layer built again)"),
            Option("jobs", "variants built at once", Kind.NUMBER, default=1),
            JSON,
        ),
        f"{_IMAGES}:reproduce",
        "The tag's and its manifest's signatures are checked first, against trust roots "
        "you hold: signed by NAME, unsigned, or signature does not verify (exit 7, nothing "
        "pulled or built).",
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
            FORCE,
            JSON,
        ),
        "release.commands.report:report",
        "Made from the tag's release manifest (its note, refs/notes/release/TAG), the tag's "
        "message and the verdict of a release reproduce TAG run on this machine, if any. "
        "Nothing on the page is fetched: no script, no external resource. The page says in "
        "a comment what wrote it and the sha256 of the rest: a page there already is "
        "replaced only if release wrote it and nobody changed it since, else with --force.",
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
            FORCE,
            JSON,
        ),
        f"{_FILES}:bake",
        "Each target has the args, tags and labels of images.build but the base's name and "
        "digest (known once the builder resolves the base). Run `docker buildx bake -f FILE` "
        "at the repository's root. The file says what wrote it and the sha256 of the rest "
        "(in the variable RELEASE_WRITTEN_BY, which no target reads): a file there already "
        "is replaced only if release wrote it and nobody changed it since, else with --force.",
    ),
    Command(
        "ci",
        "Write the CI pipelines: rc tags build, smoke, snapshot, publish and record the "
        "manifest; finals only promote.",
        (
            Option(
                "format",
                "buildkite (one pipeline, pipeline.yml) or github (workflows: images.yml for rc "
                "and post tags, promote.yml for finals)",
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
                "install",
                "the pinned requirement each job installs release from, as [tool.release.ci] "
                "install takes it: 'release @ git+URL@COMMIT', 'release @ URL#sha256=HASH' or "
                "'release==X.Y.Z --hash=sha256:HASH' (default: [tool.release.ci] install or "
                "requirements, else this release as installed here, where pip recorded a "
                "commit or a hash); nox is pinned to the version installed here",
                Kind.TEXT,
                metavar="REQUIREMENT",
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
            FORCE,
            JSON,
        ),
        f"{_FILES}:ci",
        "Each job installs release pinned, by a commit or a hash ([tool.release.ci] install "
        "or requirements, --install, else as pip recorded this release's own install), and "
        "nox at one version; an install that cannot be pinned is refused (exit 3) with the "
        "forms that would do, and nothing is written. Every value the jobs need reaches "
        "their lines as an environment variable, never as text of the line. Each file says "
        "in a header what wrote it and the sha256 of the rest: a workflow or pipeline there "
        "already that release did not write (a hand-written .buildkite/pipeline.yml), or "
        "one changed since, is refused (exit 3, no file written) unless --force.",
    ),
    *IMAGE_COMMANDS,
    *SETUP_COMMANDS,
)


def by_name() -> dict[str, Command]:
    return {c.name: c for c in COMMANDS}

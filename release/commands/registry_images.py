"""The ``images.*`` commands, declared (see :mod:`release.commands.registry`): imports
nothing but the declarations."""

from __future__ import annotations

from release.commands.declare import Command, Kind, Option
from release.commands.options import DRY_RUN, GUARDS, JSON, REGISTRY, VARIANT, VERSION_AS

__all__ = ["IMAGE_COMMANDS"]

_IMAGES = "release.commands.images"

IMAGE_COMMANDS: tuple[Command, ...] = (
    Command(
        "images.build",
        "Build one image per variant, skipping variants whose inputs are unchanged.",
        (
            VARIANT,
            Option("jobs", "variants built in parallel", Kind.NUMBER, default=1),
            Option("keep-going", "build the other variants when one fails; report every failure"),
            VERSION_AS,
            Option("force", "rebuild even when the inputs are unchanged"),
            Option("no-cache", "rebuild every layer (docker build --no-cache); implies --force"),
            Option(
                "cache-from",
                "reuse layers of the earlier build kept in REGISTRY/PATH (its NAME:cache-ROW, "
                "which images.push keeps); default: $RELEASE_CI_CACHE; none there yet: "
                "built without",
                Kind.TEXT,
                metavar="REGISTRY/PATH",
            ),
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
                "from",
                "take the images from REGISTRY/PATH, where images.push put them, copied "
                "inside the registry by digest (no engine is used); default: this engine",
                Kind.TEXT,
                metavar="REGISTRY/PATH",
            ),
            Option(
                "version",
                "version whose images to publish (default: as a build names them)",
                Kind.TEXT,
            ),
            Option(
                "sign-with",
                "sign each published image and index by this GnuPG key (its full fingerprint; "
                "default: $RELEASE_IMAGE_SIGNING_KEY); the key is your GnuPG's",
                Kind.TEXT,
                metavar="FPR",
            ),
            Option(
                "signatures",
                "the lookaside store the signatures are written to, a directory you serve "
                "beside the registry or attach to the release (default: "
                "$RELEASE_IMAGE_SIGNATURES)",
                Kind.TEXT,
                metavar="DIR",
            ),
            DRY_RUN,
            JSON,
        ),
        f"{_IMAGES}:publish",
        "Every tag is read first: one that serves this image is kept, one that serves "
        "another refuses the run (exit 3, both digests) before anything is pushed. A "
        "variant's image is pushed once; its other tags are copied by digest inside the "
        "registry. The digests are recorded as the variant's publish part of the manifest. "
        "A re-run pushes only what is missing. With --from, each image is read where "
        "images.push put it, refused unless its labels say it is this checkout's commit "
        "and variant, copied with its digest kept (its layers mounted within one "
        "registry), and the index made in the registry; nothing is pulled. With a signing key, each platform image and "
        "index is signed by digest (skopeo's simple signing) once it reads back, and the "
        "key's fingerprint recorded; a re-run adds no signature that is there.",
    ),
    Command(
        "images.attest",
        "Attach an SBOM and a SLSA provenance to each published platform image, and record "
        "their digests.",
        (
            VARIANT,
            Option(
                "version",
                "version whose images to attest (default: as a build names them)",
                Kind.TEXT,
            ),
            Option(
                "sign-with",
                "sign each provenance's DSSE envelope by this GnuPG key, the images' key (its "
                "full fingerprint; default: $RELEASE_IMAGE_SIGNING_KEY)",
                Kind.TEXT,
                metavar="FPR",
            ),
            DRY_RUN,
            JSON,
        ),
        "release.commands.attest:attest",
        "Run after images.publish. Each attachment is an OCI artifact whose subject is the "
        "platform image, tagged as cosign names them (sha256-<digest>.sbom, .att); its "
        "digest is recorded as the row's attest part of the manifest. The provenance names "
        "the SBOM by its digest; with a key, its DSSE envelope is signed (gpg --detach-sign "
        "of its PAE) and the key recorded, else it is unsigned and recorded so. An "
        "attachment tag that holds anything else "
        "refuses the run (exit 3) before anything is pushed; a re-run attaches only what "
        "is missing. Needs syft: pip install 'release[sbom]'.",
    ),
    Command(
        "images.promote",
        "Give a pushed final tag its last rc's published images, by digest in the registry, "
        "and record its manifest.",
        (
            Option(
                "tag",
                "the final tag (default: the final tag at HEAD)",
                Kind.TEXT,
                metavar="TAG",
            ),
            Option("push", "push the final's manifest note to the remote"),
            Option(
                "sign-with",
                "sign the final's own tags by this GnuPG key, as images.publish signs an "
                "rc's (its full fingerprint; default: $RELEASE_IMAGE_SIGNING_KEY)",
                Kind.TEXT,
                metavar="FPR",
            ),
            Option(
                "signatures",
                "the lookaside store the final's signatures are written to (default: "
                "$RELEASE_IMAGE_SIGNATURES)",
                Kind.TEXT,
                metavar="DIR",
            ),
            JSON,
        ),
        "release.commands.image_promote:promote",
        "Run in a checkout of the final tag (HEAD on another commit is refused). The rc is "
        "the newest rc of the final's version on the final's commit; its manifest is read "
        "here, else fetched from the remote. Every final tag and every rc manifest is read "
        "first: a final tag serving another digest, or an rc manifest gone or untrue to its "
        "digest, is refused (exit 3) before anything is copied; a re-run keeps what is there. "
        "With a signing key, the final's own tags (not the moving ones) are signed once "
        "every copy reads back, and the key recorded in the final's manifest.",
    ),
    Command(
        "images.signatures",
        "Merge the image signatures the CI's publish and promote jobs kept into the store "
        "served beside the registry.",
        (
            Option(
                "merge",
                "a store to merge (a job's signatures artifact, unpacked); repeatable",
                Kind.MANY,
                metavar="DIR",
                required=True,
            ),
            Option(
                "into",
                "the store testers read (made where missing)",
                Kind.TEXT,
                metavar="DIR",
                required=True,
            ),
            JSON,
        ),
        "release.commands.image_signatures:signatures",
        "Each job's store numbers its signatures from signature-1, so stores are not merged "
        "by copying: each signature is added under the next free number of its directory, "
        "once (one there byte for byte is not added again: a re-run adds nothing). A store "
        "holding anything but <repository path>@sha256=<hex>/signature-N files (a link, "
        "another file) is refused (exit 2) before anything is written.",
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
)

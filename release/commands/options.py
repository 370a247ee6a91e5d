"""The options many commands share, spelt and explained once."""

from __future__ import annotations

from release.commands.declare import Kind, Option

__all__ = [
    "ALLOW_DIRTY",
    "ALLOW_SHALLOW",
    "DRY_RUN",
    "FORCE",
    "GUARDS",
    "JSON",
    "OFFLINE",
    "REGISTRY",
    "REQUIRE_SIGNED",
    "SIGN",
    "TRUST",
    "VARIANT",
    "VERSION_AS",
]

DRY_RUN = Option("dry-run", "print the plan, change nothing")
# every file a command generates says in a header what wrote it, and the digest of the rest
FORCE = Option(
    "force",
    "replace a file release did not write, or one changed since it wrote it (refused "
    "otherwise, exit 3: a file it wrote and nobody changed is replaced freely)",
)
JSON = Option("json", "print a JSON document (with a schema key) instead of text")
OFFLINE = Option("offline", "do not ask the remote")
SIGN = Option("sign", "sign the tag (GPG or SSH, as git config says)")
TRUST = Option(
    "trust",
    "an SSH allowed-signers file or an OpenPGP public keyring (gpg --export) you hold, to "
    "verify the tag and its manifest against (default: gpg.ssh.allowedSignersFile in your "
    "git config; never a file in the repository's work tree); repeat it for both kinds",
    Kind.MANY,
    metavar="FILE",
)
REQUIRE_SIGNED = Option(
    "require-signed",
    "refuse (exit 7) a tag or manifest (and, with --image-key, an image) that is not "
    "signed by a key you trust",
)
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

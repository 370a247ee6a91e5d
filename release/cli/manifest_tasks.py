"""``release manifest``: merge the build, smoke and snapshot parts of a release into its
manifest, check it is complete, and record it with the tag. The summary shows the
manifest's fields as single-line fields, control characters escaped (parts come from CI
artifacts: :mod:`release.core.terminal_text`)."""

from __future__ import annotations

import json as _json
import os
from pathlib import Path

from invoke.context import Context
from invoke.tasks import task

from release.cli.console import say
from release.cli.entry import entry

__all__ = ["manifest", "reproduce"]


@task(
    help={
        "parts": "a directory of parts (CI artifacts), read instead of this checkout's; "
        "comma separated for several",
        "version": "the release (default: the tag at HEAD)",
        "partial": "show what is there, even when parts are missing (records nothing)",
        "json": "print the manifest as JSON",
        "out": "also write the manifest to this file",
        "push": "send the tag's manifest to the remote now (release push also sends it)",
        "no-record": "merge and check only: record no note (a CI job writes nothing under .git)",
    }
)
@entry
def manifest(
    c: Context,
    parts: str | None = None,
    version: str | None = None,
    partial: bool = False,
    json: bool = False,
    out: str | None = None,
    push: bool = False,
    no_record: bool = False,
) -> None:
    """Merge the release's manifest from its parts, check it is complete, record it with the tag."""
    from release.adapters.files import atomic_write, output_path
    from release.adapters.git_notes import notes_ref
    from release.core.manifest import missing, variant_rules, variant_summary
    from release.core.terminal_text import escaped
    from release.errors import UsageError
    from release.images.manifest import Checkout, assemble, publish, push_manifest

    if no_record and push:
        raise UsageError("--no-record and --push: a manifest not recorded cannot be pushed")
    ws = Checkout.open(os.environ.get("RELEASE_REPO", "."), version)
    target = output_path(Path(out), "--out", tree=ws.ctx.root) if out else None
    dirs = [Path(p) for p in (parts or "").split(",") if p]
    document = assemble(ws, dirs, partial=partial)
    if target is not None:
        atomic_write(target, _json.dumps(document, indent=2, sort_keys=True) + "\n")
    if json:
        print(_json.dumps(document, indent=2, sort_keys=True))
    else:
        tag = document.get("tag") or "(untagged)"
        of, at = escaped(str(document["version"])), escaped(str(document["commit"])[:10])
        say(f"manifest of {of} {escaped(tag)} at {at}")
        for variant, entry_ in document["variants"].items():
            row = {k: escaped(v) for k, v in variant_summary(entry_).items()}
            say(
                f"  {escaped(variant)}: built {row['built']}, smoke {row['smoked']}, "
                f"snapshot {row['snapshot']}"
            )
    if partial:
        for gap in missing(document, variant_rules(ws.matrix)):
            say(f"missing: {escaped(gap)}")
        return
    tag = document.get("tag")
    if not tag:
        say("untagged build: the manifest is complete but not recorded (only tags have one)")
        return
    if no_record:
        say(
            f"complete; not recorded (--no-record): release manifest records it as {notes_ref(tag)}"
        )
        return
    recorded = publish(ws, document)
    say(
        f"{'recorded' if recorded else 'already recorded'} as {notes_ref(tag)}"
        + ("" if push else "; release push sends it with the tag")
    )
    if push:
        sent = push_manifest(ws, tag)
        say(f"{'pushed' if sent else 'already on'} {ws.ctx.config.remote}: {notes_ref(tag)}")


@task(
    iterable=["allow_host"],
    help={
        "variant": "only these variants (comma separated; default: every one the manifest has)",
        "allow-host": "a container option of the tag's that reaches into this host, allowed "
        "(e.g. cap-add=SYS_ADMIN; repeat it, or comma separate them): without each one the "
        "tag asks for, nothing is built",
        "standin": "build on a stand-in where the recorded base cannot be had (the verdict says so)",
        "keep": "keep the temporary checkout and the rebuilt images",
        "cache": "let the builder use its cache (default: every layer is built again)",
        "jobs": "variants built at once",
    },
)
@entry
def reproduce(
    c: Context,
    tag: str,
    variant: str | None = None,
    standin: bool = False,
    keep: bool = False,
    cache: bool = False,
    jobs: int = 1,
    allow_host: list[str] | None = None,
) -> None:
    """Rebuild a tag's images from its sources and compare them with its manifest (exit 1 on drift)."""
    from invoke.exceptions import Exit

    from release.images.reproduce import reproduce as run

    found = run(
        os.environ.get("RELEASE_REPO", "."),
        tag,
        variants=[v for v in (variant or "").split(",") if v],
        standin=standin,
        keep=keep,
        cache=cache,
        jobs=jobs,
        allow_host=allow_host or (),
        say=say,
    )
    say(found.summary())
    if found.drifted:
        raise Exit(code=1)

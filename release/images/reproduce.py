"""``release reproduce <tag>``: an rc tester's check that the published images are what the
tag's sources make.

1. The tag and its manifest (``refs/notes/release/<tag>``) are fetched from the remote; a
   local tag that differs from the remote's is refused, not overwritten.
2. The tagged commit is checked out in a temporary clone that shares this repository's
   objects (``git clone --shared``): this checkout, its branch, index and work tree are
   never touched, and the clone's remote URL is this one's, so the image says the same
   source.
3. Each variant is rebuilt there with the args the manifest recorded, without the build
   cache (``--cache`` allows it), under the tag ``<name>-reproduce:<tag>[-<variant>]``:
   the rc's own tags are never moved. The recorded base is used when this engine has it
   or can pull it; a stand-in is made only when the rc was built on one, or when asked
   (``--standin``), and the verdict says so.
4. Smoke runs on each rebuild, and the snapshot where the tag's rule gives one.
5. The verdict, field by field (:mod:`release.core.verdict`). Any drift fails the run.

The temporary clone and the rebuilt images are removed afterwards (Ctrl-C and SIGTERM
included) unless ``keep``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from release.adapters.engine import ContainerEngine
from release.adapters.git import GitRepo
from release.adapters.git_notes import fetch_note, notes_ref
from release.core.manifest import ManifestError, omitted_snapshot, variant_rules
from release.core.matrix import ImageMatrix, Variant
from release.core.verdict import FieldVerdict, State, compare_variant, table
from release.errors import ConfigError, RefusedError, ReleaseError, UsageError
from release.flows.context import ReleaseContext
from release.flows.manifest_store import published
from release.images.build import BuildStatus, build_images
from release.images.manifest import built_data, smoke_data, snapshot_data
from release.images.source import BuildSource, read_source

__all__ = ["Reproduction", "reproduce"]

Say = Callable[[str], None]
SUFFIX = "-reproduce"  # the rebuilt images' repository: NAME-reproduce:<tag>[-<variant>]


@dataclass
class Reproduction:
    """What ``reproduce`` found: the verdict per variant, and what the reader must know
    about how it was reached (a stand-in base, a remote that did not answer)."""

    tag: str
    verdicts: dict[str, list[FieldVerdict]] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)

    @property
    def drifted(self) -> list[str]:
        return [v for v, fields in self.verdicts.items() if any(f.drift for f in fields)]

    def summary(self) -> str:
        if self.drifted:
            return f"reproduce {self.tag}: DRIFT in {', '.join(self.drifted)}"
        return f"reproduce {self.tag}: match ({len(self.verdicts)} variant(s))"


def _fetch(ctx: ReleaseContext, tag: str, say: Say) -> list[str]:
    """The tag and its manifest from the remote; what the reader must know, as notices."""
    repo, remote = ctx.repo, ctx.config.remote
    if not repo.has_remote(remote):
        return [f"no remote {remote!r}: the tag and manifest here are used as they are"]
    ref = f"refs/tags/{tag}"
    # not --quiet: a rejected tag is said only on stderr
    got = repo.run("fetch", "--no-tags", remote, f"{ref}:{ref}", check=False)
    if not got.ok:
        said = (got.stderr.strip().splitlines() or ["?"])[-1]
        if "clobber" in got.stderr or "rejected" in got.stderr:
            raise RefusedError(
                f"the tag {tag} here is not {remote}'s ({said}): reproduce checks what was "
                f"published; delete the local tag (git tag -d {tag}) and run it again"
            )
        if repo.rev(ref) is None:
            raise UsageError(f"no tag {tag} here, and fetching it from {remote} failed: {said}")
        return [f"{remote} did not answer ({said}): the tag and manifest here are used"]
    if not fetch_note(repo, remote, tag):
        return [f"{remote} has no manifest for {tag}: the one here, if any, is used"]
    say(f"fetched {tag} and its manifest ({notes_ref(tag)}) from {remote}")
    return []


@contextmanager
def _clone(ctx: ReleaseContext, commit: str, keep: bool, say: Say) -> Iterator[Path]:
    """A clean temporary checkout of ``commit`` sharing this repository's objects."""
    top = Path(tempfile.mkdtemp(prefix="release-reproduce-"))
    try:
        dest = top / "src"
        ctx.repo.run("clone", "--quiet", "--shared", "--no-checkout", str(ctx.root), str(dest))
        clone = GitRepo(dest)
        clone.run("checkout", "--quiet", "--detach", commit)
        url = ctx.repo.remote_url(ctx.config.remote)
        clone.run("remote", "remove", "origin")
        if url:
            clone.run("remote", "add", ctx.config.remote, url)
        yield top
    finally:
        if keep:
            say(f"kept the checkout at {top / 'src'}")
        else:
            shutil.rmtree(top, ignore_errors=True)


def _check_bases(
    engine: ContainerEngine,
    variants: Sequence[Variant],
    recorded: Mapping[str, Any],
    standin: bool,
) -> list[str]:
    """Refuse before building when a recorded base can be neither found nor pulled and
    a stand-in was not asked for; the notices of stand-ins that will be made."""
    notices = []
    found = engine.inspect_images([v.base_image for v in variants])
    for variant in variants:
        base = recorded[variant.id]["build"]["base"]
        if found.get(variant.base_image) is not None:
            continue
        if not os.environ.get("RELEASE_NO_PULL") and engine.pull(variant.base_image):
            continue
        if base["standin"]:
            notices.append(
                f"{variant.id}: the rc was built on a stand-in for {base['ref']}; one is made "
                "here the same way (the base row compares their content)"
            )
        elif standin:
            notices.append(
                f"{variant.id}: the recorded base {base['ref']} cannot be had here: built on "
                "a stand-in, as asked (--standin); its base row says how it differs"
            )
        else:
            raise RefusedError(
                f"the recorded base of {variant.id}, {base['ref']} (content "
                f"{base['content_digest'][:19]}), is not here and cannot be pulled: load it "
                "(docker load), or pass --standin to build on a stand-in, which the verdict "
                "will show"
            )
    return notices


def _rebuilt(
    engine: ContainerEngine,
    matrix: ImageMatrix,
    variant: Variant,
    source: BuildSource,
    image: str,
    store: Path,
    say: Say,
) -> dict[str, Any]:
    from release.images.smoke import run_smoke
    from release.images.snapshot import run_snapshot

    entry: dict[str, Any] = {}
    smoke = run_smoke(engine, matrix, variant, source, image, say=say)
    for line in smoke.lines():
        say(line)
    entry["smoke"] = smoke_data(smoke)
    if matrix.has_snapshot(variant):
        snap = run_snapshot(engine, matrix, variant, source, image, store=store, say=say)
        for line in snap.lines():
            say(line)
        entry["snapshot"] = snapshot_data(snap)
    else:
        rule = next(r for r in variant_rules(matrix) if r.id == variant.id)
        entry["snapshot"] = omitted_snapshot(rule)
    return entry


def reproduce(
    path: Path | str,
    tag: str,
    *,
    variants: Sequence[str] = (),
    standin: bool = False,
    keep: bool = False,
    cache: bool = False,
    jobs: int = 1,
    say: Say = print,
) -> Reproduction:
    """Rebuild ``tag``'s images from its sources and compare them with its manifest."""
    ctx = ReleaseContext(path)
    outcome = Reproduction(tag, notices=_fetch(ctx, tag, say))
    commit = ctx.repo.rev(f"refs/tags/{tag}^{{commit}}")
    if commit is None:
        raise UsageError(f"no tag {tag} here or on {ctx.config.remote}")
    manifest = published(ctx.repo, tag, commit)
    if manifest is None:
        raise ManifestError(
            f"{tag} has no manifest ({notes_ref(tag)}), here or on {ctx.config.remote}: it "
            "was not published (release manifest --push records it)"
        )
    recorded: dict[str, Any] = manifest["variants"]
    unknown = [v for v in variants if v not in recorded]
    if unknown:
        raise UsageError(
            f"the manifest of {tag} has no variant {', '.join(unknown)} "
            f"(it has: {', '.join(recorded)})"
        )
    engine = ContainerEngine.detect()
    with _clone(ctx, commit, keep, say) as top:
        here = ReleaseContext(top / "src")
        matrix = here.config.matrix
        if matrix is None:
            raise ConfigError(f"{tag} has no [tool.release.images]: no images to reproduce")
        source = read_source(here, allow_shallow=True)
        if source.version != manifest["version"]:
            raise ManifestError(
                f"the manifest of {tag} is of {manifest['version']}, the tag builds "
                f"{source.version}: it was published for another release"
            )
        chosen = [matrix.variant(v) for v in (variants or recorded)]
        outcome.notices += _check_bases(engine, chosen, recorded, standin)
        for notice in outcome.notices:
            say(notice)
        rebuild = replace(matrix, name=matrix.name + SUFFIX)
        # every tag this run may make, removed afterwards whether or not it got that far
        images = [rebuild.tag(v, source.image_version) for v in chosen]
        try:
            results = build_images(
                engine,
                rebuild,
                chosen,
                source,
                logs=top / "logs",
                jobs=jobs,
                keep_going=True,
                force=True,
                no_cache=not cache,
                build_args={v.id: recorded[v.id]["build"]["build_args"] for v in chosen},
                say=say,
            )
            for variant, result in zip(chosen, results, strict=True):
                if result.status is not BuildStatus.BUILT or result.image_id is None:
                    why = result.error or result.status.value
                    outcome.verdicts[variant.id] = [FieldVerdict("build", State.DRIFT, (why,))]
                    continue
                entry = {"build": built_data(engine, result, variant.cuda_text)}
                entry |= _rebuilt(
                    engine, rebuild, variant, source, result.tags[0], top / "snapshots", say
                )
                outcome.verdicts[variant.id] = compare_variant(
                    recorded[variant.id],
                    entry,
                    config_args=matrix.build_args_for(variant, source.version),
                )
        finally:
            if keep:
                say(f"kept the rebuilt images: {', '.join(images)}")
            else:
                for image in images:
                    _remove(engine, image)
    for line in table(outcome.verdicts):
        say(line)
    return outcome


def _remove(engine: ContainerEngine, image: str) -> None:
    """A rebuilt image, and any container of it (only ``reproduce`` makes them: one a
    check's tool was still creating when Ctrl-C came is found here too)."""
    with contextlib.suppress(ReleaseError):
        for container in engine.containers_of(image):
            engine.remove_container(container)
        engine.remove_image(image)

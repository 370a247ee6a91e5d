"""``images.publish``: this checkout's images in the release registry, per platform and as
one multi-arch index per tag, each tag read back, the digests recorded as each row's
``publish`` part of the manifest.

A variant's platform images go under their own tags (``REG/NAME:v0.31.0rc1-cu129-amd64``,
``...-arm64``: vLLM's per-arch tags), and its index (amd64 + arm64) under the tags users
pull: ``REG/NAME:v0.31.0rc1-cu129``, and for the default variant ``REG/NAME:v0.31.0rc1``
too. The rules:

- **Read before anything is written.** Every tag of every variant asked is read first. A
  platform tag that serves this image (its config digest is the image's id), or an index
  tag that lists the platforms' digests, is kept as it is; one that serves anything else
  is refused with both digests (exit 3), and then nothing at all is pushed: a published
  rc's tags are immutable (only ``promote``'s moving tag moves).
- **In order, each step read back.** Platform images first (``docker push``: what the
  registry has is not sent again), then the index (``docker manifest``: made of the
  platform images by digest), then the index's other tags (copied by digest inside the
  registry). Each is read back and must serve what was pushed; otherwise it is an error,
  never a success.
- **A re-run converges.** Stopped at any point (SIGKILL included), the next run reads what
  is there, keeps it, and does only what is missing: the registry puts a tag only when the
  whole manifest is there.
- ``--dry-run`` reads the registry and says every push and tag, with the digests known;
  nothing leaves the machine.
- **Signed where a key is named** (:mod:`release.images.image_signing`): once a variant is
  read back, its platform images and index are signed by digest into the lookaside store,
  and the key's fingerprint recorded (``signed_by``).- **Where the images come from** is an :class:`Origin`: this engine (:class:`EngineOrigin`,
  the steps above), or the registry the CI's jobs passed them through
  (:mod:`release.images.publish_registry`: copied by digest, the index made in the
  registry, no engine asked); everything else here is the same for both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, cast

from release.adapters.process import last_line
from release.adapters.registry import Registry, RegistryError, Served, is_loopback
from release.core.manifest_records import Index, PublishRecord
from release.core.matrix import Variant
from release.core.references import repository as registry_repository
from release.core.say import Say
from release.core.terminal_text import escaped
from release.errors import RefusedError, UsageError
from release.images.image_signing import ImageSigning, sign_published
from release.images.manifest import write_part
from release.images.transfer import mismatch, registry_ref
from release.images.workspace import Workspace

__all__ = [
    "EngineOrigin",
    "Located",
    "Origin",
    "PlatformImage",
    "PublishedIndex",
    "publish_images",
    "release_registry",
]


@dataclass(frozen=True)
class PlatformImage:
    """One row's image as the registry serves it (or, dry, will)."""

    row: str
    platform: str
    image_id: str
    ref: str  # its platform tag in the registry
    digest: str | None  # its manifest's digest there; None: not pushed yet (a dry run)
    pushed: bool = False  # by this run (or, dry, it would be)
    source: str | None = None  # a registry's manifest it is copied from, by digest

    @property
    def source_digest(self) -> str | None:
        """The digest it must be published with: its source's, where it is copied."""
        return self.source.rsplit("@", 1)[1] if self.source else None


def origin_verb(image: PlatformImage) -> str:
    """What publishing ``image`` is: a push from the engine, a copy from a registry."""
    return "copy" if image.source else "push"


@dataclass(frozen=True)
class Located:
    """A row's image where it is published from."""

    image_id: str  # its config digest
    platform: str
    digest: str | None = None  # REGISTRY/NAME@sha256:... where it is a registry's manifest


class Origin(Protocol):
    """Where a publish takes the images from: this engine, or the registry the CI's
    images travel through."""

    sent: str  # what the output says of an image sent: "pushed", "copied"

    def name(self, row: Variant) -> str: ...
    def locate(self, row: Variant) -> Located: ...
    def settle(self, refs: Sequence[str]) -> None: ...
    def send(self, image: PlatformImage) -> None: ...
    def make_index(self, index: PublishedIndex, ref: str) -> None: ...


@dataclass(frozen=True)
class PublishedIndex:
    """A variant's multi-arch index and its platform images."""

    group: str
    refs: tuple[str, ...]  # the index's tags
    images: tuple[PlatformImage, ...]
    digest: str | None  # None: not made yet (a dry run)
    written: tuple[str, ...] = ()  # tags this run wrote (or, dry, would)

    def digest_is(self, served: Served) -> bool:
        return served.digest == self.digest

    @property
    def members(self) -> dict[str, str | None]:
        return {image.platform: image.digest for image in self.images}


def release_registry(ws: Workspace, given: str | None) -> str:
    """The registry and path to publish under: given, else ``registry`` in the config."""
    registry = given or ws.matrix.registry
    if not registry:
        raise UsageError(
            "no release registry: pass --registry REGISTRY/PATH or set registry in "
            "[tool.release.images]"
        )
    return registry


def _refuse(ref: str, found: Served, want: str) -> RefusedError:
    theirs = f"image {found.config}" if found.config else "an index"
    return RefusedError(
        f"{ref} is published already with another image: the registry serves {found.digest} "
        f"({theirs}), this build is {want}; a published tag is not moved (publish the build "
        "that was published, or tag a new rc)"
    )


def _read_group(
    ws: Workspace, reg: Registry, registry: str, group: str, origin: Origin
) -> PublishedIndex:
    """A variant's images where they come from and its tags as the registry serves them;
    what serves something else is refused."""
    images = []
    for row in ws.matrix.rows_of(group):
        got = origin.locate(row)
        if row.platform and got.platform != row.platform:
            raise RefusedError(
                f"{origin.name(row)} is a {got.platform} image, not {row.platform}: build it again"
            )
        tag = ws.matrix.platform_tag(row, ws.source.image_version, got.platform)
        ref = registry_ref(registry, tag)
        found = reg.served(ref)
        if found is not None and found.config != got.image_id:
            raise _refuse(ref, found, got.image_id)
        digest = found.digest if found else None
        images.append(
            PlatformImage(
                row.id, got.platform, got.image_id, ref, digest, found is None, got.digest
            )
        )
    origin.settle([i.ref for i in images])
    if len({i.platform for i in images}) != len(images):
        raise RefusedError(
            f"two images of {group} are of one platform: {', '.join(i.platform for i in images)}"
        )
    refs = tuple(
        registry_ref(registry, t) for t in ws.matrix.index_tags(group, ws.source.image_version)
    )
    index = PublishedIndex(group, refs, tuple(images), None)
    for ref in refs:
        found = reg.served(ref)
        if found is None:
            index = replace(index, written=(*index.written, ref))
            continue
        if not found.is_index or not _lists(found, index):
            raise _refuse(ref, found, _shown(index))
        if index.digest not in (None, found.digest):
            raise _refuse(ref, found, index.digest or "")
        index = replace(index, digest=found.digest)
    return index


class EngineOrigin:
    """The images of this engine: each pushed (``docker push``: what the registry has is
    not sent again), the index made with ``docker manifest``."""

    sent = "pushed"

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws

    def name(self, row: Variant) -> str:
        return self.ws.image(row)

    def locate(self, row: Variant) -> Located:
        local = self.ws.image(row)
        data = self.ws.engine.inspect_image(local)
        if data is None:
            raise RefusedError(f"{local} is not here: build it first (release images.build)")
        wrong = mismatch(self.ws, row.id, dict(data.labels))
        if wrong:
            raise RefusedError(f"{local} is not this checkout's build: {wrong}")
        return Located(data.id, data.platform)

    def settle(self, refs: Sequence[str]) -> None:
        """A killed push's local aliases, removed (the images keep their own tags)."""
        for ref, data in self.ws.engine.inspect_images(list(refs)).items():
            if data is not None:
                self.ws.engine.remove_image(ref)

    def send(self, image: PlatformImage) -> None:
        self.ws.engine.tag(image.image_id, [image.ref])
        try:
            result = self.ws.engine.push(image.ref)
        finally:
            self.ws.engine.remove_image(image.ref)  # the alias only: the image keeps its own tag
        if not result.ok:
            said = escaped(last_line(result.stderr or result.stdout, "no output"))
            raise RegistryError(f"docker push {image.ref} failed: {said}")

    def make_index(self, index: PublishedIndex, ref: str) -> None:
        members = [f"{registry_repository(i.ref)}@{i.digest}" for i in index.images]
        result = self.ws.engine.push_index(ref, members, insecure=is_loopback(ref))
        if not result.ok:
            said = escaped(last_line(result.stderr or result.stdout, "no output"))
            raise RegistryError(f"making the index {ref} failed: {said}")


def _lists(found: Served, index: PublishedIndex) -> bool:
    """Whether an index served lists exactly this variant's platforms, each with its
    image's digest where that is known (a platform image not there yet: any)."""
    listed = dict(found.platforms)
    members = index.members
    return (
        len(listed) == len(found.platforms)
        and listed.keys() == members.keys()
        and all(
            digest is None or listed[platform] == digest for platform, digest in members.items()
        )
    )


def _shown(index: PublishedIndex) -> str:
    return "an index of " + ", ".join(
        f"{p} {d or '(not pushed yet)'}" for p, d in index.members.items()
    )


def _read_back(reg: Registry, ref: str, check: Callable[[Served], bool], want: str) -> Served:
    found = reg.served(ref)
    if found is None or not check(found):
        got = "nothing" if found is None else found.digest
        raise RegistryError(f"{ref} does not read back as pushed: it serves {got}, not {want}")
    return found


def _send(reg: Registry, origin: Origin, image: PlatformImage) -> PlatformImage:
    """The platform image under its tag, read back: this image, and where it comes from
    a registry, the very manifest it has there (its digest)."""
    origin.send(image)
    want = f"image {image.image_id}" + (f" as {image.source}" if image.source else "")
    found = _read_back(
        reg,
        image.ref,
        lambda s: s.config == image.image_id and image.source_digest in (None, s.digest),
        want,
    )
    return replace(image, digest=found.digest)


def _make_index(reg: Registry, origin: Origin, index: PublishedIndex, ref: str) -> str:
    """The index of the platform images, by digest, made as ``ref`` and read back."""
    origin.make_index(index, ref)
    return _read_back(reg, ref, lambda s: s.is_index and _lists(s, index), _shown(index)).digest


def _finish(reg: Registry, origin: Origin, index: PublishedIndex, say: Say) -> PublishedIndex:
    images = []
    for image in index.images:
        if image.digest is None:
            image = _send(reg, origin, image)
            said = f"{origin.sent} {image.ref} ({image.platform}): {image.digest}"
            say(f"publish({index.group}): {said}")
        images.append(image)
    # every member is served now: read at the start, or pushed and read back
    pushed = any(image.pushed for image in index.images)
    index = replace(index, images=tuple(images))
    kept = [ref for ref in index.refs if ref not in index.written]
    for ref in kept if pushed else ():  # an index there already must list what was pushed
        found = reg.served(ref)
        if found is None:
            raise RegistryError(f"{ref} is gone from the registry since it was read")
        if not _lists(found, index):
            raise _refuse(ref, found, _shown(index))
    repository = registry_repository(index.refs[0])
    for ref in index.written:
        if index.digest is None:
            index = replace(index, digest=_make_index(reg, origin, index, ref))
            say(f"publish({index.group}): index {ref}: {index.digest}")
        else:
            reg.copy(f"{repository}@{index.digest}", ref)
            _read_back(reg, ref, index.digest_is, index.digest)
            say(f"publish({index.group}): tagged {ref}: {index.digest}")
    return index


def _record(ws: Workspace, registry: str, index: PublishedIndex, signed_by: str | None) -> None:
    signed = signed_by or None
    for image in index.images:
        record = PublishRecord(
            registry=registry,
            platform=image.platform,
            image_id=image.image_id,
            digest=cast(str, image.digest),
            tags=(image.ref,),
            index=Index(cast(str, index.digest), tuple(index.refs), signed),  # checked as written
            signed_by=signed,
        )
        write_part(ws, image.row, "publish", record)


def _plan_lines(index: PublishedIndex) -> list[str]:
    out = []
    for image in index.images:
        if image.pushed:
            came = f", from {image.source}" if image.source else ""
            out.append(
                f"publish({index.group}): would {origin_verb(image)} {image.ref} "
                f"({image.platform}, image {image.image_id}{came})"
            )
        else:
            out.append(f"publish({index.group}): {image.ref} is there: {image.digest}")
    for ref in index.refs:
        if ref not in index.written:
            out.append(f"publish({index.group}): {ref} is there: {index.digest}")
        elif index.digest is None and ref == index.written[0]:
            out.append(f"publish({index.group}): would make the index {ref}: {_shown(index)}")
        else:
            out.append(
                f"publish({index.group}): would tag {ref} as the index {index.digest or '(made above)'}"
            )
    return out


def publish_images(
    ws: Workspace,
    ids: Sequence[str] | None,
    registry: str | None,
    *,
    dry_run: bool = False,
    say: Say = print,
    reg: Registry | None = None,
    signing: ImageSigning | None = None,
    origin: Origin | None = None,
) -> list[PublishedIndex]:
    """Publish each variant asked (a row names its variant; all when None); what the
    registry serves afterwards (dry: before). ``signing``: sign each by that key;
    ``origin``: where the images come from (default: this engine)."""
    where = release_registry(ws, registry)
    reg = reg or Registry()
    origin = origin or EngineOrigin(ws)
    groups = list(dict.fromkeys(v.group for v in ws.variants(ids)))
    indexes = [_read_group(ws, reg, where, group, origin) for group in groups]  # read, then act
    if dry_run:
        for index in indexes:
            for line in _plan_lines(index):
                say(line)
            if signing:
                say(f"publish({index.group}): would sign each image and the index by {signing.key}")
        return indexes
    done = []
    for index in indexes:
        for image in index.images:
            if not image.pushed:
                say(f"publish({index.group}): {image.ref} is there: {image.digest}")
        for ref in index.refs:
            if ref not in index.written:
                say(f"publish({index.group}): {ref} is there: {index.digest}")
        index = _finish(reg, origin, index, say)
        if signing:  # every digest is known now: pushed or found, and read back
            images = [(i.ref, i.digest or "") for i in index.images]
            sign_published(signing, index.group, images, (index.digest or "", index.refs), say)
        _record(ws, where, index, signing.key if signing else None)
        done.append(index)
    return done

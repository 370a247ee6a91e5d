"""``images.publish``: each variant's image of this checkout in the release registry under
its tags, read back, and its digest recorded as the variant's ``publish`` part.

A variant's image ``NAME:v0.31.0rc1-cu129`` is published as
``REGISTRY/NAME:v0.31.0rc1-cu129`` (the default variant's also under ``v0.31.0rc1``).
The rules:

- **Read before anything is written.** Every tag of every variant asked is read from the
  registry first. A tag that is there and serves this image (its config digest is the
  image's id) is left as it is; a tag that is there with another image is refused with
  both digests (exit 3), and then nothing at all is pushed: an rc's tags are immutable.
- **One upload per image.** A variant's first missing tag is pushed by the engine
  (``docker push``: what the registry has is not sent again); its other tags are copied
  from that digest inside the registry. Each tag is read back and must serve the digest
  pushed, with this image's config; otherwise it is an error, never a success.
- **A re-run converges.** Stopped at any point (SIGKILL included), the next run reads
  what is there, keeps it, and pushes only what is missing: the registry puts a tag only
  when the whole image is there.
- ``--dry-run`` reads the registry and says what would be pushed and what is there,
  with digests; nothing leaves the machine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from release.adapters.process import last_line
from release.adapters.registry import Registry, RegistryError, Served
from release.core.matrix import Variant
from release.errors import RefusedError, UsageError
from release.images.manifest import write_part
from release.images.transfer import mismatch, registry_ref
from release.images.workspace import Workspace

__all__ = ["Published", "publish_images", "published_tags"]


@dataclass(frozen=True)
class Published:
    """One variant as the registry serves it after (or, dry, before) publishing."""

    variant: str
    image_id: str
    platform: str
    digest: str | None  # None: not there yet (a dry run)
    pushed: tuple[str, ...]  # tags written by this run (or that a dry run would write)
    there: tuple[str, ...]  # tags that served this image already

    @property
    def tags(self) -> tuple[str, ...]:
        return (*self.there, *self.pushed)


def published_tags(ws: Workspace, variant: Variant, registry: str) -> list[str]:
    """The registry references a variant is published under: ``NAME:VERSION-ID``, and
    for the default variant ``NAME:VERSION`` first (what users pull). Pure."""
    version = ws.source.image_version
    names = [f"{ws.matrix.name}:{version}-{variant.id}"]
    if variant.id == ws.matrix.default_variant:
        names.insert(0, f"{ws.matrix.name}:{version}")
    return [registry_ref(registry, name) for name in names]


def _where(ws: Workspace, given: str | None) -> str:
    registry = given or ws.matrix.registry
    if not registry:
        raise UsageError(
            "no release registry: pass --registry REGISTRY/PATH or set registry in "
            "[tool.release.images]"
        )
    return registry


@dataclass(frozen=True)
class _Plan:
    variant: Variant
    image: str  # the local tag
    image_id: str
    platform: str
    refs: tuple[str, ...]
    served: tuple[Served | None, ...]  # what each ref serves now


def _read(ws: Workspace, reg: Registry, ids: Sequence[str] | None, registry: str) -> list[_Plan]:
    """Every variant's image here and every tag as the registry serves it; a tag that
    serves another image refuses the whole run."""
    plans = []
    for variant in ws.variants(ids):
        image = ws.image(variant)
        data = ws.engine.inspect_image(image)
        if data is None:
            raise RefusedError(f"{image} is not here: build it first (release images.build)")
        labels = dict((data.get("Config") or {}).get("Labels") or {})
        wrong = mismatch(ws, variant.id, labels)
        if wrong:
            raise RefusedError(f"{image} is not this checkout's build: {wrong}")
        image_id = str(data["Id"])
        platform = "/".join(
            p for p in (data.get("Os"), data.get("Architecture"), data.get("Variant")) if p
        )
        refs = tuple(published_tags(ws, variant, registry))
        served = tuple(reg.served(ref) for ref in refs)
        for ref, found in zip(refs, served, strict=True):
            if found is not None and found.config != image_id:
                theirs = found.config or f"an index ({found.digest})"
                raise RefusedError(
                    f"{ref} is published already with another image: the registry serves "
                    f"{found.digest} (image {theirs}), this build is {image_id}; a published "
                    "tag is not moved (build the rc that was published, or tag a new rc)"
                )
        plans.append(_Plan(variant, image, image_id, platform, refs, served))
    return plans


def _push_first(ws: Workspace, reg: Registry, plan: _Plan, ref: str) -> Served:
    """The image's first upload, under ``ref``, read back."""
    ws.engine.tag(plan.image_id, [ref])
    try:
        result = ws.engine.push(ref)
    finally:
        ws.engine.remove_image(ref)  # the alias only: the image keeps its own tag
    if not result.ok:
        said = last_line(result.stderr or result.stdout, "no output")
        raise RegistryError(f"docker push {ref} failed: {said}")
    return _read_back(reg, ref, plan.image_id, None)


def _read_back(reg: Registry, ref: str, image_id: str, digest: str | None) -> Served:
    found = reg.served(ref)
    if found is None or found.config != image_id or (digest and found.digest != digest):
        got = "nothing" if found is None else f"{found.digest} (image {found.config})"
        want = digest or f"image {image_id}"
        raise RegistryError(f"{ref} does not read back as pushed: it serves {got}, not {want}")
    return found


def publish_images(
    ws: Workspace,
    ids: Sequence[str] | None,
    registry: str | None,
    *,
    dry_run: bool = False,
    say: Callable[[str], None] = print,
    reg: Registry | None = None,
) -> list[Published]:
    """Publish each variant asked (all when None); what the registry serves afterwards."""
    where = _where(ws, registry)
    reg = reg or Registry()
    plans = _read(ws, reg, ids, where)
    out = []
    for plan in plans:
        v = plan.variant.id
        there = [ref for ref, s in zip(plan.refs, plan.served, strict=True) if s is not None]
        missing = [ref for ref, s in zip(plan.refs, plan.served, strict=True) if s is None]
        digest = next((s.digest for s in plan.served if s is not None), None)
        for ref in there:
            say(f"publish({v}): {ref} is there: {digest}")
        if dry_run:
            for at, ref in enumerate(missing):
                if digest is not None:
                    source = f"copy of {digest}"
                else:
                    source = f"copy of {missing[0]}" if at else f"push of {plan.image_id}"
                say(f"publish({v}): would write {ref} ({source}, {plan.platform})")
            out.append(
                Published(v, plan.image_id, plan.platform, digest, tuple(missing), tuple(there))
            )
            continue
        pushed = []
        for ref in missing:
            if digest is None:
                digest = _push_first(ws, reg, plan, ref).digest
                say(f"publish({v}): pushed {ref}: {digest}")
            else:
                source = f"{ref.rsplit(':', 1)[0]}@{digest}"
                reg.copy(source, ref)
                _read_back(reg, ref, plan.image_id, digest)
                say(f"publish({v}): copied {ref}: {digest}")
            pushed.append(ref)
        assert digest is not None  # every variant has a tag
        done = Published(v, plan.image_id, plan.platform, digest, tuple(pushed), tuple(there))
        write_part(
            ws,
            v,
            "publish",
            {
                "registry": where,
                "platform": plan.platform,
                "image_id": plan.image_id,
                "digest": digest,
                "tags": list(plan.refs),
            },
        )
        out.append(done)
    return out

"""Images between CI jobs through a registry: ``images.push`` after a build job's session,
``images.pull`` before a smoke or snapshot job's.

A variant's image ``NAME:TAG`` travels as ``REGISTRY/NAME:TAG`` (``ci-registry`` in
``[tool.release.images]``, or ``--registry``); the alias is dropped again on both sides,
so only the image's own tag stays. A push also moves the row's cache tag there
(``REGISTRY/NAME:cache-<row>``), which the next build reads its layer cache from
(:mod:`release.images.build_cache`). A pulled image is used only when its labels say it
was built from this checkout's commit for this variant: a tag pushed by another
commit's job is refused, never smoked in its place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from release.adapters.image_info import ImageInfo
from release.adapters.process import last_line
from release.core.matrix import Variant
from release.core.pipelines import REVISION_LABEL, VARIANT_LABEL
from release.core.references import registry_ref
from release.errors import EngineError, RefusedError, UsageError
from release.images.workspace import Workspace

__all__ = ["mismatch", "pull_images", "push_images", "registry_ref"]


def _registry(ws: Workspace, given: str | None) -> str:
    registry = given or ws.matrix.ci_registry
    if not registry:
        raise UsageError(
            "no registry: pass --registry REGISTRY/PATH or set ci-registry in [tool.release.images]"
        )
    return registry


def mismatch(ws: Workspace, variant: str, labels: dict[str, str]) -> str:
    """Why an image with ``labels`` is not this checkout's build of ``variant``; ""."""
    want = ws.source.revision_label
    if labels.get(REVISION_LABEL) != want:
        return f"built from {labels.get(REVISION_LABEL) or 'an unknown commit'}, not {want}"
    if labels.get(VARIANT_LABEL) != variant:
        return f"built for variant {labels.get(VARIANT_LABEL)!r}, not {variant!r}"
    return ""


def _each(
    ws: Workspace, ids: Sequence[str] | None, registry: str | None
) -> Iterator[tuple[Variant, str, str]]:
    """(variant, its image here, the image in the registry) for each variant asked."""
    where = _registry(ws, registry)
    for variant in ws.variants(ids):
        image = ws.image(variant)
        yield variant, image, registry_ref(where, image)


def push_images(
    ws: Workspace,
    ids: Sequence[str] | None,
    registry: str | None,
    *,
    say: Callable[[str], None] = print,
) -> list[str]:
    """Push each variant's image of this checkout; the references pushed."""
    pushed = []
    for variant, image, remote in _each(ws, ids, registry):
        data = ws.engine.inspect_image(image)
        if data is None:
            raise RefusedError(
                f"{image} is not here: build it first (nox -s 'build({variant.id})')"
            )
        wrong = mismatch(ws, variant.id, dict(data.labels))
        if wrong:
            raise RefusedError(f"{image} is not this checkout's build: {wrong}")
        cache = registry_ref(_registry(ws, registry), ws.matrix.cache_tag(variant))
        ws.engine.tag(data.id, [remote, cache])
        try:
            for ref in (remote, cache):  # the cache tag second: its layers are there by then
                result = ws.engine.push(ref)
                if not result.ok:
                    said = last_line(result.stderr or result.stdout, "no output")
                    raise EngineError(f"docker push {ref} failed: {said}")
        finally:
            for ref in (remote, cache):  # the aliases only: the image keeps its own tag
                ws.engine.remove_image(ref)
        say(f"push({variant.id}): {image} -> {remote} (and {cache}, the next build's cache)")
        pushed.append(remote)
    return pushed


def pull_images(
    ws: Workspace,
    ids: Sequence[str] | None,
    registry: str | None,
    *,
    say: Callable[[str], None] = print,
) -> list[str]:
    """Pull each variant's image of this checkout and give it its own tag; the tags."""
    pulled = []
    for variant, image, remote in _each(ws, ids, registry):
        if not ws.engine.pull(remote):
            raise EngineError(
                f"cannot pull {remote}: not pushed by this commit's build job, or the "
                "registry refused (is this runner logged in?)"
            )
        try:
            data = ws.engine.inspect_image(remote) or ImageInfo("")
            wrong = mismatch(ws, variant.id, dict(data.labels))
            if wrong:
                raise RefusedError(f"{remote} is not this checkout's build: {wrong}; not used")
            ws.engine.tag(data.id, [image])
        finally:
            ws.engine.remove_image(remote)  # the alias only, once the image has its own tag
        say(f"pull({variant.id}): {remote} -> {image}")
        pulled.append(image)
    return pulled

"""A build's layer cache through a registry: BuildKit's inline cache.

Every build asked to use a cache (``images.build --cache-from REGISTRY/PATH``, or
``$RELEASE_CI_CACHE`` where the generated CI sets it to the transfer registry) is made
with ``BUILDKIT_INLINE_CACHE=1``, so the image carries its own cache record, and reads
the variant's cache image ``REGISTRY/PATH/NAME:cache-<row>`` (``--cache-from``), which
``images.push`` keeps up to date beside the image it pushes. BuildKit then takes a step's
layer from the registry where the step is unchanged, instead of running it again: a CI
runner that starts empty still reuses the earlier build's layers.

The cache is a help, never a condition: a cache image not there yet (the first build) is
said ("no cache yet") and the build goes on without one, as it does when the registry
cannot be read. The cache never enters the input digest: it changes how fast an image is
made, not what it is made of.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from release.adapters.registry import Registry
from release.core.matrix import ImageMatrix, Variant
from release.core.pipelines import CACHE_ENV
from release.core.references import registry_prefix, registry_ref
from release.errors import ReleaseError

__all__ = ["CACHE_ENV", "INLINE_CACHE", "BuildCache", "cache_ref", "cache_registry", "find_cache"]

INLINE_CACHE = "BUILDKIT_INLINE_CACHE"  # the build arg that has BuildKit keep the record


def cache_registry(given: str | None) -> str | None:
    """Where the cache is kept: ``--cache-from``, else ``$RELEASE_CI_CACHE``; None: no
    cache. Checked as every registry option is (it reaches docker as an argument)."""
    value = given if given is not None else os.environ.get(CACHE_ENV) or None
    if not value:
        return None
    where = "--cache-from" if given is not None else f"${CACHE_ENV}"
    return registry_prefix(value, where)


def cache_ref(registry: str, matrix: ImageMatrix, variant: Variant) -> str:
    """The row's cache image in ``registry``. Pure."""
    return registry_ref(registry, matrix.cache_tag(variant))


@dataclass(frozen=True)
class BuildCache:
    """How one build uses the cache: the image it reads (None: none) and what to say."""

    ref: str | None
    said: str


def find_cache(registry: str, matrix: ImageMatrix, variant: Variant, reg: Registry) -> BuildCache:
    """The row's cache image, where the registry has one."""
    ref = cache_ref(registry, matrix, variant)
    try:
        found = reg.served(ref)
    except ReleaseError as err:
        return BuildCache(None, f"cache not read ({err.one_line()}): building without it")
    if found is None:
        return BuildCache(None, f"no cache yet ({ref}): building without it")
    return BuildCache(ref, f"cache from {ref}")

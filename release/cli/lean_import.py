"""Importing invoke without the parts no command line of ``release`` runs.

Importing the ``invoke`` package loads three things that cost 40-60 ms of every command
and that ``release`` never uses:

- ``unittest.mock`` (with ``asyncio``), for ``MockContext``, a test helper;
- ``importlib.metadata``, to set ``invoke.__version__`` from its distribution;
- its vendored YAML library, read only to load ``invoke.yaml`` configuration files.

While :func:`lean_invoke` is active the first two are stand-ins and the third is loaded
lazily (:class:`importlib.util.LazyLoader`, on its first attribute access). A stand-in
hands over to the real module for anything else it is asked: ``Mock`` made later is the
real class, any other name of the stand-in's module comes from the real module, and
invoke's version is read from its distribution's ``METADATA`` (the real module reads it
when the file is not where an installer puts it). When it ends, the stand-ins leave
``sys.modules``, so a later ``import unittest.mock`` or ``import importlib.metadata``
loads the real module. A module already imported is left as it is.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import os
import sys
import types
from collections.abc import Callable, Iterator
from importlib.machinery import ModuleSpec
from typing import Any

__all__ = ["lean_invoke"]

LAZY = frozenset({"invoke.vendor.yaml"})


class _LazyFinder:
    """A meta path finder that gives the modules in ``names`` a lazy loader."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names

    def find_spec(self, name: str, path: Any, target: Any = None) -> ModuleSpec | None:
        if name not in self.names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = importlib.util.LazyLoader(spec.loader)  # type: ignore[arg-type]
        return spec


def _real(name: str) -> types.ModuleType:
    """The real module ``name``, its stand-in (if still there) out of the way."""
    if getattr(sys.modules.get(name), "__stand_in__", False):
        del sys.modules[name]
    return importlib.import_module(name)


def _stand_in(name: str, **attrs: Callable[..., Any]) -> types.ModuleType:
    module = types.ModuleType(name, f"stand-in for {name} (release.cli.lean_import)")
    module.__dict__.update(attrs, __stand_in__=True)

    def other(attr: str) -> Any:  # PEP 562: any other name of the module is the real one's
        if attr.startswith("__"):  # what the import system asks of every module
            raise AttributeError(attr)
        return getattr(_real(name), attr)

    module.__getattr__ = other  # type: ignore[method-assign]
    return module


def _mock(*args: Any, **kwargs: Any) -> Any:
    return _real("unittest.mock").Mock(*args, **kwargs)


def _version(distribution: str) -> str:
    """``importlib.metadata.version``, read from the first ``<name>-<version>.dist-info``
    directory on ``sys.path`` that names ``distribution``; anything else asks the real
    module."""
    prefix = distribution.replace("-", "_").lower() + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        found = [n for n in names if n.lower().startswith(prefix) and n.endswith(".dist-info")]
        if len(found) == 1:
            with (
                contextlib.suppress(OSError),
                open(os.path.join(entry or ".", found[0], "METADATA"), encoding="utf-8") as text,
            ):
                for line in text:
                    if line.startswith("Version:"):
                        return line.partition(":")[2].strip()
                    if not line.strip():
                        break
        if found:
            break
    version: str = _real("importlib.metadata").version(distribution)
    return version


@contextlib.contextmanager
def lean_invoke() -> Iterator[None]:
    """Import invoke (and what imports it) inside this block."""
    stand_ins: dict[str, dict[str, Callable[..., Any]]] = {
        "unittest.mock": {"Mock": _mock},
        "importlib.metadata": {"version": _version},
    }
    placed = {
        name: _stand_in(name, **attrs)
        for name, attrs in stand_ins.items()
        if name not in sys.modules
    }
    sys.modules.update(placed)
    finder = _LazyFinder(LAZY)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name, module in placed.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]

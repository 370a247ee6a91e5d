"""Regular expressions compiled when first used, not when their module is imported.

A command that never parses a commit (``status``, ``notes`` answered from the notes
cache) still imports the modules that do; their patterns are made with
:func:`lazy_pattern` so importing them compiles nothing. The first use compiles the
pattern and binds its methods on the object, so later uses cost what a compiled
pattern's do."""

from __future__ import annotations

import re
from typing import cast

__all__ = ["lazy_pattern"]

_METHODS = ("match", "fullmatch", "search", "sub", "subn", "split", "findall", "finditer")


class _Lazy:
    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern, self.flags = pattern, flags

    def __getattr__(self, name: str) -> object:  # only for what is not bound yet
        compiled = re.compile(self.pattern, self.flags)
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)


def lazy_pattern(pattern: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, done at the pattern's first use."""
    return cast("re.Pattern[str]", _Lazy(pattern, int(flags)))

"""JSON read from files and processes the tool does not control (manifest parts, state
files under ``.git/release``, caches, what an image prints): one seam, so that a document
nested too deeply for the parser is refused like any other that is not JSON. Pure.

``json.loads`` raises ``RecursionError`` on ``"[" * 100000``; here that is a
``ValueError``, which every reader already turns into its own one-line error (or, for a
cache, into "nothing kept").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["JSONValue", "TooDeep", "parse_json"]

# A JSON document as Python holds it (what json.loads gives, what json.dumps takes).
JSONValue = str | int | float | bool | None | list["JSONValue"] | dict[str, "JSONValue"]


class TooDeep(ValueError):
    """A JSON document nested too deeply for the parser."""


def parse_json(text: str | bytes, *, object_pairs_hook: Callable[..., Any] | None = None) -> Any:
    """``json.loads(text)``; a document nested too deeply to parse is a ``ValueError``.
    ``object_pairs_hook`` as ``json.loads`` takes it (what it raises is raised)."""
    try:
        return json.loads(text, object_pairs_hook=object_pairs_hook)
    except RecursionError:
        raise TooDeep("nested too deeply to be read") from None

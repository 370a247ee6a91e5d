"""JSON read from files and processes the tool does not control (manifest parts, state
files under ``.git/release``, caches, what an image prints): one seam, so that a document
nested too deeply for the parser is refused like any other that is not JSON. Pure.

``json.loads`` raises ``RecursionError`` on ``"[" * 100000``; here that is a
``ValueError``, which every reader already turns into its own one-line error (or, for a
cache, into "nothing kept"). A reader that hands the document on to code that recurses
(a schema's messages, ``copy.deepcopy``, ``json.dumps``) bounds its depth (``max_depth``)
far below the interpreter's limit, so nothing after the read meets it either.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["JSONOut", "JSONValue", "TooDeep", "parse_json"]

# A JSON document as Python holds it (what json.loads gives, what json.dumps takes).
JSONValue = str | int | float | bool | None | list["JSONValue"] | dict[str, "JSONValue"]
# A document being made to be written (a pipeline, a bake file): its containers read-only
# in the type, so a list of steps or a table of strings is one as it is (JSONValue's list
# and dict are invariant: a ``list[str]`` is not a ``list[JSONValue]``).
JSONOut = str | int | float | bool | None | Sequence["JSONOut"] | Mapping[str, "JSONOut"]


class TooDeep(ValueError):
    """A JSON document nested too deeply for the parser."""


def parse_json(
    text: str | bytes,
    *,
    object_pairs_hook: Callable[[list[tuple[str, JSONValue]]], object] | None = None,
    max_depth: int | None = None,
) -> Any:
    """``json.loads(text)``; a document nested too deeply to parse, or (``max_depth``) more
    levels deep than that, is a ``ValueError``. ``object_pairs_hook`` as ``json.loads``
    takes it (what it raises is raised)."""
    import json  # (here: a command that reads no JSON, status among them, never imports it)

    try:
        document = json.loads(text, object_pairs_hook=object_pairs_hook)
    except RecursionError:
        raise TooDeep("nested too deeply to be read") from None
    if max_depth is not None and _deeper_than(document, max_depth):
        raise TooDeep(f"nested more than {max_depth} levels deep")
    return document


def _deeper_than(document: object, levels: int) -> bool:
    """Whether ``document`` has more than ``levels`` levels of arrays and objects, found
    without recursion (a scalar is none, ``[]`` one)."""
    stack = [(document, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            inside = list(node.values())
        elif isinstance(node, list):
            inside = node
        else:
            continue
        if depth > levels:
            return True
        stack.extend((child, depth + 1) for child in inside)
    return False

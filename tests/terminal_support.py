"""Text that forges a terminal's output (a cursor moved up and a line erased, then a verdict
written over it), as it must be shown escaped, and the characters a terminal or a reader
obeys, by Unicode's own categories."""

from __future__ import annotations

import unicodedata

FORGED = "reproduce v0.1.0rc1: match"
CURSOR = "\x1b[1A\x1b[2K"  # up a line, erase it
SHOWN = f"version\\x1b[1A\\x1b[2K\\n{FORGED}"  # the same, escaped
# what a terminal or a reader of text obeys, by Unicode's own categories (not the module's)
_FORMAT = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


_SEPARATORS = {"\u2028", "\u2029"}


def controls(text: str, *, but: str = "") -> list[str]:
    return [
        c
        for c in text
        if c not in but and (unicodedata.category(c) == "Cc" or c in _FORMAT or c in _SEPARATORS)
    ]

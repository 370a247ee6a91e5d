"""YAML text for generated files, written by hand so it reads the same on every machine.

Block style for mappings and lists; every string is a double-quoted scalar (JSON's
escapes are YAML's), so no value is read as a boolean, a number or a null by any YAML
1.1 or 1.2 reader (``on``, ``yes``, ``12.9`` stay strings). Keys are plain only where
that is unambiguous. A header comment stays one comment line each, whatever it carries: a
character that is not printable (a newline, a carriage return, a Unicode line separator)
is written escaped, so nothing in it can end the comment and start YAML; so is the comment
a :class:`Commented` string carries after its value (a ``permissions`` entry says why it is
granted). Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

__all__ = ["Commented", "dump_yaml"]

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
# words some YAML reader takes for a boolean or a null (YAML 1.1 is the wider set)
_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


class Commented(str):
    """A string written with a comment after it on its line; equal to the plain string,
    and read back as it."""

    comment: str

    def __new__(cls, value: str, comment: str) -> Commented:
        made = super().__new__(cls, value)
        made.comment = comment
        return made

    def __getnewargs__(self) -> tuple[str, str]:  # type: ignore[override]
        return str(self), self.comment


def _key(key: str) -> str:
    if _PLAIN_KEY.match(key) and key.lower() not in _RESERVED:
        return key
    return json.dumps(key)


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, Commented):
        return f"{json.dumps(str(value))}  # {_comment(value.comment)}"
    if isinstance(value, str):
        return json.dumps(value)
    raise TypeError(f"no YAML for {type(value).__name__}")


def _empty(value: object) -> str | None:
    if isinstance(value, Mapping) and not value:
        return "{}"
    if isinstance(value, list | tuple) and not value:
        return "[]"
    return None


def _lines(value: object, indent: int) -> list[str]:
    pad = " " * indent
    out: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"YAML keys here are strings, not {key!r}")
            short = _empty(item)
            if short is not None or not isinstance(item, Mapping | list | tuple):
                out.append(f"{pad}{_key(key)}: {short or _scalar(item)}")
            else:
                out.append(f"{pad}{_key(key)}:")
                out += _lines(item, indent + 2)
        return out
    if isinstance(value, Sequence) and not isinstance(value, str):
        for item in value:
            short = _empty(item)
            if short is not None or not isinstance(item, Mapping | list | tuple):
                out.append(f"{pad}- {short or _scalar(item)}")
                continue
            inner = _lines(item, indent + 2)
            out.append(f"{pad}- {inner[0].lstrip()}")  # the first key on the dash's line
            out += inner[1:]
        return out
    return [pad + _scalar(value)]


def _comment(text: str) -> str:
    """``text`` with every character that is not printable escaped (``\\n``, ``\\u2028``)."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def dump_yaml(document: Mapping[str, object], header: Sequence[str] = ()) -> str:
    """``document`` as YAML text, after ``header`` as comment lines."""
    comments = [f"# {_comment(line)}".rstrip() for line in header]
    return "\n".join([*comments, *_lines(document, 0)]) + "\n"

"""The release manifest's records to JSON and back, driven by their dataclass fields. Pure.

A record declares its fields once (:mod:`release.core.manifest_records`); :func:`decode`
and :func:`encode` read the field's type (``dataclasses.fields`` and the type hints) and
do the rest:

- ``str``, ``int``, ``float``, ``bool``: the JSON value as it is (an ``int`` where a
  ``float`` is declared stays an ``int``, so it is written back as it was read);
- a record (a dataclass): a JSON object, decoded field by field;
- ``X | None``: an optional key. A field with a default is left out of the document when
  it is None (the schema's optional keys: never ``null``); one without (a release's
  ``tag``) is always written, ``null`` included;
- ``tuple[X, ...]``: an array; ``Mapping[str, X]``: an object of one value type;
  ``Mapping[str, JSONValue]``: a part shaped by another tool, kept as the JSON it is;
- ``field(metadata=json_key("k"))``: the JSON key where it is not the field's name.

Invariant: ``encode(decode(cls, document)) == document`` for every document the records
admit. A document they do not admit (a key no field declares, a required key left out, a
value of another type) is :class:`ManifestError`, in the words the schema's checker uses
(``where: 5 is not of type 'string'``), naming where, as
:func:`release.core.manifest.check` does; that check runs first at every edge, so this is
the second line, for a document made elsewhere.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Mapping
from typing import TypeVar

from release.core.json_text import JSONValue
from release.errors import ExitCode, ReleaseError

__all__ = ["JSON_KEY", "ManifestError", "decode", "encode", "json_key"]

JSON_KEY = "json_key"  # a field's metadata: its key in the JSON document
R = TypeVar("R")
# what a JSON value is called in the schema's messages
_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


class ManifestError(ReleaseError):
    """A manifest or part that is not valid, disagrees with another or is incomplete."""

    exit_code = ExitCode.EVIDENCE


def json_key(key: str) -> dict[str, str]:
    """A field's metadata naming its JSON key: ``field(metadata=json_key("tool"))``."""
    return {JSON_KEY: key}


@dataclasses.dataclass(frozen=True)
class _Field:
    name: str  # the attribute
    key: str  # the JSON key
    kind: object  # the type hint, ``| None`` taken off
    optional: bool  # ``| None`` was declared
    omitted: bool  # left out of the document when None (it has a default)


@functools.cache
def _fields(cls: type) -> tuple[_Field, ...]:
    hints = typing.get_type_hints(cls)
    out = []
    for field in dataclasses.fields(cls):
        kind, optional = _unoptional(hints[field.name])
        default = field.default is not dataclasses.MISSING
        key = field.metadata.get(JSON_KEY, field.name)
        out.append(_Field(field.name, key, kind, optional, optional and default))
    return tuple(out)


def _unoptional(hint: object) -> tuple[object, bool]:
    if isinstance(hint, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return hint, False


def encode(record: object) -> dict[str, JSONValue]:
    """The JSON document of ``record`` (a dataclass the records declare)."""
    out: dict[str, JSONValue] = {}
    kind: type = type(record)
    for field in _fields(kind):
        value = getattr(record, field.name)
        if value is None and field.omitted:
            continue
        out[field.key] = _encode(value)
    return out


def _encode(value: object) -> JSONValue:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return encode(value)
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _encode(v) for k, v in value.items()}
    return typing.cast(JSONValue, value)  # str, int, float, bool, None


def decode(cls: Callable[..., R], document: object, what: str, where: tuple[str, ...] = ()) -> R:
    """The record ``cls`` of ``document``; :class:`ManifestError` naming ``what`` and where
    in it (``where``: the keys above ``document``) it is not one."""
    record = typing.cast(type, cls)
    given = _object(document, what, where)
    declared = _fields(record)
    extra = [key for key in given if key not in {f.key for f in declared}]
    if extra:
        said = f"{', '.join(map(repr, extra))} {'was' if len(extra) == 1 else 'were'}"
        _refuse(what, where, f"Additional properties are not allowed ({said} unexpected)")
    values: dict[str, object] = {}
    for field in declared:
        if field.key not in given:
            if not field.omitted:
                _refuse(what, where, f"{field.key!r} is a required property")
            continue
        value = given[field.key]
        if value is None and field.optional and not field.omitted:  # written as null
            values[field.name] = None
        else:
            values[field.name] = _decode(field.kind, value, what, (*where, field.key))
    return cls(**values)


def _decode(kind: object, value: object, what: str, where: tuple[str, ...]) -> object:
    if isinstance(kind, types.UnionType):  # JSONValue: the schema says what it holds
        return value
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return decode(kind, value, what, where)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is tuple:
        items = enumerate(_array(value, what, where))
        return tuple(_decode(args[0], v, what, (*where, str(i))) for i, v in items)
    if origin is Mapping:
        table = _object(value, what, where)
        return {k: _decode(args[1], v, what, (*where, k)) for k, v in table.items()}
    return _scalar(kind, value, what, where)


def _scalar(kind: object, value: object, what: str, where: tuple[str, ...]) -> object:
    wanted = typing.cast(type, kind)
    # JSON's true is no integer, and an integer is a number
    fits = isinstance(value, wanted) and (wanted is bool or not isinstance(value, bool))
    if wanted is float:
        fits = isinstance(value, int | float) and not isinstance(value, bool)
    if not fits:
        name = _JSON_TYPES.get(wanted, wanted.__name__)
        _refuse(what, where, f"{value!r} is not of type {name!r}")
    return value


def _object(value: object, what: str, where: tuple[str, ...]) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        _refuse(what, where, f"{value!r} is not of type 'object'")
    return value


def _array(value: object, what: str, where: tuple[str, ...]) -> list[object]:
    if not isinstance(value, list | tuple):
        _refuse(what, where, f"{value!r} is not of type 'array'")
    return list(value)


def _refuse(what: str, where: tuple[str, ...], message: str) -> typing.NoReturn:
    """Said as :func:`release.core.manifest.check` says what the schema refuses."""
    place = ".".join(where) or "(top level)"
    message = message if len(message) <= 160 else message[:157] + "..."
    raise ManifestError(f"{what}: not a valid release manifest: {place}: {message}")

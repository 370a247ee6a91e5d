"""Values read from a TOML table of the configuration, each wrong one a
:class:`~release.errors.ConfigError` that names its key (``where``). Pure."""

from __future__ import annotations

from collections.abc import Mapping

from release.core.serving import parse_timeout
from release.errors import ConfigError

__all__ = ["argv_value", "seconds_value", "string_value"]


def string_value(
    table: Mapping[str, object], key: str, where: str, *, required: bool = False
) -> str | None:
    """A non-empty string, or None where the key is absent (and not required)."""
    if key not in table:
        if required:
            raise ConfigError(f"{where}: missing (required)")
        return None
    value = table[key]
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: expected a non-empty string, got {value!r}")
    return value


def argv_value(value: object, where: str) -> tuple[str, ...]:
    """A command line: a non-empty list of strings."""
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a non-empty list of strings (argv)")
    return tuple(value)


def seconds_value(table: Mapping[str, object], key: str, where: str, default: float) -> float:
    """A positive number of seconds, ``default`` where the key is absent."""
    return parse_timeout(table.get(key, default), where)

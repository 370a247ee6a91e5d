"""The sample engine's image matrix as its pyproject.toml declares it, and the one-line
error a table the matrix refuses gives."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

import pytest

from release.core.matrix import parse_images
from release.errors import ConfigError

SAMPLE = Path(__file__).resolve().parents[1] / "release" / "sample" / "engine"


def sample_table() -> dict[str, Any]:
    """The sample engine's [tool.release.images], as loaded from its pyproject.toml."""
    with (SAMPLE / "pyproject.toml").open("rb") as f:
        return copy.deepcopy(tomllib.load(f)["tool"]["release"]["images"])


def config_error(table: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as info:
        parse_images(table)
    message = info.value.one_line()
    assert "\n" not in message
    assert info.value.exit_code == 2
    return message

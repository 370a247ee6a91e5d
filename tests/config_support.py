"""``release --config FILE``: a command run with a configuration kept outside the tree, its
exit code checked, and the status it reports so."""

from __future__ import annotations

import json
from pathlib import Path

from release.sample import SampleEngine
from tests.conftest import CliResult, run_cli


def run(engine: SampleEngine, config: Path, *args: str, code: int = 0) -> CliResult:
    result = run_cli(engine.root, "--config", str(config), *args)
    assert result.code == code, result.output
    return result


def status(engine: SampleEngine, config: Path) -> dict:
    return json.loads(run(engine, config, "status", "--json").stdout)

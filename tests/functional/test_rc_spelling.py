"""The rc spelling of a tag is data: ``rc-spelling = "-rc{n}"`` tags ``v0.1.0-rc1`` (PyTorch's
spelling, which its wheel and docs workflows fire on), numbers the next rc from tags in any
spelling, and the final is promoted from it."""

from __future__ import annotations

from release.sample import SampleEngine
from tests.conftest import run_cli


def _configure(engine: SampleEngine, spelling: str) -> None:
    pyproject = engine.root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    text = text.replace(
        'version-scheme = "pep440"\n', f'version-scheme = "pep440"\nrc-spelling = "{spelling}"\n'
    )
    pyproject.write_text(text, encoding="utf-8")
    engine.repo.run("commit", "--quiet", "-am", "[CI/Build] Tag rcs as -rcN")


def test_rcs_are_tagged_as_configured_and_promoted(cut_engine: SampleEngine) -> None:
    engine = cut_engine
    _configure(engine, "-rc{n}")
    first = run_cli(engine.root, "tag")
    assert first.code == 0, first.output
    assert "tagged v0.1.0-rc1" in first.stdout
    (engine.root / "NEWS").write_text("more\n")
    engine.repo.run("add", "NEWS")
    engine.repo.run("commit", "--quiet", "-m", "[Doc] News")
    engine.repo.run("tag", "v0.1.0rc2", "HEAD~1")  # one tagged by hand, the other spelling
    second = run_cli(engine.root, "tag")
    assert second.code == 0, second.output
    assert "tagged v0.1.0-rc3" in second.stdout  # counted past rc2, whatever its spelling
    tags = engine.repo.run("tag", "--list", "v0.1.0*").stdout.split()
    assert sorted(tags) == ["v0.1.0-rc1", "v0.1.0-rc3", "v0.1.0rc2"]
    promoted = run_cli(engine.root, "promote", "--offline")
    assert promoted.code == 0, promoted.output
    assert "tagged v0.1.0 on v0.1.0-rc3" in promoted.stdout


def test_an_unknown_spelling_is_refused(cut_engine: SampleEngine) -> None:
    _configure(cut_engine, "-RC{n}")
    refused = run_cli(cut_engine.root, "status", "--offline")
    assert refused.code == 2
    assert "rc-spelling: '-RC{n}' is not one of rc{n}, -rc{n}, -rc.{n}" in refused.stderr

"""An image command reads the version it runs for once: where the run is opened (the
workspace, the manifest's checkout, the bake), parsed from ``--version`` or taken from the
tag at HEAD, and passed on as a value. Counted here by wrapping the parsing function
(:func:`release.core.versions.parse_version`) wherever the package bound it, for each
image command run in this process against a real engine, with and without ``--version``."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator

import pytest

from release.adapters.engine import ContainerEngine
from release.adapters.registry_server import LocalRegistry
from release.cli.dispatch import execute
from release.commands.outcome import Outcome, Run
from release.commands.registry import by_name
from release.core import versions
from tests.docker_support import purge
from tests.engine_support import Repo, images, sample_repo

VERSION = "0.1.0rc1"  # the sample's tag, v0.1.0rc1, is on HEAD


@pytest.fixture(scope="module")
def cu130_built(
    docker: ContainerEngine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Repo]:
    """The sample engine, tagged, with its default variant built (the others are not asked
    for here)."""
    repo = sample_repo(tmp_path_factory)
    try:
        built = repo.release("images.build", "--variant", "cu130", timeout=900)
        assert built.code == 0, built.output
        yield repo
    finally:
        purge(docker, repo.name, repo.head)


def parses_of(text: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each parse of ``text`` (with or without its ``v``) from now on, as the caller's
    ``module:line``: :func:`parse_version` wrapped in every module of the package that
    holds it (the tag listings call it through :mod:`release.core.versions` itself)."""
    original = versions.parse_version
    seen: list[str] = []

    def counted(given: str, *args: object, **kwargs: object) -> versions.ReleaseVersion:
        if given.strip().removeprefix("v") == text:
            caller = sys._getframe(1)
            seen.append(f"{caller.f_globals.get('__name__')}:{caller.f_lineno}")
        return original(given, *args, **kwargs)  # type: ignore[arg-type]

    for name, module in list(sys.modules.items()):
        if name.split(".")[0] == "release" and getattr(module, "parse_version", None) is original:
            monkeypatch.setattr(module, "parse_version", counted)
    return seen


def run_command(repo: Repo, name: str, *args: str, monkeypatch: pytest.MonkeyPatch) -> Outcome:
    """``release <name> <args>`` in this process, as the console script would run it."""
    from release.cli.arguments import parser_of

    command = by_name()[name]
    for key, value in repo.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(repo.root)
    values = vars(parser_of(command).parse_args(list(args)))
    said: list[str] = []
    return execute(command, values, Run(repo.root, said.append))


# each image command that opens a run, with what it needs to run here; --version is added
Runs = Callable[[LocalRegistry], list[str]]
CU130 = ["--variant", "cu130"]
COMMANDS: dict[str, Runs] = {
    "images.build": lambda _: CU130,  # unchanged: not built again
    "images.smoke": lambda _: CU130,
    "images.snapshot": lambda _: [*CU130, "--dry-run"],
    "images.push": lambda reg: [*CU130, "--registry", f"{reg.address}/transfer"],
    "images.publish": lambda reg: [*CU130, "--registry", f"{reg.address}/rel", "--dry-run"],
    # the parts recorded so far, merged: the manifest's checkout opens the run
    "manifest": lambda _: ["--partial", "--no-record"],
}


@images
@pytest.mark.parametrize("given", [True, False], ids=["--version", "from the tag"])
@pytest.mark.parametrize("name", list(COMMANDS))
def test_an_image_command_parses_its_version_once(
    name: str,
    given: bool,
    cu130_built: Repo,
    registry: LocalRegistry,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args = COMMANDS[name](registry) + (["--version", VERSION] if given else [])
    seen = parses_of(VERSION, monkeypatch)
    outcome = run_command(cu130_built, name, *args, monkeypatch=monkeypatch)
    assert int(outcome.exit_code) == 0, outcome.error
    assert len(seen) == 1, seen


@images
def test_a_floor_that_parses_the_version_again_is_counted(
    cu130_built: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The count can fail: a source reader that parsed the version it was handed again
    (as the image floor did before it was given the value) makes it two."""
    from release.images import source, workspace

    read = source.read_source

    def parsing_again(ctx: object, version: object = None, **flags: bool) -> source.BuildSource:
        found = read(ctx, version, **flags)  # type: ignore[arg-type]
        versions.parse_version(found.version)
        return found

    seen = parses_of(VERSION, monkeypatch)
    monkeypatch.setattr(workspace, "read_source", parsing_again)
    args = [*CU130, "--dry-run", "--version", VERSION]
    run_command(cu130_built, "images.snapshot", *args, monkeypatch=monkeypatch)
    assert len(seen) == 2, seen

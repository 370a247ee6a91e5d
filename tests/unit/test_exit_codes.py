"""Exit codes are one enum (:class:`release.errors.ExitCode`): every error carries one of its
members, the manual's exit codes page (``docs/gen_reference.py``) lists exactly its values,
and no module names an exit code as a bare integer."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import re
import sys
from pathlib import Path
from types import ModuleType

import release
from release import errors
from release.errors import ExitCode, ReleaseError

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "release"
# names under which a module holds or passes an exit code
CODE_NAMES = {"exit_code", "code"}


def _error_classes() -> list[type[BaseException]]:
    import importlib
    import pkgutil

    for info in pkgutil.walk_packages(release.__path__, "release."):
        if ".sample.engine" not in info.name:
            importlib.import_module(info.name)
    found: list[type[BaseException]] = []
    pending: list[type[BaseException]] = [ReleaseError, errors.Terminated]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending += cls.__subclasses__()
    return found


def test_every_error_exits_with_a_member_of_the_enum() -> None:
    classes = [c for c in _error_classes() if c.__module__.startswith("release.")]
    assert len(classes) > 10  # the core's evidence errors, the workflows' and the adapters'
    wrong = [
        c.__qualname__
        for c in classes
        if not isinstance(c.__dict__.get("exit_code", ExitCode.OK), ExitCode)
    ]
    assert not wrong, wrong


def _reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_reference", ROOT / "docs" / "gen_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _page_codes(page: str) -> set[int]:
    return {int(n) for n in re.findall(r"^\| \[`(\d+)`\]", page, re.MULTILINE)}


def test_the_exit_codes_page_lists_exactly_the_exit_codes() -> None:
    page = _reference().exit_codes_page()
    assert _page_codes(page) == {int(c) for c in ExitCode}


def test_a_code_the_enum_lacks_is_found_on_the_page() -> None:
    page = _reference().exit_codes_page() + "\n| [`9`](#exit-9) | quota |\n"
    assert _page_codes(page) - {int(c) for c in ExitCode} == {9}


def bare_codes(source: str) -> list[int]:
    """Lines where an exit code is named as an integer literal: ``exit_code = 7``,
    ``code = 2``, ``Exit(code=2)``, ``return 130`` from a function that returns an exit
    code (its name says so: ``*_code``, ``run``, ``main``, ``dispatch``, ``_failed``)."""
    found = []

    def literal(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Constant) and type(node.value) is int

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id if isinstance(t, ast.Name) else getattr(t, "attr", "") for t in targets}
            if names & CODE_NAMES and literal(node.value):
                found.append(node.lineno)
        elif isinstance(node, ast.keyword) and node.arg in CODE_NAMES and literal(node.value):
            found.append(node.value.lineno)
        elif isinstance(node, ast.FunctionDef) and _returns_a_code(node):
            found += [
                r.lineno for r in ast.walk(node) if isinstance(r, ast.Return) and literal(r.value)
            ]
    return sorted(found)


def _returns_a_code(func: ast.FunctionDef) -> bool:
    wanted = func.name.endswith("_code") or func.name in ("run", "main", "dispatch", "_failed")
    return wanted and isinstance(func.returns, ast.Name) and func.returns.id in ("int", "ExitCode")


def test_bare_codes_finds_each_way_of_naming_a_code_as_an_integer() -> None:
    source = inspect.cleandoc(
        """
        class E(Exception):
            exit_code = 7
        def run(argv: list[str]) -> int:
            code = 2
            raise Exit(code=3)
            return 130
        def elsewhere() -> int:
            return 1
        """
    )
    assert bare_codes(source) == [2, 4, 5, 6]
    assert bare_codes("class E(Exception):\n    exit_code = ExitCode.USAGE\n") == []


def test_no_module_names_an_exit_code_as_an_integer() -> None:
    found = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if "engine" not in path.relative_to(PACKAGE).parts[1:2]
        if (lines := bare_codes(path.read_text(encoding="utf-8")))
    }
    assert not found, found

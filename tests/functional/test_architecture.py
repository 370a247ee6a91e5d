"""The architecture as a contract: the folders are the layers, and imports only point down.

Layers, bottom to top: ``errors`` (and the package root), ``core`` (pure values and
rules), ``adapters`` (processes, git, docker, files), ``flows`` (git workflows),
``images`` (image workflows), ``sample`` (the bundled engine and the rehearsal), ``commands``
(one function per command: typed request in, typed outcome out), ``cli``
(invoke tasks, console script, nox sessions). A module may import its own layer and the
layers below it, never one above; no import cycle, lazy imports included; no private name
crosses a module boundary; only adapters start processes; every module imports on its own
in a fresh interpreter; ``Any`` in a public signature only where the allow-list says why.

One test per rule, each over every module at once: a rule is a function from a module's
name and source to what is wrong with it (``each_module`` gathers those as "module: what"
lines), so a failure lists every violation, and each rule is shown reporting a synthetic
module that breaks it.
"""

from __future__ import annotations

import ast
import functools
import graphlib
import re
import subprocess
import sys
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "release"
LAYERS = ("errors", "core", "adapters", "flows", "images", "sample", "commands", "cli")
# Runs inside an image (sent to ``python3 -``), not in this process: it may start processes.
IN_IMAGE = {"release.images.snapshot_probe"}
PROCESS_MODULES = {"subprocess", "git", "multiprocessing", "pty"}
MAX_LINES = 450  # "about 400": a module past this mixes concerns


Source = Path | str  # a module's file, or its text in the tests that show a rule failing
Check = Callable[[str, Source], list[str]]  # a rule: what is wrong with one module


def each_module(check: Check, sources: Mapping[str, Source]) -> list[str]:
    """Every violation of one rule over the modules, at once: one "module: what" line each."""
    return [
        f"{module}: {what}"
        for module, source in sorted(sources.items())
        for what in check(module, source)
    ]


def _report(found: list[str], rule: str) -> str:
    return f"{len(found)} breaking the rule that {rule}:\n" + "\n".join(found)


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        if "engine" in rel.parts[1:3] and rel.parts[1] == "sample":
            continue  # the sample engine is data: it runs inside its images
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("errors", "__main__"):
        return LAYERS.index("cli") if parts[-1] == "__main__" else 0
    return LAYERS.index(parts[1])


# Every module is read by each check below: its text and its tree are made once (the
# checks only read a tree).
@functools.cache
def _text(source: Path | str) -> str:
    return source.read_text(encoding="utf-8") if isinstance(source, Path) else source


@functools.cache
def _tree(source: Path | str) -> ast.Module:
    return ast.parse(_text(source))


@functools.cache
def _imports(source: Path | str) -> tuple[tuple[str, tuple[str, ...], int], ...]:
    """(module, names, line) for every import in a file (or source text), lazy and
    TYPE_CHECKING ones too."""
    out: list[tuple[str, tuple[str, ...], int]] = []
    for node in ast.walk(_tree(source)):
        if isinstance(node, ast.Import):
            out += [(alias.name, (), node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = tuple(alias.name for alias in node.names)
            out.append((node.module, names, node.lineno))
    return tuple(out)


def _targets(module: str, names: tuple[str, ...]) -> list[str]:
    """The project modules an import statement loads (``from release.x import y``: y if it is
    a module, else x)."""
    if module != "release" and not module.startswith("release."):
        return []
    found = [f"{module}.{name}" for name in names if f"{module}.{name}" in MODULES]
    return found or ([module] if module in MODULES else [])


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        graph[module] = {
            target
            for imported, names, _ in _imports(path)
            for target in _targets(imported, names)
            if target != module
        }
    return graph


def test_every_folder_is_a_known_layer() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == set(LAYERS) - {"errors"}


def upward(module: str, source: Path | str) -> list[str]:
    return [
        f"line {line}: {LAYERS[_layer(module)]} imports {target} ({LAYERS[_layer(target)]})"
        for imported, names, line in _imports(source)
        for target in _targets(imported, names)
        if _layer(target) > _layer(module)
    ]


def cycle(graph: Mapping[str, set[str]]) -> list[str]:
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as err:
        return list(err.args[1])
    return []


def _reachable(graph: Mapping[str, set[str]], start: str) -> set[str]:
    """The modules ``start`` loads through one import or more (itself only through a cycle)."""
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


def cycles(graph: Mapping[str, set[str]]) -> list[str]:
    """Every set of modules that import one another (a strongly connected set), each with
    one cycle through it: as strict as ``cycle``, which stops at the first."""
    reach = {module: _reachable(graph, module) for module in graph}
    tangles = {
        frozenset(other for other in reach[module] if module in reach[other])
        for module in graph
        if module in reach[module]
    }
    return [
        f"{', '.join(sorted(tangle))}: {' -> '.join(cycle({m: graph[m] & tangle for m in tangle}))}"
        for tangle in sorted(tangles, key=sorted)
    ]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def borrowed(source: Path | str) -> list[str]:
    """Private names taken from another module: imported by name, or read off a module
    imported whole (``import release.x as x`` ... ``x._y``)."""
    tree = _tree(source)
    found, modules = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("release"):
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"line {node.lineno}: {alias.name} from {node.module}")
                elif f"{node.module}.{alias.name}" in MODULES:
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            modules.update(a.asname for a in node.names if a.asname and a.name in MODULES)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name):
            continue
        if node.value.id in modules and _private(node.attr):
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    return found


def borrowed_names(module: str, source: Path | str) -> list[str]:
    return borrowed(source)  # the rule is the same whatever module reads it


def process_imports(module: str, source: Path | str) -> list[str]:
    if _layer(module) == LAYERS.index("adapters") or module in IN_IMAGE:
        return []
    return [
        f"line {line}: {imported}"
        for imported, _, line in _imports(source)
        if imported.split(".")[0] in PROCESS_MODULES
    ]


def test_imports_point_down() -> None:
    found = each_module(upward, MODULES)
    assert not found, _report(found, "a module imports its own layer and those below")


def test_no_import_cycle() -> None:
    found = cycles(_graph())
    assert not found, _report(found, "no modules import one another in a cycle")


def test_no_private_name_crosses_a_module_boundary() -> None:
    found = each_module(borrowed_names, MODULES)
    assert not found, _report(found, "no private name is taken from another module")


def test_only_adapters_start_processes() -> None:
    found = each_module(process_imports, MODULES)
    assert not found, _report(found, "only adapters import what starts processes")


# The checks above, each shown to fail on the violation it is there for.
VIOLATIONS = [
    pytest.param(
        lambda: upward("release.core.notes", "def f():\n    from release.cli.tasks import ns\n"),
        id="a lazy upward import",
    ),
    pytest.param(
        lambda: upward("release.flows.cut", "from release.images import build\n"),
        id="flows importing images",
    ),
    pytest.param(
        lambda: cycle(
            {
                "release.cli.tasks": {"release.cli.image_tasks"},
                "release.cli.image_tasks": {"release.cli.tasks"},
            }
        ),
        id="a cycle inside one layer",
    ),
    pytest.param(lambda: borrowed("from release.flows.pick import _Picker\n"), id="a private name"),
    pytest.param(
        lambda: borrowed("from release.flows import pick as flow\nflow._confirm(1, 2)\n"),
        id="a private name read off a module",
    ),
    pytest.param(
        lambda: process_imports("release.flows.push", "import subprocess\n"),
        id="a workflow starting a process",
    ),
]


@pytest.mark.parametrize("check", VIOLATIONS)
def test_each_contract_check_can_fail(check: object) -> None:
    assert callable(check) and check()


def test_every_upward_import_is_reported_at_once() -> None:
    found = each_module(
        upward,
        {
            "release.flows.cut": "from release.images import build\nfrom release.core import rc\n",
            "release.core.notes": "def f():\n    from release.cli.tasks import ns\n",
            "release.cli.tasks": "from release.flows.pick import pick\n",
        },
    )
    assert found == [
        "release.core.notes: line 2: core imports release.cli.tasks (cli)",
        "release.flows.cut: line 1: flows imports release.images.build (images)",
    ]


def test_every_import_cycle_is_reported_at_once() -> None:
    graph = {
        "release.cli.tasks": {"release.cli.image_tasks", "release.core.rc"},
        "release.cli.image_tasks": {"release.cli.tasks"},
        "release.flows.a": {"release.flows.b"},
        "release.flows.b": {"release.flows.c"},
        "release.flows.c": {"release.flows.a", "release.core.rc"},
        "release.core.rc": set(),
    }
    found = cycles(graph)
    assert [line.split(": ")[0] for line in found] == [
        "release.cli.image_tasks, release.cli.tasks",
        "release.flows.a, release.flows.b, release.flows.c",
    ]
    assert found[1].count(" -> ") == 3  # a -> b -> c -> a, each import on the way
    assert cycles({m: to - {"release.cli.tasks"} for m, to in graph.items()}) == [found[1]]
    assert not cycles({"release.core.rc": set(), "release.cli.tasks": {"release.core.rc"}})


def test_every_borrowed_private_name_is_reported_at_once() -> None:
    found = each_module(
        borrowed_names,
        {
            "release.flows.cut": "from release.flows.pick import _Picker\n",
            "release.flows.push": "from release.flows import pick as flow\nflow._confirm(1)\n",
            "release.flows.notes": "from release.flows.pick import pick\n__all__ = []\n",
        },
    )
    assert found == [
        "release.flows.cut: line 1: _Picker from release.flows.pick",
        "release.flows.push: line 2: flow._confirm",
    ]


def test_every_process_import_outside_the_adapters_is_reported_at_once() -> None:
    found = each_module(
        process_imports,
        {
            "release.flows.push": "import subprocess\n",
            "release.core.notes": "import json\nfrom git import Repo\n",
            "release.adapters.engine": "import subprocess\n",
            min(IN_IMAGE): "import subprocess\n",  # runs inside an image
        },
    )
    assert found == ["release.core.notes: line 2: git", "release.flows.push: line 1: subprocess"]


def test_the_contract_allows_what_the_layers_allow() -> None:
    assert not upward("release.cli.tasks", "from release.flows.pick import pick\n")
    assert not upward("release.images.source", "from release.flows.context import ReleaseContext\n")
    assert not process_imports("release.adapters.engine", "import subprocess\n")


def test_processes_start_in_one_module() -> None:
    """Inside adapters, only the process runner spawns (git's spawner hands GitPython the
    command and the runner waits for it)."""
    spawning = {
        module
        for module, path in MODULES.items()
        if module not in IN_IMAGE
        and any(
            imported == "subprocess" or imported.startswith("git")
            for imported, _, _ in _imports(path)
        )
    }
    assert spawning == {"release.adapters.process", "release.adapters.git_process"}


def too_long(module: str, source: Path | str) -> list[str]:
    lines = len(_text(source).splitlines())
    if lines <= MAX_LINES:
        return []
    return [f"{lines} lines (at most {MAX_LINES}); split it by concern"]


def test_module_size() -> None:
    found = each_module(too_long, MODULES)
    assert not found, _report(found, f"a module has at most {MAX_LINES} lines")


def test_every_module_past_the_size_is_reported_at_once() -> None:
    found = each_module(
        too_long,
        {
            "release.core.a": "x = 1\n" * (MAX_LINES + 1),
            "release.core.b": "x = 1\n" * MAX_LINES,
            "release.flows.c": "\n" * (MAX_LINES + 20),
        },
    )
    assert found == [
        f"release.core.a: {MAX_LINES + 1} lines (at most {MAX_LINES}); split it by concern",
        f"release.flows.c: {MAX_LINES + 20} lines (at most {MAX_LINES}); split it by concern",
    ]


def _import_alone(module: str) -> tuple[str, str]:
    proc = subprocess.run(
        [sys.executable, "-c", f"import {module}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return module, proc.stderr.strip().splitlines()[-1] if proc.returncode else ""


@pytest.mark.slow
def test_every_module_imports_on_its_own() -> None:
    """Each module in a fresh interpreter: an import that works only after another module
    was imported first (a hidden cycle) fails here."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        failures = {m: err for m, err in pool.map(_import_alone, sorted(MODULES)) if err}
    assert not failures, failures


# -- git's revision syntax and separators stay in the git adapter ------------------------
# A string literal (an f-string's text with each replacement field read as a ref) is
# git's language when it peels or selects an object (``^{commit}``, ``^{}``, ``^{tag}``,
# ``^{tree}``), names an upstream (``@{u}``), is a range as a whole (``A..B``, ``A...B``,
# ``^A``: one token, a ref or field at each end; a sentence that mentions ``A..B``
# among words is prose), asks for parents (``A^@``, ``A^!``, ``A~2``, ``HEAD^``), or is
# git's field or record separator (a literal of only US/RS/GS, or a ``%x1f`` format).
# Regex anchors (``f"^{regex}"`` followed by more pattern) and control-character
# classes are none of these.
GIT_ADAPTER = re.compile(r"release\.adapters\.git(?:_\w+)?")
_FIELD = "\0"  # what a replacement field reads as
_PEEL = re.compile(r"\^\{(?:commit|tag|tree|blob|object)?\}|@\{(?:u|upstream|push)\}")
_REF = r"[\w/.@{}~^\0-]"
_RANGE = re.compile(rf"(?:{_REF}*[\w}}\0]\.\.\.?[\w\0^]{_REF}*|\^\0)")
_PARENTS = re.compile(r"(?:HEAD|\0)(?:[~^]\d*)+|(?:\w|\0)\^[@!]|\0\^-\d*")
_SEPARATORS = re.compile(r"[\x1d\x1e\x1f]+\n?")
_FORMAT_SEPARATOR = re.compile(r"%x1[def]")
# Text a person types or reads, printed as git spells it: (module, source of the literal).
GIT_SYNTAX_ALLOWED = {
    # the range a tag's message says it changes: "Changes v0.1.0rc1..v0.1.0rc2:"
    ("release.flows.notes_range", "f\"{self.since or '(start)'}..{self.until}\""),
}


def _git_syntax(text: str) -> str | None:
    """What git syntax ``text`` (a literal, fields as NUL) spells; None when none."""
    if _PEEL.search(text):
        return "peels a ref"
    if _SEPARATORS.fullmatch(text) or _FORMAT_SEPARATOR.search(text):
        return "splits or asks for git's separators"
    if _RANGE.fullmatch(text):
        return "spells a range"
    if _PARENTS.fullmatch(text) or re.search(r"(?:\w|\0)\^[@!]", text):
        return "names parents"
    return None


def git_syntax(module: str, source: Path | str) -> list[str]:
    """The string literals of a module (outside the git adapter) that spell git syntax."""
    if GIT_ADAPTER.fullmatch(module):
        return []
    text, tree = _text(source), _tree(source)
    inside: set[int] = set()  # the constant parts of f-strings, read with their f-string
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            inside.update(id(part) for part in node.values)
            shape = "".join(
                str(part.value) if isinstance(part, ast.Constant) else _FIELD
                for part in node.values
            )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in inside:
                continue
            shape = node.value
        else:
            continue
        what = _git_syntax(shape)
        if not what:
            continue
        segment = ast.get_source_segment(text, node) or ""  # reads the text from its start
        if (module, segment) not in GIT_SYNTAX_ALLOWED:
            found.append(f"line {node.lineno}: {segment} {what}")
    return found


def test_git_syntax_stays_in_the_git_adapter() -> None:
    found = each_module(git_syntax, MODULES)
    assert not found, _report(found, "only the git adapter spells git's syntax (ask it)")


def test_every_module_spelling_git_syntax_is_reported_at_once() -> None:
    found = each_module(
        git_syntax,
        {
            "release.flows.cut": 'a = f"{ref}^{{commit}}"\nb = "plain text"\nc = "HEAD^"\n',
            "release.images.build": 'repo.log(f"{base}..{ref}")\n',
            "release.adapters.git_reads": 'f"{a}^{{commit}}..{b}"\n',
            "release.core.notes": 'say(f"reading {name}...")\n',
        },
    )
    assert found == [
        'release.flows.cut: line 1: f"{ref}^{{commit}}" peels a ref',
        'release.flows.cut: line 3: "HEAD^" names parents',
        'release.images.build: line 1: f"{base}..{ref}" spells a range',
    ]


@pytest.mark.parametrize(
    "source",
    [
        'def f(ref):\n    return repo.rev(f"{ref}^{{commit}}")\n',
        'refs.get(f"{ref}^{{}}")\n',
        'x = "v1^{tag}"\n',
        'repo.run("rev-parse", "@{u}")\n',
        'sha, _, subject = line.partition("\\x1f")\n',
        'records = text.split("\\x1e")\n',
        'repo.log(fmt="%H%x1f%s")\n',
        'repo.log(f"{base}..{ref}")\n',
        'repo.log(f"{a}...{b}")\n',
        'repo.count(f"{base}..HEAD")\n',
        'repo.run("log", "main..releases/v1")\n',
        'repo.run("rev-list", f"^{exclude}")\n',
        'repo.run("rev-list", f"{sha}^@")\n',
        'repo.run("show", f"{sha}~1")\n',
        'repo.run("show", "HEAD^")\n',
    ],
)
def test_git_syntax_is_caught(source: str) -> None:
    assert git_syntax("release.flows.example", source)


def test_git_syntax_allows_text_and_the_adapter() -> None:
    prose = (
        'help = "the commits of A..B, as git log A..B lists them"\n'
        're.compile(f"^{regex}(?:/.*)?$")\n'
        're.compile(r"^#([0-9]{1,9})$")\n'
        're.compile(r"^@@ -1 +1 @@")\n'
        're.compile(f"[\\x00-\\x1f{_NOT_C0}]")\n'
        'say(f"reading {name}...")\n'
        'path = "../up"\n'
        'print(f"git notes --ref release/{tag} show {tag}^{{}}")\n'
    )
    found = git_syntax("release.flows.example", prose)
    assert found == [found[-1]] and "show" in found[-1]  # a command printed: allow-listed only
    assert not git_syntax("release.adapters.git_reads", 'f"{a}^{{commit}}..{b}"\n')
    assert not git_syntax(
        "release.flows.notes_range", "x = f\"{self.since or '(start)'}..{self.until}\"\n"
    )


# ``Any`` in a public signature (a public function's parameters or return, a public class's
# fields), by module: where a value is a document of someone else's shape, read before it
# is checked or written as it will be serialized. The commands and the CLI have none. The
# list only shrinks: an entry that is typed now fails the test until it is taken out.
ANY_ALLOWED: dict[str, set[str]] = {
    # TOML tables and JSON documents as read, before their checks make them values
    "release.core.config": {"parse_pyproject", "release_table"},
    "release.core.json_text": {"parse_json"},
    "release.adapters.state": {"StateFile.read", "StateFile.write"},
    # docker's inspect documents and a runtime probe's record, as the engine gives them
    "release.images.smoke_checks": {"SmokeCheck.config", "SmokeReport.to_dict"},
    # documents written for other tools (YAML pipelines, the bake file) and --json shapes
    "release.flows.pick_journal": {"PickJournal.to_dict"},
    # file objects of either mode handed to a process; rich's objects, imported lazily
    "release.adapters.process": {"Spawn.__call__", "popen"},
    "release.images.progress": {"Progress.__init__"},
}  # fmt: skip


def _names_any(node: ast.expr | None) -> bool:
    return node is not None and any(
        (isinstance(n, ast.Name) and n.id == "Any")
        or (isinstance(n, ast.Attribute) and n.attr == "Any")
        or (isinstance(n, ast.Constant) and isinstance(n.value, str) and "Any" in n.value)
        for n in ast.walk(node)
    )


def public_any(source: Path | str) -> list[str]:
    """Public functions, methods and class fields whose annotations hold ``Any``."""
    found: list[str] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                dunder = node.name.startswith("__") and node.name.endswith("__")
                if node.name.startswith("_") and not dunder:
                    continue
                a = node.args
                params = [
                    *a.posonlyargs,
                    *a.args,
                    *a.kwonlyargs,
                    *filter(None, (a.vararg, a.kwarg)),
                ]
                if _names_any(node.returns) or any(_names_any(p.annotation) for p in params):
                    found.append(prefix + node.name)
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                visit(node.body, f"{prefix}{node.name}.")
            elif (
                isinstance(node, ast.AnnAssign)
                and prefix
                and isinstance(node.target, ast.Name)
                and not node.target.id.startswith("_")
                and _names_any(node.annotation)
            ):
                found.append(prefix + node.target.id)

    visit(_tree(source).body, "")
    return found


def any_not_allowed(
    module: str, source: Path | str, allowed: Mapping[str, set[str]] = ANY_ALLOWED
) -> list[str]:
    """A public signature with ``Any`` the allow-list does not name, and an entry of the
    list that is typed now (the list only shrinks)."""
    found = set(public_any(source))
    kept = allowed.get(module, set())
    return [
        *(
            f"Any in the public signature of {name}; type it (a dataclass, an enum, "
            "JSONValue) or say why in ANY_ALLOWED"
            for name in sorted(found - kept)
        ),
        *(f"{name} is typed now: take it out of ANY_ALLOWED" for name in sorted(kept - found)),
    ]


def test_any_in_public_signatures_only_where_allowed() -> None:
    found = each_module(any_not_allowed, MODULES)
    assert not found, _report(found, "Any is in a public signature only where ANY_ALLOWED says")


def test_the_upper_floors_have_no_any_in_public_signatures() -> None:
    upper = [m for m in ANY_ALLOWED if _layer(m) >= LAYERS.index("commands")]
    assert upper == []
    assert set(ANY_ALLOWED) <= set(MODULES)


def test_any_in_a_public_signature_is_caught() -> None:
    source = (
        "from typing import Any\n"
        "def plan(x: int) -> dict[str, Any]: ...\n"
        "def _inner(x: Any) -> Any: ...\n"
        "class Status:\n"
        "    tags: list[Any]\n"
        "    _cache: Any\n"
        "    def lines(self, *extra: Any) -> list[str]: ...\n"
        "    def _own(self, x: Any) -> None: ...\n"
        "class _Private:\n"
        "    field: Any\n"
        "def quoted(x: 'Mapping[str, Any]') -> None: ...\n"
    )
    assert public_any(source) == ["plan", "Status.tags", "Status.lines", "quoted"]
    assert public_any("def typed(x: Mapping[str, int]) -> Anything: ...\n") == []


def test_every_unallowed_or_stale_any_is_reported_at_once() -> None:
    allowed = {"release.core.a": {"parse", "Table.row"}, "release.core.b": {"read"}}
    sources = {
        "release.core.a": "def parse(x: Any) -> int: ...\ndef dump(x: int) -> Any: ...\n",
        "release.core.b": "def read(x: object) -> int: ...\n",
        "release.flows.c": "class Plan:\n    data: dict[str, Any]\n",
        "release.flows.d": "def typed(x: int) -> str: ...\n",
    }
    found = each_module(lambda m, s: any_not_allowed(m, s, allowed), sources)
    assert found == [
        "release.core.a: Any in the public signature of dump; type it (a dataclass, an enum, "
        "JSONValue) or say why in ANY_ALLOWED",
        "release.core.a: Table.row is typed now: take it out of ANY_ALLOWED",
        "release.core.b: read is typed now: take it out of ANY_ALLOWED",
        "release.flows.c: Any in the public signature of Plan.data; type it (a dataclass, an "
        "enum, JSONValue) or say why in ANY_ALLOWED",
    ]


# -- one name, one thing ------------------------------------------------------------------
# A public class or type alias (``Say = Callable[[str], None]``) is declared in one module
# and imported everywhere else: two ``Plan``s or nine ``Say``s read alike at the call site
# and drift apart. Every namesake is reported at once, with the modules that declare it.
_ALIAS_NAME = re.compile(r"[A-Z][a-z]\w*")  # CapWords: a type, not a CONSTANT


def _declared(tree: ast.Module) -> list[str]:
    """The public classes and type aliases a module declares at its top level."""
    names = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.append(node.name)
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and _ALIAS_NAME.fullmatch(node.targets[0].id)
            and isinstance(node.value, ast.Subscript | ast.BinOp)
        ):
            names.append(node.targets[0].id)
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and "TypeAlias" in ast.unparse(node.annotation)
        ):
            names.append(node.target.id)
    return [name for name in names if not name.startswith("_")]


def namesakes(sources: Mapping[str, Path | str]) -> dict[str, list[str]]:
    """Each public class or type-alias name declared by more than one module: the modules."""
    where: dict[str, list[str]] = {}
    for module, source in sorted(sources.items()):
        for name in _declared(_tree(source)):
            where.setdefault(name, []).append(module)
    return {name: modules for name, modules in sorted(where.items()) if len(modules) > 1}


def test_no_public_name_is_declared_twice() -> None:
    found = namesakes(dict(MODULES))
    assert not found, "declared more than once (rename one, or import it): " + "; ".join(
        f"{name} in {', '.join(modules)}" for name, modules in found.items()
    )


def test_namesakes_are_caught_all_at_once() -> None:
    found = namesakes(
        {
            "release.flows.pick": "from x import Callable\nSay = Callable[[str], None]\n",
            "release.flows.cut": "Say = Callable[[str], None]\nclass Plan: ...\n",
            "release.core.plan": "class Plan:\n    pass\nclass _Row: ...\n",
            "release.core.pipelines": "class _Row: ...\nDEFAULT = dict[str, int]\nStep = int | None\n",
            "release.core.steps": "from typing import TypeAlias\nStep: TypeAlias = 'int'\n",
        }
    )
    assert found == {
        "Plan": ["release.core.plan", "release.flows.cut"],
        "Say": ["release.flows.cut", "release.flows.pick"],
        "Step": ["release.core.pipelines", "release.core.steps"],
    }


# -- Any, per 1,000 lines ---------------------------------------------------------------
# Values travel whole (records, TypedDicts, JSONValue, ``object`` narrowed), so ``Any`` is
# rare: counted as a name in code (not in strings or comments) over the package but the
# bundled sample, per 1,000 lines. The ceiling only comes down: the figure measured when it
# was set, rounded up; the target was 5, the goal 3, and both are met.
ANY_PER_KLOC_CEILING = 1.9
ANY_PER_KLOC_TARGET = 3.0


# a quoted annotation or cast ("dict[str, Any]", "Any | None"), not a sentence
_ONE_TYPE = r"[\w.]+(?:\[[\w\[\]., |]*\])?"
_TYPE_TEXT = re.compile(rf"{_ONE_TYPE}(?: ?\| ?{_ONE_TYPE})*")


def any_uses(source: Path | str) -> int:
    """How many times ``Any`` is named in code (an annotation, an import, a cast, a quoted
    type), not in prose (a docstring, a message, a comment)."""
    import io
    import tokenize

    count = 0
    for token in tokenize.generate_tokens(io.StringIO(_text(source)).readline):
        if token.type == tokenize.NAME and token.string == "Any":
            count += 1
        elif token.type == tokenize.STRING:
            inner = token.string.strip("\"'")
            if _TYPE_TEXT.fullmatch(inner):
                count += len(re.findall(r"\bAny\b", inner))
    return count


def any_per_kloc(sources: Mapping[str, Path | str]) -> float:
    counted = {m: s for m, s in sources.items() if not m.startswith("release.sample")}
    lines = sum(len(_text(s).splitlines()) for s in counted.values())
    return 1000 * sum(any_uses(s) for s in counted.values()) / max(lines, 1)


def test_any_per_thousand_lines_stays_under_its_ceiling() -> None:
    figure = any_per_kloc(dict(MODULES))
    print(f"Any per 1,000 lines of release/ (sample aside): {figure:.2f} "
          f"(ceiling {ANY_PER_KLOC_CEILING}, target {ANY_PER_KLOC_TARGET})")  # fmt: skip
    assert figure <= ANY_PER_KLOC_CEILING, (
        f"{figure:.2f} uses of Any per 1,000 lines, over the ceiling {ANY_PER_KLOC_CEILING}: "
        "type the new code (a record, a TypedDict, JSONValue, object narrowed)"
    )


def test_any_is_counted_in_code_only() -> None:
    source = (
        "from typing import Any\n"
        '"""Any in a docstring is prose."""\n'
        "x: Any = cast(Any, y)  # Any in a comment too\n"
        "def f(a: 'dict[str, Any]', b: Anything) -> None: ...\n"
    )
    assert any_uses(source) == 4  # the import, the two in code, the quoted annotation
    heavy = {"release.core.a": "from typing import Any\nx: Any\n" + "y = 1\n" * 8}
    assert any_per_kloc(heavy) == 200.0 > ANY_PER_KLOC_CEILING
    assert any_per_kloc({**heavy, "release.sample.b": "Any\n"}) == 200.0  # the sample aside


# -- No stack walking -------------------------------------------------------------------
# What a function needs comes in as an argument: none looks up its callers' frames to learn
# who called it or why (a frame's name is another library's private detail).
_FRAME_CALLS = {"_getframe", "currentframe", "stack", "getouterframes", "extract_stack"}
_FRAME_ATTRIBUTES = {"f_back", "f_code", "f_locals", "f_globals"}


def stack_walks(sources: Mapping[str, Path | str]) -> dict[str, list[int]]:
    """Each module reading the call stack: the lines (a frame asked for or followed)."""
    found: dict[str, list[int]] = {}
    for module, source in sorted(sources.items()):
        for node in ast.walk(_tree(source)):
            called = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            if (called and node.func.attr in _FRAME_CALLS) or (  # type: ignore[union-attr]
                isinstance(node, ast.Attribute) and node.attr in _FRAME_ATTRIBUTES
            ):
                found.setdefault(module, []).append(node.lineno)
    return {module: sorted(set(lines)) for module, lines in found.items()}


def test_no_module_walks_the_stack() -> None:
    found = stack_walks(dict(MODULES))
    assert not found, "reads the call stack (pass what it needs instead): " + "; ".join(
        f"{module} line {', '.join(map(str, lines))}" for module, lines in found.items()
    )


def test_every_stack_walk_is_reported_at_once() -> None:
    found = stack_walks(
        {
            "release.cli.tasks": "import sys\ndef f():\n    frame = sys._getframe(1)\n"
            "    return frame.f_back.f_code.co_name\n",
            "release.core.x": "import inspect\nwho = inspect.stack()[1]\n",
            "release.core.y": "import inspect\nok = inspect.signature(len)\nstack = []\n",
        }
    )
    assert found == {"release.cli.tasks": [3, 4], "release.core.x": [2]}


# -- the tests' own shape: one fixture per name, no test module importing another ---------
# A fixture's name is how a test asks for it: two definitions of one name (in two test
# modules, or one overriding conftest's) are two things a reader takes for one, and a
# test module that imports from another (a helper, a constant, a fixture) ties the two
# together: what both use lives in a support module of tests/ (``tests/*_support.py``),
# its fixtures registered by conftest. Every module of the tests package is read.
TESTS = PACKAGE.parent / "tests"


def _test_modules(root: Path = TESTS) -> dict[str, Path]:
    """The tests package's modules (folders without ``__init__.py``, such as the layouts'
    trees, are data)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        if all((root.parent.joinpath(*rel.parts[:n]) / "__init__.py").exists()
               for n in range(1, len(rel.parts))):  # fmt: skip
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            found[".".join(parts)] = path
    return found


TEST_MODULES = _test_modules()


def _is_test_module(module: str) -> bool:
    return module.startswith("tests.") and module.rsplit(".", 1)[-1].startswith("test_")


def imports_a_test_module(module: str, source: Path | str) -> list[str]:
    """The imports (lazy ones too) that load another test module, or a name from one."""
    found = []
    for imported, names, line in _imports(source):
        targets = [f"{imported}.{name}" for name in names if _is_test_module(f"{imported}.{name}")]
        targets = targets or ([imported] if _is_test_module(imported) else [])
        found += [f"line {line}: imports {target}" for target in targets if target != module]
    return found


def _is_fixture(decorator: ast.expr) -> bool:
    called = decorator.func if isinstance(decorator, ast.Call) else decorator
    return ast.unparse(called) in ("pytest.fixture", "fixture")


def _fixture_name(node: ast.FunctionDef | ast.AsyncFunctionDef, decorator: ast.expr) -> str:
    """The name a test asks for: ``name=`` in the decorator's call, else the function's."""
    for keyword in decorator.keywords if isinstance(decorator, ast.Call) else ():
        if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    return node.name


def fixtures_defined(source: Path | str) -> list[str]:
    """The names of the fixtures a module defines (wherever in it: a class's too)."""
    return [
        _fixture_name(node, decorator)
        for node in ast.walk(_tree(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for decorator in node.decorator_list
        if _is_fixture(decorator)
    ]


def fixture_namesakes(sources: Mapping[str, Path | str]) -> dict[str, list[str]]:
    """Each fixture name defined in more than one module: the modules."""
    where: dict[str, list[str]] = {}
    for module, source in sorted(sources.items()):
        for name in dict.fromkeys(fixtures_defined(source)):
            where.setdefault(name, []).append(module)
    return {name: modules for name, modules in sorted(where.items()) if len(modules) > 1}


def test_each_fixture_name_is_defined_once() -> None:
    found = [
        f"{name}: {', '.join(modules)}" for name, modules in fixture_namesakes(TEST_MODULES).items()
    ]
    assert not found, _report(
        found, "a fixture's name is defined in one module (share it, or name each for what it is)"
    )


def test_no_test_module_imports_another() -> None:
    found = each_module(imports_a_test_module, TEST_MODULES)
    assert not found, _report(
        found,
        "no module of the tests imports a test module (move what is shared to a support module)",
    )


def test_every_fixture_defined_twice_is_reported_at_once() -> None:
    found = fixture_namesakes(
        {
            "tests.conftest": "@pytest.fixture\ndef engine(): ...\n",
            "tests.functional.test_a": (
                "import pytest\n"
                "@pytest.fixture(scope='module')\ndef engine(): ...\n"
                "@pytest.fixture\ndef built(): ...\n"
                "def served(): ...\n"  # a helper, not a fixture
            ),
            "tests.images.test_b": (
                "from pytest import fixture\n"
                "@fixture\ndef built(): ...\n"
                "@pytest.fixture(name='served')\ndef _served(): ...\n"
                "class TestC:\n    @pytest.fixture\n    def built(self): ...\n"
            ),
            "tests.images.test_c": "@pytest.fixture\nasync def served(): ...\n",
            "tests.unit.test_d": "@pytest.fixture\ndef alone(): ...\ndef engine(): ...\n",
        }
    )
    assert found == {
        "built": ["tests.functional.test_a", "tests.images.test_b"],
        "engine": ["tests.conftest", "tests.functional.test_a"],
        "served": ["tests.images.test_b", "tests.images.test_c"],
    }


def test_every_import_of_a_test_module_is_reported_at_once() -> None:
    found = each_module(
        imports_a_test_module,
        {
            "tests.functional.test_a": (
                "from tests.unit.test_manifest import build, sha\n"
                "from tests.ci_support import root_matrix\n"
                "from tests.functional.test_a import itself\n"
                "def f():\n    from tests.images.test_images import BASE\n"
            ),
            "tests.images.test_b": (
                "import tests.functional.test_a as other\n"
                "from tests.functional import test_c, helpers\n"
                "from tests import docker_support\n"
            ),
            "tests.manifest_support": "from tests.unit import test_manifest\n",
            "tests.unit.test_d": "from release.core.test_like import x\nimport tests.conftest\n",
        },
    )
    assert found == [
        "tests.functional.test_a: line 1: imports tests.unit.test_manifest",
        "tests.functional.test_a: line 5: imports tests.images.test_images",
        "tests.images.test_b: line 1: imports tests.functional.test_a",
        "tests.images.test_b: line 2: imports tests.functional.test_c",
        "tests.manifest_support: line 1: imports tests.unit.test_manifest",
    ]


def test_the_tests_package_is_read_whole() -> None:
    assert {"tests.conftest", "tests.docker_support", "tests.unit.test_manifest"} <= set(
        TEST_MODULES
    )
    assert __name__.split(".")[-1] in {m.rsplit(".", 1)[-1] for m in TEST_MODULES}
    assert not [m for m in TEST_MODULES if ".layouts." in m or ".fixtures." in m]

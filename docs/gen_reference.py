"""The manual's reference pages, made from the code at build time: never written by hand.

``mkdocs build`` loads this file as a hook (``hooks:`` in mkdocs.yml): :func:`on_files`
adds the pages to the build only, so nothing generated is kept in the tree. Each page is
a pure function of a declaration: the commands and their options
(``release.commands.registry.COMMANDS``, usage lines from the parser ``--help`` prints),
the ``[tool.release]`` JSON Schema that ``release schema`` prints, the exit codes the
errors carry, and the release manifest's JSON Schema. The tests build them in-process
and compare them with those declarations.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
import textwrap
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import release
from release.cli.arguments import parser_of
from release.cli.program import GLOBAL_FLAGS
from release.cli.tasks import invoke_positional
from release.commands.declare import Command, Kind, Option
from release.commands.registry import COMMANDS
from release.core.config_schema import schema_text
from release.errors import ReleaseError, Terminated

__all__ = [
    "PAGES",
    "commands_page",
    "config_page",
    "config_tables",
    "exit_codes_page",
    "manifest_page",
    "on_files",
    "pages",
]

HEADER = "<!-- made by docs/gen_reference.py from the code at build time: do not edit -->\n"
MANIFEST_SCHEMA = Path(release.__file__).parent / "core" / "manifest.schema.json"


def cell(text: object) -> str:
    """A Markdown table cell: pipes escaped, one line."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text: object) -> str:
    """Inline code that holds backticks too."""
    value = str(text)
    fence = "``" if "`" in value else "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


FLAG = re.compile(r"(?<![\w`-])(--[a-z][a-z0-9-]*)")  # a flag named in prose, shown as code


def spelling(option: Option) -> str:
    """How an option is written on the command line: ``--out``, or ``NAME`` positional."""
    return option.name.upper() if option.positional else f"--{option.name}"


def _takes(option: Option) -> str:
    if option.positional:
        return "several values" if option.kind == Kind.MANY else "a value"
    value = option.metavar or (None if option.choices else option.name.upper())
    return {
        Kind.FLAG: "flag",
        Kind.TEXT: f"`{value}`" if value else "one of the choices",
        Kind.NUMBER: f"`{value}` (a number)",
        Kind.MANY: f"`{value}`, repeatable",
    }.get(option.kind, option.kind)


def option_row(option: Option) -> str:
    names = [code(spelling(option))] + ([code(f"-{option.short}")] if option.short else [])
    choices = ", ".join(code(c) for c in option.choices) or ""
    default = "" if option.default is None else code(option.default)
    notes = [n for n in ("positional" if option.positional else "",
                         "required" if option.required else "") if n]  # fmt: skip
    kind = _takes(option) + (f" ({', '.join(notes)})" if notes else "")
    return f"| {' '.join(names)} | {cell(kind)} | {cell(choices)} | {cell(default)} | {cell(option.help)} |"


def invoke_usage(command: Command) -> str:
    """The task through invoke: its positionals there, and a positional that may be left
    out and has nothing to stand in for it spelt as the option invoke makes it."""
    words = [f"inv release.{command.name}"]
    for o in command.options:
        if invoke_positional(o):
            words.append(o.name.upper() if o.required else f"[{o.name.upper()}]")
        elif o.positional:
            words.append(f"[--{o.name} {o.name.upper()}]")
    return " ".join(words) + "  # the same task through invoke (long spellings)"


def command_section(command: Command) -> list[str]:
    usage = textwrap.fill(
        " ".join(parser_of(command).format_usage().split()),
        width=80,
        subsequent_indent=" " * len(f"usage: release {command.name} "),
        break_on_hyphens=False,
    )
    lines = [
        f"## `release {command.name}`",
        "",
        cell(command.summary),
        "",
    ]
    if command.description:
        lines += [FLAG.sub(r"`\1`", command.description), ""]
    lines += [
        "```text",
        usage,
        invoke_usage(command),
        "```",
        "",
    ]
    if command.options:
        lines += [
            "| option | takes | choices | default | what it does |",
            "|---|---|---|---|---|",
            *(option_row(o) for o in command.options),
            "",
        ]
    else:
        lines += ["No options.", ""]
    return lines


def commands_page(commands: Sequence[Command] = COMMANDS) -> str:
    lines = [
        HEADER,
        "# Commands",
        "",
        "Every command of `release`, as declared in `release/commands/registry.py`: the "
        "console script and `inv release.<task>` are both made from these declarations, "
        "so this page, `release TASK --help` and `inv --help release.TASK` say the same. "
        "A short flag means one option everywhere (`-n` `--dry-run`, `-j` `--json`, "
        "`-o` `--out`, `-v` `--variant`, `-f` `--file`, `-r` `--reason`, `-J` `--jobs`); "
        "invoke's tasks take the long spellings. Exit codes: [Exit codes](exit-codes.md).",
        "",
        "## Global options",
        "",
        "```text",
        "release [--main-branch NAME] [--config FILE] [--debug] TASK [OPTIONS]",
        "release --help [TASK] | --list | --version | --completion bash|zsh",
        "```",
        "",
        "| option | takes | what it does |",
        "|---|---|---|",
    ]
    for names, value, text in GLOBAL_FLAGS:
        spelt = " ".join(code(n) for n in names)
        lines.append(f"| {spelt} | {'`VALUE`' if value else 'flag'} | {cell(text)} |")
    lines += ["", "## Tasks", "", "| task | what it does |", "|---|---|"]
    for command in commands:
        anchor = "release-" + command.name.replace(".", "")
        lines.append(f"| [`{command.name}`](#{anchor}) | {cell(command.summary)} |")
    lines.append("")
    for command in commands:
        lines += command_section(command)
    return "\n".join(lines)


@dataclass(frozen=True)
class Key:
    """One key of a table: its name, what it takes, and the schema's description."""

    name: str
    takes: str
    description: str


@dataclass(frozen=True)
class Table:
    """A TOML table of the configuration: ``tool.release.images``; ``array``: ``[[...]]``."""

    path: str
    array: bool
    keys: tuple[Key, ...]

    @property
    def heading(self) -> str:
        return f"[[{self.path}]]" if self.array else f"[{self.path}]"


Schema = Mapping[str, Any]


def _resolve(node: Schema, root: Schema) -> Schema:
    while "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        node = root["$defs"][name]
    return node


def _takes_value(node: Schema | bool, root: Schema) -> str:
    if isinstance(node, bool):
        return "any value" if node else "nothing"
    node = _resolve(node, root)
    if "const" in node:
        return code(json.dumps(node["const"]))
    if "enum" in node:
        return " or ".join(code(json.dumps(v)) for v in node["enum"])
    if "oneOf" in node and "type" not in node:
        return " or ".join(_takes_value(n, root) for n in node["oneOf"])
    kind = node.get("type", "any value")
    if kind == "array":
        items = node.get("items")
        return f"array of {_takes_value(items, root)}" if items else "array"
    if kind == "object" and "properties" in _resolve(node, root):
        return "table"
    return " or ".join(kind) if isinstance(kind, list) else str(kind)


def _subtable(node: Schema, root: Schema) -> tuple[Schema, bool] | None:
    """The table a key opens (``images``), or the array of tables (``variants``)."""
    node = _resolve(node, root)
    if node.get("type") == "object" and "properties" in node:
        return node, False
    items = node.get("items")
    if node.get("type") == "array" and items is not None:
        item = _resolve(items, root)
        if item.get("type") == "object" and "properties" in item:
            return item, True
    return None


def config_tables(schema: Schema) -> list[Table]:
    """Every table of ``[tool.release]`` the schema describes, parents first."""
    tables: list[Table] = []

    def walk(node: Schema, path: str, array: bool) -> None:
        keys = []
        children: list[tuple[Schema, str, bool]] = []
        for name, sub in node.get("properties", {}).items():
            described = sub.get("description") or _resolve(sub, schema).get("description", "")
            opened = _subtable(sub, schema)
            if opened is not None:
                table = Table(f"{path}.{name}", opened[1], ())
                slug = re.sub(r"[^\w]", "", table.path)
                see = f"[`{table.heading}`](#{slug})"
                described = f"{described} (see {see})" if described else f"see {see}"
                children.append((opened[0], table.path, opened[1]))
            keys.append(Key(name, _takes_value(sub, schema), described))
        tables.append(Table(path, array, tuple(keys)))
        for child, child_path, child_array in children:
            walk(child, child_path, child_array)

    walk(schema, "tool.release", False)
    return tables


def config_page(schema: Schema | None = None) -> str:
    schema = json.loads(schema_text()) if schema is None else schema
    lines = [
        HEADER,
        "# Configuration keys",
        "",
        "Every key of `[tool.release]` in `pyproject.toml` (or the file given with "
        "`release --config FILE`), from the JSON Schema shipped in the package, which "
        "`release schema` prints and every run checks the table against (draft 2020-12). "
        "An unknown key, a wrong type or a bad value is one line naming the key, exit 2. "
        "What the keys are for: [Configuration](../explanation/configuration.md).",
        "",
    ]
    for table in config_tables(schema):
        lines += [f"## `{table.heading}`", "", "| key | takes | meaning |", "|---|---|---|"]
        for key in table.keys:
            lines.append(f"| {code(key.name)} | {cell(key.takes)} | {cell(key.description)} |")
        lines.append("")
    return "\n".join(lines)


def _error_classes() -> list[type[ReleaseError]]:
    """Every error class of the package, found by importing its modules."""
    prefix = release.__name__ + "."
    for info in pkgutil.walk_packages(release.__path__, prefix):
        if info.name.startswith(prefix + "sample.engine") or info.name.endswith("__main__"):
            continue
        importlib.import_module(info.name)
    found: list[type[ReleaseError]] = []
    pending: list[type[ReleaseError]] = [ReleaseError]
    while pending:
        klass = pending.pop()
        found.append(klass)
        pending.extend(klass.__subclasses__())
    return sorted(found, key=lambda k: (k.exit_code, k.__module__, k.__name__))


def _public(klass: type) -> bool:
    module = importlib.import_module(klass.__module__)
    return klass.__name__ in getattr(module, "__all__", ())


def _first_paragraph(klass: type) -> str:
    """The class's own docstring (not one inherited), its first paragraph, as Markdown."""
    doc = inspect.cleandoc(klass.__dict__.get("__doc__") or "")
    text = " ".join(doc.split("\n\n", 1)[0].split())
    return re.sub(r":\w+:`([^`]+)`", r"`\1`", text).replace("``", "`")


EXIT_PROSE: Mapping[int, str] = {
    0: "done; a check that ran and passed",
    1: "an unexpected failure, or a check that failed (smoke, snapshot, `reproduce`'s drift)",
    2: "bad input: an argument, a version, the configuration",
    3: "refused: the repository or a file is in a state where the command must not run "
    "(nothing changed)",
    4: "stopped on a pick conflict",
    5: "a git command failed",
    6: "the container engine (or a registry, skopeo, syft) is missing, unreachable or failed",
    7: "evidence refused: a release manifest that is missing, incomplete, damaged or not of "
    "this release, or a signature that does not verify (or, with `--require-signed`, none "
    "by a key you trust)",
    130: "Ctrl-C",
    Terminated.exit_code: "SIGTERM (what CI's cancel and `timeout` send)",
}


def exit_codes_page(classes: Iterable[type[ReleaseError]] | None = None) -> str:
    by_code: dict[int, list[type[ReleaseError]]] = {}
    for klass in _error_classes() if classes is None else classes:
        if not _public(klass):
            continue
        by_code.setdefault(int(klass.exit_code), []).append(klass)
    lines = [
        HEADER,
        "# Exit codes",
        "",
        "What `release` exits with. Each error the package raises carries its exit code "
        "(`release/errors.py`); the classes below are read from the code. An error is one "
        "line on stderr (under `--json` also a `release/error/v1` document on stdout); "
        "`release --debug TASK` or `RELEASE_DEBUG=1` shows the traceback. Odd input "
        "(bytes that are not UTF-8, a directory where a file should be, a PR number "
        "thousands of digits long, Unicode digits in a version, an empty `--version ''`) "
        "is bad input, never a traceback.",
        "",
        "| code | meaning |",
        "|---|---|",
    ]
    codes = sorted(set(EXIT_PROSE) | set(by_code))
    for number in codes:
        lines.append(f"| [`{number}`](#exit-{number}) | {cell(EXIT_PROSE.get(number, ''))} |")
    lines += ["", "## Raised as", ""]
    for number in codes:
        lines += [f"### Exit {number} {{ #exit-{number} }}", ""]
        if number == 130:
            lines.append("- `KeyboardInterrupt`: the run stops and cleans up as on SIGTERM")
        if number == Terminated.exit_code:
            lines.append(f"- `Terminated` (release.errors): {_first_paragraph(Terminated)}")
        for klass in by_code.get(number, []):
            about = _first_paragraph(klass)
            lines.append(
                f"- `{klass.__name__}` ({klass.__module__})" + (f": {about}" if about else "")
            )
        if number == 0:
            lines.append("- nothing: the command did what it was asked")
        lines.append("")
    return "\n".join(lines)


def _manifest_type(node: Schema | bool) -> str:
    if isinstance(node, bool):
        return "any value" if node else "nothing"
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        return f"[{name}](#{name})"
    if "const" in node:
        return code(json.dumps(node["const"]))
    if "enum" in node:
        return " or ".join(code(json.dumps(v)) for v in node["enum"])
    for key in ("oneOf", "anyOf"):
        if key in node:
            return " or ".join(_manifest_type(n) for n in node[key])
    kind = node.get("type", "any value")
    if kind == "array" and "items" in node:
        return f"array of {_manifest_type(node['items'])}"
    if kind == "object" and isinstance(node.get("additionalProperties"), Mapping):
        return f"object of {_manifest_type(node['additionalProperties'])}"
    if "pattern" in node:
        return f"{kind} matching {code(node['pattern'])}"
    return " or ".join(kind) if isinstance(kind, list) else str(kind)


def _definitions(schema: Schema) -> Iterator[str]:
    defs = schema.get("$defs", {})
    first = [n for n in ("manifest", "part") if n in defs]  # the documents, then their fields
    for name, node in [(n, defs[n]) for n in first] + [
        (n, d) for n, d in defs.items() if n not in first
    ]:
        yield from [f"## `{name}`", ""]
        if node.get("description"):
            yield from [cell(node["description"]), ""]
        properties = node.get("properties")
        if not properties:
            yield from [f"A value: {_manifest_type(node)}.", ""]
            continue
        required = set(node.get("required", ()))
        bases = [str(b["$ref"]).rsplit("/", 1)[-1] for b in node.get("allOf", []) if "$ref" in b]
        if bases:  # a field that is `true` here is described by the definition it takes in
            yield from [f"Also holds the fields of {', '.join(f'[{b}](#{b})' for b in bases)}.", ""]
        yield from ["| field | type | required | meaning |", "|---|---|---|---|"]
        for field, sub in properties.items():
            needed = "yes" if field in required else ""
            meaning = sub.get("description", "") if isinstance(sub, Mapping) else ""
            if sub is True and bases:
                meaning = f"as in {', '.join(f'[{b}](#{b})' for b in bases)}"
            yield (f"| {code(field)} | {cell(_manifest_type(sub))} | {needed} | {cell(meaning)} |")
        yield ""


def manifest_page(schema: Schema | None = None) -> str:
    if schema is None:
        schema = json.loads(MANIFEST_SCHEMA.read_text(encoding="utf-8"))
    lines = [
        HEADER,
        "# The release manifest",
        "",
        f"The JSON Schema every manifest is checked against when it is written or read "
        f"(`release/core/manifest.schema.json`, `$id` {code(schema.get('$id', ''))}). "
        "A document is a whole manifest or one job's part "
        f"({_manifest_type({'oneOf': schema.get('oneOf', [])})}). "
        "How it is made and used: [The release manifest](../explanation/manifest.md).",
        "",
        cell(schema.get("description", "")),
        "",
        *_definitions(schema),
    ]
    return "\n".join(lines)


PAGES: Mapping[str, Any] = {
    "reference/commands.md": commands_page,
    "reference/configuration.md": config_page,
    "reference/exit-codes.md": exit_codes_page,
    "reference/manifest.md": manifest_page,
}


def pages() -> dict[str, str]:
    """Every generated page, by its path under docs/."""
    return {path: make() for path, make in PAGES.items()}


def on_files(files: Any, config: Any) -> Any:
    """mkdocs' hook: the reference pages join the build, never the tree."""
    from mkdocs.structure.files import File

    for path, text in pages().items():
        files.append(File.generated(config, path, content=text))
    return files

"""The manual: its reference pages against the declarations, and the site as CI builds it.

The reference pages are made in-process from ``docs/gen_reference.py`` and compared with
what they are made from, read here on its own: :data:`COMMANDS` and the JSON Schema of
``[tool.release]``. Each comparison is shown to fail on a declaration that has one more
command, option or key than the page it is held to. The site is built with ``mkdocs
build --strict`` (no network: a broken link or anchor is an error), as ``nox -s docs``
builds it, from the tree as committed: no generated page is kept in it.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from release.commands.declare import Command, Kind, Option
from release.commands.registry import COMMANDS
from release.core.config_schema import schema_text
from release.errors import EngineError, ReleaseError

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


GEN = _generator()


# ---------------------------------------------------------------- what a page leaves out


def _sections(page: str) -> dict[str, str]:
    """A page's ``## `...``` sections by their heading's code text."""
    found: dict[str, str] = {}
    for part in page.split("\n## ")[1:]:
        heading, _, body = part.partition("\n")
        match = re.fullmatch(r"`(.+)`", heading.strip())
        if match:
            found[match[1]] = body
    return found


def _rows(body: str) -> dict[str, str]:
    """A section's table rows by the first code span of their first cell."""
    rows: dict[str, str] = {}
    for line in body.splitlines():
        match = re.match(r"\| `([^`]+)`", line)
        if match:
            rows.setdefault(match[1], line)
    return rows


def _cell_text(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def missing_commands(page: str, commands: Sequence[Command]) -> list[str]:
    """Each command and option the page does not document with its help, choices and default."""
    sections = _sections(page)
    missing = []
    for command in commands:
        body = sections.get(f"release {command.name}")
        if body is None or _cell_text(command.summary) not in body:
            missing.append(command.name)
            continue
        rows = _rows(body)
        for option in command.options:
            spelt = option.name.upper() if option.positional else f"--{option.name}"
            row = rows.get(spelt, "")
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]] or [""] * 5
            takes = cells[1]
            shown = (
                _cell_text(option.help) == cells[4]
                and all(f"`{c}`" in cells[2] for c in option.choices)
                and (option.default is None or f"`{option.default}`" == cells[3])
                and ("positional" in takes) == option.positional
                and ("repeatable" in takes or "several" in takes) == (option.kind == Kind.MANY)
            )
            if not shown:
                missing.append(f"{command.name} {spelt}")
    return missing


def _resolve(node: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    while "$ref" in node:
        node = root["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def schema_keys(schema: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Every (table, key) of the schema, tables named as TOML names them."""

    def walk(node: Mapping[str, Any], table: str) -> Iterator[tuple[str, str]]:
        for key, sub in node.get("properties", {}).items():
            yield table, key
            sub = _resolve(sub, schema)
            items = sub.get("items")
            inner = _resolve(items, schema) if isinstance(items, Mapping) else sub
            if "properties" in inner and inner.get("type") == "object":
                yield from walk(inner, f"{table}.{key}")

    yield from walk(schema, "tool.release")


def missing_keys(page: str, schema: Mapping[str, Any]) -> list[str]:
    sections = {name.strip("[]"): _rows(body) for name, body in _sections(page).items()}
    return [
        f"{table}.{key}" for table, key in schema_keys(schema) if key not in sections.get(table, {})
    ]


def missing_exit_codes(page: str, classes: Sequence[type[ReleaseError]]) -> list[str]:
    summary = _rows(page.split("## Raised as", 1)[0].replace("| [`", "| `"))
    return [
        f"{k.__name__} ({k.exit_code})"
        for k in classes
        if str(k.exit_code) not in summary or f"`{k.__name__}` ({k.__module__})" not in page
    ]


# ---------------------------------------------------------------- commands and options


def test_every_command_and_option_is_in_the_reference() -> None:
    page = GEN.commands_page(COMMANDS)
    assert missing_commands(page, COMMANDS) == []
    # the control: one section a command, and the parser found each one's rows
    assert set(_sections(page)) == {f"release {c.name}" for c in COMMANDS}
    assert "--allow-host" in _rows(_sections(page)["release reproduce"])


def test_a_declaration_with_one_more_option_or_command_is_missing_from_the_page() -> None:
    page = GEN.commands_page(COMMANDS)
    first = COMMANDS[0]
    grown = Command(
        first.name,
        first.summary,
        (*first.options, Option("brand-new", "a new option", Kind.TEXT, choices=("a", "b"))),
        first.target,
    )
    extra = Command("images.anew", "A command no page has.", (), "x:y")
    assert missing_commands(page, (grown, *COMMANDS[1:], extra)) == [
        f"{first.name} --brand-new",
        "images.anew",
    ]


def test_an_option_s_help_choices_default_and_kind_are_held_to_the_page() -> None:
    page = GEN.commands_page(COMMANDS)
    notes = next(c for c in COMMANDS if c.name == "notes")
    changed = [
        Option("format", "md or json", Kind.TEXT, choices=("md", "json", "html"), default="md"),
        Option("view", "rc or final", Kind.TEXT, choices=("rc", "final"), default="final"),
        Option("since", "where the notes begin", Kind.TEXT),
        Option("until", "end (inclusive)", Kind.MANY, default="HEAD"),
    ]
    for option in changed:
        options = tuple(option if o.name == option.name else o for o in notes.options)
        other = Command(notes.name, notes.summary, options, notes.target)
        assert missing_commands(page, [other]) == [f"notes --{option.name}"], option


def test_usage_lines_are_the_ones_help_prints() -> None:
    ci = next(c for c in COMMANDS if c.name == "ci")
    section = _sections(GEN.commands_page(COMMANDS))["release ci"]
    from release.cli.arguments import parser_of

    block = section.split("```text\n", 1)[1].split("\ninv ", 1)[0]
    assert " ".join(block.split()) == " ".join(parser_of(ci).format_usage().split())
    # the --out of ci is a directory, as --help says: the page says what --help says
    assert "| `--out` `-o` | `DIR` |" in section


# ---------------------------------------------------------------- [tool.release]


def test_every_configuration_key_is_in_the_reference() -> None:
    schema = json.loads(schema_text())
    page = GEN.config_page(schema)
    keys = list(schema_keys(schema))
    assert missing_keys(page, schema) == []
    # the control: the walk reaches the nested tables
    assert ("tool.release.images.variants", "base-image") in keys
    assert ("tool.release.images.smoke.checks.requests", "expect-json") in keys
    assert ("tool.release.github", "protected") in keys


def test_a_schema_with_one_more_key_is_missing_from_the_page_made_before_it() -> None:
    schema = json.loads(schema_text())
    page = GEN.config_page(schema)
    grown = copy.deepcopy(schema)
    grown["$defs"]["variant"]["properties"]["brand-new"] = {"type": "string"}
    grown["properties"]["also-new"] = {"type": "boolean"}
    assert sorted(missing_keys(page, grown)) == [
        "tool.release.also-new",
        "tool.release.images.variants.brand-new",
    ]


# ---------------------------------------------------------------- exit codes


def test_every_exit_code_an_error_carries_is_in_the_reference() -> None:
    page = GEN.exit_codes_page()
    classes = [k for k in GEN._error_classes() if GEN._public(k)]
    assert {k.exit_code for k in classes} >= {1, 2, 3, 4, 5, 6, 7}
    assert missing_exit_codes(page, classes) == []
    assert "`130`" in page and "`143`" in page


def test_an_error_with_a_new_exit_code_is_missing_from_the_page() -> None:
    page = GEN.exit_codes_page()

    class QuotaError(EngineError):
        """A registry quota ran out."""

        exit_code = 9

    assert missing_exit_codes(page, [EngineError, QuotaError]) == ["QuotaError (9)"]


# ---------------------------------------------------------------- the written pages

GLOBAL = {"main-branch", "config", "debug", "help", "completion", "version", "list"}
COMMAND_LINE = re.compile(r"release ((?:images\.)?[a-z][a-z-]*)([^`#\n]*)")


def unknown_flags(text: str, commands: Sequence[Command]) -> list[str]:
    """``release TASK ... --flag`` spans of a page whose flag TASK does not take."""
    offered = {c.name: {o.name for o in c.options if not o.positional} for c in commands}
    unknown = []
    for match in COMMAND_LINE.finditer(text):
        task = match[1]
        for flag in re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", match[2]):
            if task in offered and flag not in offered[task] | GLOBAL:
                unknown.append(f"{task} --{flag}")
    return unknown


def test_the_written_pages_name_only_options_help_offers() -> None:
    """Each ``release TASK ... --flag`` in the written pages (and the README) names an
    option ``release TASK --help`` lists."""
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    found = {p.name: unknown_flags(p.read_text(encoding="utf-8"), COMMANDS) for p in pages}
    assert {name: flags for name, flags in found.items() if flags} == {}
    seen = sum(len(COMMAND_LINE.findall(p.read_text(encoding="utf-8"))) for p in pages)
    assert seen > 100  # the control: the pages are full of command lines


def test_a_page_naming_an_option_a_task_lacks_is_caught() -> None:
    text = "`release ci --format github --out-file x.yml` and `release tag --sign`"
    assert unknown_flags(text, COMMANDS) == ["ci --out-file"]


# ---------------------------------------------------------------- the site


def _mkdocs(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_no_generated_page_is_kept_in_the_tree() -> None:
    for path in GEN.PAGES:
        assert not (DOCS / path).exists(), path
    tracked = subprocess.run(
        ["git", "ls-files", "docs", "site"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert not any(p.startswith("site/") or p in {f"docs/{g}" for g in GEN.PAGES} for p in tracked)


def test_the_manual_builds_strict_with_its_reference(tmp_path: Path) -> None:
    """What ``nox -s docs`` does, into a temporary directory: every internal link and
    anchor resolves, and the reference pages are made from the code."""
    site = tmp_path / "site"
    result = _mkdocs(ROOT, site)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "WARNING" not in result.stderr, result.stderr
    commands = (site / "reference" / "commands.html").read_text(encoding="utf-8")
    for command in COMMANDS:
        assert f"release {command.name}</code>" in commands, command.name
    keys = (site / "reference" / "configuration.html").read_text(encoding="utf-8")
    assert "tool.release.images.snapshot" in keys
    assert not (DOCS / "reference").exists()  # the pages went into the build only
    assert not any(
        "fonts.googleapis" in p.read_text(encoding="utf-8") for p in site.rglob("*.html")
    )


def test_a_broken_anchor_fails_the_build(tmp_path: Path) -> None:
    """The same build, on a copy whose one link names an anchor its page lacks."""
    copy_root = tmp_path / "tree"
    copy_root.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", copy_root / "mkdocs.yml")
    shutil.copytree(DOCS, copy_root / "docs", ignore=shutil.ignore_patterns("__pycache__"))
    page = copy_root / "docs" / "explanation" / "notes.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\n[back](rc-cycle.md#no-such-heading)\n",
        encoding="utf-8",
    )
    result = _mkdocs(copy_root, tmp_path / "site")
    assert result.returncode != 0
    assert "does not contain an anchor '#no-such-heading'" in result.stderr

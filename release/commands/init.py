"""``release init``: a commented ``[tool.release]`` written into the repository's
``pyproject.toml``, its values guessed from what the repository has (release branches, tag
spellings, the main branch, a changelog, a Dockerfile's ``ARG``s), each after a comment
saying what it was guessed from.

The table is appended: the rest of an existing ``pyproject.toml`` stays byte for byte
(its byte-order mark and line endings too). A file that has ``[tool.release]`` already is
refused and left as it was; so is one the table cannot be added to. The new file is
loaded as every command loads it and checked against the schema before it is written,
all at once (:func:`~release.adapters.files.atomic_write`). ``--dry-run`` changes nothing.

``--out FILE`` writes the table alone into FILE, a file of the tool's own: under a header
saying what wrote it and the sha256 of the rest (:mod:`release.core.generated`). A FILE
there already is replaced only where release wrote it and nobody changed it since, else
with ``--force`` (refused, exit 3).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from release.adapters.config_file import CONFIG_FILE
from release.adapters.files import atomic_write, output_path, read_tree_text
from release.adapters.generated_files import (
    Generated,
    check_generated,
    write_generated,
    written_by,
)
from release.adapters.git import GitRepo
from release.adapters.repo_facts import read_facts
from release.commands.common import forced_lines
from release.commands.outcome import JSONValue, OutcomeDefaults, Run
from release.core.config import config_from_text, parse_pyproject, release_table
from release.core.config_schema import schema_problems
from release.core.conventions import Guess
from release.core.generated import Spelling
from release.core.init_text import render_table
from release.core.terminal_text import escaped
from release.errors import ConfigError, ExitCode, RefusedError, UsageError

__all__ = ["InitOutcome", "InitRequest", "init"]


@dataclass(frozen=True)
class InitRequest:
    out: str | None = None  # a file of the tool's for the table, instead of pyproject.toml
    force: bool = False  # --out: replace a FILE release did not write, or one changed since
    dry_run: bool = False
    json: bool = False


@dataclass(frozen=True)
class InitOutcome(OutcomeDefaults):
    path: str  # the pyproject.toml written (or that would be)
    table: str  # the text added
    guesses: tuple[Guess, ...]
    created: bool  # there was no pyproject.toml (no FILE, for --out)
    dry_run: bool
    forced: tuple[str, ...] = ()  # what --force replaced, as said

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.OK

    def text(self) -> Iterable[str]:
        if self.dry_run:
            verb = "would create" if self.created else "would add to"
            verb = "would write" if self.path != CONFIG_FILE else verb
            yield f"release init --dry-run: {verb} {escaped(self.path)}, changing nothing:"
            yield ""
            yield from (escaped(line) for line in self.table.splitlines())
            return
        made = sum(g.value is not None for g in self.guesses)
        if self.path != CONFIG_FILE:
            verb = "wrote" if self.created else "wrote again"
        else:
            verb = "created" if self.created else "added [tool.release] to"
        yield f"{verb} {escaped(self.path)} ({made} value(s) guessed, each says from what)"
        yield from self.forced
        if self.path == CONFIG_FILE:
            yield "next: read it, then run release check"
        else:
            yield f"next: read it, then try it: release --config {escaped(self.path)} check"

    def document(self) -> Mapping[str, JSONValue]:
        return {
            "path": self.path,
            "created": self.created,
            "dry_run": self.dry_run,
            "replaced": [self.path] if self.forced else [],
            "table": self.table,
            "guesses": [
                {
                    "key": g.key,
                    "value": list(g.value) if isinstance(g.value, tuple) else g.value,
                    "guessed_from": g.why,
                }
                for g in self.guesses
            ],
        }


def init(request: InitRequest, run: Run) -> InitOutcome:
    repo = GitRepo(run.repo)
    root = repo.root
    if request.out is not None:
        return _init_outside(repo, Path(request.out), request.dry_run, request.force)
    if request.force:
        raise UsageError("--force is for --out FILE: pyproject.toml is only ever added to")
    path = output_path(root / CONFIG_FILE, CONFIG_FILE, tree=root)
    found = read_tree_text(root, CONFIG_FILE, CONFIG_FILE, error=ConfigError)
    old = found.text if found is not None else ""
    if found is not None and "release" in (parse_pyproject(old).get("tool") or {}):
        raise RefusedError(
            f"{CONFIG_FILE} has a [tool.release] table already; edit it there, "
            "or check it with release check (nothing changed)"
        )
    newline = "\r\n" if "\r\n" in old else "\n"
    table, made = render_table(read_facts(repo), newline=newline)
    joint = "" if not old else (newline if old.endswith(("\n", "\r")) else newline * 2)
    text = old + joint + table
    _check(text, table)
    if not request.dry_run:
        atomic_write(path, (found.restore(text) if found is not None else text).encode("utf-8"))
    return InitOutcome(CONFIG_FILE, table, tuple(made), found is None, request.dry_run)


def _init_outside(repo: GitRepo, out: Path, dry_run: bool, force: bool) -> InitOutcome:
    """The table alone, in ``out`` (as ``--config`` reads it), under the tool's header: the
    tree and its ``pyproject.toml`` are not touched; a file there that release did not
    write, or that was changed since, is refused unless ``force``."""
    path = output_path(out, "--out", tree=repo.root)
    existed = os.path.lexists(path)
    table, made = render_table(read_facts(repo), newline="\n")
    _check(table, table)
    by = written_by(["release", "init", "--out", str(out)])
    files = [Generated(path, table, Spelling.HASH, by)]
    if dry_run:
        check_generated(files, force=force, command="release init", root=repo.root)
        return InitOutcome(str(out), table, tuple(made), not existed, dry_run)
    written = write_generated(files, force=force, command="release init", root=repo.root)
    forced = tuple(forced_lines(written))
    return InitOutcome(str(out), table, tuple(made), not existed, dry_run, forced)


def _check(text: str, table: str) -> None:
    """The file as it would be must load as every command loads it, hold the table as
    written, and validate against the schema."""
    try:
        document = parse_pyproject(text)
        written = release_table(document)
        if written != release_table(parse_pyproject(table)):
            raise ConfigError("its [tool] table is written so that [tool.release] cannot join it")
        config_from_text(text)
    except ConfigError as err:
        raise RefusedError(
            f"cannot add [tool.release] to {CONFIG_FILE}: {err.message} "
            "(write the table by hand: release init --dry-run shows it; nothing changed)"
        ) from None
    problems = schema_problems(written)
    if problems:
        raise RefusedError(f"the table made does not validate: {problems[0]} (nothing changed)")

"""The header of every file ``release`` writes into a repository, and what it tells the
next write. Pure: text in, text out.

A generated file is the *body* a command renders with a header put in: what wrote it
(this tool, its version, the command with the options that decide what the file holds)
and the sha256 of the body, which is the file less the header's lines. So a file can be
read for what it is:

- :attr:`Standing.OURS`: the header is there and the rest is what it says: nobody changed
  it since. The next write replaces it freely (a config changed, ``release ci`` again).
- :attr:`Standing.EDITED`: the header is there, the rest is not what it says: changed by
  hand since. Not replaced but with ``--force``.
- :attr:`Standing.FOREIGN`: no header of ours: someone else's file (a hand-written
  ``.buildkite/pipeline.yml``). Not replaced but with ``--force``.

The header is a comment in each format (:class:`Spelling`): ``#`` lines opening a YAML,
TOML or Python file; one ``<!-- -->`` comment after an HTML page's ``<!DOCTYPE html>``;
JSON has no comments, so a bake file carries it as a ``variable`` (bake's documented
block, read by no target) after its opening ``{``. Whatever the command line holds, the
header stays a comment (or a string): characters that are not printable are escaped, and
so is what would end the comment (HTML's ``>``) or be read as an expression (bake's
``${`` and ``%{``). The same body and the same writer give the same bytes.
"""

from __future__ import annotations

import enum
import hashlib
import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from release.core.terminal_text import escaped

__all__ = ["TOOL", "Spelling", "Standing", "WrittenBy", "body_digest", "stamped", "standing"]

TOOL = "release"
BAKE_VARIABLE = "RELEASE_WRITTEN_BY"  # bake's variable block that carries the header
_LINES = (
    "Written by {tool} {version}: {command}",
    "{tool} replaces it only while it is as written here, or with --force. This file",
    "without {these} has sha256 {digest}",
)
# placeholders that every spelling's escaping leaves as they are, to read a header back
_MARKS = {"version": "QVERSIONQ", "command": "QCOMMANDQ", "digest": "QDIGESTQ"}
_GROUPS = {
    "QVERSIONQ": r"(?P<version>[^\n]*?)",
    "QCOMMANDQ": r"(?P<command>[^\n]*?)",
    "QDIGESTQ": r"(?P<digest>[0-9a-f]{64})",
}


class Spelling(enum.Enum):
    """Where the header goes in a format, and how it is spelt there."""

    HASH = "#"  # YAML, TOML, Python: comment lines opening the file
    HTML = "html"  # one comment after the page's first line, <!DOCTYPE html>
    BAKE_JSON = "bake"  # a bake variable after the document's opening "{"

    @property
    def first(self) -> str:
        """The line the header follows ("": the header opens the file)."""
        return {"#": "", "html": "<!DOCTYPE html>\n", "bake": "{\n"}[self.value]


class Standing(enum.Enum):
    """What a file found where the tool writes one is to the tool (values: as said)."""

    NEW = "no file there"
    OURS = "written by release and unchanged since"
    EDITED = "changed since release wrote it"
    FOREIGN = "not written by release"


@dataclass(frozen=True)
class WrittenBy:
    """What writes a file: this tool at ``version``, by ``command`` (its argv, with the
    options that decide what the file holds)."""

    version: str
    command: tuple[str, ...]


def body_digest(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _bake_text(text: str) -> str:
    """``text`` as bake reads a string literally: ``${`` and ``%{`` start no expression."""
    return text.replace("${", "$${").replace("%{", "%%{")


def _header(spelling: Spelling, version: str, command: str, digest: str) -> str:
    """The header's lines as written (each ending in a newline); values already escaped."""
    these = "this line" if spelling is Spelling.BAKE_JSON else "these lines"
    lines = [
        line.format(tool=TOOL, version=version, command=command, digest=digest, these=these)
        for line in _LINES
    ]
    if spelling is Spelling.HASH:
        return "".join(f"# {line}\n" for line in lines)
    if spelling is Spelling.HTML:
        return f"<!-- {lines[0]}\n     {lines[1]}\n     {lines[2]} -->\n"
    value = json.dumps({"default": f"{lines[0]}. {lines[1]} {lines[2]}"})
    return f'  "variable": {{{json.dumps(BAKE_VARIABLE)}: {value}}},\n'


def _escaped(spelling: Spelling, text: str) -> str:
    """``text`` (a version, a command line) as it may stand in the header of ``spelling``:
    one line, nothing that ends the comment or is read as code."""
    one_line = escaped(text)
    if spelling is Spelling.HTML:
        return html.escape(one_line, quote=False)  # no "-->" or "<!--" can be spelt
    if spelling is Spelling.BAKE_JSON:
        return _bake_text(one_line)  # json.dumps escapes quotes and backslashes
    return one_line


def _command(command: Sequence[str]) -> str:
    """The argv as one would type it: an argument with a space or a quote, quoted."""
    return " ".join(
        arg if arg and re.fullmatch(r"[^\s'\"\\]+", arg) else json.dumps(arg) for arg in command
    )


def stamped(body: str, spelling: Spelling, by: WrittenBy) -> str:
    """The file's text: ``body`` with the header put in where ``spelling`` puts it."""
    first = spelling.first
    if not body.startswith(first):
        raise ValueError(f"a body spelt {spelling.name} starts with {first!r}")
    version = _escaped(spelling, by.version)
    command = _escaped(spelling, _command(by.command))
    header = _header(spelling, version, command, body_digest(body))
    return first + header + body[len(first) :]


def _pattern(spelling: Spelling) -> re.Pattern[str]:
    """The header of ``spelling`` as a pattern, made from the header itself."""
    made = re.escape(_header(spelling, *_MARKS.values()))
    for mark, group in _GROUPS.items():
        made = made.replace(mark, group)
    return re.compile(made)


_PATTERNS = {spelling: _pattern(spelling) for spelling in Spelling}


def standing(text: str, spelling: Spelling) -> Standing:
    """What the file holding ``text`` is to the tool: ours and unchanged, ours and changed
    since, or not ours (no header of ours where ``spelling`` puts it)."""
    first = spelling.first
    if not text.startswith(first):
        return Standing.FOREIGN
    found = _PATTERNS[spelling].match(text, len(first))
    if found is None:
        return Standing.FOREIGN
    body = first + text[found.end() :]
    return Standing.OURS if body_digest(body) == found["digest"] else Standing.EDITED

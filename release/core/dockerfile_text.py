"""A Dockerfile read as data, for ``release init``: its instructions with the line each
starts on (continuation lines joined; comments, parser directives and here-documents
skipped), its ``ARG``s and their defaults, and its stages with what each is ``FROM``.

References resolve as docker resolves them: ``${NAME}``, ``$NAME``, ``${NAME:-word}`` and
``${NAME:+word}``; a ``FROM`` line sees only the ``ARG``s before the first ``FROM``, and an
``ARG`` declared there without a default is empty. A name no ``ARG`` declares stays as
written, so what cannot be told is seen to be so. The text is untrusted: it is only
matched against, never run, and nothing it names is fetched or followed. Pure.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Arg", "Dockerfile", "Instruction", "Stage", "expand", "parse_dockerfile"]

_VAR = re.compile(
    r"\$\{(?P<a>[A-Za-z_][A-Za-z0-9_]*)(?::(?P<op>[-+])(?P<word>[^}]*))?\}"
    r"|\$(?P<b>[A-Za-z_][A-Za-z0-9_]*)"
)
_HEREDOC = re.compile(r"<<-?[\"']?(?P<end>[A-Za-z_][A-Za-z0-9_]*)[\"']?")
_MAX_INSTRUCTIONS = 5000  # far past any real Dockerfile; what follows is not read


def expand(value: str, known: Mapping[str, str]) -> str:
    """``value`` with the references ``known`` can answer replaced (``known``: name ->
    value, "" for a name declared without a default); the others stay as written."""

    def one(match: re.Match[str]) -> str:
        name = match["a"] or match["b"]
        found = known.get(name)
        if match["op"] == "-":
            return found if found else match["word"]
        if match["op"] == "+":
            return match["word"] if found else ""
        return found if found is not None else match[0]

    return _VAR.sub(one, value)


@dataclass(frozen=True)
class Instruction:
    line: int  # where it starts, from 1
    keyword: str  # upper case: FROM, ARG, RUN...
    rest: str  # what follows the keyword, continuation lines joined by a space


@dataclass(frozen=True)
class Arg:
    name: str
    default: str | None  # as written (quotes taken off); None: declared without one
    line: int
    stage: int  # the stage it is declared in; -1: before the first FROM


@dataclass(frozen=True)
class Stage:
    index: int
    name: str  # "" where the FROM line names none
    source: str  # the image or stage the FROM line names, as written
    line: int
    platform: str = ""  # --platform=..., as written


def _instructions(text: str) -> list[Instruction]:
    out: list[Instruction] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines) and len(out) < _MAX_INSTRUCTIONS:
        start, line = i + 1, lines[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        parts = [line]
        while parts[-1].endswith("\\") and i < len(lines):
            parts[-1] = parts[-1][:-1]
            nxt = lines[i].strip()
            i += 1
            if nxt.startswith("#"):
                parts.append("\\")  # a comment inside a continuation: skipped, still continued
                continue
            parts.append(nxt)
        joined = " ".join(p for p in parts if p != "\\").strip()
        keyword, _, rest = joined.partition(" ")
        heredoc = _HEREDOC.search(rest)
        if heredoc is not None:  # its body is data for the instruction, not instructions
            while i < len(lines) and lines[i].strip() != heredoc["end"]:
                i += 1
            i += 1
        out.append(Instruction(start, keyword.upper(), rest.strip()))
    return out


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text, posix=True)
    except ValueError:  # an unbalanced quote: words as they stand
        return text.split()


def _arg_list(rest: str, line: int, stage: int) -> list[Arg]:
    out = []
    for word in _words(rest):
        name, eq, value = word.partition("=")
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            out.append(Arg(name, value if eq else None, line, stage))
    return out


def _stage(rest: str, index: int, line: int) -> Stage:
    words = rest.split()
    platform = ""
    while words and words[0].startswith("--"):
        flag = words.pop(0)
        if flag.startswith("--platform="):
            platform = flag.partition("=")[2]
    source = words[0] if words else ""
    name = words[2] if len(words) >= 3 and words[1].lower() == "as" else ""
    return Stage(index, name, source, line, platform)


@dataclass(frozen=True)
class Dockerfile:
    instructions: tuple[Instruction, ...]
    args: tuple[Arg, ...]
    stages: tuple[Stage, ...]

    def global_args(self) -> dict[str, str]:
        """What a ``FROM`` line sees: the ``ARG``s before the first ``FROM``, each
        resolved by those before it ("" where declared without a default)."""
        known: dict[str, str] = {}
        for arg in self.args:
            if arg.stage == -1:
                known[arg.name] = expand(arg.default or "", known)
        return known

    def arg(self, name: str) -> Arg | None:
        """The first declaration of ``name`` that has a default (else the first)."""
        found = [a for a in self.args if a.name == name]
        return next((a for a in found if a.default is not None), found[0] if found else None)

    def value(self, name: str) -> str | None:
        """``name``'s first default, its references resolved by the other defaults; None
        where it has no default or one that does not resolve."""
        arg = self.arg(name)
        if arg is None or arg.default is None:
            return None
        known = {a.name: a.default for a in self.args if a.default is not None}
        value = arg.default
        for _ in range(8):  # defaults that name defaults
            value, before = expand(value, known), value
            if value == before:
                break
        return None if "$" in value else value

    def resolved(self, stage: Stage) -> str:
        return expand(stage.source, self.global_args())

    def stage_named(self, name: str) -> Stage | None:
        return next((s for s in self.stages if s.name and s.name.lower() == name.lower()), None)

    def _stage_for(self, ref: str, before: int) -> Stage | None:
        """The earlier stage ``ref`` names; a ref with an unresolved reference
        (``base-${TARGETARCH}``) names the first stage it could be."""
        found = self.stage_named(ref)
        if found is not None and found.index < before:
            return found
        if "$" not in ref:
            return None
        pieces, pos = [], 0
        for match in _VAR.finditer(ref):
            pieces += [re.escape(ref[pos : match.start()]), ".+"]
            pos = match.end()
        pattern = "".join(pieces) + re.escape(ref[pos:])
        return next(
            (s for s in self.stages if s.index < before and s.name
             and re.fullmatch(pattern, s.name, re.I)),
            None,
        )  # fmt: skip

    def origin(self, stage: Stage) -> tuple[str, Stage]:
        """The image a stage is built on, through the stages it is ``FROM``: that image's
        reference as resolved (references docker cannot resolve left in) and the stage
        whose ``FROM`` line names it."""
        seen = set()
        while stage.index not in seen:
            seen.add(stage.index)
            ref = self.resolved(stage)
            earlier = self._stage_for(ref, stage.index)
            if earlier is None:
                return ref, stage
            stage = earlier
        return self.resolved(stage), stage

    def copy_sources(self) -> list[tuple[str, int]]:
        """The paths ``COPY`` and ``ADD`` take from the build context (not from a stage, an
        image or a URL), with their lines."""
        out = []
        for ins in self.instructions:
            if ins.keyword not in ("COPY", "ADD"):
                continue
            words = ins.rest.split()
            if any(w.startswith("--from=") for w in words):
                continue
            words = [w for w in words if not w.startswith("--")]
            if words and words[0].startswith("["):
                try:
                    words = [str(w) for w in json.loads(" ".join(words))]
                except ValueError:
                    continue
            for source in words[:-1]:
                if "://" not in source and not source.startswith(("git@", "$", "<<")):
                    out.append((source, ins.line))
        return out


def parse_dockerfile(text: str) -> Dockerfile:
    instructions = _instructions(text)
    args: list[Arg] = []
    stages: list[Stage] = []
    for ins in instructions:
        if ins.keyword == "FROM":
            stages.append(_stage(ins.rest, len(stages), ins.line))
        elif ins.keyword == "ARG":
            args += _arg_list(ins.rest, ins.line, len(stages) - 1)
    return Dockerfile(tuple(instructions), tuple(args), tuple(stages))

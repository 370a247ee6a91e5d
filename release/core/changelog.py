"""CHANGELOG.md (Keep a Changelog) edited in place: text in, text out.

The file is split into a preamble and ``## `` sections and joined back byte for byte,
so an edit touches only the section it writes. Writing the same section twice yields
the same text. File I/O lives in :func:`update_file`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Changelog", "new_changelog", "update_file"]

_SECTION = re.compile(r"^## ", re.MULTILINE)
_LABEL = re.compile(r"^## \[(?P<label>[^\]]+)\]")
# Link reference definitions closing the file ("[0.1.0]: https://..."): they stay last.
_FOOTER = re.compile(r"(?:^\[[^\]\r\n]+\]:[^\r\n]*(?:\r?\n|\Z))+\Z", re.MULTILINE)

HEADER = """# Changelog

All notable changes to this project are documented in this file.

The format is based on [Keep a Changelog](https://keepachangelog.com/en/1.1.0/),
and this project adheres to [PEP 440](https://peps.python.org/pep-0440/) versioning.

## [Unreleased]

"""


def new_changelog() -> str:
    return HEADER


@dataclass
class Changelog:
    preamble: str
    sections: list[str]
    footer: str = ""

    @classmethod
    def parse(cls, text: str) -> Changelog:
        starts = [m.start() for m in _SECTION.finditer(text)]
        if not starts:
            return cls(text, [])
        bounds = [*starts, len(text)]
        sections = [text[a:b] for a, b in itertools.pairwise(bounds)]
        footer = _FOOTER.search(sections[-1])
        if footer is None:
            return cls(text[: starts[0]], sections)
        sections[-1] = sections[-1][: footer.start()]
        return cls(text[: starts[0]], sections, footer.group())

    def render(self) -> str:
        return self.preamble + "".join(self.sections) + self.footer

    def labels(self) -> list[str | None]:
        out: list[str | None] = []
        for section in self.sections:
            match = _LABEL.match(section)
            out.append(match["label"] if match else None)
        return out

    def section(self, label: str) -> str | None:
        for name, text in zip(self.labels(), self.sections, strict=True):
            if name == label:
                return text
        return None

    def upsert(self, label: str, date: str, body: str, *, replaces: Iterable[str] = ()) -> None:
        """Write ``## [label] - date`` with ``body``; drop the sections in ``replaces``.

        An existing section of the same label keeps its date, so re-running changes nothing.
        """
        existing = self.section(label)
        if existing is not None:
            match = re.match(r"^## \[[^\]]+\](?: - (?P<date>\S+))?", existing)
            if match and match["date"]:
                date = match["date"]
        text = self.render()
        crlf = "\r\n" in text and text.count("\n") == text.count("\r\n")
        eol = "\r\n" if crlf else "\n"  # keep a CRLF file CRLF (a mixed one gets LF)
        lines = body.replace("\r\n", "\n").rstrip().split("\n")
        text = eol.join([f"## [{label}] - {date}", "", *lines, "", ""])
        drop = set(replaces) - {label}
        labels = self.labels()
        kept: list[str] = []
        placed = False
        for name, section in zip(labels, self.sections, strict=True):
            if name == label:
                kept.append(text)
                placed = True
            elif name in drop:
                continue
            else:
                kept.append(section)
        if not placed:
            index = 0
            kept_labels = [(_LABEL.match(s) or [None, None])[1] for s in kept]
            for position, name in enumerate(kept_labels):
                if name is not None and name.lower() == "unreleased":
                    index = position + 1
                    break
            # a blank line before the new section, also after a last section or a bare preamble
            if index > 0 and not kept[index - 1].endswith(eol * 2):
                kept[index - 1] = kept[index - 1].rstrip("\r\n") + eol * 2
            elif index == 0 and self.preamble.strip() and not self.preamble.endswith(eol * 2):
                self.preamble = self.preamble.rstrip("\r\n") + eol * 2
            elif index == 0 and self.preamble and not self.preamble.endswith("\n"):
                self.preamble += eol  # a section starts a line of its own, or is not one
            kept.insert(index, text)
        if kept and kept[-1] is text and not self.footer:
            kept[-1] = text[: -len(eol)]  # the file ends with one newline, not a blank line
        elif kept and self.footer and not kept[-1].endswith(eol * 2):
            kept[-1] = kept[-1].rstrip("\r\n") + eol * 2  # a blank line before the links
        self.sections = kept


def update_file(
    path: Path, label: str, date: str, body: str, *, replaces: Iterable[str] = ()
) -> bool:
    """Upsert a section into the file at ``path`` (created if missing). True if it changed."""
    before = path.read_bytes().decode("utf-8") if path.exists() else None  # CRLF kept
    log = Changelog.parse(before if before is not None else new_changelog())
    log.upsert(label, date, body, replaces=replaces)
    after = log.render()
    if after == before:
        return False
    path.write_text(after, encoding="utf-8")
    return True

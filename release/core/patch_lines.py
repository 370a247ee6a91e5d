"""The changed lines of patches, as backport detection compares them
(:mod:`release.core.backports`): the added and removed lines with a letter or digit in
them, trimmed, and their signatures (64-bit checksums), read from ``git diff-tree -p
--stdin`` output. Pure.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator

__all__ = ["changed_lines", "patches", "signature", "signatures"]

# an added or removed line, not a file header; what follows the sign is taken whole (one
# quick scan to the line's end) and trimmed after
_CHANGED = re.compile(r"^(?![-+]{3} )[-+].*$", re.M)
_HAS_WORD = re.compile(r"[^\W_]")  # brackets and blank lines say nothing
_SHA_LINE = re.compile(r"^[0-9a-f]{40}$", re.M)


def _changed(text: str, start: int = 0, end: int | None = None) -> list[tuple[str, int]]:
    """(line, how often) for :func:`changed_lines` of ``text[start:end]`` (read in place,
    not copied): each distinct line as the patch has it is trimmed once (a patch of
    generated files repeats many)."""
    has_word = _HAS_WORD.search
    found = _CHANGED.findall(text, start, len(text) if end is None else end)
    return [
        (line[0] + " ".join(line[1:].split()), count)
        for line, count in Counter(found).items()
        if has_word(line, 1)  # after the sign
    ]


def changed_lines(patch: str) -> Counter[str]:
    """The added and removed lines of a patch with a letter or digit in them, each kept
    with its sign, without the spaces at either end and with runs of spaces as one
    (re-indented code still matches)."""
    return _counted(_changed(patch))


def _counted(lines: list[tuple[str, int]]) -> Counter[str]:
    counted: Counter[str] = Counter()
    for line, count in lines:
        counted[line] += count
    return counted


def _sections(text: str) -> Iterator[tuple[str, int, int]]:
    """(sha, start, end) of each patch in ``git diff-tree -p --stdin`` output (each led by
    the commit's sha on a line of its own)."""
    marks = list(_SHA_LINE.finditer(text))
    for i, mark in enumerate(marks):
        yield mark.group(), mark.end(), marks[i + 1].start() if i + 1 < len(marks) else len(text)


def patches(text: str) -> dict[str, Counter[str]]:
    """Commit -> its changed lines (:func:`changed_lines`), from ``git diff-tree -p
    --stdin`` output."""
    return {sha: _counted(_changed(text, start, end)) for sha, start, end in _sections(text)}


def signatures(text: str) -> dict[str, Counter[int]]:
    """Commit -> the :func:`signature` of its changed lines, from ``git diff-tree -p
    --stdin`` output, without keeping the lines' text."""
    return {sha: _signed(_changed(text, start, end)) for sha, start, end in _sections(text)}


def signature(lines: Counter[str]) -> Counter[int]:
    """Changed lines as numbers, what :func:`release.core.backports.by_lines` compares (and what is kept of a patch
    between runs): each line's CRC-32 and Adler-32, as one 64-bit number (two different
    lines would have to agree in both checksums to be taken for one)."""
    return _signed(lines.items())


def _signed(lines: Iterable[tuple[str, int]]) -> Counter[int]:
    crc32, adler32 = zlib.crc32, zlib.adler32
    signed: Counter[int] = Counter()
    for line, count in lines:
        data = line.encode("utf-8", "surrogateescape")
        signed[crc32(data) | adler32(data) << 32] += count
    return signed

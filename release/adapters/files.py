"""Text files a user points the tool at (the changelog, a picks file): read whole, as
UTF-8, or refused in one line.

A missing file reads as None; a directory, an unreadable file or bytes that are not UTF-8
are a :class:`UsageError` naming the file. A byte-order mark is read past and reported,
so a writer can put it back. Writing is :func:`release.adapters.process.atomic_write`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from release.errors import UsageError

__all__ = ["TextFile", "read_text"]

BOM = "\ufeff"


@dataclass(frozen=True)
class TextFile:
    text: str  # without the byte-order mark
    bom: bool = False

    def restore(self, text: str) -> str:
        """``text`` as the file should hold it: with its byte-order mark if it had one."""
        return BOM + text if self.bom else text


def read_text(path: Path, what: str) -> TextFile | None:
    """The file's text, or None when there is no file at ``path``."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise UsageError(f"{what} {path} is a directory, not a file") from None
    except OSError as err:
        raise UsageError(f"cannot read {what} {path}: {err.strerror or err}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UsageError(
            f"{what} {path} is not UTF-8 text (byte {err.start} is {data[err.start]:#04x}); "
            "save it as UTF-8"
        ) from None
    if text.startswith(BOM):
        return TextFile(text[1:], bom=True)
    return TextFile(text)

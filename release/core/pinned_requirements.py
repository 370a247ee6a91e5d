"""A hash-pinned requirements file (``[tool.release.ci] requirements``), as
``pip-compile --generate-hashes`` writes it, checked before the jobs are written to
install from it with ``pip install --require-hashes -r FILE``. Pure.

pip's hash mode refuses the whole install where one requirement has no hash, so every
requirement must carry one; this tool and nox must be there, each pinned to one version
with ``==``. Lines continue with a backslash; comments start at `` #``; option lines
(``--index-url``, ``--find-links``) are pip's business. An included file (``-r``,
``-c``) or an editable line cannot be checked from here, nor hash-checked by pip, so
either is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from release.core.tool_pins import TOOL, PinKind, ToolInstall
from release.errors import RefusedError

__all__ = ["PinnedLine", "read_requirements", "requirements_pin"]

_HASH = re.compile(r"^--hash=(?:sha256|sha384|sha512):[0-9a-f]+$")
_INCLUDES = ("-r", "--requirement", "-c", "--constraint", "-e", "--editable")
_NEEDED = (TOOL, "nox")


@dataclass(frozen=True)
class PinnedLine:
    """One requirement of the file: where it starts, its name (canonical), its version
    specifier as written, and its hashes."""

    line: int
    name: str
    specifier: str
    hashes: tuple[str, ...]

    @property
    def exact(self) -> bool:
        """Pinned to one version: one ``==`` with no wildcard."""
        return re.fullmatch(r"==\s*[^*,=<>!~\s]+", self.specifier.strip()) is not None


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each line once continuations are joined and comments
    dropped; blank ones left out."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*$", "", raw)
        start = start or number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        joined, pending = (pending + line).strip(), ""
        if joined:
            out.append((start, joined))
        start = 0
    if pending.strip():
        out.append((start, pending.strip()))
    return out


def _parse(number: int, text: str, where: str) -> PinnedLine:
    words = text.split()
    hashes = tuple(w.removeprefix("--hash=") for w in words if _HASH.match(w))
    requirement = re.split(r"\s--", f" {text}", maxsplit=1)[0].strip()
    try:
        parsed = Requirement(requirement)
    except InvalidRequirement as err:
        reason = str(err).splitlines()[0]
        raise RefusedError(
            f"{where} line {number}: not a requirement pip reads: {reason} (nothing was written)"
        ) from None
    return PinnedLine(number, canonicalize_name(parsed.name), str(parsed.specifier), hashes)


def read_requirements(text: str, where: str) -> list[PinnedLine]:
    """The file's requirements; refused where a line includes another file or is
    editable (neither can be checked here nor hash-checked by pip)."""
    found: list[PinnedLine] = []
    for number, line in _logical_lines(text):
        first = line.split()[0].split("=", 1)[0]
        if first in _INCLUDES:
            raise RefusedError(
                f"{where} line {number}: {first} cannot be checked here nor hash-checked by "
                "pip; list each requirement in this file, with its hashes (nothing was written)"
            )
        if line.startswith("-"):
            continue  # --index-url, --find-links ...: how pip finds them, not what
        found.append(_parse(number, line, where))
    return found


def _problems(lines: list[PinnedLine]) -> list[str]:
    problems = [f"line {p.line}: {p.name} has no --hash" for p in lines if not p.hashes]
    for name in _NEEDED:
        mine = [p for p in lines if p.name == name]
        if not mine:
            problems.append(f"{name} is not in it")
        problems += [f"line {p.line}: {name} is not pinned with ==" for p in mine if not p.exact]
    return problems


def requirements_pin(path: str, text: str) -> ToolInstall:
    """How the jobs install from the requirements file at ``path`` (its ``text``): refused,
    naming each line at fault, unless every requirement carries a hash and this tool and
    nox are each pinned with ``==``."""
    where = f"[tool.release.ci] requirements {path}"
    problems = _problems(read_requirements(text, where))
    if problems:
        raise RefusedError(
            f"{where} cannot pin the jobs' install: {'; '.join(problems)}. pip install "
            "--require-hashes needs a hash on every requirement, and the jobs need "
            f"{TOOL} and nox pinned with == and --hash, as pip-compile --generate-hashes "
            "writes them (nothing was written)"
        )
    return ToolInstall(PinKind.REQUIREMENTS, path, origin="[tool.release.ci] requirements")

"""Where a project keeps its version, as ``release init`` says it in a comment:
``version.txt`` (pytorch/ao), ``[project] version``, ``dynamic = ["version"]`` with
setuptools_scm (the version is the git tag's), ``use_scm_version`` in ``setup.py``, and
``__version__`` in a package's ``__init__.py``, ``_version.py`` or ``version.py``. Only
said, never configured. The files are untrusted text: matched, never run. Pure.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping

__all__ = ["VERSION_FILES", "version_sources"]

VERSION_FILES = ("version.txt", "VERSION", "pyproject.toml", "setup.py")
_DUNDER = re.compile(r"(?m)^__version__\s*(?::\s*str\s*)?=\s*[\"']([^\"'\n]{1,64})[\"']")
_SHOWN = re.compile(r"^[0-9A-Za-z.+_-]{1,64}$")


def _line(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _shown(value: str) -> str:
    return value if _SHOWN.match(value) else "(not a version)"


def _table(document: Mapping[str, object], key: str) -> dict[str, object]:
    found = document.get(key)
    return found if isinstance(found, dict) else {}


def _pyproject(text: str) -> list[str]:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    project = _table(document, "project")
    tool = _table(document, "tool")
    requires = _table(document, "build-system").get("requires") or []
    scm = "setuptools_scm" in tool or ("hatch" in tool and "vcs" in str(tool.get("hatch")))
    scm = scm or (
        isinstance(requires, list)
        and any("setuptools_scm" in str(r).replace("-", "_") for r in requires)
    )
    out = []
    version, dynamic = project.get("version"), project.get("dynamic")
    if isinstance(version, str):
        out.append(f"pyproject.toml: [project] version = {_shown(version)}")
    elif isinstance(dynamic, list) and "version" in dynamic:
        how = "setuptools_scm: the version is read from the git tag" if scm else "a build tool"
        out.append(f"pyproject.toml: [project] dynamic version, from {how}")
    elif scm:
        out.append("pyproject.toml: setuptools_scm is a build requirement (the git tag's version)")
    return out


def version_sources(files: Mapping[str, str]) -> list[str]:
    """One line per place the version is kept, from the files read (path -> text)."""
    out: list[str] = []
    for path, text in files.items():
        name = path.rsplit("/", 1)[-1]
        if name in ("version.txt", "VERSION") and "/" not in path:
            first = text.strip().splitlines()[0].strip() if text.strip() else ""
            out.append(f"{path}: {_shown(first)}")
        elif path == "pyproject.toml":
            out += _pyproject(text)
        elif path == "setup.py":
            if "use_scm_version" in text:
                at = _line(text, text.index("use_scm_version"))
                out.append(
                    f"setup.py:{at}: use_scm_version (setuptools_scm: the git tag's version)"
                )
            elif (found := re.search(r"\bversion\s*=\s*[\"']([^\"'\n]+)[\"']", text)) is not None:
                out.append(f"setup.py:{_line(text, found.start())}: version = {_shown(found[1])}")
            elif (found := re.search(r"\bversion\s*=\s*([A-Za-z_][\w.]*\()", text)) is not None:
                out.append(
                    f"setup.py:{_line(text, found.start())}: version computed by {found[1]})"
                )
        elif (found := _DUNDER.search(text)) is not None:
            out.append(f"{path}:{_line(text, found.start())}: __version__ = {_shown(found[1])}")
    return out

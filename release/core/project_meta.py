"""What an engine's ``[project]`` table says about it, as its images' OCI labels carry it.

``title`` is the project's name, ``description`` its one-line summary, ``licenses`` its
``license`` (an SPDX expression, as PEP 639 writes it, or the text of ``{text = ...}``; a
``{file = ...}`` names no license and gives none), ``url`` its home page (the first of
``Homepage``, ``Documentation``, ``Repository``, ``Source`` in ``[project.urls]``, any case,
``http(s)`` only) and ``vendor`` the name of its first author, else of its first maintainer.

The table is the engine's, so untrusted: a value that is not a string of printable text
on one line (at most :data:`MAX_LENGTH` characters) is left out, never shortened or
mended, and a run says which (:attr:`ProjectMeta.skipped`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["MAX_LENGTH", "ProjectMeta", "project_meta"]

MAX_LENGTH = 512  # characters: a summary line, a licence expression, a URL
_URL_KEYS = ("homepage", "documentation", "repository", "source")


@dataclass(frozen=True)
class ProjectMeta:
    title: str = ""
    description: str = ""
    licenses: str = ""
    url: str = ""
    vendor: str = ""
    skipped: tuple[str, ...] = ()  # the fields given but not usable as a label's value

    def labels(self) -> dict[str, str]:
        """The OCI labels these give (``org.opencontainers.image.*``), empty ones left out."""
        fields = {
            "title": self.title,
            "description": self.description,
            "licenses": self.licenses,
            "url": self.url,
            "vendor": self.vendor,
        }
        return {f"org.opencontainers.image.{k}": v for k, v in fields.items() if v}


def _text(value: object) -> str | None:
    """``value`` when it is printable text on one line of a sane length, else None."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > MAX_LENGTH or not text.isprintable():
        return None
    return text


def _license(value: object) -> object:
    if isinstance(value, Mapping):
        return value.get("text")  # {file = ...} names a file, not a licence
    return value


def _url(urls: object) -> object:
    if not isinstance(urls, Mapping):
        return None
    by_key = {str(k).strip().lower(): v for k, v in urls.items()}
    for key in _URL_KEYS:
        if key in by_key:
            value = by_key[key]
            ok = isinstance(value, str) and value.startswith(("https://", "http://"))
            return value if ok else ""  # given, not a web address: skipped
    return None


def _person(project: Mapping[str, object]) -> object:
    for key in ("authors", "maintainers"):
        people = project.get(key)
        if isinstance(people, list) and people and isinstance(people[0], Mapping):
            return people[0].get("name")
    return None


def project_meta(document: Mapping[str, object]) -> ProjectMeta:
    """The labels' values from a ``pyproject.toml`` document's ``[project]``."""
    project = document.get("project")
    if not isinstance(project, Mapping):
        return ProjectMeta()
    given = {
        "title": project.get("name"),
        "description": project.get("description"),
        "licenses": _license(project.get("license")),
        "url": _url(project.get("urls")),
        "vendor": _person(project),
    }
    values, skipped = {}, []
    for field, value in given.items():
        if value is None:
            continue
        text = _text(value)
        if text is None:
            skipped.append(field)
        else:
            values[field] = text
    return ProjectMeta(**values, skipped=tuple(skipped))

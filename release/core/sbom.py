"""An image's SBOM as syft writes it (SPDX 2.3 JSON), read for what a rebuild compares:
its packages and their versions. Pure.

A package is named by its package-URL type and name (``deb:libc6``, ``pypi:tinyengine``),
so a deb and a wheel of one name are two packages; one name found at several versions (two
copies of a wheel) keeps them all. The document's own root (the image it describes, whose
name and digest are the scan's, not the image's contents) is no package here.

The SBOM is untrusted data read from a registry: what does not have the shape of an SPDX
document is refused in one line, and every name and version shown is escaped.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from urllib.parse import unquote

from release.core.json_text import JSONValue
from release.core.terminal_text import escaped
from release.errors import ExitCode, ReleaseError

__all__ = [
    "SBOM_MEDIA_TYPE",
    "SbomError",
    "normalized",
    "package_changes",
    "packages",
]

SBOM_MEDIA_TYPE = "application/spdx+json"  # cosign's and ORAS's type for SPDX JSON
_ROOT_PURPOSES = ("CONTAINER", "OPERATING-SYSTEM")


class SbomError(ReleaseError):
    """A document that is not the SPDX SBOM it is said to be."""

    exit_code = ExitCode.EVIDENCE


def normalized(document: Mapping[str, JSONValue], name: str, epoch: int) -> dict[str, JSONValue]:
    """syft's document with what changes from one scan to the next made the image's: the
    creation time is the release's ``SOURCE_DATE_EPOCH`` and the namespace names the image
    (``name``: the image by digest), so one image's SBOM is the same bytes every time."""
    created = _dt.datetime.fromtimestamp(epoch, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    found = document.get("creationInfo")
    info: dict[str, JSONValue] = dict(found) if isinstance(found, dict) else {}
    info["created"] = created
    return {**document, "creationInfo": info, "documentNamespace": f"urn:release:sbom:{name}"}


def _purl(package: Mapping[str, object]) -> str | None:
    refs = package.get("externalRefs")
    for ref in refs if isinstance(refs, list) else ():
        if isinstance(ref, Mapping) and ref.get("referenceType") == "purl":
            locator = ref.get("referenceLocator")
            return locator if isinstance(locator, str) else None
    return None


def _key(package: Mapping[str, object]) -> str:
    name = str(package.get("name") or "?")
    purl = _purl(package)
    if purl and purl.startswith("pkg:") and "/" in purl:
        kind = purl[4:].split("/", 1)[0]
        return f"{unquote(kind)}:{name}"
    return name


def packages(document: object) -> dict[str, str]:
    """Each package of an SPDX document and its version(s) (comma separated, sorted)."""
    if not isinstance(document, Mapping) or not str(document.get("spdxVersion", "")).startswith(
        "SPDX-"
    ):
        raise SbomError("the SBOM is not an SPDX JSON document")
    listed = document.get("packages")
    if not isinstance(listed, list):
        raise SbomError("the SBOM has no list of packages")
    found: dict[str, set[str]] = {}
    for package in listed:
        if not isinstance(package, Mapping):
            raise SbomError("the SBOM lists a package that is not an object")
        if package.get("primaryPackagePurpose") in _ROOT_PURPOSES:
            continue
        version = package.get("versionInfo")
        found.setdefault(_key(package), set()).add(str(version) if version is not None else "")
    return {name: ",".join(sorted(versions)) for name, versions in sorted(found.items())}


def package_changes(
    recorded: Mapping[str, str], rebuilt: Mapping[str, str], limit: int = 20
) -> list[str]:
    """``~ name old -> new``, ``- name old`` (only in the recorded SBOM) and ``+ name new``
    (only in the rebuild's), sorted by name, at most ``limit`` lines (then how many more)."""
    lines = []
    for name in sorted(recorded.keys() | rebuilt.keys()):
        old, new = recorded.get(name), rebuilt.get(name)
        if new is None:
            lines.append(f"- {escaped(name)} {escaped(str(old))}")
        elif old is None:
            lines.append(f"+ {escaped(name)} {escaped(new)}")
        elif old != new:
            lines.append(f"~ {escaped(name)} {escaped(old)} -> {escaped(new)}")
    if len(lines) > limit:
        lines = [*lines[:limit], f"... {len(lines) - limit} more"]
    return lines

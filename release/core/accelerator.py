"""What a variant is built for: one accelerator and its version, and the selectors that
rules write over them. Pure.

A variant names exactly one accelerator by a key whose value is its version, as the
projects write it: ``cuda = "12.9.1"``, ``rocm = "6.4.1"``, ``cann = "8.1.rc1"`` (Ascend),
``hpu = "1.21.0"`` (Intel Gaudi), ``tpu``, ``xpu``, ``neuron``, or ``cpu = true`` (no
version). The version is kept as text; :attr:`Accelerator.parsed` is its PEP 440 reading
where it has one. CANN's ``8.1.rc1`` reads as ``8.1rc1``: a pre-release of 8.1, so it
sorts after ``8.0.0`` and before ``8.1.0`` and ``8.2.rc1``, as CANN's own order has it
(``8.0.RC3`` came before ``8.0.0``); ``8.1.rc1.alpha001`` has no PEP 440 reading.

A selector (the snapshot table's ``cuda = "!=12.*"``) is a ``packaging`` specifier set per
accelerator key, every clause of which must hold. A variant of another accelerator has no
version of that key: it equals none, so a ``!=`` clause holds for it and every other
clause (``==``, ``>=``, ``~=``, ...) fails. A ROCm or CPU variant is therefore "not CUDA
12.x" and is not "CUDA >=12". A version without a PEP 440 reading is compared as text:
``==``/``!=`` (with ``.*`` as a prefix) work on it, an ordered clause fails. The key
``accelerator = ["cpu", "rocm"]`` (or one name) keeps only those kinds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from release.core.json_text import JSONValue
from release.errors import ConfigError

__all__ = [
    "KINDS",
    "Accelerator",
    "Selector",
    "accelerator_fields",
    "accelerator_of",
    "parse_accelerator",
    "parse_selector",
]

# key -> how it is written in prose; the order is the one errors and docs list them in
KINDS: Mapping[str, str] = {
    "cuda": "CUDA",
    "rocm": "ROCm",
    "cann": "CANN",
    "hpu": "HPU",
    "tpu": "TPU",
    "xpu": "XPU",
    "neuron": "Neuron",
    "cpu": "CPU",
}
_VERSION_TEXT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
VERSIONED = tuple(k for k in KINDS if k != "cpu")
SELECTOR_KEYS = (*VERSIONED, "accelerator")


def _parsed(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


@dataclass(frozen=True)
class Accelerator:
    """One accelerator and its version as written ("" for ``cpu``)."""

    kind: str
    version: str = ""

    @property
    def parsed(self) -> Version | None:
        return _parsed(self.version) if self.version else None

    @property
    def name(self) -> str:
        """How prose names it: ``CUDA``, ``ROCm``, ``CANN``."""
        return KINDS.get(self.kind, self.kind)

    @property
    def label(self) -> str:
        """``CUDA 12.9.1``, ``ROCm 6.4.1``, ``CPU``."""
        return f"{self.name} {self.version}" if self.version else self.name

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "version": self.version}


def accelerator_fields(accelerator: Accelerator) -> dict[str, JSONValue]:
    """How a record (a manifest's build entry, the matrix as JSON, a snapshot record)
    carries the accelerator: ``accelerator: {kind, version}``, and for CUDA the ``cuda``
    field such records had before there were others."""
    out: dict[str, JSONValue] = {"accelerator": {**accelerator.to_dict()}}
    if accelerator.kind == "cuda":
        out["cuda"] = accelerator.version
    return out


def accelerator_of(record: Mapping[str, object]) -> Accelerator:
    """The accelerator a record carries (:func:`accelerator_fields`); a record written
    before accelerators had kinds has only ``cuda``."""
    given = record.get("accelerator")
    if isinstance(given, Mapping):
        return Accelerator(str(given.get("kind", "")), str(given.get("version") or ""))
    return Accelerator("cuda", str(record.get("cuda") or ""))


def parse_accelerator(raw: Mapping[str, object], where: str) -> Accelerator:
    """The one accelerator key of a variant's table; ``where`` names the variant
    (``[tool.release.images] variants[cu129]``)."""
    given = [k for k in KINDS if k in raw]
    if len(given) != 1:
        said = f"it gives {' and '.join(given)}" if given else "it gives none"
        raise ConfigError(
            f'{where}: name exactly one accelerator ({", ".join(VERSIONED)} = "VERSION", '
            f"or cpu = true); {said}"
        )
    kind = given[0]
    value = raw[kind]
    if kind == "cpu":
        if value is not True:
            raise ConfigError(f"{where}.cpu: expected true (a CPU variant has no version)")
        return Accelerator("cpu")
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(
            f'{where}.{kind}: expected a version, a non-empty string (e.g. "{_EXAMPLE[kind]}")'
        )
    if kind == "cuda":  # CUDA versions always were PEP 440, kept in its normal form
        parsed = _parsed(value)
        if parsed is None:
            raise ConfigError(f'{where}.cuda: {value!r} is not a version (e.g. "12.9.1")')
        return Accelerator("cuda", str(parsed))
    if not _VERSION_TEXT.fullmatch(value):  # it becomes a build arg, a label, a path
        raise ConfigError(
            f"{where}.{kind}: {value!r} is not a version (letters, digits, . _ + -; "
            f'e.g. "{_EXAMPLE[kind]}")'
        )
    return Accelerator(kind, value)


_EXAMPLE = {
    "cuda": "12.9.1",
    "rocm": "6.4.1",
    "cann": "8.1.rc1",
    "hpu": "1.21.0",
    "tpu": "0.8.0",
    "xpu": "2025.1",
    "neuron": "2.24.0",
}


def _text_clause(clause: Specifier, text: str) -> bool:
    """A clause on a version with no PEP 440 reading: equality as text only."""
    wanted = clause.version.lower()
    have = text.lower()
    if clause.operator in ("==", "!=", "==="):
        same = have.startswith(wanted[:-1]) if wanted.endswith(".*") else have == wanted
        return same if clause.operator != "!=" else not same
    return False


def _clause_holds(clause: Specifier, kind: str, accelerator: Accelerator) -> bool:
    if accelerator.kind != kind:
        return clause.operator == "!="  # equal to no version of another accelerator
    parsed = accelerator.parsed
    if parsed is None:
        return _text_clause(clause, accelerator.version)
    return clause.contains(parsed, prereleases=True)


@dataclass(frozen=True)
class Selector:
    """Which variants a rule takes: per accelerator key a specifier set, and optionally
    the kinds kept (``accelerator``)."""

    specs: Mapping[str, SpecifierSet] = field(default_factory=dict)
    kinds: frozenset[str] | None = None

    def applies(self, accelerator: Accelerator) -> bool:
        if self.kinds is not None and accelerator.kind not in self.kinds:
            return False
        return all(
            _clause_holds(clause, kind, accelerator)
            for kind, spec in self.specs.items()
            for clause in spec
        )

    @property
    def keyed(self) -> str:
        """The rule as written: ``cuda !=12.*``, ``accelerator cpu|rocm, rocm >=6``."""
        parts = [f"accelerator {'|'.join(sorted(self.kinds))}"] if self.kinds is not None else []
        parts += [f"{kind} {spec}" for kind, spec in self.specs.items()]
        return ", ".join(parts)

    @property
    def prose(self) -> str:
        """As prose says it: ``CUDA !=12.*``, ``ROCm >=6``, ``CPU or ROCm``."""
        parts = [" or ".join(KINDS.get(k, k) for k in sorted(self.kinds))] if self.kinds else []
        parts += [f"{KINDS.get(kind, kind)} {spec}" for kind, spec in self.specs.items()]
        return ", ".join(parts)

    @property
    def text(self) -> str:
        """The rule's text as reports quote it: a lone ``cuda`` rule's specifier
        (``!=12.*``, as before other accelerators), else :attr:`keyed`."""
        if self.kinds is None and list(self.specs) == ["cuda"]:
            return str(self.specs["cuda"])
        return self.keyed

    def to_dict(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {kind: str(spec) for kind, spec in self.specs.items()}
        if self.kinds is not None:
            out["accelerator"] = [kind for kind in sorted(self.kinds)]
        return out


def parse_selector(raw: Mapping[str, object], where: str) -> Selector:
    """The selector keys of a rule's table (``where``: the table, e.g.
    ``[tool.release.images] snapshot``); at least one is required."""
    if not any(key in raw for key in SELECTOR_KEYS):
        raise ConfigError(
            f'{where}: select the variants by their accelerator (e.g. cuda = "!=12.*", '
            f'rocm = ">=6", accelerator = "cpu")'
        )
    specs: dict[str, SpecifierSet] = {}
    for kind in VERSIONED:
        if kind not in raw:
            continue
        text = raw[kind]
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"{where}.{kind}: expected a version specifier string")
        try:
            specs[kind] = SpecifierSet(text)
        except InvalidSpecifier:
            raise ConfigError(
                f'{where}.{kind}: {text!r} is not a version specifier (e.g. "!=12.*")'
            ) from None
    kinds = None
    if "accelerator" in raw:
        value = raw["accelerator"]
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not names or not all(n in KINDS for n in names):
            raise ConfigError(
                f"{where}.accelerator: expected one of {', '.join(KINDS)}, or a list of them"
            )
        kinds = frozenset(names)
    return Selector(specs, kinds)

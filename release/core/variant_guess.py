"""What ``release init`` proposes for the image matrix: one variant per Dockerfile that
builds a release image, its accelerator and version, base image, build target, platforms
and tag suffix told from the file's name, its ``FROM`` lines and its ``ARG``s. Every value
carries where it was read (``docker/Dockerfile:12``); what cannot be told is said so, with
what was looked at, and gets no value. Pure: :mod:`release.adapters.repo_facts` reads the
files, :mod:`release.core.init_images` writes the proposal as TOML comments.

The accelerator keys are the configuration's: ``cuda``, ``rocm``, ``cann``, ``hpu``,
``tpu``, ``xpu``, ``neuron`` (a version) and ``cpu`` (true). The kind is read, strongest
first, from the file's name (``Dockerfile.rocm``), vLLM's ``VLLM_TARGET_DEVICE``, an
``ARG`` named for it (``CUDA_VERSION``, ``CANN_VERSION``, ``SYNAPSE_VERSION``...) and the
base image (``nvidia/cuda``, ``rocm/...``, ``quay.io/ascend/cann``, ``gaudi-docker``...);
the version from that ``ARG``, the base image's tag or path, or (TPU) a ``libtpu`` or
``jax`` pin.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from release.core.dockerfile_text import Dockerfile, Stage, parse_dockerfile
from release.core.variant_names import (
    ARCH_PLATFORMS,
    name_parts,
    not_a_release_image,
    os_of,
)

__all__ = [
    "DockerfileSource",
    "ImagesProposal",
    "ProposedVariant",
    "TextSource",
    "Told",
    "propose_images",
]

_VERSIONISH = re.compile(r"^\d+(?:\.[0-9A-Za-z]+)+$")
# kind -> the words of a file name that name it
_NAME_WORDS = {
    "cuda": {"cuda"}, "rocm": {"rocm", "amd"}, "cann": {"cann", "ascend", "npu"},
    "hpu": {"hpu", "gaudi", "habana"}, "tpu": {"tpu"}, "xpu": {"xpu"},
    "neuron": {"neuron", "inferentia", "trainium"}, "cpu": {"cpu"},
}  # fmt: skip
_ARGS = {
    "cuda": ("CUDA_VERSION",), "rocm": ("ROCM_VERSION",), "cann": ("CANN_VERSION",),
    "hpu": ("HPU_VERSION", "SYNAPSE_VERSION", "HABANA_VERSION", "GAUDI_VERSION"),
    "tpu": ("TPU_VERSION", "LIBTPU_VERSION", "JAX_VERSION"),
    "xpu": ("XPU_VERSION", "ONEAPI_VERSION"), "neuron": ("NEURON_VERSION", "NEURON_SDK_VERSION"),
}  # fmt: skip
# kind -> (a base image it is built on, the version in that reference)
_BASES = {
    "cuda": (r"(^|/)nvidia/cuda[:@]", r"nvidia/cuda:(\d+\.\d+(?:\.\d+)?)"),
    "rocm": (r"(^|/)rocm/", r"rocm[/:-]?[a-z0-9._-]*?[:_-](\d+\.\d+(?:\.\d+)?)(?:[-_]|$)"),
    "cann": (r"(^|/)ascend/cann[:@]|/cann:", r"cann:(\d+\.\d+(?:\.[0-9A-Za-z]+)?)"),
    "hpu": (r"gaudi-docker|habana", r"gaudi-docker/(\d+\.\d+\.\d+)/"),
    "tpu": (r"tpu", r"libtpu[:_-](\d+\.\d+\.\d+)"),
    "xpu": (r"(^|/)intel/(deep-learning-essentials|oneapi)", r":(\d{4}\.\d+(?:\.\d+)?)"),
    "neuron": (r"neuron", r"sdk(\d+\.\d+\.\d+)"),
}
_PINS = {"tpu": ("libtpu", "libtpu-nightly", "jax")}
_DEVICE = re.compile(r"VLLM_TARGET_DEVICE\s*[= ]\s*[\"']?(?P<kind>[A-Za-z]+)")


@dataclass(frozen=True)
class Told:
    """One key of a proposed variant: its value and where it was read, or (``value``
    None) why it could not be told."""

    key: str
    value: str | bool | tuple[str, ...] | None
    why: str


@dataclass(frozen=True)
class DockerfileSource:
    path: str  # relative to the work tree, with /
    text: str
    context: str | None = None  # where its COPY sources are; None: could not tell
    context_why: str = ""


@dataclass(frozen=True)
class TextSource:
    """A requirements file, read for the pins that tell a TPU image's version."""

    path: str
    text: str


@dataclass(frozen=True)
class ProposedVariant:
    id: str
    path: str
    kind: str | None  # the accelerator key; None: could not tell
    told: tuple[Told, ...]  # in the order they are written
    notes: tuple[str, ...] = ()  # what else a maintainer should know of it


@dataclass(frozen=True)
class ImagesProposal:
    variants: tuple[ProposedVariant, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()  # (path, why no variant is proposed for it)
    dockerfile: str = ""  # the matrix's
    default_variant: Told = Told("default-variant", None, "one variant")
    version_arg: Told = Told("version-arg", None, "")
    extra: tuple[str, ...] = field(default_factory=tuple)


def _at(path: str, line: int) -> str:
    return f"{path}:{line}"


def _copied_pin(
    src: DockerfileSource, df: Dockerfile, pins: Sequence[TextSource]
) -> tuple[str | None, str]:
    """The kind a requirements file the Dockerfile copies in pins (libtpu: TPU)."""
    by_path = {p.path: p for p in pins}
    for source, line in df.copy_sources():
        pinned = by_path.get(source.removeprefix("./"))
        if pinned is None:
            continue
        for kind in _PINS:
            found = _pin(kind, DockerfileSource(src.path, ""), [pinned])
            if found is not None:
                return kind, f"{source}, copied in at {_at(src.path, line)}, pins {found.why}"
    return None, ""


def _kind(
    src: DockerfileSource, df: Dockerfile, base: str, pins: Sequence[TextSource]
) -> tuple[str | None, str]:
    parts = name_parts(src.path)
    for kind, words in _NAME_WORDS.items():
        hit = next((p for p in parts if p in words), None)
        if hit:
            return kind, f"its name, {src.path.rsplit('/', 1)[-1]}"
    for ins in df.instructions:
        for match in _DEVICE.finditer(ins.rest):
            if match["kind"].lower() in _NAME_WORDS:
                kind = match["kind"].lower()
                return kind, f"VLLM_TARGET_DEVICE={kind}, {_at(src.path, ins.line)}"
    for kind, names in _ARGS.items():
        arg = next((df.arg(n) for n in names if df.arg(n) is not None), None)
        if arg is not None:
            return kind, f"ARG {arg.name}, {_at(src.path, arg.line)}"
    for kind, (pattern, _) in _BASES.items():
        if base and re.search(pattern, base, re.I):
            return kind, f"the base image {base}"
    copied, why = _copied_pin(src, df, pins)
    if copied is not None:
        return copied, why
    if any(p in ARCH_PLATFORMS for p in parts):
        return "cpu", f"the file's name names a CPU architecture ({src.path.rsplit('/', 1)[-1]})"
    return None, (
        "no accelerator in its name, no VLLM_TARGET_DEVICE, no ARG such as CUDA_VERSION or "
        "ROCM_VERSION, and the base image " + (base or "(none resolved)") + " names none"
    )


def _pin(kind: str, src: DockerfileSource, pins: Sequence[TextSource]) -> Told | None:
    for package in _PINS.get(kind, ()):
        pattern = re.compile(
            rf"(?m)^[^#\n]*?\b{re.escape(package)}(?:\[[a-z,]+\])?==(\S+?)[\"'\s;]"
        )
        for source in (TextSource(src.path, src.text), *pins):
            match = pattern.search(source.text + "\n")
            if match and _VERSIONISH.match(match[1]):
                line = source.text.count("\n", 0, match.start()) + 1
                return Told(kind, match[1], f"{package}=={match[1]}, {_at(source.path, line)}")
    return None


def _version(
    kind: str, src: DockerfileSource, df: Dockerfile, base: str, base_at: str,
    pins: Sequence[TextSource],
) -> Told:  # fmt: skip
    if kind == "cpu":
        return Told("cpu", True, "a CPU image has no accelerator version")
    for name in _ARGS.get(kind, ()):
        value, arg = df.value(name), df.arg(name)
        if arg is not None and value and _VERSIONISH.match(value):
            return Told(kind, value, f"ARG {name}={value}, {_at(src.path, arg.line)}")
    pattern = _BASES.get(kind, ("", ""))[1]
    found = re.search(pattern, base, re.I) if pattern and base else None
    if found:
        return Told(kind, found[1], f"the base image {base}, {base_at}")
    pinned = _pin(kind, src, pins)
    if pinned is not None:
        return pinned
    looked = [f"no ARG {' or '.join(_ARGS[kind])} with a version"] if kind in _ARGS else []
    looked.append(f"the base image {base or '(none resolved)'} names no version")
    if kind in _PINS:
        looked.append(f"no {' or '.join(_PINS[kind])} pin in it or the requirements files")
    return Told(kind, None, "; ".join(looked))


_FINAL_STAGES = {"final", "release", "runtime", "prod", "production", "serve", "server"}
_NOT_FINAL = {"base", "dev", "test", "tests", "ci", "lint", "debug", "docs", "bench", "build", "builder",
              "sagemaker"}  # fmt: skip


def _chosen_stage(stages: tuple[Stage, ...]) -> tuple[Stage, str]:
    """The stage a release image is built from, and why that one."""
    named = [s for s in stages if s.name]
    openai = [s for s in named if s.name.lower().endswith("openai")]
    if openai:
        return openai[-1], "the stage named like vllm-openai"
    final = [s for s in named if s.name.lower() in _FINAL_STAGES]
    if final:
        return final[-1], f"the stage named {final[-1].name.lower()}"
    kept = [s for s in stages if not set(re.split(r"[-_.]", s.name.lower())) & _NOT_FINAL]
    if kept and kept[-1] is not stages[-1]:
        return kept[-1], "the last stage not named for development, tests or a build step"
    return stages[-1], "the last stage"


def _target(src: DockerfileSource, df: Dockerfile) -> tuple[Stage | None, Told | None]:
    if not df.stages:
        return None, None
    stage, how = _chosen_stage(df.stages)
    if len(df.stages) == 1 or not stage.name:
        return stage, None
    return stage, Told("target", stage.name, f"{how}, {_at(src.path, stage.line)}")


def _base(src: DockerfileSource, df: Dockerfile, stage: Stage | None) -> tuple[str, str, Told]:
    if stage is None:
        return "", "", Told("base-image", None, "no FROM line")
    ref, origin = df.origin(stage)
    where = _at(src.path, origin.line)
    if "$" in ref or not ref:
        why = f"FROM {origin.source} ({where}) names an ARG with no default before the first FROM"
        return "", where, Told("base-image", None, why)
    if ref.lower() == "scratch":
        return "", where, Told("base-image", None, f"FROM scratch ({where})")
    how = "" if ref == origin.source else " with its ARGs' defaults"
    return ref, where, Told("base-image", ref, f"FROM {origin.source}, {where}{how}")


def _platforms(src: DockerfileSource, base_stage: Stage | None) -> Told:
    named = [ARCH_PLATFORMS[p] for p in name_parts(src.path) if p in ARCH_PLATFORMS]
    if named:
        return Told("platforms", tuple(dict.fromkeys(named)), "the file's name")
    if base_stage is not None and base_stage.platform and "$" not in base_stage.platform:
        where = _at(src.path, base_stage.line)
        return Told("platforms", (base_stage.platform,), f"FROM --platform, {where}")
    return Told("platforms", None, "nothing in its name or FROM --platform; the builder's own")


def _variant(src: DockerfileSource, pins: Sequence[TextSource]) -> ProposedVariant:
    df = parse_dockerfile(src.text)
    stage, target = _target(src, df)
    base, base_at, base_told = _base(src, df, stage)
    kind, kind_why = _kind(src, df, base, pins)
    told = [
        _version(kind, src, df, base, base_at, pins)
        if kind
        else Told("accelerator", None, kind_why),
        base_told,
    ]
    if kind and told[0].value is None:
        told[0] = Told(kind, None, f"{told[0].why} (a {kind} image by {kind_why})")
    elif kind and told[0].why in kind_why:  # the pin that told the kind told the version
        told[0] = Told(told[0].key, told[0].value, kind_why)
    elif kind and not told[0].why.startswith(kind_why.partition(",")[0] + "="):
        told[0] = Told(told[0].key, told[0].value, f"{kind_why}; {told[0].why}")
    python, python_arg = df.value("PYTHON_VERSION"), df.arg("PYTHON_VERSION")
    if python and python_arg is not None and _VERSIONISH.match(python):
        where = _at(src.path, python_arg.line)
        told.append(Told("python", python, f"ARG PYTHON_VERSION={python}, {where}"))
    if src.context is not None:
        told.append(Told("context", src.context, src.context_why))
    else:
        told.append(Told("context", None, src.context_why or "no COPY or ADD from the context"))
    if target is not None:
        told.append(target)
    base_stage = df.origin(stage)[1] if stage is not None else None
    told.append(_platforms(src, base_stage))
    notes = []
    used = {"PYTHON_VERSION", "BASE_IMAGE", *_ARGS.get(kind or "", ())}
    others = list(dict.fromkeys(a.name for a in df.args if a.name not in used))
    if others:
        shown = ", ".join(others[:4]) + (f" and {len(others) - 4} more" if len(others) > 4 else "")
        notes.append(
            f"build-args: none proposed: the file's own ARG defaults build it; its other "
            f"ARGs ({shown}) take build-args to change"
        )
    system = os_of(src.path, base)
    if system:
        notes.append(f"os: {system}")
    own, own_arg = df.value("BASE_IMAGE"), df.arg("BASE_IMAGE")
    if base and own and own_arg is not None and own != base:
        notes.append(
            f"the build passes base-image as BASE_IMAGE: this file's ARG BASE_IMAGE "
            f"({_at(src.path, own_arg.line)}) is {own}, not the base of the stage built"
        )
    return ProposedVariant("", src.path, kind, tuple(told), tuple(notes))


def _id(variant: ProposedVariant, taken: set[str]) -> str:
    head = variant.kind or "image"
    if variant.kind == "cuda":
        version = next((t.value for t in variant.told if t.key == "cuda"), None)
        if isinstance(version, str) and re.match(r"\d+\.\d+", version):
            head = "cu" + "".join(version.split(".")[:2])
    words = set().union(*_NAME_WORDS.values())
    parts = [p for p in name_parts(variant.path) if p not in words]
    vid = "-".join([head, *parts])
    candidate, n = vid, 2
    while candidate in taken:
        candidate, n = f"{vid}-{n}", n + 1
    taken.add(candidate)
    return candidate


def _version_arg(sources: Sequence[DockerfileSource]) -> Told:
    for src in sources:
        df = parse_dockerfile(src.text)
        for arg in df.args:
            if arg.name.endswith("VERSION") and re.fullmatch(
                r"0(\.0)*(\.?dev\d*)?|dev|unknown", (arg.default or "").strip(), re.I
            ):
                why = f"ARG {arg.name}={arg.default}, a placeholder, {_at(src.path, arg.line)}"
                return Told("version-arg", arg.name, why)
    return Told(
        "version-arg", None,
        "no ARG with a placeholder version (0.0.0.dev0) for the version built; name the "
        "one that takes it, if any",
    )  # fmt: skip


def propose_images(
    sources: Sequence[DockerfileSource],
    pins: Sequence[TextSource] = (),
    primary: str | None = None,
) -> ImagesProposal:
    """One variant per Dockerfile that builds a release image; ``primary`` is the file
    whose variant gets the unsuffixed tags (``Dockerfile``, ``docker/Dockerfile``)."""
    skipped = [(s.path, why) for s in sources if (why := not_a_release_image(s.path))]
    kept = [s for s in sources if not not_a_release_image(s.path)]
    taken: set[str] = set()
    variants = []
    for src in kept:
        found = _variant(src, pins)
        variants.append(replace(found, id=_id(found, taken)))
    if not variants:
        return ImagesProposal(skipped=tuple(skipped))
    return _finish(variants, skipped, primary, kept)


def _finish(
    variants: list[ProposedVariant],
    skipped: list[tuple[str, str]],
    primary: str | None,
    kept: Sequence[DockerfileSource],
) -> ImagesProposal:
    default = next((v for v in variants if v.path == primary), None)
    matrix_file = default.path if default else variants[0].path
    if len(variants) == 1:
        chosen = Told("default-variant", None, "one variant")
    elif default is not None:
        chosen = Told("default-variant", default.id, f"{default.path}, the main Dockerfile")
    else:
        chosen = Told(
            "default-variant", None,
            "no Dockerfile is plainly the main one (Dockerfile, docker/Dockerfile); name the "
            "variant whose images carry no suffix",
        )  # fmt: skip
    kinds = {v.kind for v in variants}
    out = []
    for v in variants:
        told = list(v.told)
        if v.path != matrix_file:
            told.insert(2, Told("dockerfile", v.path, "the file it is proposed from"))
        parts = [p for p in name_parts(v.path) if p not in set().union(*_NAME_WORDS.values())]
        if len(kinds) == 1 and parts and v is not default:
            suffix = "-".join(parts)
            told.append(
                Told("tag-suffix", suffix, f"the file's name: images tagged VERSION-{suffix}")
            )
        out.append(ProposedVariant(v.id, v.path, v.kind, tuple(told), v.notes))
    return ImagesProposal(tuple(out), tuple(skipped), matrix_file, chosen, _version_arg(kept))

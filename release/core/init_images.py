"""The image matrix ``release init`` proposes, written as TOML comments: a commented
``[tool.release.images]`` and one commented ``[[tool.release.images.variants]]`` per
proposed variant (:mod:`release.core.variant_guess`), each value after a comment saying
where it was read, and a ``could not tell`` comment, with no value, where nothing told it.
Uncommenting the ``key = value`` lines gives TOML; prose never starts with ``[`` or
``key =``. Text from the repository is escaped where it is written. Pure.
"""

from __future__ import annotations

import re
import textwrap

from release.core.terminal_text import escaped
from release.core.variant_guess import ImagesProposal, ProposedVariant, Told

__all__ = ["comment", "images_lines", "toml_string"]

_ACCELERATORS = 'cuda, rocm, cann, hpu, tpu, xpu or neuron = "VERSION", or cpu = true'


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string: quotes, backslashes and control characters escaped."""

    def one(match: re.Match[str]) -> str:
        c = match[0]
        return {'"': '\\"', "\\": "\\\\"}.get(c) or f"\\u{ord(c):04x}"

    return '"' + re.sub(r'["\\\x00-\x1f\x7f]', one, text) + '"'


def comment(text: str) -> list[str]:
    """``text`` as comment lines of at most 88 characters."""
    return [
        "# " + line
        for line in textwrap.wrap(escaped(text), 86, break_on_hyphens=False, break_long_words=False)
    ]


def _toml(value: str | bool | tuple[str, ...]) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(toml_string(v) for v in value) + "]"
    return toml_string(value)


def _told(told: Told, *, write: bool = True) -> list[str]:
    if told.value is None:
        extra = f" ({_ACCELERATORS})" if told.key == "accelerator" else ""
        return comment(f"{told.key}: could not tell: {told.why}{extra}")
    lines = comment(f"{told.key}: {told.why}")
    return [*lines, f"# {told.key} = {_toml(told.value)}"] if write else lines


def _variant(variant: ProposedVariant) -> list[str]:
    lines = ["#", "# [[tool.release.images.variants]]", f"# id = {toml_string(variant.id)}"]
    for told in variant.told:
        lines += _told(told, write=not (told.key == "context" and told.value == "."))
    for note in variant.notes:
        lines += comment(note)
    return lines


def images_lines(proposal: ImagesProposal, name: str, looked: str) -> list[str]:
    """The commented images table; ``name`` is the guess for the images' name, ``looked``
    says where Dockerfiles were looked for."""
    skipped = "; ".join(f"{path} ({why})" for path, why in proposal.skipped)
    if not proposal.variants:
        lines = ["", *comment(f"No Dockerfile found that builds a release image ({looked}).")]
        if skipped:
            lines += comment(f"Not proposed: {skipped}.")
        return [*lines, *comment("An image matrix, if any, goes in [tool.release.images].")]
    count = len(proposal.variants)
    lines = [
        "",
        *comment(
            f"The image matrix, proposed from {count} Dockerfile(s) ({looked}): one variant "
            "per file that builds a release image, each value after where it was read. A "
            '"could not tell" line has no value: give one before you uncomment that variant.'
        ),
    ]
    if skipped:
        lines += comment(f"Not proposed: {skipped}.")
    lines += [
        "# [tool.release.images]",
        *comment("name: the remote's path; the images may be published under another name"),
        f"# name = {toml_string(name)}",
        f"# dockerfile = {toml_string(proposal.dockerfile)}",
    ]
    if count > 1:
        lines += _told(proposal.default_variant)
    lines += _told(proposal.version_arg)
    for variant in proposal.variants:
        lines += _variant(variant)
    return lines

"""What the commands share: the repository they open, values as JSON, and a plan's lines."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, cast

from release.commands.outcome import JSONValue, Run

if TYPE_CHECKING:
    from release.adapters.generated_files import Written
    from release.flows.context import ReleaseContext

__all__ = [
    "as_json",
    "context",
    "forced_lines",
    "ids",
    "notices",
    "opened",
    "plan_lines",
    "registry_option",
]


def opened(run: Run) -> ReleaseContext:
    """The repository and its config, read with the run's settings (``--main-branch``,
    ``--config``); what reading noticed stays in ``ctx.notices``, for the command to say."""
    from release.flows.context import ReleaseContext

    return ReleaseContext(run.repo, main_branch=run.main_branch, config_file=run.config)


def context(run: Run) -> ReleaseContext:
    """The repository and its config (:func:`opened`); what reading the config noticed (a
    table under ``[tool]`` one edit away from ``release``) is said at once, as a warning on
    stderr."""
    import sys

    from release.core.terminal_text import escaped

    ctx = opened(run)
    for notice in ctx.notices:
        print(f"warning: {escaped(notice)}", file=sys.stderr, flush=True)
    ctx.notices.clear()
    return ctx


def as_json(value: object) -> JSONValue:
    """A value the floors below give (dataclasses turned into dicts, enums into their
    values, paths, ...) as JSON."""
    import json  # (here: a command's text output never imports it)

    return cast(JSONValue, json.loads(json.dumps(value, default=_plain)))


def _plain(value: object) -> object:
    import enum

    return value.value if isinstance(value, enum.Enum) else str(value)


def notices(ctx: ReleaseContext) -> list[str]:
    return [f"note: {n}" for n in ctx.notices]


def ids(variant: str | None) -> list[str] | None:
    """``--variant cu128,cu129`` (or spaces) as ids; none given: every variant."""
    return [v for v in (variant or "").replace(",", " ").split() if v] or None


def registry_option(value: str | None, option: str = "--registry") -> str | None:
    """``--registry`` (or ``option``), checked by the rule ``registry`` in ``[tool.release.images]`` is
    checked by (:func:`~release.core.references.registry_prefix`), before the command reads
    or runs anything: the value reaches skopeo and docker as an argument, and what a
    refusal shows lands in a terminal or a CI log. None: not given; "": none."""
    from release.core.references import registry_prefix

    return None if value is None else registry_prefix(value, option)


def plan_lines(lines: Sequence[str], *, dry_run: bool, steps: int = 1) -> list[str]:
    """A plan's lines, the first led by what a dry run says (``would`` only when the plan
    has ``steps`` to take: "nothing to tag", "origin is up to date" are what is)."""
    head, *rest = lines
    lead = "dry run, nothing changed: " + ("would " if steps else "")
    return [(lead if dry_run else "") + head, *rest]


def forced_lines(written: Iterable[Written]) -> list[str]:
    """What the output says of each file only ``--force`` let a command replace."""
    from release.core.terminal_text import escaped

    return [
        f"replaced {escaped(str(w.path))} with --force: it was {w.before.value}"
        for w in written
        if w.forced
    ]

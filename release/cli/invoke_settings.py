"""What invoke gives every task that these tasks do not use: refused, not ignored.

invoke's core flags ``--dry`` (``-R``), ``--echo`` (``-e``), ``--warn-only`` (``-w``),
``--hide``, ``--pty`` (``-p``), ``--command-timeout`` (``-T``) and
``--prompt-for-sudo-password``, and its configuration under ``run``, ``runners``, ``sudo``
and ``timeouts`` (from a config file, ``-f FILE`` or an ``INVOKE_*`` variable), shape the
commands a task starts with ``Context.run``; the words after ``--`` are handed to the task
for them (invoke 3). These tasks start git, docker and skopeo through release's own process runner,
never through invoke's, so each of those would be silently ignored: ``inv --dry
release.tag`` would tag. A task whose invoke configuration differs there from invoke's
defaults, or that is given words after ``--``, is refused before anything runs, naming
what was set and where (never its value: ``sudo.password`` is a secret).

invoke prints its own ``inv --help`` before it reads ``tasks.py``, so no collection can
take those flags out of it; README says which of them work here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from invoke.config import Config, DataProxy

__all__ = ["SECTIONS", "Inert", "inert", "refusal"]

SECTIONS = ("run", "runners", "sudo", "timeouts")
"""invoke's configuration that only ``Context.run`` and ``Context.sudo`` read."""

# the core flags that set them (invoke's Program.update_config)
_FLAGS: dict[tuple[str, ...], str] = {
    ("run", "dry"): "--dry/-R",
    ("run", "echo"): "--echo/-e",
    ("run", "warn"): "--warn-only/-w",
    ("run", "hide"): "--hide",
    ("run", "pty"): "--pty/-p",
    ("timeouts", "command"): "--command-timeout/-T",
    ("sudo", "password"): "--prompt-for-sudo-password",
}
_ABSENT = object()

KeyPath = tuple[str, ...]


@dataclass(frozen=True)
class Inert:
    """One thing a task was given and would ignore: ``key`` (``run.dry``, or ``--`` for
    the words after it) and ``said``, the key with where it was set."""

    key: str
    said: str


def _plain(value: object) -> object:
    if isinstance(value, DataProxy):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _leaves(tree: Mapping[str, object], path: KeyPath = ()) -> Iterator[tuple[KeyPath, object]]:
    for key, value in tree.items():
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, (*path, key))
        else:
            yield (*path, key), value


def _at(tree: object, path: KeyPath) -> object:
    for key in path:
        if not isinstance(tree, Mapping) or key not in tree:
            return _ABSENT
        tree = tree[key]
    return tree


def _changed(config: Config) -> list[KeyPath]:
    """The key paths under :data:`SECTIONS` whose value is not invoke's default."""
    merged = {s: _plain(config[s]) for s in SECTIONS if s in config}
    defaults = {s: v for s, v in Config.global_defaults().items() if s in SECTIONS}
    found = [p for p, v in _leaves(merged) if _at(defaults, p) != v]
    found += [p for p, _ in _leaves(defaults) if _at(merged, p) is _ABSENT]
    return found


def _source(config: Config, path: KeyPath) -> str:
    """Where ``path`` was set, highest of invoke's levels first (its Config.merge order).
    The levels are the Config's own attributes (``_overrides``, ``_env`` ...), not its
    public API: one missing says the key alone."""
    key = ".".join(path)
    if _at(getattr(config, "_overrides", {}), path) is not _ABSENT:
        return f"{_FLAGS.get(path, 'a flag')} ({key})"
    if _at(getattr(config, "_runtime", {}), path) is not _ABSENT:
        return f"{key} in {getattr(config, '_runtime_path', None) or 'the runtime config file'}"
    if _at(getattr(config, "_env", {}), path) is not _ABSENT:
        prefix = getattr(config, "_env_prefix", None) or "INVOKE_"
        return f"{prefix}{'_'.join(path).upper()} ({key})"
    for level in ("project", "user", "system"):
        if _at(getattr(config, f"_{level}", {}), path) is not _ABSENT:
            return f"{key} in {getattr(config, f'_{level}_path', None) or 'a config file'}"
    if _at(getattr(config, "_collection", {}), path) is not _ABSENT:
        return f"{key} in the collection's configuration"
    return f"{key} (invoke's configuration)"


def inert(config: Config, remainder: str) -> list[Inert]:
    """What a task was given that it would ignore, each with where it came from."""
    found = [Inert(".".join(path), _source(config, path)) for path in _changed(config)]
    if remainder.strip():
        found.append(Inert("--", "what follows --"))
    return found


def refusal(task: str, found: list[Inert], *, dry_run: bool) -> str:
    """The one line that refuses ``task``; ``dry_run``: the task has a --dry-run."""
    said = [f.said for f in found]
    named = said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]
    verb = "does" if len(said) == 1 else "do"
    hint = ""
    if dry_run and any(f.key == "run.dry" for f in found):
        hint = f" (a dry run: {task} --dry-run)"
    return (
        f"{named} {verb} nothing for {task}, which runs its commands itself, not through "
        f"invoke: nothing was run{hint}"
    )

"""Shell completion: ``release --completion bash|zsh`` prints a script that asks ``release
__complete`` for the words that fit where the cursor is: task names, a task's options,
and an option's values where they are a choice (``--reason``, ``--format``, ``--view``,
and ``--variant``: the variant ids of the current repository's image matrix)."""

from __future__ import annotations

from collections.abc import Sequence

from release.commands.declare import Command, Kind
from release.commands.registry import COMMANDS

__all__ = ["complete", "script"]

_BASH = """# release's completion (bash): eval "$(release --completion bash)"
_release_complete() {
    local IFS=$'\\n'
    COMPREPLY=($(release __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _release_complete release
"""

_ZSH = """# release's completion (zsh): eval "$(release --completion zsh)"
autoload -U +X bashcompinit && bashcompinit
""" + _BASH.split("\n", 1)[1]


def script(shell: str) -> str:
    return _ZSH if shell == "zsh" else _BASH


def _variants() -> list[str]:
    """The variant ids of the repository here; none when it cannot be read."""
    try:
        from release.adapters.config_file import load_config
        from release.adapters.git import GitRepo
        from release.cli.dispatch import repo_path

        matrix = load_config(GitRepo(repo_path()).root).matrix
    except Exception:  # completion never fails: it offers nothing
        return []
    return [v.id for v in matrix.variants] if matrix is not None else []


def _values(command: Command, flag: str) -> list[str] | None:
    """The values offered after ``flag``; None when ``flag`` takes no value."""
    option = next((o for o in command.options if f"--{o.name}" == flag), None)
    if option is None or option.kind == Kind.FLAG:
        return None
    if option.choices:
        return list(option.choices)
    if option.name == "variant":
        return _variants()
    return []


def complete(words: Sequence[str]) -> list[str]:
    """The candidates for the last of ``words`` (the words after ``release``, the last one
    being completed, maybe empty)."""
    *before, current = list(words) or [""]
    tasks = [w for w in before if not w.startswith("-")]
    if not tasks:
        names = [c.name for c in COMMANDS]
        if current.startswith("-"):
            names = ["--help", "--version", "--list", "--main-branch", "--debug", "--completion"]
        return [n for n in names if n.startswith(current)]
    command = next((c for c in COMMANDS if c.name == tasks[0]), None)
    if command is None:
        return []
    if before and before[-1].startswith("--"):
        values = _values(command, before[-1])
        if values is not None:
            return [v for v in values if v.startswith(current)]
    if current.startswith("--") and "=" in current:
        flag, _, partial = current.partition("=")
        values = _values(command, flag) or []
        return [f"{flag}={v}" for v in values if v.startswith(partial)]
    if current.startswith("-"):
        flags = ["--help"] + [f"--{o.name}" for o in command.options if not o.positional]
        return [f for f in flags if f.startswith(current)]
    return []

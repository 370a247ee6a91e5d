"""``[tool.release]``: one source of truth, validated on load.

Resolution is one cascade: built-in defaults, then the target's ``[tool.release]``.
Unknown keys and bad values raise :class:`ConfigError` with one line naming the key
(and a "did you mean" where one is close). No key or value anywhere in the table holds
``${{``: GitHub Actions evaluates that as an expression wherever it stands in a workflow,
before any shell sees it, and the tool writes workflows from this table. Pure: the file is read by
:func:`release.adapters.config_file.load_config`, as a file of the work tree.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from release.core.github_config import GitHubSettings, parse_github
from release.core.tree_paths import tree_relative
from release.core.version_files import patch_releases, version_files
from release.core.versions import (
    SCHEMES,
    PatchStyle,
    ReleaseVersion,
    TagTemplate,
    ref_format_problem,
)

if TYPE_CHECKING:  # imported when there is a matrix to parse (its specifiers cost start-up time)
    from release.core.ci_config import CiSettings
    from release.core.matrix import ImageMatrix
from release.errors import ConfigError

__all__ = [
    "DEFAULT_BOTS",
    "DEFAULT_CATEGORIES",
    "PICK_REASONS",
    "Config",
    "config_from_mapping",
    "config_from_text",
    "parse_pyproject",
    "refuse_expressions",
    "release_table",
]

# Canonical category -> spellings seen in commit subjects (matched case-insensitively,
# ignoring spaces, '-' and '_'). Order is the order sections appear in notes.
DEFAULT_CATEGORIES: dict[str, tuple[str, ...]] = {
    "Features": ("Feature", "Feat", "New Feature", "Model", "New Model", "Models", "Enhancement"),
    "Bug Fixes": (
        "Bugfix",
        "Fix",
        "Hotfix",
        "Bug",
        "Fixes",
        "Bug Fix",
        "Security",
        "Hourly Fix",
        "Fix Hourly",
        "Upstream Fix",
        "FIX_FOR_VLLM_LATEST",  # vllm-gaudi: a fix for upstream vLLM's latest changes
        "FIX_FOR_VLLM_CUSTOM",  # ... against a pinned upstream commit (=<sha>)
    ),
    "Performance": ("Perf", "Performance", "Optimization", "Optim", "Speedup"),
    "Core": ("Core", "V1", "Engine", "Scheduler", "Worker", "Executor", "Attention", "Spec Decode"),
    "Frontend": ("Frontend", "API", "OpenAI", "Entrypoints", "Server", "CLI"),
    "Kernels": ("Kernel", "Kernels", "Ops", "Custom Op"),
    "Hardware": (
        "Hardware",
        "ROCm",
        "AMD",
        "TPU",
        "XPU",
        "CPU",
        "HPU",
        "Gaudi",
        "NPU",
        "Ascend",
        "310P",
        "Intel",
        "Neuron",
    ),
    "Quantization": ("Quantization", "Quant", "FP8"),
    "Tests": ("Test", "Tests", "Testing", "UT", "E2E", "Unit Test", "Benchmark", "Bench"),
    "CI/Build": (
        "CI/Build",
        "CI",
        "Build",
        "CI Fix",
        "Lint",
        "Nightly",
        "Docker",
        "CI/CD",
        "Dependencies",
        "Deps",
        "GitHub Action",
        "Action",
        "Skip CI",
    ),
    "Documentation": ("Doc", "Docs", "Documentation", "README"),
    "Misc": ("Misc", "Chore", "Refactor", "Minor", "Cleanup", "Style", "Typo"),
}

# Contributors who are not people: matched (glob, case folded; only * and ? are wildcards)
# against the name and the email's local part (a glob with "@": the whole email).
DEFAULT_BOTS: tuple[str, ...] = (
    "*[bot]",
    # CI and automation accounts by shape: "buildkite-bot@users.noreply.github.com",
    # "Buildkite Bot", "ruff-bot", "Facebook Community Bot", "CodemodService Bot"
    "*-bot",
    "*_bot",
    "* bot",
    "bot",
    "dependabot*",
    "github-actions*",
    "copilot*",
    "renovate*",
    "pre-commit-ci*",
    "mergify*",
    "codecov*",
    # PyTorch's landing and merge bots
    "facebook github bot",
    "facebook-github-bot*",
    "facebook community bot",
    "pytorchbot",
    "pytorchmergebot",
    "pyre bot*",
    # coding agents, as their commits and co-author trailers name them
    "noreply",
    "noreply+*",
    "cursoragent*",
    "devin-ai-integration*",
    "openhands*",
)

# How an rc's tag spells the rc after X.Y.Z: PEP 440's, PyTorch's, SemVer's
RC_SPELLINGS = ("rc{n}", "-rc{n}", "-rc.{n}")

# Cherry-pick reasons, as vLLM's and PyTorch's cherry-pick policies name them.
PICK_REASONS = ("regression", "critical", "fix-new-feature", "docs", "release-only")

_KEYS = {
    "main-branch",
    "remote",
    "branch",
    "tag",
    "version-scheme",
    "rc-spelling",
    "changelog",
    "repo-url",
    "picks-file",
    "categories",
    "feature-categories",
    "images",
    "bots",
    "merge-by-name",
    "first-rc",
    "patch-releases",
    "version-files",
    "bump-main-after-cut",
    "ci",
    "github",
}


@dataclass(frozen=True)
class Config:
    main_branch: str = "main"
    remote: str = "origin"
    branch: TagTemplate = field(
        default_factory=lambda: TagTemplate("releases/v{version}", "branch")
    )
    tag: TagTemplate = field(default_factory=lambda: TagTemplate("v{version}", "tag"))
    version_scheme: str = "pep440"
    first_rc: int = 1  # a release's first rc: X.Y.Zrc1, or X.Y.Zrc0 where a project starts at 0
    patch_releases: PatchStyle | None = None  # None: as the tags made so far do
    version_files: tuple[str, ...] = ()  # files that keep the version, bumped when tagging
    bump_main_after_cut: bool = False  # cut also sets main's version files to X.(Y+1).0
    changelog: str = "CHANGELOG.md"
    repo_url: str = ""
    picks_file: str = "release-picks.txt"
    categories: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: dict(DEFAULT_CATEGORIES)
    )
    feature_categories: tuple[str, ...] = ("Features",)
    bots: tuple[str, ...] = DEFAULT_BOTS
    merge_by_name: bool = True  # one contributor per name, whatever their emails
    images: Mapping[str, object] = field(default_factory=dict)  # the table as written
    matrix: ImageMatrix | None = None  # the same, parsed and validated; None without one
    ci: CiSettings | None = None  # [tool.release.ci]; None: the defaults
    github: GitHubSettings = field(default_factory=GitHubSettings)  # [tool.release.github]

    def alias_map(self) -> dict[str, str]:
        """Normalized spelling -> canonical category."""
        out: dict[str, str] = {}
        for canonical, spellings in self.categories.items():
            for spelling in (canonical, *spellings):
                out.setdefault(normalize_category(spelling), canonical)
        return out


def normalize_category(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch not in " -_")


def _close(key: str, known: set[str] | tuple[str, ...]) -> list[str]:
    import difflib  # here: only a config with a mistake needs a suggestion

    return difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)


def _suggest(key: str, known: set[str] | tuple[str, ...], what: str = "keys") -> str:
    close = _close(key, known)
    if close:
        return f"; did you mean {close[0]!r}?"
    return f"; known {what}: {', '.join(sorted(known))}"


def _str(table: Mapping[str, object], key: str, prefix: str = "[tool.release]") -> str | None:
    if key not in table:
        return None
    value = table[key]
    if not isinstance(value, str):
        raise ConfigError(
            f"{prefix} {key}: expected a string, got {type(value).__name__} {value!r}"
        )
    return value


def _nonempty(key: str, value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise ConfigError(f"[tool.release] {key}: must not be empty")
    return value


def _relative_path(key: str, value: str | None) -> str | None:
    """A path in the work tree, as written (:func:`tree_relative`); "" and None pass."""
    return tree_relative(f"[tool.release] {key}", value) if value else value


def config_from_mapping(table: Mapping[str, object]) -> Config:
    """Validate a ``[tool.release]`` table and resolve it over the defaults."""
    if not isinstance(table, Mapping):
        raise ConfigError("[tool.release] must be a table")
    refuse_expressions(table)
    for key in table:
        if key not in _KEYS:
            raise ConfigError(f"[tool.release] unknown key {key!r}{_suggest(key, _KEYS)}")
    defaults = Config()
    scheme = _str(table, "version-scheme") or defaults.version_scheme
    if scheme not in SCHEMES:
        raise ConfigError(
            f"[tool.release] version-scheme: {scheme!r} is not one of {', '.join(SCHEMES)}"
            + (_suggest(scheme, SCHEMES) if _close(scheme, SCHEMES) else "")
        )
    branch_text = _nonempty("branch", _str(table, "branch")) or defaults.branch.template
    tag_text = _nonempty("tag", _str(table, "tag")) or defaults.tag.template
    branch = TagTemplate(branch_text, "branch", "pep440")
    rc = _str(table, "rc-spelling") or ""
    if rc and rc not in RC_SPELLINGS:
        raise ConfigError(
            f"[tool.release] rc-spelling: {rc!r} is not one of {', '.join(RC_SPELLINGS)} "
            "(what follows X.Y.Z in an rc's tag: v0.31.0rc1, v0.31.0-rc1, v0.31.0-rc.1)"
        )
    tag = TagTemplate(tag_text, "tag", scheme, rc)
    if "{version}" not in tag_text:
        raise ConfigError(f"[tool.release] tag: {tag_text!r} must contain {{version}}")
    example = ReleaseVersion(0, 31, 0, rc=1)
    for key, template in (("branch", branch), ("tag", tag)):
        name = template.render(example)
        problem = ref_format_problem(name)
        if problem:
            raise ConfigError(
                f"[tool.release] {key}: {template.template!r} would not be a valid git ref "
                f"name ({name!r}: {problem})"
            )

    categories: dict[str, tuple[str, ...]] = dict(defaults.categories)
    if "categories" in table:
        raw = table["categories"]
        if not isinstance(raw, Mapping):
            raise ConfigError("[tool.release] categories: expected a table of name = [spellings]")
        categories = {}
        for name, spellings in raw.items():
            if not isinstance(spellings, list) or not all(isinstance(s, str) for s in spellings):
                raise ConfigError(
                    f"[tool.release.categories] {name}: expected a list of strings, got {spellings!r}"
                )
            categories[name] = tuple(spellings)
    features: tuple[str, ...] = defaults.feature_categories
    if "feature-categories" in table:
        raw_features = table["feature-categories"]
        if not isinstance(raw_features, list) or not all(isinstance(s, str) for s in raw_features):
            raise ConfigError(
                "[tool.release] feature-categories: expected a list of category names"
            )
        for name in raw_features:
            if name not in categories:
                raise ConfigError(
                    f"[tool.release] feature-categories: {name!r} is not a category"
                    + _suggest(name, tuple(categories), "categories")
                )
        features = tuple(raw_features)
    else:
        features = tuple(c for c in features if c in categories)

    images = table.get("images", {})
    if not isinstance(images, Mapping):
        raise ConfigError("[tool.release] images: expected a table")
    matrix = None
    if images:  # validated on load like every other key; no import cost without a matrix
        from release.core.matrix import parse_images

        matrix = parse_images(images)
    ci = None
    if "ci" in table:  # the pipelines' settings; loaded only where the table is
        from release.core.ci_config import parse_ci

        ci = parse_ci(table["ci"])

    return Config(
        main_branch=_nonempty("main-branch", _str(table, "main-branch")) or defaults.main_branch,
        remote=_nonempty("remote", _str(table, "remote")) or defaults.remote,
        branch=branch,
        tag=tag,
        version_scheme=scheme,
        first_rc=_first_rc(table, defaults.first_rc),
        patch_releases=patch_releases(table.get("patch-releases")),
        version_files=version_files(table.get("version-files", [])),
        bump_main_after_cut=_bump_main(table),
        changelog=_relative_path("changelog", _str(table, "changelog"))
        if "changelog" in table
        else defaults.changelog,  # type: ignore[arg-type]
        repo_url=(_str(table, "repo-url") or "").rstrip("/"),
        picks_file=_relative_path("picks-file", _nonempty("picks-file", _str(table, "picks-file")))
        or defaults.picks_file,
        categories=categories,
        feature_categories=features,
        images=dict(images),
        matrix=matrix,
        ci=ci,
        github=parse_github(table.get("github", {})),
        bots=_globs(table),
        merge_by_name=_flag(table, "merge-by-name", defaults.merge_by_name),
    )


EXPRESSION = "${{"  # a GitHub Actions expression: evaluated before the shell runs


def _where(path: str, step: str | int) -> str:
    return f"{path}[{step}]" if isinstance(step, int) else f"{path}.{step}".lstrip(".")


def _expression_at(value: object, path: str) -> str | None:
    """Where in ``value`` (at ``path``) a key or a string holds ``${{``; None where none."""
    if isinstance(value, str):
        return path if EXPRESSION in value else None
    items: list[tuple[str | int, object]] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            if EXPRESSION in str(key):
                return f"{path + ' ' if path else ''}key {str(key)!r}"
            items.append((str(key), item))
    elif isinstance(value, list):
        items = list(enumerate(value))
    for step, item in items:
        found = _expression_at(item, _where(path, step))
        if found:
            return found
    return None


def _spelt(found: str) -> str:
    """``images.variants[0].id`` as the errors spell it: ``[tool.release.images]
    variants[0].id``."""
    head, dot, rest = found.partition(".")
    if dot and not set("[ ") & set(head):
        return f"[tool.release.{head}] {rest}"
    return f"[tool.release] {found}"


def refuse_expressions(table: Mapping[str, object]) -> None:
    """Refuse ``${{`` in any key or string of ``[tool.release]``, naming where: written
    into a workflow, GitHub would evaluate it (a commit message, a branch name ...) as
    shell code or as a value, whatever quoting surrounds it."""
    found = _expression_at(table, "")
    if found:
        raise ConfigError(
            f"{_spelt(found)}: holds {EXPRESSION!r}, which GitHub Actions evaluates in "
            "the workflows release ci writes; write the value itself"
        )


def _globs(table: Mapping[str, object]) -> tuple[str, ...]:
    raw = table.get("bots", list(DEFAULT_BOTS))
    if not isinstance(raw, list) or not all(isinstance(s, str) and s.strip() for s in raw):
        raise ConfigError('[tool.release] bots: expected a list of name patterns, e.g. ["*[bot]"]')
    # "..." stands for the default list: ["...", "release-robot"] adds to it
    return tuple(b for s in raw for b in (DEFAULT_BOTS if s.strip() == "..." else (s,)))


def _bump_main(table: Mapping[str, object]) -> bool:
    bump = _flag(table, "bump-main-after-cut", False)
    if bump and not table.get("version-files"):
        raise ConfigError(
            "[tool.release] bump-main-after-cut: there are no version-files to set; name them"
        )
    return bump


def _first_rc(table: Mapping[str, object], default: int) -> int:
    value = table.get("first-rc", default)
    if isinstance(value, bool) or value not in (0, 1):
        raise ConfigError(f"[tool.release] first-rc: expected 0 or 1, got {value!r}")
    return int(value)


def _flag(table: Mapping[str, object], key: str, default: bool) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"[tool.release] {key}: expected true or false, got {value!r}")
    return value


def config_from_text(text: str, name: str = "pyproject.toml") -> Config:
    """``[tool.release]`` of a ``pyproject.toml`` given as text (``name`` says which file);
    defaults when it has no such table."""
    return config_from_mapping(release_table(parse_pyproject(text, name)))


def parse_pyproject(text: str, name: str = "pyproject.toml") -> dict[str, Any]:
    """A ``pyproject.toml``'s text as TOML, or a :class:`ConfigError` naming the file."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{name}: not valid TOML: {err}") from None
    except RecursionError:  # tomllib reads nested arrays and tables by recursion
        raise ConfigError(f"{name}: not valid TOML: nested too deeply") from None


def release_table(document: Mapping[str, object]) -> Any:
    """The document's ``[tool.release]`` as written (``{}`` when there is none)."""
    tool = document.get("tool", {})
    return tool.get("release", {}) if isinstance(tool, Mapping) else {}

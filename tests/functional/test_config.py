"""``[tool.release]``: defaults, validation with one-line errors, loading from pyproject.toml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from release.adapters.config_file import load_config
from release.core.config import DEFAULT_BOTS, DEFAULT_CATEGORIES, Config, config_from_mapping
from release.core.versions import parse_version
from release.errors import ConfigError


def test_defaults() -> None:
    config = config_from_mapping({})
    assert config == Config()
    assert config.main_branch == "main"
    assert config.remote == "origin"
    assert config.branch.template == "releases/v{version}"
    assert config.tag.template == "v{version}"
    assert config.version_scheme == "pep440"
    assert config.tag.scheme == "pep440"
    assert config.changelog == "CHANGELOG.md"
    assert config.picks_file == "release-picks.txt"
    assert config.repo_url == ""
    assert dict(config.categories) == DEFAULT_CATEGORIES
    assert config.feature_categories == ("Features",)
    assert dict(config.images) == {}


def test_full_table() -> None:
    config = config_from_mapping(
        {
            "main-branch": "trunk",
            "remote": "upstream",
            "branch": "release/{major}.{minor}",
            "tag": "v{version}",
            "version-scheme": "semver",
            "changelog": "docs/CHANGES.md",
            "repo-url": "https://github.com/example/engine/",
            "picks-file": "picks.txt",
        }
    )
    assert config.main_branch == "trunk"
    assert config.remote == "upstream"
    assert config.branch.render(parse_version("2.5.0")) == "release/2.5"
    assert config.tag.render(parse_version("2.5.0rc1")) == "v2.5.0-rc.1"
    assert config.branch.scheme == "pep440"  # branches name the release, not an rc
    assert config.changelog == "docs/CHANGES.md"
    assert config.repo_url == "https://github.com/example/engine"  # trailing slash dropped
    assert config.picks_file == "picks.txt"


def test_changelog_can_be_disabled() -> None:
    assert config_from_mapping({"changelog": ""}).changelog == ""


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [
        ("main_branch", "main-branch"),
        ("tags", "tag"),
        ("version-schema", "version-scheme"),
        ("changelogs", "changelog"),
        ("repo_url", "repo-url"),
        ("feature-category", "feature-categories"),
    ],
)
def test_unknown_key_did_you_mean(key: str, suggestion: str) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_mapping({key: "x"})
    message = info.value.one_line()
    assert message == f"[tool.release] unknown key {key!r}; did you mean {suggestion!r}?"
    assert info.value.exit_code == 2


def test_unknown_key_without_a_close_match_lists_the_keys() -> None:
    with pytest.raises(
        ConfigError,
        match=r"unknown key 'zzz'; known keys: bots, branch, bump-main-after-cut, categories",
    ):
        config_from_mapping({"zzz": 1})


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"remote": 3}, "[tool.release] remote: expected a string, got int 3"),
        ({"main-branch": None}, "[tool.release] main-branch: expected a string, got NoneType"),
        ({"tag": ["v{version}"]}, "[tool.release] tag: expected a string, got list"),
        ({"version-scheme": 1}, "[tool.release] version-scheme: expected a string"),
        ({"changelog": 5}, "[tool.release] changelog: expected a string, got int 5"),
        ({"remote": ""}, "[tool.release] remote: must not be empty"),
        ({"picks-file": "  "}, "[tool.release] picks-file: must not be empty"),
        ({"categories": ["Fix"]}, "[tool.release] categories: expected a table"),
        (
            {"categories": {"Fixes": "Fix"}},
            "[tool.release.categories] Fixes: expected a list of strings",
        ),
        ({"categories": {"Fixes": ["Fix", 1]}}, "[tool.release.categories] Fixes: expected a list"),
        ({"feature-categories": "Features"}, "[tool.release] feature-categories: expected a list"),
        ({"images": ["cu129"]}, "[tool.release] images: expected a table"),
        ({"first-rc": 2}, "[tool.release] first-rc: expected 0 or 1, got 2"),
        ({"first-rc": "0"}, "[tool.release] first-rc: expected 0 or 1, got '0'"),
        ({"first-rc": True}, "[tool.release] first-rc: expected 0 or 1, got True"),
    ],
)
def test_wrong_types(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_mapping(table)
    assert info.value.one_line().startswith(message)
    assert "\n" not in info.value.one_line()


def test_not_a_table() -> None:
    with pytest.raises(ConfigError, match="must be a table"):
        config_from_mapping(["main"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"tag": "v{version"}, "[tool.release] tag: bad format string 'v{version'"),
        (
            {"tag": "v{vers}"},
            "[tool.release] tag: unknown field {vers} in 'v{vers}'; use {version}",
        ),
        ({"branch": "releases/{ver}"}, "[tool.release] branch: unknown field {ver}"),
        ({"tag": "v{}"}, "[tool.release] tag: unknown field {}"),
        (
            {"tag": "v{major}.{minor}"},
            "[tool.release] tag: 'v{major}.{minor}' must contain {version}",
        ),
        (
            {"branch": "release-branch"},
            "[tool.release] branch: 'release-branch' has no {version} field",
        ),
        ({"tag": "v {version}"}, "would not be a valid git ref name"),
        ({"tag": "v{version}~"}, "would not be a valid git ref name"),
        (
            {"branch": "releases/v{version}/"},
            "[tool.release] branch: 'releases/v{version}/' would not",
        ),
        ({"branch": "releases/../v{version}"}, "would not be a valid git ref name"),
        ({"tag": ""}, "[tool.release] tag: must not be empty"),
    ],
)
def test_bad_format_strings(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_mapping(table)
    assert message in info.value.one_line()


def test_bad_scheme_with_suggestion() -> None:
    with pytest.raises(ConfigError) as info:
        config_from_mapping({"version-scheme": "semvar"})
    assert info.value.one_line() == (
        "[tool.release] version-scheme: 'semvar' is not one of pep440, semver; "
        "did you mean 'semver'?"
    )


def test_bad_scheme_without_suggestion() -> None:
    with pytest.raises(ConfigError) as info:
        config_from_mapping({"version-scheme": "calver"})
    assert info.value.one_line() == (
        "[tool.release] version-scheme: 'calver' is not one of pep440, semver"
    )


def test_categories_override() -> None:
    config = config_from_mapping(
        {
            "categories": {"Fixes": ["Bugfix", "BugFix", "Fix"], "New": ["Feature", "Model"]},
            "feature-categories": ["New"],
        }
    )
    assert list(config.categories) == ["Fixes", "New"]  # replaces the defaults, in order
    assert config.feature_categories == ("New",)
    aliases = config.alias_map()
    assert aliases["bugfix"] == "Fixes"
    assert aliases["fixes"] == "Fixes"  # the canonical name is a spelling too
    assert aliases["model"] == "New"
    assert "perf" not in aliases


def test_categories_override_drops_a_missing_default_feature_category() -> None:
    config = config_from_mapping({"categories": {"Fixes": ["Fix"]}})
    assert config.feature_categories == ()


def test_alias_map_normalizes_spellings() -> None:
    aliases = Config().alias_map()
    for spelling in ("Bugfix", "BugFix", "bugfix", "Bug Fix", "bug-fix", "bug_fix", "Fix"):
        assert aliases["".join(c for c in spelling.lower() if c not in " -_")] == "Bug Fixes"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            {"feature-categories": ["Featurs"]},
            "[tool.release] feature-categories: 'Featurs' is not a category; "
            "did you mean 'Features'?",
        ),
        (
            {"categories": {"Fixes": ["Fix"]}, "feature-categories": ["Features"]},
            "[tool.release] feature-categories: 'Features' is not a category; "
            "known categories: Fixes",
        ),
    ],
)
def test_feature_categories_must_name_a_category(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_mapping(table)
    assert info.value.one_line() == message


PYPROJECT = """\
[project]
name = "engine"

[tool.release]
main-branch = "trunk"
tag = "v{version}"
version-scheme = "semver"
repo-url = "https://github.com/example/engine"

[tool.release.categories]
"Bug Fixes" = ["Bugfix", "BugFix", "Fix"]
Features = ["Feature"]
"""


def test_load_config_from_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    config = load_config(tmp_path)
    assert config.main_branch == "trunk"
    assert config.version_scheme == "semver"
    assert config.tag.render(parse_version("0.31.0rc2")) == "v0.31.0-rc.2"
    assert config.repo_url == "https://github.com/example/engine"
    assert list(config.categories) == ["Bug Fixes", "Features"]
    assert config.feature_categories == ("Features",)
    assert config.remote == "origin"  # not set: the default


def test_load_config_without_a_file_or_table(tmp_path: Path) -> None:
    assert load_config(tmp_path) == Config()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    assert load_config(tmp_path) == Config()


def test_load_config_invalid_toml(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.release\nremote = 'x'\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"pyproject.toml: not valid TOML"):
        load_config(tmp_path)


def test_load_config_reports_the_key(tmp_path: Path) -> None:
    text = '[tool.release]\nmain_branch = "main"\n'
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="did you mean 'main-branch'"):
        load_config(tmp_path)


def test_cli_exits_2_on_a_bad_config(engine, cli) -> None:
    path = engine.root / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("[tool.release]\n", '[tool.release]\ntags = "v{version}"\n', 1),
        encoding="utf-8",
    )
    result = cli(engine.root, "status")
    assert result.code == 2
    assert result.stderr.strip() == "error: [tool.release] unknown key 'tags'; did you mean 'tag'?"
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("bots", "expected"),
    [
        (["..."], DEFAULT_BOTS),
        (["...", "release-robot"], (*DEFAULT_BOTS, "release-robot")),
        (["release-robot", " ... "], ("release-robot", *DEFAULT_BOTS)),
        (["release-robot"], ("release-robot",)),  # a list without "..." replaces the default
        ([], ()),
    ],
)
def test_bots_name_the_default_list_with_dots(bots: list[str], expected: tuple[str, ...]) -> None:
    assert config_from_mapping({"bots": bots}).bots == expected

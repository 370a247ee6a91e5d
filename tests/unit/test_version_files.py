"""Version files and the version line, as pure values: the three kinds of file a version
is kept in, set to a release byte for byte but the version; ``patch-releases`` and
``version-files`` validated on load; how a project's tags say it ships fixes after a
final; and the version chosen after one."""

from __future__ import annotations

import pytest

from release.core.config import config_from_mapping
from release.core.version_files import kept_version, set_version
from release.core.versions import PatchStyle, ReleaseVersion, learned_style, parse_version
from release.errors import ConfigError, RefusedError
from release.flows.context import TagInfo
from release.flows.next_version import choose_version, same_version_tag, version_to_ask

V = parse_version


@pytest.mark.parametrize(
    ("path", "text", "version", "after"),
    [
        ("version.txt", "0.14.0\n", "v0.14.1-rc1", "0.14.1\n"),
        ("VERSION", "0.12.0a0\r\n", "0.12.0", "0.12.0\r\n"),
        ("version.txt", "0.12.0\n", "0.12.0.1", "0.12.0.1\n"),
        (
            "src/pkg/__init__.py",
            '"""doc"""\n__version__: str = \'0.1.0\'  # kept\nother = "0.1.0"\n',
            "0.31.0.post1",
            '"""doc"""\n__version__: str = \'0.31.0.post1\'  # kept\nother = "0.1.0"\n',
        ),
        (
            "pyproject.toml",
            '[tool.x]\nversion = "9"\n[project]\nname = "e"\nversion = "0.1.0"\n[tool.y]\n',
            "0.2.0rc1",
            '[tool.x]\nversion = "9"\n[project]\nname = "e"\nversion = "0.2.0"\n[tool.y]\n',
        ),
    ],
    ids=["version.txt", "VERSION-crlf", "four-part", "dunder", "pyproject"],
)
def test_a_version_file_is_set_and_nothing_else_changes(
    path: str, text: str, version: str, after: str
) -> None:
    edit = set_version(path, text, V(version))
    assert edit is not None and edit.after == after
    assert set_version(path, after, V(version)) is None  # says it already: left alone


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (
            "pyproject.toml",
            '[project]\nname = "e"\ndynamic = ["version"]\n[tool.x]\nversion = "1"\n',
        ),
        ("pkg/__init__.py", "from ._version import __version__\n"),
        ("version.txt", "\n"),
    ],
    ids=["dynamic", "imported", "empty"],
)
def test_a_file_that_keeps_no_version_is_refused(path: str, text: str) -> None:
    with pytest.raises(RefusedError, match=f"version file {path} keeps no"):
        set_version(path, text, V("0.1.0"))
    assert kept_version(path, text) is None


def test_a_placeholder_is_not_a_version_to_keep() -> None:
    assert kept_version("pyproject.toml", '[project]\nversion = "0.0.0"\n') is None
    assert kept_version("version.txt", "0.19.0\n") == "0.19.0"


def test_the_diff_shows_the_lines_and_nothing_it_cannot_print() -> None:
    edit = set_version("v\x1b.txt", "0.1.0\n", V("0.1.1"))
    assert edit is not None
    assert edit.diff() == ["--- a/v\\x1b.txt", "+++ b/v\\x1b.txt", "-0.1.0", "+0.1.1"]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"patch-releases": "posts"}, "patch-releases: 'posts' is not one of patch, four-part"),
        ({"version-files": "version.txt"}, "version-files: expected a list of paths"),
        ({"version-files": ["../v.txt"]}, "leads out of the work tree"),
        ({"version-files": ["v.txt", "v.txt"]}, "a path is named twice"),
        ({"bump-main-after-cut": True}, "bump-main-after-cut: there are no version-files"),
    ],
)
def test_the_keys_are_checked_on_load(table: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        config_from_mapping(table)


def test_the_keys_load() -> None:
    config = config_from_mapping(
        {
            "patch-releases": "four-part",
            "version-files": ["version.txt"],
            "bump-main-after-cut": True,
        }
    )
    assert config.patch_releases is PatchStyle.FOUR_PART
    assert (config.version_files, config.bump_main_after_cut) == (("version.txt",), True)


@pytest.mark.parametrize(
    ("tags", "carries", "style"),
    [
        ((), False, PatchStyle.POST),
        ((), True, PatchStyle.PATCH),
        (("0.8.1", "0.9.0.1", "0.12.0.1", "0.13.0"), False, PatchStyle.FOUR_PART),
        (("0.9.0.1", "0.10.1rc1"), False, PatchStyle.PATCH),
        (("0.14.1", "0.15.0.post1"), True, PatchStyle.POST),
        (("0.14.0rc1", "0.14.0"), True, PatchStyle.PATCH),
    ],
    ids=["none-version", "none-line", "llm-compressor", "patch-rc-newest", "post", "x.y.0-only"],
)
def test_the_style_is_the_newest_release_after_a_finals(
    tags: tuple[str, ...], carries: bool, style: PatchStyle
) -> None:
    assert learned_style([V(t) for t in tags], carries_patches=carries) is style


def tags(*names: str) -> list[TagInfo]:
    return [TagInfo(n, V(n), "0" * 40) for n in names]


def test_after_a_final_each_style_proposes_its_own() -> None:
    made = tags("0.12.0rc1", "0.12.0")
    base = V("0.12.0")
    assert choose_version(base, None, made, style=PatchStyle.PATCH) == V("0.12.1rc1")
    assert choose_version(base, None, made, style=PatchStyle.FOUR_PART) == V("0.12.0.1")
    with pytest.raises(RefusedError, match=r"or tag 0.12.0.post1"):
        choose_version(base, None, made, style=PatchStyle.POST)
    assert version_to_ask(base, made, PatchStyle.POST) == "0.12.0.post1"
    assert version_to_ask(base, made, PatchStyle.FOUR_PART) is None
    assert version_to_ask(base, made, PatchStyle.PATCH) is None


def test_four_part_releases_by_name() -> None:
    made = tags("0.12.0", "0.12.0.1")
    on = V("0.12.0.1")
    assert choose_version(on, None, made, style=PatchStyle.FOUR_PART) == V("0.12.0.2")
    assert choose_version(on, V("0.12.0.2"), made) == V("0.12.0.2")
    with pytest.raises(
        RefusedError, match=r"not greater than .* 0\.12\.0\.1; next valid: 0\.12\.0\.2"
    ):
        choose_version(on, V("0.12.0.1"), made)
    with pytest.raises(RefusedError, match=r"0\.13\.0\.1 needs the final 0\.13\.0 first"):
        choose_version(V("0.13.0"), V("0.13.0.1"), tags("0.13.0rc1"))
    with pytest.raises(RefusedError, match="would go back"):
        choose_version(V("0.12.1"), V("0.12.0.3"), made)


def test_a_version_under_another_spelling_is_found() -> None:
    made = [TagInfo("v0.18.1rc1", V("0.18.1rc1"), "0" * 40)]
    found = same_version_tag("v0.18.1-rc1", ReleaseVersion(0, 18, 1, rc=1), made)
    assert found is not None and found.name == "v0.18.1rc1"
    assert same_version_tag("v0.18.1rc1", V("0.18.1rc1"), made) is None

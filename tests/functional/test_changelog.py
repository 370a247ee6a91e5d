"""CHANGELOG.md edited in place: round trip, upsert, idempotency, folding rc sections."""

from __future__ import annotations

from pathlib import Path

import pytest

from release.core.changelog import HEADER, Changelog, new_changelog, update_file
from tests._golden import Cycle, assert_golden

RC1 = "### Bug Fixes\n\n- Fix the limit (#108) by Alice Chen\n"
RC2 = "### Bug Fixes\n\n- Return 400 (#112) by Bob Okafor\n"
FINAL = "### Bug Fixes\n\n- Fix the limit (#108) by Alice Chen\n- Return 400 (#112) by Bob Okafor\n"

KEEP_A_CHANGELOG = """\
# Changelog

All notable changes to this project will be documented in this file.

## [Unreleased]

### Added

- Something not released yet.

## [0.0.9] - 2025-01-01

### Fixed

- An old fix.

## [0.0.8] - 2024-12-01

- Older.

[unreleased]: https://github.com/example/engine/compare/v0.0.9...HEAD
[0.0.9]: https://github.com/example/engine/compare/v0.0.8...v0.0.9
[0.0.8]: https://github.com/example/engine/releases/tag/v0.0.8
"""

ROUND_TRIP = {
    "empty": "",
    "title only": "# Changelog\n",
    "no sections": "# Changelog\n\nNothing released yet.\n",
    "no trailing newline": "# Changelog\n\n## [1.0.0]\n- x",
    "new file": HEADER,
    "keep a changelog": KEEP_A_CHANGELOG,
    "no unreleased": "# Changelog\n\n## [0.0.9] - 2025-01-01\n\n- old\n",
    "sections only": "## [0.2.0] - 2025-02-01\n\n- b\n\n## [0.1.0] - 2025-01-01\n\n- a\n",
    "crlf": KEEP_A_CHANGELOG.replace("\n", "\r\n"),
    "odd headings": "# C\n\n## Notes without a label\n\ntext\n\n"
    "### [0.1.0] not a section\n\n##not one either\n",
    "links only at the end": "# C\n\n## [Unreleased]\n\n[unreleased]: https://x/compare\n",
    "trailing blank lines": "# C\n\n## [0.1.0] - 2025-01-01\n\n- a\n\n\n\n",
    "unicode": "# Änderungen\n\n## [0.1.0] - 2025-01-01\n\n- Ünïcödé by Zoë\n",
}


@pytest.mark.parametrize("text", ROUND_TRIP.values(), ids=ROUND_TRIP.keys())
def test_round_trip_is_byte_identical(text: str) -> None:
    assert Changelog.parse(text).render() == text


def test_labels() -> None:
    log = Changelog.parse(KEEP_A_CHANGELOG)
    assert log.labels() == ["Unreleased", "0.0.9", "0.0.8"]
    assert log.section("0.0.9") == "## [0.0.9] - 2025-01-01\n\n### Fixed\n\n- An old fix.\n\n"
    assert log.section("0.1.0") is None
    assert log.footer.startswith("[unreleased]: ")  # link references stay at the end


def test_upsert_inserts_after_unreleased() -> None:
    log = Changelog.parse(KEEP_A_CHANGELOG)
    log.upsert("0.1.0rc1", "2025-11-25", RC1)
    assert log.labels() == ["Unreleased", "0.1.0rc1", "0.0.9", "0.0.8"]
    assert log.render() == KEEP_A_CHANGELOG.replace(
        "## [0.0.9]", "## [0.1.0rc1] - 2025-11-25\n\n" + RC1 + "\n## [0.0.9]"
    )


def test_upsert_without_unreleased_goes_first() -> None:
    text = "# Changelog\n\n## [0.0.9] - 2025-01-01\n\n- old\n"
    log = Changelog.parse(text)
    log.upsert("0.1.0", "2025-11-25", "- new")
    assert log.render() == (
        "# Changelog\n\n## [0.1.0] - 2025-11-25\n\n- new\n\n## [0.0.9] - 2025-01-01\n\n- old\n"
    )


def test_upsert_into_a_new_file() -> None:
    log = Changelog.parse(new_changelog())
    log.upsert("0.1.0rc1", "2025-11-25", RC1)
    assert log.render() == HEADER + "## [0.1.0rc1] - 2025-11-25\n\n" + RC1  # one newline at the end


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# C\n\n## [Unreleased]\n", "# C\n\n## [Unreleased]\n\n## [0.1.0] - D\n\n- new\n"),
        ("# C\n## [Unreleased]", "# C\n## [Unreleased]\n\n## [0.1.0] - D\n\n- new\n"),
        ("# Changelog\n", "# Changelog\n\n## [0.1.0] - D\n\n- new\n"),
        ("", "## [0.1.0] - D\n\n- new\n"),
        (
            "# C\n\n## [Unreleased]\n\n[unreleased]: https://x/compare\n",
            "# C\n\n## [Unreleased]\n\n## [0.1.0] - D\n\n- new\n\n[unreleased]: https://x/compare\n",
        ),
        (
            "# C\n\n## [Unreleased]\n[unreleased]: https://x/compare\n",
            "# C\n\n## [Unreleased]\n\n## [0.1.0] - D\n\n- new\n\n[unreleased]: https://x/compare\n",
        ),
    ],
)
def test_upsert_keeps_blank_lines_between_sections(text: str, expected: str) -> None:
    log = Changelog.parse(text)
    log.upsert("0.1.0", "D", "- new\n")
    assert log.render() == expected


def test_upsert_keeps_crlf() -> None:
    text = KEEP_A_CHANGELOG.replace("\n", "\r\n")
    log = Changelog.parse(text)
    log.upsert("0.1.0", "2025-11-25", "### Fixed\n\n- new\n")
    out = log.render()
    assert "\n" not in out.replace("\r\n", "")
    assert "## [0.1.0] - 2025-11-25\r\n\r\n### Fixed\r\n\r\n- new\r\n\r\n## [0.0.9]" in out


@pytest.mark.parametrize(
    "text", [new_changelog(), KEEP_A_CHANGELOG, "# C\n", "", KEEP_A_CHANGELOG.replace("\n", "\r\n")]
)
def test_upsert_twice_is_a_no_op(text: str) -> None:
    log = Changelog.parse(text)
    log.upsert("0.1.0rc1", "2025-11-25", RC1)
    once = log.render()
    again = Changelog.parse(once)
    again.upsert("0.1.0rc1", "2025-11-30", RC1)  # a later run, another day
    assert again.render() == once
    assert Changelog.parse(once).render() == once


def test_upsert_rewrites_the_body_and_keeps_the_date() -> None:
    log = Changelog.parse(new_changelog())
    log.upsert("0.1.0rc1", "2025-11-25", RC1)
    log.upsert("0.1.0rc1", "2025-11-30", RC2)
    assert log.labels() == ["Unreleased", "0.1.0rc1"]
    assert log.section("0.1.0rc1") == "## [0.1.0rc1] - 2025-11-25\n\n" + RC2


def test_upsert_touches_only_its_section() -> None:
    log = Changelog.parse(KEEP_A_CHANGELOG)
    log.upsert("0.1.0rc1", "2025-11-25", RC1)
    log.upsert("0.1.0rc2", "2025-11-26", RC2)
    out = log.render()
    assert out.startswith(KEEP_A_CHANGELOG.split("## [0.0.9]")[0])
    assert out.endswith("## [0.0.9]" + KEEP_A_CHANGELOG.split("## [0.0.9]")[1])


def test_promote_folds_the_rc_sections() -> None:
    log = Changelog.parse(KEEP_A_CHANGELOG)
    log.upsert("0.1.0rc1", "2025-11-25", RC1)
    log.upsert("0.1.0rc2", "2025-11-26", RC2)
    assert log.labels() == ["Unreleased", "0.1.0rc2", "0.1.0rc1", "0.0.9", "0.0.8"]
    log.upsert("0.1.0", "2025-11-27", FINAL, replaces=("0.1.0rc1", "0.1.0rc2"))
    assert log.labels() == ["Unreleased", "0.1.0", "0.0.9", "0.0.8"]
    section = "## [0.1.0] - 2025-11-27\n\n" + FINAL + "\n"
    expected = KEEP_A_CHANGELOG.replace("## [0.0.9]", section + "## [0.0.9]")
    assert log.render() == expected
    # promoting again (e.g. a re-run) changes nothing
    again = Changelog.parse(expected)
    again.upsert("0.1.0", "2025-12-01", FINAL, replaces=("0.1.0rc1", "0.1.0rc2"))
    assert again.render() == expected


def test_replaces_never_drops_the_section_written() -> None:
    log = Changelog.parse(new_changelog())
    log.upsert("0.1.0", "2025-11-27", FINAL, replaces=("0.1.0", "0.1.0rc1"))
    assert log.labels() == ["Unreleased", "0.1.0"]


def test_replaces_of_missing_sections_is_harmless() -> None:
    log = Changelog.parse(KEEP_A_CHANGELOG)
    log.upsert("0.1.0", "2025-11-27", FINAL, replaces=("0.1.0rc1", "0.1.0rc7"))
    assert log.labels() == ["Unreleased", "0.1.0", "0.0.9", "0.0.8"]


def test_update_file(tmp_path: Path) -> None:
    path = tmp_path / "CHANGELOG.md"
    assert update_file(path, "0.1.0rc1", "2025-11-25", RC1) is True
    assert path.read_text(encoding="utf-8") == HEADER + "## [0.1.0rc1] - 2025-11-25\n\n" + RC1
    before = path.read_bytes()
    assert update_file(path, "0.1.0rc1", "2025-11-30", RC1) is False
    assert path.read_bytes() == before


def test_update_file_keeps_crlf_bytes(tmp_path: Path) -> None:
    path = tmp_path / "CHANGELOG.md"
    path.write_bytes(KEEP_A_CHANGELOG.replace("\n", "\r\n").encode())
    assert update_file(path, "0.1.0", "2025-11-25", "- new\n") is True
    data = path.read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n")
    assert update_file(path, "0.1.0", "2025-11-25", "- new\n") is False


# -- the changelog of a real rc cycle ---------------------------------------------


@pytest.mark.parametrize("stage", ["rc1", "rc2", "final"])
def test_changelog_golden(cycle: Cycle, stage: str) -> None:
    assert_golden(f"CHANGELOG_{stage}.md", cycle.changelog[stage])


def test_changelog_stages(cycle: Cycle) -> None:
    labels = {stage: Changelog.parse(text).labels() for stage, text in cycle.changelog.items()}
    assert labels == {
        "rc1": ["Unreleased", "0.1.0rc1"],
        "rc2": ["Unreleased", "0.1.0rc2", "0.1.0rc1"],
        "final": ["Unreleased", "0.1.0"],
    }
    rc1 = cycle.changelog["rc1"]
    assert cycle.changelog["rc2"].endswith(rc1.split("## [Unreleased]\n\n")[1])  # rc1 untouched
    final = cycle.changelog["final"]
    assert "## [0.1.0] - 2025-11-25\n" in final
    assert final.count("Fix --port parsing") == 1  # picked for rc1, listed once
    assert "Pin the build tools" not in final  # picked for rc1, reverted for rc2


def test_each_rc_tree_carries_its_own_section(cycle: Cycle) -> None:
    def committed(ref: str) -> str:
        return cycle.git("show", f"{ref}:CHANGELOG.md") + "\n"  # git output loses the last newline

    for tag, stage in (("v0.1.0rc1", "rc1"), ("v0.1.0rc2", "rc2")):
        assert committed(tag) == cycle.changelog[stage]
    # the final tags the last rc's commit; the folded changelog is committed after it
    assert cycle.shas["v0.1.0"] == cycle.shas["v0.1.0rc2"]
    assert committed("releases/v0.1.0") == cycle.changelog["final"]
    assert all(text.endswith("Eve Park\n") for text in cycle.changelog.values())

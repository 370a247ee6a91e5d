"""Versions: every accepted spelling in, every derived spelling out, ordering, next rc."""

from __future__ import annotations

import pytest

from release.core.versions import ReleaseVersion, TagTemplate, next_rc, parse_version
from release.errors import ConfigError, RefusedError, VersionError

RC1 = ReleaseVersion(0, 31, 0, rc=1)


@pytest.mark.parametrize(
    "text",
    [
        "0.31.0rc1",
        "v0.31.0rc1",
        "0.31.0-rc.1",
        "0.31.0-rc1",
        "V0.31.0RC1",
        "0.31.0-RC-1",
        " 0.31.0rc1 ",
        "0.31.0.rc1",
        "0.31.0rc01",
    ],
)
def test_rc_spellings_parse_to_one_value(text: str) -> None:
    version = parse_version(text)
    assert version == RC1
    assert version == parse_version("0.31.0rc1")
    assert hash(version) == hash(RC1)


@pytest.mark.parametrize(
    "text", ["0.31.0.post1", "v0.31.0.post1", "0.31.0post1", "0.31.0-post.1", "0.31.0+post.1"]
)
def test_post_spellings(text: str) -> None:
    version = parse_version(text)
    assert version == ReleaseVersion(0, 31, 0, post=1)
    assert version.is_post and not version.is_rc and not version.is_final


def test_final() -> None:
    version = parse_version("v0.31.0")
    assert version == ReleaseVersion(0, 31, 0)
    assert version.is_final and not version.is_rc and not version.is_post
    assert version.base == version
    assert parse_version("0.31.0rc3").base == version
    assert parse_version("0.31.0.post2").base == version


@pytest.mark.parametrize(
    ("text", "pep440", "semver", "image"),
    [
        ("0.31.0rc1", "0.31.0rc1", "0.31.0-rc.1", "v0.31.0rc1"),
        ("0.31.0-rc.12", "0.31.0rc12", "0.31.0-rc.12", "v0.31.0rc12"),
        ("0.31.0", "0.31.0", "0.31.0", "v0.31.0"),
        ("1.2.3.post4", "1.2.3.post4", "1.2.3+post.4", "v1.2.3.post4"),
    ],
)
def test_spellings_out(text: str, pep440: str, semver: str, image: str) -> None:
    version = parse_version(text)
    assert version.pep440() == pep440 == str(version)
    assert version.semver() == semver
    assert version.image_tag() == image
    assert version.spelled("pep440") == pep440
    assert version.spelled("semver") == semver
    # every spelling written out reads back as the same version
    for spelling in (pep440, semver, image):
        assert parse_version(spelling) == version


def test_image_tag_has_no_plus() -> None:
    assert "+" not in parse_version("0.31.0.post1").image_tag()


class TestTagTemplate:
    def test_pep440_tag(self) -> None:
        template = TagTemplate("v{version}", "tag", "pep440")
        assert template.render(RC1) == "v0.31.0rc1"
        assert template.parse("v0.31.0rc1") == RC1
        assert template.parse("v0.31.0") == ReleaseVersion(0, 31, 0)
        assert template.parse("v0.31.0.post1") == ReleaseVersion(0, 31, 0, post=1)
        # another scheme's spelling is not one of this repository's tags
        assert template.parse("v0.31.0-rc.1") is None

    def test_semver_tag(self) -> None:
        template = TagTemplate("v{version}", "tag", "semver")
        assert template.render(RC1) == "v0.31.0-rc.1"
        assert template.parse("v0.31.0-rc.1") == RC1
        assert template.parse("v0.31.0rc1") is None
        post = ReleaseVersion(0, 31, 0, post=1)
        assert template.render(post) == "v0.31.0+post.1"
        assert template.parse("v0.31.0+post.1") == post

    @pytest.mark.parametrize(
        "name",
        [
            "0.31.0rc1",
            "v0.31",
            "vnext",
            "v0.31.0rc1-hotfix",
            "releases/v0.31.0rc1",
            "v0.31.0a1",
            "",
        ],
    )
    def test_not_our_tags(self, name: str) -> None:
        assert TagTemplate("v{version}", "tag").parse(name) is None

    def test_vllm_branch(self) -> None:
        template = TagTemplate("releases/v{version}", "branch")
        assert template.render(parse_version("0.31.0")) == "releases/v0.31.0"
        assert template.parse("releases/v0.31.0") == ReleaseVersion(0, 31, 0)
        assert template.parse("main") is None
        assert template.parse("releases/v0.31") is None

    def test_pytorch_branch(self) -> None:
        template = TagTemplate("release/{major}.{minor}", "branch")
        assert template.render(parse_version("2.5.0")) == "release/2.5"
        assert template.render(parse_version("2.5.1rc2")) == "release/2.5"
        assert template.parse("release/2.5") == ReleaseVersion(2, 5, 0)
        assert template.parse("release/2.5.1") is None
        assert template.parse("release/2.x") is None

    def test_all_fields(self) -> None:
        template = TagTemplate("r{major}-{minor}-{patch}/{version}", "tag")
        assert template.render(parse_version("1.2.3rc4")) == "r1-2-3/1.2.3rc4"
        assert template.parse("r1-2-3/1.2.3rc4") == parse_version("1.2.3rc4")

    @pytest.mark.parametrize(
        ("template", "message"),
        [
            ("v{version", "bad format string"),
            ("v{vers}", "unknown field {vers}"),
            ("v{}", "unknown field {}"),
            ("v-latest", "has no {version} field"),
        ],
    )
    def test_bad_templates(self, template: str, message: str) -> None:
        with pytest.raises(ConfigError, match="tag") as info:
            TagTemplate(template, "tag")
        assert message in str(info.value)


def test_ordering() -> None:
    rc1, rc2, rc9, rc10 = (parse_version(f"0.31.0rc{n}") for n in (1, 2, 9, 10))
    final, post1, post2 = (parse_version(t) for t in ("0.31.0", "0.31.0.post1", "0.31.0.post2"))
    assert rc1 < rc2 < final < post1 < post2
    assert rc10 > rc9
    assert "0.31.0rc10" < "0.31.0rc9"  # why strings are never compared
    assert parse_version("0.31.0.post1") < parse_version("0.32.0rc1")
    assert parse_version("0.9.0") < parse_version("0.10.0rc1")
    shuffled = [post1, rc10, final, rc2, rc9, rc1, post2]
    assert sorted(shuffled) == [rc1, rc2, rc9, rc10, final, post1, post2]
    assert max(shuffled) == post2
    assert rc1 <= rc1 and rc1 >= rc1 and not rc1 < rc1


def test_ordering_refuses_other_types() -> None:
    with pytest.raises(TypeError):
        assert parse_version("0.31.0") < "0.32.0"  # type: ignore[operator]


class TestNextRc:
    base = ReleaseVersion(0, 31, 0)

    def test_first(self) -> None:
        assert next_rc(self.base, []) == parse_version("0.31.0rc1")

    def test_counts_from_local_and_remote(self) -> None:
        local = [parse_version("0.31.0rc1"), parse_version("0.31.0rc2")]
        remote = [parse_version("0.31.0rc3")]  # pushed from another checkout
        assert next_rc(self.base, [*local, *remote]) == parse_version("0.31.0rc4")

    def test_never_goes_back_over_gaps(self) -> None:
        assert next_rc(self.base, [parse_version("0.31.0rc1"), parse_version("0.31.0rc5")]).rc == 6

    def test_double_digits(self) -> None:
        existing = [ReleaseVersion(0, 31, 0, rc=n) for n in range(1, 11)]
        assert next_rc(self.base, existing).rc == 11

    def test_never_repeats(self) -> None:
        existing: list[ReleaseVersion] = []
        for _ in range(12):
            new = next_rc(self.base, existing)
            assert new not in existing
            assert all(new > v for v in existing)
            existing.append(new)

    def test_other_releases_do_not_count(self) -> None:
        existing = [parse_version("0.30.0rc7"), parse_version("0.30.0"), parse_version("0.32.0rc2")]
        assert next_rc(self.base, existing).rc == 1

    def test_from_an_rc_base(self) -> None:
        assert next_rc(parse_version("0.31.0rc2"), [parse_version("0.31.0rc2")]).rc == 3

    @pytest.mark.parametrize("shipped", ["0.31.0", "0.31.0.post1"])
    def test_refuses_after_the_final(self, shipped: str) -> None:
        with pytest.raises(RefusedError, match="already released") as info:
            next_rc(self.base, [parse_version("0.31.0rc2"), parse_version(shipped)])
        assert "post" in str(info.value)  # says what would be valid instead

    def test_method(self) -> None:
        assert parse_version("0.31.0rc9").next_rc() == parse_version("0.31.0rc10")
        assert parse_version("0.31.0").next_rc() == parse_version("0.31.0rc1")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty version"),
        ("   ", "empty version"),
        ("abc", "not a version"),
        ("v", "not a version"),
        ("vv0.31.0", "not a version"),
        ("-1.0.0", "not a version"),
        ("0.31", "three parts X.Y.Z, or four"),
        ("0.31.0.1.1", "three parts X.Y.Z, or four"),
        ("0.31.0.0", "counts from X.Y.Z.1"),
        ("1!0.31.0", "not releases"),
        ("0.31.0.dev1", "not releases"),
        ("0.31.0+local", "not releases"),
        ("0.31.0a1", "only rc pre-releases"),
        ("0.31.0b2", "only rc pre-releases"),
        ("0.31.0rc0", "start at 1"),
        ("0.31.0-rc.0", "start at 1"),
        ("0.31.0rc", "start at 1"),
        ("0.31.0rc1.post1", "post release of an rc"),
        ("0.31.0-beta.1", "only rc pre-releases"),
        ("0.31.0-rc.1.2", "not a version"),
    ],
)
def test_malformed_versions_say_what_is_valid(text: str, why: str) -> None:
    with pytest.raises(VersionError) as info:
        parse_version(text)
    message = str(info.value)
    assert why in message
    assert "valid: 0.31.0, 0.31.0rc1, 0.31.0-rc.1" in message
    assert info.value.exit_code == 2


def test_first_rc_zero_admits_rc0_and_numbers_from_it() -> None:
    """Projects such as vllm-gaudi tag ``X.Y.Zrc0`` first (``first-rc = 0``)."""
    base = ReleaseVersion(0, 16, 0)
    assert parse_version("0.16.0rc0", first_rc=0) == ReleaseVersion(0, 16, 0, rc=0)
    assert parse_version("0.16.0-rc.0", first_rc=0) == ReleaseVersion(0, 16, 0, rc=0)
    assert next_rc(base, [], first_rc=0) == ReleaseVersion(0, 16, 0, rc=0)
    assert next_rc(base, [ReleaseVersion(0, 16, 0, rc=0)], first_rc=0).rc == 1
    assert next_rc(base, [], first_rc=1).rc == 1
    with pytest.raises(VersionError, match="start at 1"):
        parse_version("0.16.0rc0")


def test_rc0_tags_are_read_whatever_the_setting() -> None:
    """An existing ``v0.16.0rc0`` counts as an rc of its release: the next is rc1, and the
    rc0 sorts between the previous final and rc1."""
    tag = TagTemplate("v{version}", "tag")
    rc0 = tag.parse("v0.16.0rc0")
    assert rc0 == ReleaseVersion(0, 16, 0, rc=0)
    assert tag.parse_any("v0.16.0-rc.0") == rc0
    assert next_rc(ReleaseVersion(0, 16, 0), [rc0]).rc == 1
    assert ReleaseVersion(0, 15, 1) < rc0 < ReleaseVersion(0, 16, 0, rc=1)

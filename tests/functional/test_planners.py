"""The pure planners, one table each: hand-made values in, plans (or refusals) out.

No git, no subprocess, no files: every case builds its input by hand and pins what the
planner decides today.
"""

from __future__ import annotations

import json

import pytest

from release.adapters.git_log import parse_subjects
from release.core.changelog import Changelog
from release.core.commits import make_commit
from release.core.config import Config
from release.core.notes import build_notes
from release.core.plan import NoInfo, Plan, Step, StepKind
from release.core.plan_steps import BranchAt, PickData, RefAt
from release.core.versions import ReleaseVersion, next_rc, parse_version
from release.errors import RefusedError, ReleaseError, UsageError, VersionError
from release.flows.candidates import commits_by_pr
from release.flows.context import TagInfo
from release.flows.cut import CutState, plan_cut
from release.flows.next_version import choose_version
from release.flows.pick_plan import (
    Candidate,
    PickInfo,
    PickState,
    RequestedPick,
    parse_requests,
    plan_pick,
)
from release.flows.push import plan_push
from release.flows.tag_apply import TagPlanInfo

pytestmark = pytest.mark.no_git  # nothing here runs git: no temporary HOME per test


def refusal(kind: type[ReleaseError], call, *args, **kwargs) -> str:
    """The message of the ``kind`` error (exactly that class) ``call(*args)`` raises."""
    with pytest.raises(kind) as info:
        call(*args, **kwargs)
    assert type(info.value) is kind
    return info.value.message


V = parse_version
BASE = ReleaseVersion(0, 31, 0)
BRANCH = "releases/v0.31.0"


def sha(digit: int) -> str:
    return str(digit) * 40  # short(sha(1)) == "1111111111"


def steps(plan) -> list[tuple[str, str]]:
    return [(s.action, s.detail) for s in plan.steps]


# -- cut -------------------------------------------------------------------------------


def cut_state(**changes) -> CutState:
    fields = dict(version=BASE, branch=BRANCH, at=sha(1), at_label="main", on_main=True)
    fields.update(exists_locally=False, exists_remotely=False, final_tagged=False, switch=True)
    return CutState(**{**fields, **changes})


CREATE = ("create-branch", f"create branch {BRANCH} at 1111111111 (main)")
SWITCH = ("switch", f"switch to {BRANCH}")
STAY = (
    "skip",
    "stay on the current branch: the work tree has uncommitted changes "
    f"(git switch {BRANCH} when ready)",
)
NOTE = f"not checked: whether {BRANCH} or a 0.31.0 tag exists on the remote (--offline)"


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        pytest.param({}, [CREATE, SWITCH], id="create-then-switch"),
        pytest.param({"switch": False}, [CREATE], id="no-switch"),
        pytest.param({"dirty": True}, [CREATE, STAY], id="dirty-tree-stays"),
        pytest.param({"dirty": True, "switch": False}, [CREATE], id="dirty-no-switch"),
        pytest.param({"remote_note": NOTE}, [CREATE, SWITCH, ("skip", NOTE)], id="remote-note"),
        pytest.param(
            {"at": sha(2), "at_label": "v0.31.0-base"},
            [("create-branch", f"create branch {BRANCH} at 2222222222 (v0.31.0-base)"), SWITCH],
            id="at-a-named-commit",
        ),
    ],
)
def test_plan_cut(changes: dict, expected: list[tuple[str, str]]) -> None:
    plan = plan_cut(cut_state(**changes))
    at = changes.get("at", sha(1))
    assert steps(plan) == expected
    assert plan.steps[0].data.to_dict() == {"branch": BRANCH, "at": at}
    assert plan.summary == f"cut {BRANCH} for 0.31.0 at {at[:10]}"
    assert plan.info.to_dict() == {"version": "0.31.0", "branch": BRANCH, "at": at}
    assert [s.action for s in plan.actions] == [a for a, _ in expected if a != "skip"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        pytest.param(
            {"exists_locally": True},
            f"branch {BRANCH} already exists here; pick into it instead",
            id="branch-exists-locally",
        ),
        pytest.param(
            {"exists_remotely": True},
            f"branch {BRANCH} already exists on the remote; pick into it instead",
            id="branch-exists-remotely",
        ),
        pytest.param(
            {"exists_locally": True, "exists_remotely": True, "final_tagged": True},
            f"branch {BRANCH} already exists here; pick into it instead",
            id="local-branch-named-first",
        ),
        pytest.param(
            {"final_tagged": True},
            "0.31.0 is already released; cut a new version",
            id="final-already-tagged",
        ),
        pytest.param(
            {"on_main": False, "at": sha(3), "at_label": "feature-x"},
            "feature-x (3333333333) is not on main; cut from a main commit",
            id="commit-not-on-main",
        ),
        pytest.param(
            {"on_main": False, "final_tagged": True},
            "0.31.0 is already released; cut a new version",
            id="released-before-not-on-main",
        ),
        pytest.param(
            {"line": True, "version": V("0.31.2"), "branch": "release/0.31"},
            "release/0.31 carries 0.31.0 and its patch releases: cut 0.31.0, not 0.31.2",
            id="a-line-starts-at-x-y-0",
        ),
        pytest.param(
            {
                "line": True,
                "version": V("0.31.1"),
                "branch": "release/0.31",
                "exists_locally": True,
            },
            "branch release/0.31 already exists here; pick into it instead (0.31.1 is a patch "
            "release of its line: release tag makes its rc there once the release before it "
            "is final)",
            id="a-patch-goes-on-its-line",
        ),
    ],
)
def test_plan_cut_refuses(changes: dict, message: str) -> None:
    assert refusal(RefusedError, plan_cut, cut_state(**changes)) == message


# -- pick ------------------------------------------------------------------------------


def cand(digit: int, position: int, **changes) -> Candidate:
    request = RequestedPick(changes.pop("ref", f"#{100 + digit}"), changes.pop("reason", None))
    fields = dict(sha=sha(digit), subject=f"fix {digit}", category="Bug Fixes")
    return Candidate(request, position=position, **{**fields, **changes})


def pick_state(*candidates: Candidate, allow_feature: bool = False) -> PickState:
    return PickState(BRANCH, "f" * 40, candidates, ("Features",), allow_feature)


def pick(digit: int, why: str = "") -> tuple[str, str]:
    return ("cherry-pick", f"cherry-pick -x {sha(digit)[:10]} fix {digit}{why}")


def skip(digit: int, why: str) -> tuple[str, str]:
    return ("skip", f"skip {sha(digit)[:10]} fix {digit} ({why})")


THERE = "already on the branch"
BEFORE = "already on the branch (before the cut)"


@pytest.mark.parametrize(
    ("candidates", "expected", "counts"),
    [
        pytest.param(
            [cand(3, 2), cand(1, 0), cand(2, 1)],
            [pick(1), pick(2), pick(3)],
            (3, 0),
            id="main-order-not-request-order",
        ),
        pytest.param(
            [cand(1, 0), cand(2, 5, skip=THERE), cand(3, -1, skip=BEFORE), cand(4, 3)],
            [skip(3, BEFORE), skip(2, THERE), pick(1), pick(4)],
            (2, 2),
            id="skips-first-in-main-order",
        ),
        pytest.param(
            [cand(1, 4, ref="#101"), cand(1, 4, ref=sha(1)), cand(2, 0)],
            [pick(2), pick(1)],
            (2, 0),
            id="same-sha-twice-listed-once",
        ),
        pytest.param(
            [cand(1, 0, reason="regression"), cand(2, 1, reason=None)],
            [pick(1, " [regression]"), pick(2)],
            (2, 0),
            id="reason-shown",
        ),
        pytest.param(
            [cand(1, 0, parents=2, skip=THERE), cand(2, 1, category="Features", skip=THERE)],
            [skip(1, THERE), skip(2, THERE)],
            (0, 2),
            id="skipped-merge-and-feature-not-refused",
        ),
    ],
)
def test_plan_pick(candidates: list, expected: list, counts: tuple[int, int]) -> None:
    plan = plan_pick(pick_state(*candidates))
    assert steps(plan) == expected
    picks, skips = counts
    assert plan.summary == (
        f"pick onto {BRANCH} (at ffffffffff): {picks} to pick, {skips} already there"
    )
    assert plan.info.to_dict() == {"branch": BRANCH, "head": "f" * 40}


def test_plan_pick_step_data() -> None:
    plan = plan_pick(pick_state(cand(2, 1, skip=THERE), cand(1, 0, reason="critical")))
    assert [s.data.to_dict() for s in plan.steps] == [
        {"sha": sha(2), "subject": "fix 2", "reason": None, "why": THERE},
        {"sha": sha(1), "subject": "fix 1", "reason": "critical"},
    ]


def test_plan_pick_allows_feature_when_asked() -> None:
    plan = plan_pick(pick_state(cand(1, 0, category="Features"), allow_feature=True))
    assert steps(plan) == [pick(1)]


@pytest.mark.parametrize(
    ("candidates", "kind", "message"),
    [
        pytest.param(
            [cand(1, 0), cand(2, 1, parents=2)],
            RefusedError,
            "2222222222 is a merge commit; pick the commits it merged instead",
            id="merge-commit",
        ),
        pytest.param(
            [cand(1, 0), cand(2, 1, category="Features", subject="add X")],
            RefusedError,
            "2222222222 'add X' is feature work (Features); release branches take fixes only "
            "(pass --allow-feature to override)",
            id="feature-work",
        ),
        pytest.param(
            [cand(1, 0, category="Features", parents=3)],
            RefusedError,
            "1111111111 is a merge commit; pick the commits it merged instead",
            id="merge-named-before-feature",
        ),
        pytest.param(
            [],
            UsageError,
            "nothing to pick: give commits (sha, #PR or a PR's address), --milestone, --label or --file",
            id="no-candidates",
        ),
    ],
)
def test_plan_pick_refuses(candidates: list, kind: type[ReleaseError], message: str) -> None:
    assert refusal(kind, plan_pick, pick_state(*candidates)) == message


R = RequestedPick


@pytest.mark.parametrize(
    ("commits", "file_text", "reason", "expected"),
    [
        pytest.param("#1 #2", None, None, [R("#1"), R("#2")], id="space-separated"),
        pytest.param(
            "abc1234,#5 , DEADBEEF",
            None,
            "critical",
            [R("abc1234", "critical"), R("#5", "critical"), R("DEADBEEF", "critical")],
            id="comma-separated-with-reason",
        ),
        pytest.param(["abc1234", "#3"], None, None, [R("abc1234"), R("#3")], id="a-list"),
        pytest.param(
            "",
            "# picks for 0.31.0\nabc1234 regression\n\n#59118   # the scheduler fix\n"
            "deadbeef docs # why: typo\n#\n",
            None,
            [R("abc1234", "regression"), R("#59118"), R("deadbeef", "docs")],
            id="file-lines-reasons-comments",
        ),
        pytest.param(
            "#1",
            "#2\n#3 docs\n",
            "critical",
            [R("#1", "critical"), R("#2", "critical"), R("#3", "docs")],
            id="file-after-commits-line-reason-wins",
        ),
        pytest.param("", "\n  \n# nothing\n", None, [], id="file-only-comments"),
    ],
)
def test_parse_requests(commits, file_text: str | None, reason: str | None, expected) -> None:
    assert parse_requests(commits, file_text, reason) == expected


@pytest.mark.parametrize(
    ("commits", "file_text", "reason", "message"),
    [
        pytest.param(
            "",
            "abc1234\n# ok\nabc1235 regression extra\n",
            None,
            "picks file line 3: expected '<sha or #PR> [reason]', got 'abc1235 regression extra'",
            id="three-fields-names-line",
        ),
        pytest.param(
            "#1",
            None,
            "urgent",
            "--reason 'urgent' is not one of regression, critical, fix-new-feature, docs, "
            "release-only",
            id="bad-reason-option",
        ),
        pytest.param(
            "",
            "#1\nabc1234 urgent\n",
            None,
            "picks file line 2: reason 'urgent' is not one of regression, critical, "
            "fix-new-feature, docs, release-only",
            id="bad-reason-in-file",
        ),
        pytest.param(
            "#1 HEAD~1",
            None,
            None,
            "'HEAD~1' is neither a commit sha, a #PR number nor a pull request's address",
            id="neither-sha-nor-pr",
        ),
        pytest.param(
            "abc",
            None,
            None,
            "'abc' is neither a commit sha, a #PR number nor a pull request's address",
            id="sha-too-short",
        ),
        pytest.param(
            "",
            "#12a\n",
            None,
            "'#12a' is neither a commit sha, a #PR number nor a pull request's address",
            id="pr-not-digits",
        ),
    ],
)
def test_parse_requests_refuses(commits, file_text, reason, message: str) -> None:
    assert refusal(UsageError, parse_requests, commits, file_text, reason) == message


def test_a_pr_number_is_found_in_a_subject_with_a_carriage_return_or_a_form_feed() -> None:
    log = "a\x1fFix the parser\rfor good (#5)\nb\x1fFix x\x0cy (#6)\n"
    assert commits_by_pr(parse_subjects(log), {5, 6}) == {5: ["a"], 6: ["b"]}
    # nor can a subject hand another sha to a PR number
    assert commits_by_pr(parse_subjects("a\x1fFix\rbbbb\x1fForged (#7)\n"), {7}) == {7: ["a"]}


# -- push ------------------------------------------------------------------------------

RC1, RC2 = "v0.31.0rc1", "v0.31.0rc2"


def branch_ref(detail: str, at: str) -> tuple[str, str, dict]:
    return ("push-ref", detail, {"ref": f"refs/heads/{BRANCH}", "sha": at})


def tag_ref(name: str, at: str) -> tuple[str, str, dict]:
    return ("push-ref", f"push tag {name} ({at[:10]})", {"ref": f"refs/tags/{name}", "sha": at})


@pytest.mark.parametrize(
    ("remote_branch", "local_tags", "remote_tags", "expected"),
    [
        pytest.param(sha(1), {RC1: sha(5)}, {RC1: sha(5)}, [], id="up-to-date"),
        pytest.param(
            None,
            {},
            {},
            [branch_ref(f"create branch {BRANCH} on origin at 1111111111", sha(1))],
            id="new-branch",
        ),
        pytest.param(
            sha(2),
            {RC1: sha(5)},
            {RC1: sha(5)},
            [branch_ref(f"update {BRANCH} on origin from 2222222222 to 1111111111", sha(1))],
            id="branch-update",
        ),
        pytest.param(
            sha(1),
            {RC2: sha(6), RC1: sha(5)},
            {RC1: sha(5)},
            [tag_ref(RC2, sha(6))],
            id="new-tag-only",
        ),
        pytest.param(
            None,
            {RC2: sha(6), RC1: sha(5)},
            {"v0.30.0": sha(7)},
            [
                branch_ref(f"create branch {BRANCH} on origin at 1111111111", sha(1)),
                tag_ref(RC1, sha(5)),
                tag_ref(RC2, sha(6)),
            ],
            id="branch-then-tags-by-name",
        ),
        pytest.param(sha(1), {}, {RC1: sha(5)}, [], id="remote-only-tag-left-alone"),
    ],
)
def test_plan_push(remote_branch, local_tags, remote_tags, expected) -> None:
    plan = plan_push("origin", BRANCH, sha(1), remote_branch, local_tags, remote_tags)
    assert [(s.action, s.detail, s.data.to_dict()) for s in plan.steps] == expected
    summary = f"push to origin atomically: {len(expected)} ref(s)"
    assert plan.summary == (summary if expected else "origin is up to date")
    assert plan.info.to_dict() == {"remote": "origin", "branch": BRANCH}


@pytest.mark.parametrize("remote_branch", [sha(1), None], ids=["branch-up-to-date", "new-branch"])
def test_plan_push_refuses_a_moved_tag(remote_branch: str | None) -> None:
    local, remote = {RC1: sha(4), RC2: sha(6)}, {RC1: sha(3)}
    message = refusal(
        RefusedError, plan_push, "origin", BRANCH, sha(1), remote_branch, local, remote
    )
    assert message == (
        f"tag {RC1} on origin points at 3333333333, here at 4444444444; "
        "tags are never moved, resolve this by hand"
    )


# -- versions --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        *(
            pytest.param(t, ReleaseVersion(0, 31, 0, rc=1), id=t.strip() or "blank")
            for t in ("0.31.0rc1", "v0.31.0rc1", "0.31.0-rc.1", "0.31.0-rc1", " V0.31.0RC1 ")
        ),
        pytest.param("0.31.0-RC-1", ReleaseVersion(0, 31, 0, rc=1), id="0.31.0-RC-1"),
        pytest.param("0.31.0.rc1", ReleaseVersion(0, 31, 0, rc=1), id="0.31.0.rc1"),
        pytest.param("v0.31.0rc12", ReleaseVersion(0, 31, 0, rc=12), id="two-digit-rc"),
        pytest.param("0.31.0", ReleaseVersion(0, 31, 0), id="final"),
        *(
            pytest.param(t, ReleaseVersion(0, 31, 0, post=1), id=t)
            for t in ("0.31.0.post1", "0.31.0post1", "0.31.0-post1", "0.31.0+post.1")
        ),
        pytest.param("10.2.3", ReleaseVersion(10, 2, 3), id="multi-digit-parts"),
        pytest.param("0.12.0.1", ReleaseVersion(0, 12, 0, fix=1), id="four-parts"),
        pytest.param("0.10.0.3", ReleaseVersion(0, 10, 0, fix=3), id="four-parts-3"),
        pytest.param("v0.12.0.2rc1", ReleaseVersion(0, 12, 0, rc=1, fix=2), id="four-part-rc"),
        pytest.param("v0.18.1-rc1", ReleaseVersion(0, 18, 1, rc=1), id="patch-rc-pytorch"),
    ],
)
def test_parse_version(text: str, expected: ReleaseVersion) -> None:
    assert parse_version(text) == expected


@pytest.mark.parametrize(
    ("text", "why"),
    [
        pytest.param("", "empty version", id="empty"),
        pytest.param("v", "not a version: 'v'", id="bare-v"),
        pytest.param("banana", "not a version: 'banana'", id="word"),
        pytest.param("0.31", "must have three parts X.Y.Z, or four X.Y.Z.N", id="two-parts"),
        pytest.param("0.31.0.0", "a four-part release counts from X.Y.Z.1", id="four-parts-0"),
        pytest.param("0.31.0.1.2", "must have three parts X.Y.Z, or four", id="five-parts"),
        pytest.param("0.31.0a1", "only rc pre-releases are cut (got a)", id="alpha"),
        pytest.param("0.31.0rc0", "rc numbers start at 1", id="rc0"),
        pytest.param("0.31.0-rc.0", "rc numbers start at 1", id="semver-rc0"),
        pytest.param("0.31.0.dev1", "epochs, local and dev versions", id="dev"),
        pytest.param("0.31.0+local", "epochs, local and dev versions", id="local"),
        pytest.param("0.31.0rc1.post1", "a post release of an rc", id="post-of-rc"),
    ],
)
def test_parse_version_refuses(text: str, why: str) -> None:
    message = refusal(VersionError, parse_version, text)
    assert why in message
    assert message.endswith(
        "valid: 0.31.0, 0.31.0rc1, 0.31.0-rc.1, v0.31.0rc1, 0.31.0.post1 or 0.31.0.1"
    )


@pytest.mark.parametrize(
    ("version", "pep440", "semver", "image"),
    [
        (ReleaseVersion(0, 31, 0, rc=2), "0.31.0rc2", "0.31.0-rc.2", "v0.31.0rc2"),
        (ReleaseVersion(0, 31, 0), "0.31.0", "0.31.0", "v0.31.0"),
        (ReleaseVersion(0, 31, 0, post=1), "0.31.0.post1", "0.31.0+post.1", "v0.31.0.post1"),
    ],
    ids=["rc", "final", "post"],
)
def test_release_version_spellings(version, pep440: str, semver: str, image: str) -> None:
    assert (str(version), version.spelled("semver"), version.image_tag()) == (pep440, semver, image)
    assert parse_version(semver) == parse_version(image) == version  # read back
    assert version.base == BASE


def test_release_version_order() -> None:
    texts = ["0.31.0.post1", "0.31.0rc10", "0.30.0", "0.31.0", "0.31.0rc2", "0.31.0rc1"]
    assert [str(v) for v in sorted(map(V, texts))] == [
        "0.30.0", "0.31.0rc1", "0.31.0rc2", "0.31.0rc10", "0.31.0", "0.31.0.post1",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("existing", "expected"),
    [
        pytest.param([], "0.31.0rc1", id="none"),
        pytest.param(["0.31.0rc1"], "0.31.0rc2", id="after-rc1"),
        pytest.param(["0.31.0rc3", "0.31.0rc1"], "0.31.0rc4", id="over-a-gap"),
        pytest.param(["0.31.0rc9"], "0.31.0rc10", id="two-digits"),
        pytest.param(["0.30.0rc5", "0.30.0", "0.32.0rc1"], "0.31.0rc1", id="other-releases"),
    ],
)
def test_next_rc(existing: list[str], expected: str) -> None:
    assert next_rc(BASE, map(V, existing)) == V(expected)


@pytest.mark.parametrize(
    ("existing", "message"),
    [
        pytest.param(
            ["0.31.0rc1", "0.31.0"],
            "0.31.0 is already released; an rc of 0.31.0 would go back "
            "(cut a new release, or tag 0.31.0.post1)",
            id="after-final",
        ),
        pytest.param(
            ["0.31.0", "0.31.0.post2"],
            "0.31.0.post2 is already released; an rc of 0.31.0 would go back "
            "(cut a new release, or tag 0.31.0.post3)",
            id="after-post",
        ),
    ],
)
def test_next_rc_refuses(existing: list[str], message: str) -> None:
    assert refusal(RefusedError, next_rc, BASE, [V(t) for t in existing]) == message


# -- tagging: choose_version ------------------------------------------------------------


def tag_infos(*local: str, remote_only: tuple[str, ...] = ()) -> list[TagInfo]:
    here = [TagInfo(f"v{t}", V(t), sha(8)) for t in local]
    return here + [TagInfo(f"v{t}", V(t), sha(9), local=False, remote=True) for t in remote_only]


@pytest.mark.parametrize(
    ("requested", "tags", "expected"),
    [
        pytest.param(None, [], "0.31.0rc1", id="first-rc"),
        pytest.param(None, tag_infos("0.31.0rc1", "0.31.0rc2"), "0.31.0rc3", id="next-rc"),
        pytest.param(
            None, tag_infos("0.31.0rc1", remote_only=("0.31.0rc2",)), "0.31.0rc3", id="remote-only"
        ),
        pytest.param(None, tag_infos("0.30.0rc1", "0.30.0.post1"), "0.31.0rc1", id="other-release"),
        pytest.param("0.31.0rc5", tag_infos("0.31.0rc1"), "0.31.0rc5", id="explicit-greater-rc"),
        pytest.param(
            "0.31.0.post1", tag_infos("0.31.0rc1", "0.31.0"), "0.31.0.post1", id="post-after-final"
        ),
        pytest.param(  # torchtune tagged v0.6.1-rc1 on release/0.6.0
            "0.31.1rc1", tag_infos("0.31.0rc1", "0.31.0"), "0.31.1rc1", id="patch-asked-by-name"
        ),
    ],
)
def test_choose_version(requested: str | None, tags: list[TagInfo], expected: str) -> None:
    assert choose_version(BASE, V(requested) if requested else None, tags) == V(expected)


@pytest.mark.parametrize(
    ("base", "requested", "tags", "expected"),
    [
        pytest.param("0.31.0", None, tag_infos("0.31.0rc1"), "0.31.0rc2", id="rc-of-x-y-0"),
        pytest.param(
            "0.31.0", None, tag_infos("0.31.0rc1", "0.31.0"), "0.31.1rc1", id="next-patch"
        ),
        pytest.param(
            "0.31.0",
            None,
            tag_infos("0.31.0", remote_only=("0.31.1rc1",)),
            "0.31.1rc2",
            id="next-patch-past-remote",
        ),
        pytest.param(
            "0.31.0", "0.31.1rc1", tag_infos("0.31.0rc1", "0.31.0"), "0.31.1rc1", id="asked-patch"
        ),
        pytest.param("0.31.1", None, tag_infos("0.31.0", "0.31.1rc1"), "0.31.1rc2", id="patch-rc2"),
    ],
)
def test_choose_version_on_a_line(
    base: str, requested: str | None, tags: list[TagInfo], expected: str
) -> None:
    """A branch that carries patch releases: after a final, the next patch's rc."""
    chosen = choose_version(V(base), V(requested) if requested else None, tags, patches=True)
    assert chosen == V(expected)


@pytest.mark.parametrize(
    ("base", "requested", "tags", "message"),
    [
        pytest.param(
            "0.31.1",
            "0.31.0rc3",
            tag_infos("0.31.0", "0.31.1rc1"),
            "0.31.0rc3 would go back: this branch is on 0.31.1 already",
            id="goes-back",
        ),
        pytest.param(
            "0.31.0",
            "0.31.1rc1",
            tag_infos("0.31.0rc1"),
            "0.31.1rc1 is a later patch release, and 0.31.0 is not released yet (promote it first)",
            id="patch-before-final",
        ),
        pytest.param(
            "0.31.0",
            None,
            tag_infos("0.31.0", remote_only=("0.31.1",)),
            "0.31.1 is already released; an rc of 0.31.1 would go back "
            "(cut a new release, or tag 0.31.1.post1)",
            id="next-patch-released-elsewhere",
        ),
    ],
)
def test_choose_version_on_a_line_refuses(base, requested, tags, message: str) -> None:
    asked = V(requested) if requested else None
    assert refusal(RefusedError, choose_version, V(base), asked, tags, patches=True) == message


RC_1_2 = ("0.31.0rc1", "0.31.0rc2")


@pytest.mark.parametrize(
    ("requested", "tags", "kind", "message"),
    [
        pytest.param(
            "0.31.0rc2",
            tag_infos(*RC_1_2),
            RefusedError,
            "0.31.0rc2 is not greater than the latest tag of this release, 0.31.0rc2; "
            "next valid: 0.31.0rc3",
            id="rc-not-greater",
        ),
        pytest.param(
            "0.31.0rc2",
            tag_infos("0.31.0rc1", remote_only=("0.31.0rc3",)),
            RefusedError,
            "0.31.0rc2 is not greater than the latest tag of this release, 0.31.0rc3; "
            "next valid: 0.31.0rc4",
            id="rc-not-greater-than-remote",
        ),
        pytest.param(
            "0.31.0.post1",
            tag_infos(*RC_1_2),
            RefusedError,
            "0.31.0.post1 needs the final 0.31.0 first (run promote)",
            id="post-needs-final",
        ),
        pytest.param(
            "0.31.0rc3",
            tag_infos(*RC_1_2, "0.31.0"),
            RefusedError,
            "0.31.0rc3 is not greater than the latest tag of this release, 0.31.0; "
            "next valid: 0.31.0.post1",
            id="rc-after-final",
        ),
        pytest.param(
            "0.31.0.post1",
            tag_infos("0.31.0", "0.31.0.post1"),
            RefusedError,
            "0.31.0.post1 is not greater than the latest tag of this release, 0.31.0.post1; "
            "next valid: 0.31.0.post2",
            id="post-not-greater",
        ),
        pytest.param(
            None,
            tag_infos("0.31.0rc1", "0.31.0"),
            RefusedError,
            "0.31.0 is already released; an rc of 0.31.0 would go back "
            "(cut a new release, or tag 0.31.0.post1)",
            id="next-rc-after-final",
        ),
        pytest.param(
            "0.32.0rc1",
            [],
            UsageError,
            "0.32.0rc1 is not a version of the 0.31.0 release branch",
            id="wrong-base",
        ),
        pytest.param(
            "0.31.0",
            tag_infos("0.31.0rc1"),
            UsageError,
            "0.31.0 is a final release; finals are made with promote",
            id="final-is-promote",
        ),
    ],
)
def test_choose_version_refuses(requested, tags, kind: type[ReleaseError], message: str) -> None:
    assert refusal(kind, choose_version, BASE, V(requested) if requested else None, tags) == message


# -- notes -----------------------------------------------------------------------------

ALIASES = Config().alias_map()
ORDER = list(Config().categories)
ALICE = ("Alice Chen", "alice@example.com")
BOB = ("Bob Okafor", "bob@example.com")
MAIN_SHA = "a" * 40  # the main commit two picks came from


def commit(n: int, subject: str, body: str = "", who: tuple[str, str] = ALICE):
    return make_commit(sha(n), who[0], who[1], subject, body, ALIASES)


def notes(oldest_first, order=ORDER, exclude=()):
    newest_first = list(reversed(oldest_first))
    return build_notes(
        newest_first,
        category_order=order,
        since="v0.30.0",
        until="HEAD",
        exclude_identities=exclude,
    )


MIXED = [
    commit(1, "[Misc] tidy up (#5)"),
    commit(2, "plain subject (#2)"),
    commit(3, "[Perf] faster decode (#3)"),
    commit(4, "[Bugfix] fix a (#1)"),
    commit(5, "[Weird] unknown prefix (#6)"),
    commit(6, "[v0.31.0][Kernel] fused kernel (#4)"),
    commit(7, "[Bugfix] fix b (#7)"),
]
PICKED = f"(cherry picked from commit {MAIN_SHA})"
REVERTED = [commit(1, "[Bugfix] fix a (#1)"), commit(2, "[Bugfix] fix b (#2)")]


@pytest.mark.parametrize(
    ("commits", "options", "expected"),
    [
        pytest.param(
            MIXED,
            {},
            [
                ("Bug Fixes", ["fix a", "fix b"]),
                ("Performance", ["faster decode"]),
                ("Kernels", ["fused kernel"]),
                ("Misc", ["tidy up"]),
                ("Other", ["plain subject", "unknown prefix"]),
            ],
            id="config-order-other-last",
        ),
        pytest.param(
            MIXED,
            {"order": ["Misc"]},
            [
                ("Misc", ["tidy up"]),
                ("Bug Fixes", ["fix a", "fix b"]),
                ("Kernels", ["fused kernel"]),
                ("Performance", ["faster decode"]),
                ("Other", ["plain subject", "unknown prefix"]),
            ],
            id="unordered-categories-sorted-before-other",
        ),
        pytest.param(
            [*REVERTED, commit(3, 'Revert "[Bugfix] fix a (#1)" (#3)')],
            {},
            [("Bug Fixes", ["fix b"])],
            id="revert-pair-cancelled-by-subject",
        ),
        pytest.param(
            [
                *REVERTED,
                commit(3, 'Revert "renamed (#1)"', f"This reverts commit {sha(1)[:9]}."),
            ],
            {},
            [("Bug Fixes", ["fix b"])],
            id="revert-pair-cancelled-by-sha",
        ),
        pytest.param(
            [commit(3, 'Revert "[Bugfix] fix z (#9)" (#3)', "This reverts commit 1234567.")],
            {},
            [("Bug Fixes", ['Revert "fix z"'])],
            id="revert-of-outside-listed",
        ),
        pytest.param(
            [commit(1, "[Bugfix] fix a (#1)", PICKED), commit(2, "[Bugfix] fix a (#1)", PICKED)],
            {},
            [("Bug Fixes", ["fix a"])],
            id="picked-twice-listed-once",
        ),
        pytest.param(
            [commit(1, "[Bugfix] fix a (#1)", PICKED), commit(2, "[Core] kept (#2)")],
            {"exclude": (MAIN_SHA,)},
            [("Core", ["kept"])],
            id="exclude-a-picked-identity",
        ),
        pytest.param(
            [commit(1, "[Bugfix] shipped (#1)"), commit(2, "[Core] kept (#2)")],
            {"exclude": (sha(1),)},
            [("Core", ["kept"])],
            id="exclude-a-sha",
        ),
        pytest.param(
            [
                commit(1, "[Core] kept (#2)"),
                commit(2, "Update CHANGELOG.md for v0.31.0rc1", "Release-changelog: v0.31.0rc1"),
            ],
            {},
            [("Core", ["kept"])],
            id="changelog-commit-not-a-change",
        ),
    ],
)
def test_build_notes(commits: list, options: dict, expected: list) -> None:
    built = notes(commits, **options)
    assert [(name, [e.title for e in entries]) for name, entries in built.sections] == expected
    assert (built.since, built.until) == ("v0.30.0", "HEAD")


def test_build_notes_cancelled_and_picked_entry() -> None:
    reverted = notes([*REVERTED, commit(3, 'Revert "[Bugfix] fix a (#1)"')])
    assert reverted.cancelled == (sha(1), sha(3))
    [entry] = notes(
        [commit(1, "[Bugfix] a (#1)", PICKED), commit(2, "[Bugfix] a (#1)", PICKED)]
    ).entries
    assert (entry.sha, entry.picked_from, entry.identity, entry.pr) == (
        sha(1), MAIN_SHA, MAIN_SHA, 1,
    )  # fmt: skip


def test_build_notes_credits_everyone_once() -> None:
    co = "Co-authored-by: Bob O. <BOB@example.com>\nCo-authored-by: alice <Alice@Example.com>"
    built = notes(
        [
            commit(
                1, "[Core] one (#1)", f"Body.\n\n{co}\nCo-authored-by: Bob Okafor <bob@example.com>"
            ),
            commit(2, "[Core] two (#2)", who=BOB),
            commit(3, "[Core] three (#3)"),
        ]
    )
    credits = [[p.name for p in e.credits] for e in built.entries]
    # one spelling throughout: the full name credited most (Bob Okafor twice, Bob O. once)
    assert credits == [["Alice Chen", "Bob Okafor"], ["Bob Okafor"], ["Alice Chen"]]
    assert [p.name for p in built.contributors] == ["Alice Chen", "Bob Okafor"]


# -- changelog -------------------------------------------------------------------------

HEAD = "# Changelog\n\nIntro.\n\n## [Unreleased]\n\n"
OLD = "## [0.30.0] - 2024-01-01\n\n### Bug Fixes\n\n- old fix\n"
LINKS = "[0.30.0]: https://example.com/v0.30.0\n"
RC1_SECTION = "## [0.31.0rc1] - 2024-05-01\n\n### Core\n\n- new\n\n"


def upserted(text: str, label: str, date: str, body: str, replaces=()) -> str:
    log = Changelog.parse(text)
    log.upsert(label, date, body, replaces=replaces)
    return log.render()


@pytest.mark.parametrize(
    ("before", "label", "replaces", "after"),
    [
        pytest.param(HEAD + OLD, "0.31.0rc1", (), HEAD + RC1_SECTION + OLD, id="after-unreleased"),
        pytest.param(
            "# Changelog\n\n" + OLD,
            "0.31.0rc1",
            (),
            "# Changelog\n\n" + RC1_SECTION + OLD,
            id="first-without-unreleased",
        ),
        pytest.param(
            HEAD + OLD + "\n" + LINKS,
            "0.31.0rc1",
            (),
            HEAD + RC1_SECTION + OLD + "\n" + LINKS,
            id="footer-links-stay-last",
        ),
        pytest.param(
            HEAD + OLD + LINKS,
            "0.31.0rc1",
            (),
            HEAD + RC1_SECTION + OLD + "\n" + LINKS,
            id="blank-line-before-footer",
        ),
        pytest.param(
            HEAD
            + "## [0.31.0rc2] - 2024-05-08\n\n- b\n\n## [0.31.0rc1] - 2024-05-01\n\n- a\n\n"
            + OLD,
            "0.31.0",
            ("0.31.0rc1", "0.31.0rc2"),
            HEAD + "## [0.31.0] - 2024-05-01\n\n### Core\n\n- new\n\n" + OLD,
            id="replaces-drops-rc-sections",
        ),
        pytest.param(
            HEAD.rstrip("\n") + "\n",
            "0.31.0rc1",
            (),
            HEAD + RC1_SECTION.rstrip("\n") + "\n",
            id="last-section-ends-with-one-newline",
        ),
        pytest.param(
            (HEAD + OLD).replace("\n", "\r\n"),
            "0.31.0rc1",
            (),
            (HEAD + RC1_SECTION + OLD).replace("\n", "\r\n"),
            id="crlf-stays-crlf",
        ),
    ],
)
def test_changelog_upsert(before: str, label: str, replaces, after: str) -> None:
    assert upserted(before, label, "2024-05-01", "### Core\n\n- new\n", replaces) == after


@pytest.mark.parametrize(
    "text",
    [
        HEAD + RC1_SECTION + OLD,
        HEAD + RC1_SECTION + OLD + "\n" + LINKS,
        (HEAD + RC1_SECTION + OLD).replace("\n", "\r\n"),
        HEAD + RC1_SECTION.rstrip("\n") + "\n",
    ],
    ids=["plain", "footer", "crlf", "last-section"],
)
def test_changelog_upsert_again_is_byte_identical(text: str) -> None:
    assert Changelog.parse(text).render() == text
    assert upserted(text, "0.31.0rc1", "2099-12-31", "### Core\n\n- new\n") == text  # date kept


def test_changelog_upsert_new_body_keeps_date() -> None:
    after = upserted(HEAD + RC1_SECTION + OLD, "0.31.0rc1", "2099-12-31", "- changed")
    assert after == HEAD + "## [0.31.0rc1] - 2024-05-01\n\n- changed\n\n" + OLD


def test_a_step_is_of_a_known_kind_and_its_json_says_the_word() -> None:
    with pytest.raises(ValueError, match="delete-branch"):
        Step("delete-branch", "delete a branch")  # type: ignore[arg-type]
    skip = Step(StepKind.SKIP, "skip abc", PickData("abc", "a fix", None, why="there"))
    pick = Step("cherry-pick", "cherry-pick -x def", PickData("def", "b fix", None))  # type: ignore[arg-type]
    assert pick.action is StepKind.CHERRY_PICK  # a journal's word is read back as the kind
    plan = Plan("pick", "pick onto releases/v1", (skip, pick), NoInfo())
    assert plan.actions == (pick,)
    steps = json.loads(plan.to_json())["steps"]
    assert [s["action"] for s in steps] == ["skip", "cherry-pick"]
    assert [StepKind(s["action"]).acts for s in steps] == [False, True]


def test_a_tag_plan_document_keeps_each_shape_and_its_order() -> None:
    """The fields a tag's or a promote's plan adds to its ``--json`` document, in the order
    they have always come, for each kind of run."""
    made = TagPlanInfo(
        tag="v0.31.0rc1",
        branch=BRANCH,
        message="v0.31.0rc1\n",
        version="0.31.0rc1",
        since=None,
        changelog="CHANGELOG.md",
        remote_checked=True,
        version_diff=("-a", "+b"),
    )
    assert list(made.to_dict().items()) == [
        ("version", "0.31.0rc1"), ("tag", "v0.31.0rc1"), ("message", "v0.31.0rc1\n"),
        ("branch", BRANCH), ("since", None), ("changelog", "CHANGELOG.md"),
        ("remote_checked", True), ("version_diff", ["-a", "+b"]),
    ]  # fmt: skip
    promoted = TagPlanInfo(
        tag="v0.31.0", branch=BRANCH, message="m", version="0.31.0", from_rc="v0.31.0rc2",
        since="v0.30.0", changelog="CHANGELOG.md",
    )  # fmt: skip
    assert list(promoted.to_dict()) == [
        "version", "tag", "message", "branch", "from_rc", "since", "changelog"
    ]  # fmt: skip
    assert TagPlanInfo(branch=BRANCH).to_dict() == {"tag": None, "branch": BRANCH}
    assert TagPlanInfo("v0.31.0", finished=True).to_dict() == {"tag": "v0.31.0", "finished": True}
    assert TagPlanInfo().to_dict() == {}


def test_a_routed_pick_plan_names_its_pick_branch_and_pull_requests() -> None:
    info = PickInfo(BRANCH, "f" * 40)
    assert info.to_dict() == {"branch": BRANCH, "head": "f" * 40}
    routed = PickInfo(BRANCH, "f" * 40, routed=True, pick_branch=None, pull_requests=("p/1",))
    assert routed.to_dict() == {
        "branch": BRANCH, "head": "f" * 40, "pick_branch": None, "pull_requests": ["p/1"]
    }  # fmt: skip


def test_a_step_gives_its_record_only_as_the_kind_it_carries() -> None:
    step = Step(StepKind.CREATE_BRANCH, "create releases/v1", BranchAt("releases/v1", "a" * 40))
    assert step.data_of(BranchAt).at == "a" * 40
    with pytest.raises(TypeError, match="create-branch step carries BranchAt"):
        step.data_of(RefAt)


def test_a_pick_step_document_keeps_its_keys_and_their_order() -> None:
    listed = PickData("a" * 40, "fix", "regression", 7, "milestone v1", again="reverted", why="x")
    assert list(listed.to_dict()) == ["sha", "subject", "reason", "pr", "via", "again", "why"]
    assert PickData("b" * 40, "fix", None).to_dict() == {
        "sha": "b" * 40, "subject": "fix", "reason": None
    }  # fmt: skip

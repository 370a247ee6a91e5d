"""What each kind of plan step carries: one record per shape, read by attribute where the
step is carried out, and serialised by its ``to_dict()`` into the step's ``--json`` fields
(after ``action`` and ``detail``), key for key as the plans have always printed them.

Pure values: no adapter is imported here."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BranchAt",
    "ChangelogCommit",
    "ImageCopy",
    "ImageTagging",
    "NotPickableData",
    "PickData",
    "PullRequestData",
    "RefAt",
    "RefData",
    "SwitchTo",
    "TagCreation",
    "VersionBump",
]


@dataclass(frozen=True)
class BranchAt:
    """``create-branch``: the branch, and the commit it is made at."""

    branch: str
    at: str

    def to_dict(self) -> dict[str, object]:
        return {"branch": self.branch, "at": self.at}


@dataclass(frozen=True)
class SwitchTo:
    """``switch``: the branch switched to."""

    branch: str

    def to_dict(self) -> dict[str, object]:
        return {"branch": self.branch}


@dataclass(frozen=True)
class VersionBump:
    """``bump-version``: main's version files set after a cut, committed on ``branch``."""

    branch: str
    at: str
    version: str
    files: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "branch": self.branch,
            "at": self.at,
            "version": self.version,
            "files": list(self.files),
        }


@dataclass(frozen=True)
class RefAt:
    """``push-ref`` of a push: the ref sent, and the commit (or note) it names here."""

    ref: str
    sha: str

    def to_dict(self) -> dict[str, object]:
        return {"ref": self.ref, "sha": self.sha}


@dataclass(frozen=True)
class RefData:
    """A step about one ref: a pick branch pushed, a manifest recorded, an image there."""

    ref: str

    def to_dict(self) -> dict[str, object]:
        return {"ref": self.ref}


@dataclass(frozen=True)
class ImageCopy:
    """``copy-image``: a final's tag given an rc's digest, inside the registry."""

    ref: str
    digest: str

    def to_dict(self) -> dict[str, object]:
        return {"ref": self.ref, "digest": self.digest}


@dataclass(frozen=True)
class ImageTagging:
    """``tag-image``: a variant's image in the engine given the final's tags."""

    variant: str
    image_id: str
    tags: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {"variant": self.variant, "image_id": self.image_id, "tags": list(self.tags)}


@dataclass(frozen=True)
class TagCreation:
    """``create-tag``: the tag, the commit it names, and whether it is signed."""

    tag: str
    target: str
    sign: bool

    def to_dict(self) -> dict[str, object]:
        return {"tag": self.tag, "target": self.target, "sign": self.sign}


@dataclass(frozen=True)
class ChangelogCommit:
    """``commit-changelog``: the changelog updated (None: not changed) under ``label``, and
    the version files set, in one commit."""

    path: str | None
    label: str | None
    version_files: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "label": self.label, "version_files": list(self.version_files)}


@dataclass(frozen=True)
class PullRequestData:
    """``open-pull-request``: a pick branch's PR into the release branch; with its title
    and body where the plan is exact (a dry run)."""

    head: str
    base: str
    title: str | None = None
    body: str | None = None

    def to_dict(self) -> dict[str, object]:
        texts = {"title": self.title, "body": self.body} if self.title is not None else {}
        return {"head": self.head, "base": self.base, **texts}


@dataclass(frozen=True)
class PickData:
    """A main commit in a pick plan (``cherry-pick``, ``skip``, ``hold``): its sha, subject
    and reason; the PR and what listed it, where a milestone or label did (``via``); why it
    is picked again or anyway (``again``, ``likely``); why it is skipped or held."""

    sha: str
    subject: str
    reason: str | None
    pr: int | None = None
    via: str | None = None  # None: asked by sha or #PR (no pr key either)
    again: str | None = None
    likely: str | None = None
    why: str | None = None

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {"sha": self.sha, "subject": self.subject, "reason": self.reason}
        if self.via is not None:
            data |= {"pr": self.pr, "via": self.via}
        for key, value in (("again", self.again), ("likely", self.likely), ("why", self.why)):
            if value is not None:
                data[key] = value
        return data


@dataclass(frozen=True)
class NotPickableData:
    """``not-pickable``: a listed PR that cannot be picked, and why."""

    pr: int
    title: str
    why: str
    via: str
    url: str

    def to_dict(self) -> dict[str, object]:
        return {
            "pr": self.pr,
            "title": self.title,
            "why": self.why,
            "via": self.via,
            "url": self.url,
        }

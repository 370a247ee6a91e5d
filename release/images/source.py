"""What an image is built from: the commit, its time, the version to call it, the
repository's URL, and whether the work tree and the history are what that version claims.

Two states would make an image say what it is not, so a build refuses them unless told:

- **a dirty work tree**: tracked files changed or staged anywhere, or files in the build
  context that docker would send (``.dockerignore`` applied) and git does not track,
  ignored ones included (docker reads no ``.gitignore``). Git's own directory, where the
  release keeps its state (``.git/release``), is never part of it. With ``--allow-dirty``
  the version gets the local part ``+dirty`` (``0.31.0rc1+dirty``, image tag
  ``v0.31.0rc1-dirty``), the revision label is ``<sha>-dirty``, and the image carries
  ``org.release.dirty=true``.
- **a shallow clone**: the tags and the history a version is read from may be cut short.
  With ``--allow-shallow``, a HEAD that carries a release tag builds as that version, and
  an untagged one as the dev version counted from the last tag when every commit since
  has its parents; when one does not, the distance cannot be counted and the version says
  so: ``<next>.dev0+shallow`` (``0.0.0.dev0+shallow`` with no tag in reach), labelled
  ``org.release.shallow=true``.

Without its flag a source is still read, since smoke and snapshot of an image that exists
build nothing: :attr:`BuildSource.refusal` says why a build would be refused, and a
dirty work tree then reads as the commit (no ``+dirty``), which is what a build would
have to be.

The version is read once per run: a ``--version`` is parsed where the run is opened
(:func:`given_version`) and handed here as a :class:`GivenVersion`; a version read from
the tags comes with the tag it is at, so the floors above (the labels, the manifest's
parts) take both from the :class:`BuildSource` and parse nothing again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from release.adapters.config_file import tree_project
from release.core.project_meta import ProjectMeta
from release.core.references import repository_url
from release.core.terminal_text import escaped
from release.core.versions import PatchStyle, ReleaseVersion, image_tag_for, parse_version
from release.flows.context import ReleaseContext
from release.images.inputs import SOURCE_LABEL, build_paths, context_filter

__all__ = [
    "BuildSource",
    "GivenVersion",
    "dev_version",
    "given_version",
    "listing",
    "read_source",
    "uncommitted",
    "with_local",
]

_SHOWN = 3  # paths a message names before "and N more"


@dataclass(frozen=True)
class BuildSource:
    """One checkout's build, as every variant's image will describe it."""

    root: Path
    revision: str  # the commit
    epoch: int  # SOURCE_DATE_EPOCH: the commit time
    version: str  # PEP 440
    tagged: bool
    url: str = ""  # the repository's URL; "" when there is none to give
    dirty: tuple[str, ...] = ()  # the work tree's changes the build takes in (--allow-dirty)
    shallow: bool = False  # read in a shallow clone
    uncounted: bool = False  # an untagged HEAD whose distance from the last tag is unknown
    refusal: str = ""  # why a build of this source is refused; "" when it is not
    notices: tuple[str, ...] = ()  # what a build says once about how it read the source
    project: ProjectMeta = field(
        default_factory=ProjectMeta
    )  # the work tree's [project]: the images' OCI labels
    tag: str = ""  # the release tag the version is (org.opencontainers.image.ref.name)
    head_tag: str = ""  # the release tag on the revision whose version is this one; "": none

    @property
    def image_version(self) -> str:
        return image_tag_for(self.version)

    @property
    def revision_label(self) -> str:
        """``org.opencontainers.image.revision``: the commit, or ``<sha>-dirty`` when the
        image holds more than the commit (as ``git describe --dirty`` says it)."""
        return f"{self.revision}-dirty" if self.dirty else self.revision

    def lines(self) -> list[str]:
        """What a build says about its source before it starts."""
        kind = "tag" if self.tagged else "untagged build"
        short = self.revision[:10] + ("-dirty" if self.dirty else "")
        out = [f"version {self.version} ({kind}), revision {short}"]
        if self.dirty:
            out.append(
                f"building uncommitted changes (--allow-dirty): {listing(self.dirty)}; "
                "labelled org.release.dirty=true"
            )
        if self.shallow:
            how = (
                "HEAD is untagged and the history to count from is cut short; "
                "labelled org.release.shallow=true"
                if self.uncounted
                else "the version's tag and history are here"
            )
            out.append(f"shallow clone (--allow-shallow): {how}")
        return out + list(self.notices)


def listing(paths: tuple[str, ...] | list[str]) -> str:
    """A few paths, then how many more: one line, whatever the work tree's file names hold
    (:mod:`release.core.terminal_text`)."""
    more = len(paths) - _SHOWN
    return ", ".join(map(escaped, paths[:_SHOWN])) + (f" and {more} more" if more > 0 else "")


def dev_version(
    last: ReleaseVersion | None,
    distance: int,
    *,
    branch: ReleaseVersion | None = None,
    style: PatchStyle = PatchStyle.PATCH,
) -> str:
    """An untagged build: a dev release of the version that would come next. On a
    release branch (``branch``: its version) none of whose release is tagged yet, that
    is the branch's own (``0.32.0.dev3`` on ``releases/v0.32.0``); after an rc, the next
    rc; after a final, what ``style`` ships next (``0.14.1.dev2``, ``0.12.0.2.dev2``,
    ``0.31.0.post1.dev2``)."""
    if branch is not None and (last is None or last.base < branch.base):
        return f"{branch.base.pep440()}.dev{distance}"
    if last is None:
        return f"0.0.0.dev{distance}"
    if last.is_rc:
        return f"{last.next_rc().pep440()}.dev{distance}"
    following = style.after(last)
    return f"{following.base.pep440() if following.rc else following.pep440()}.dev{distance}"


def with_local(version: str, *parts: str) -> str:
    """``version`` with PEP 440 local parts added (``0.31.0rc1`` -> ``0.31.0rc1+dirty``)."""
    if not parts:
        return version
    return version + ("." if "+" in version else "+") + ".".join(parts)


@dataclass(frozen=True)
class GivenVersion:
    """A version given by hand (``--version``), parsed once, where the run is opened: its
    PEP 440 spelling, and the release it is (None: an ad-hoc PEP 440 version, which no
    release tag names)."""

    pep440: str
    release: ReleaseVersion | None = None

    @classmethod
    def of(cls, release: ReleaseVersion) -> GivenVersion:
        """A release version already parsed (a manifest's), given as it is."""
        return cls(release.pep440(), release)


def given_version(text: str) -> GivenVersion:
    """A release spelling (any of ours, an rc0 too), or any PEP 440 version for ad-hoc
    builds; refused when it is neither."""
    from packaging.version import InvalidVersion, Version

    from release.errors import VersionError

    try:
        return GivenVersion.of(parse_version(text, first_rc=0))
    except VersionError:
        try:
            return GivenVersion(str(Version(text.removeprefix("v"))))
        except InvalidVersion:
            raise VersionError(f"--version {text!r} is not a version (e.g. 0.31.0rc1)") from None


def _version_at(ctx: ReleaseContext, revision: str) -> tuple[str, str, bool, str]:
    """The version of ``revision`` from the tags: (version, the tag it is at or "",
    uncounted, the first tag at it of that version or "")."""
    repo = ctx.repo
    tags = ctx.tags(remote=False)
    at_head = [t for t in tags if t.commit == revision]
    if at_head:
        here = at_head[-1]
        first = next(t for t in at_head if t.version == here.version)
        return here.version.pep440(), here.name, False, first.name
    reachable = [t for t in tags if repo.is_ancestor(t.commit, revision)]
    last = reachable[-1] if reachable else None
    since = last.version if last else None
    after = last.commit if last else None
    current = repo.current_branch()
    named = ctx.config.branch.parse(current) if current else None
    style = ctx.patch_style(tags) if named is not None else PatchStyle.PATCH  # main: X.Y.Z+1
    boundary = repo.history.shallow_boundary()
    if boundary and boundary & set(repo.history.rev_list(since=after, until=revision)):
        shallow = dev_version(since, 0, branch=named, style=style)
        return with_local(shallow, "shallow"), "", True, ""  # a commit lacks parents
    distance = repo.history.count(since=after, until=revision)
    return dev_version(since, distance, branch=named, style=style), "", False, ""


def _release_tag(ctx: ReleaseContext, version: GivenVersion) -> str:
    """The release tag of a version given by hand; "" for an ad-hoc one (no release's)."""
    from release.errors import VersionError

    if version.release is None:
        return ""
    try:
        return ctx.config.tag.render(version.release)
    except VersionError:
        return ""


def _tag_here(ctx: ReleaseContext, revision: str, version: GivenVersion, tag: str) -> str:
    """The release tag on ``revision`` of a version given by hand: its own spelling
    (``tag``) when that is there, else one of another spelling of the same version; ""
    for none."""
    if version.release is None:
        return ""
    if tag and ctx.repo.local_tags().get(tag) == revision:
        return tag
    spelt = [t for t in ctx.tags(remote=False) if t.commit == revision]
    return next((t.name for t in spelt if t.version.pep440() == version.pep440), "")


def uncommitted(ctx: ReleaseContext) -> list[str]:
    """Paths that make a build of the work tree differ from the commit: tracked files
    changed or staged, and untracked files (ignored ones too) that docker would send with
    the build context. Git's directory is never one of them. A context or Dockerfile that
    leads out of the work tree is refused here, before any build or bake file uses it
    (:func:`build_paths`)."""
    repo = ctx.repo
    found = dict.fromkeys(repo.worktree.dirty_paths())
    matrix = ctx.config.matrix
    if matrix is not None:
        root = ctx.root
        pairs = {(matrix.context_of(v), matrix.dockerfile_of(v)): v for v in matrix.variants}
        for context, dockerfile in pairs:
            sends = context_filter(*build_paths(root, context, dockerfile))
            untracked = repo.worktree.untracked_files(context, dockerfile)
            found.update(dict.fromkeys(p for p in untracked if sends(root / p)))
    return list(found)


def _source_url(ctx: ReleaseContext) -> tuple[str, str]:
    """The source label's URL (``repo-url``, else the remote's, as a web URL), and why
    there is none when there is none."""
    configured, remote = ctx.config.repo_url, ctx.config.remote
    given = configured or ctx.repo.remotes.url(remote) or ""
    where = "repo-url" if configured else f"remote {remote!r}"
    if not given:
        return "", f"no {SOURCE_LABEL} label: no repo-url in [tool.release] and no {where}"
    url = repository_url(given)
    if url is None:
        return "", (
            f"no {SOURCE_LABEL} label: {where} is {given!r}, not the repository's URL "
            "(a local path?); set repo-url in [tool.release]"
        )
    return url, ""


def _refusal(shallow: bool, changed: list[str], version: str) -> str:
    problems = []
    if shallow:
        problems.append(
            "this is a shallow clone, whose tags and history the version is read from may be "
            "cut short: fetch them (git fetch --unshallow --tags), or pass --allow-shallow"
        )
    if changed:
        problems.append(
            f"the work tree differs from HEAD ({listing(changed)}): commit or remove the "
            "changes, or pass --allow-dirty"
        )
    return ("; and ".join(problems) + f" (to build it as {version})") if problems else ""


def read_source(
    ctx: ReleaseContext,
    version: GivenVersion | None = None,
    *,
    allow_dirty: bool = False,
    allow_shallow: bool = False,
) -> BuildSource:
    """Version from ``version`` (parsed by the caller, :func:`given_version`), else the
    tag at HEAD, else a dev version from the last tag; a dirty work tree or a shallow clone
    is allowed to build only with its flag."""
    repo = ctx.repo
    revision = repo.head()
    if version is not None:
        found, tagged, uncounted = version.pep440, True, False
        tag = _release_tag(ctx, version)
        head_tag = _tag_here(ctx, revision, version, tag)
    else:
        found, tag, uncounted, head_tag = _version_at(ctx, revision)
        tagged = bool(tag)
    changed = uncommitted(ctx)
    shallow = repo.history.is_shallow()
    refusal = _refusal(
        shallow and not allow_shallow,
        changed if not allow_dirty else [],
        with_local(found, *(["dirty"] if changed else [])),
    )
    url, notice = _source_url(ctx)
    project = tree_project(ctx.root)
    notices = [notice] if notice else []
    if project.skipped:
        notices.append(
            f"no OCI label for [project] {', '.join(project.skipped)}: not one line of "
            "printable text (or not a web address)"
        )
    return BuildSource(
        ctx.root,
        revision,
        repo.commit_time("HEAD"),
        with_local(found, "dirty") if changed and allow_dirty else found,
        tagged,
        url,
        tuple(changed) if allow_dirty else (),
        shallow,
        uncounted,
        refusal,
        tuple(notices),
        project,
        tag if not changed else "",
        head_tag if not (changed and allow_dirty) else "",  # +dirty is no tag's version
    )

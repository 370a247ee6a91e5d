"""A repository on GitHub (github.com or an Enterprise host) and the records ``gh`` answers
with: its URLs, a PR link, a pull request and a release. Pure.

Invariants:

- a :class:`GitHubRepo` holds only a host, owner and name of GitHub's own shapes (a
  host name with an optional port; an owner of letters, digits, ``-`` and ``_`` that
  does not start with ``-``; a name of letters, digits, ``.``, ``-`` and ``_`` other
  than ``.`` and ``..``), so its :attr:`~GitHubRepo.spec` can go on a command line as
  one argument and never reads as an option;
- a URL that is a local path, a ``file://`` URL, another scheme or more than OWNER/NAME
  names no repository (None); text given as a spec that is not one is refused naming
  where it came from;
- what ``gh`` prints is untrusted: :func:`pull_request_of` and :func:`release_of` check
  every field's type and shape and raise :class:`~release.errors.GitHubError` naming the
  field, never pass a wrong value on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from release.errors import ConfigError, GitHubError

__all__ = [
    "PR_FIELDS",
    "PR_STATES",
    "RELEASE_FIELDS",
    "GitHubRelease",
    "GitHubRepo",
    "PullRequest",
    "parse_repo_spec",
    "pr_link",
    "pull_request_of",
    "release_of",
    "repo_of_url",
]

GITHUB_COM = "github.com"
_HOST = (
    r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*(?::\d{1,5})?"
)
_OWNER = r"[A-Za-z0-9][A-Za-z0-9_-]{0,38}"
_NAME = r"(?!\.\.?(?:$|/|\.git))[A-Za-z0-9._-]{1,100}"
_HOST_RE = re.compile(rf"^{_HOST}$")
_OWNER_RE = re.compile(rf"^{_OWNER}$")
_NAME_RE = re.compile(rf"^{_NAME}$")
_SPEC = re.compile(rf"^(?:(?P<host>{_HOST})/)?(?P<owner>{_OWNER})/(?P<name>{_NAME})$")
_SCP = re.compile(r"^(?:[A-Za-z0-9._-]+@)?(?P<host>[^/:@\s]+):(?P<path>[^:\s]+)$")
_SCHEMES = {"http", "https", "ssh", "git", "git+ssh", "ssh+git"}
# https://HOST/OWNER/NAME/pull/N, then a tab of the page, a query or a fragment
_PR_LINK = re.compile(
    rf"^https?://(?:[^/@\s]+@)?(?P<host>{_HOST})/(?P<owner>{_OWNER})/(?P<name>{_NAME})"
    r"/pull/(?P<number>[1-9][0-9]{0,9})"
    r"(?:/(?:files|commits|checks)(?:/[0-9a-fA-F]{7,64})?)?/?(?:\?[!-~]*)?(?:#[!-~]*)?$",
    re.IGNORECASE,
)
_OID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_ZERO_TIME = "0001-01-01T00:00:00Z"  # Go's zero time: what gh prints for "not merged"

PR_STATES = ("OPEN", "CLOSED", "MERGED")
PR_FIELDS: tuple[str, ...] = (
    "number",
    "title",
    "state",
    "mergeCommit",
    "baseRefName",
    "headRefName",
    "headRefOid",
    "labels",
    "milestone",
    "url",
    "author",
    "mergedAt",
)
RELEASE_FIELDS: tuple[str, ...] = (
    "tagName",
    "name",
    "body",
    "isPrerelease",
    "isDraft",
    "assets",
    "url",
)


@dataclass(frozen=True)
class GitHubRepo:
    """A repository on a GitHub host (``github.com`` or an Enterprise server's)."""

    host: str
    owner: str
    name: str

    def __post_init__(self) -> None:
        if not (
            _HOST_RE.fullmatch(self.host)
            and _OWNER_RE.fullmatch(self.owner)
            and _NAME_RE.fullmatch(self.name)
        ):
            raise GitHubError(
                f"not a GitHub repository: {self.host!r}/{self.owner!r}/{self.name!r}"
            )

    @property
    def slug(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def spec(self) -> str:
        """What ``gh --repo`` takes: ``OWNER/NAME`` on github.com, else ``HOST/OWNER/NAME``."""
        return self.slug if self.host == GITHUB_COM else f"{self.host}/{self.slug}"

    @property
    def url(self) -> str:
        return f"https://{self.host}/{self.slug}"

    def pr_url(self, number: int) -> str:
        return f"{self.url}/pull/{number}"

    def same(self, other: GitHubRepo) -> bool:
        """Whether ``other`` is this repository (GitHub's names ignore case)."""
        return (self.host, self.slug.lower()) == (other.host, other.slug.lower())


def _repo(host: str, path: str) -> GitHubRepo | None:
    parts = path.strip("/").split("/")
    if len(parts) == 2 and parts[1].endswith(".git"):
        parts[1] = parts[1].removesuffix(".git")
    if len(parts) != 2:
        return None
    host = host.lower()
    if not (
        _HOST_RE.fullmatch(host) and _OWNER_RE.fullmatch(parts[0]) and _NAME_RE.fullmatch(parts[1])
    ):
        return None
    return GitHubRepo(host, parts[0], parts[1])


def repo_of_url(url: str) -> GitHubRepo | None:
    """The repository a git remote's or web URL names: ``https://HOST/O/R(.git)(/)``,
    ``git@HOST:O/R(.git)``, ``ssh://git@HOST/O/R``; None for a local path, a ``file://``
    URL, another scheme, or a path that is not OWNER/NAME."""
    text = url.strip()
    if not text or not text.isprintable() or " " in text:
        return None
    if "://" not in text:
        scp = _SCP.fullmatch(text)
        if scp is None or len(scp["host"]) == 1:  # C:/path is a drive, not a host
            return None
        return _repo(scp["host"], scp["path"])
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _SCHEMES or not parts.hostname or parts.query or parts.fragment:
        return None
    host = parts.hostname
    if scheme in ("http", "https") and port:  # the ssh port is not the web server's
        host = f"{host}:{port}"
    return _repo(host, parts.path)


def parse_repo_spec(text: str, where: str) -> GitHubRepo:
    """``OWNER/NAME`` (on github.com) or ``HOST/OWNER/NAME``, as ``gh --repo`` takes it."""
    match = _SPEC.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        shown = text if isinstance(text, str) and text.isprintable() else repr(text)
        raise ConfigError(
            f'{where}: expected "OWNER/REPO" or "HOST/OWNER/REPO", got {shown!r}'[:300]
        )
    repo = _repo(match["host"] or GITHUB_COM, f"{match['owner']}/{match['name']}")
    if repo is None:
        raise ConfigError(f"{where}: {text!r} is not a repository's OWNER/REPO")
    return repo


def pr_link(text: str) -> tuple[GitHubRepo, int] | None:
    """The repository and number of a PR's web link
    (``https://HOST/O/R/pull/N``, with ``/files``, ``/commits``, a query or ``#...``)."""
    match = _PR_LINK.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        return None
    repo = _repo(match["host"], f"{match['owner']}/{match['name']}")
    return (repo, int(match["number"])) if repo else None


@dataclass(frozen=True)
class PullRequest:
    number: int
    title: str
    state: str  # OPEN, CLOSED or MERGED
    merge_commit: str | None
    base: str
    head: str
    head_oid: str | None
    labels: tuple[str, ...]
    milestone: str | None
    url: str
    author: str
    merged_at: str | None

    @property
    def merged(self) -> bool:
        return self.state == "MERGED"


@dataclass(frozen=True)
class GitHubRelease:
    tag: str
    name: str
    body: str
    is_prerelease: bool
    is_draft: bool
    assets: tuple[str, ...]  # the assets' names
    url: str


class _Fields:
    """Reads one JSON object's fields, each checked; a wrong one is a GitHubError naming it."""

    def __init__(self, obj: object, what: str, fields: tuple[str, ...]) -> None:
        if not isinstance(obj, dict):
            raise GitHubError(f"gh answered with {type(obj).__name__} for {what}, not an object")
        missing = [name for name in fields if name not in obj]
        if missing:
            raise GitHubError(f"gh's answer for {what} lacks {', '.join(missing)}")
        self.obj, self.what = obj, what

    def bad(self, name: str, expected: str) -> GitHubError:
        value = repr(self.obj.get(name))[:80]
        return GitHubError(f"gh's answer for {self.what}: {name} is {value}, not {expected}")

    def text(self, name: str, *, line: bool = False) -> str:
        value = self.obj[name]
        if not isinstance(value, str) or (line and not _one_line(value)):
            raise self.bad(name, "one line of text" if line else "text")
        return value

    def flag(self, name: str) -> bool:
        value = self.obj[name]
        if not isinstance(value, bool):
            raise self.bad(name, "true or false")
        return value

    def inner(self, name: str, key: str, *, optional: bool) -> str | None:
        """``obj[name][key]`` as text (None: ``obj[name]`` is null and may be)."""
        value = self.obj[name]
        if value is None and optional:
            return None
        if not isinstance(value, dict) or not isinstance(value.get(key), str):
            raise self.bad(name, f"an object with a {key}")
        return str(value[key])

    def names(self, name: str) -> tuple[str, ...]:
        value = self.obj[name]
        if not isinstance(value, list) or not all(
            isinstance(item, dict) and isinstance(item.get("name"), str) for item in value
        ):
            raise self.bad(name, "a list of objects with a name")
        return tuple(item["name"] for item in value)


def _one_line(text: str) -> bool:
    return bool(text) and text.isprintable()


def _ref_name(fields: _Fields, name: str) -> str:
    value = fields.text(name, line=True)
    if value.startswith("-") or " " in value:
        raise fields.bad(name, "a branch name")
    return value


def _oid(fields: _Fields, value: str | None, name: str) -> str | None:
    if value in (None, ""):
        return None
    if not _OID.fullmatch(str(value)):
        raise fields.bad(name, "a commit id")
    return value


def pull_request_of(obj: object) -> PullRequest:
    """A PR from ``gh pr view/list --json`` (:data:`PR_FIELDS`), every field checked."""
    number = obj.get("number") if isinstance(obj, dict) else None
    what = f"PR #{number}" if isinstance(number, int) else "a PR"
    fields = _Fields(obj, what, PR_FIELDS)
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise fields.bad("number", "a PR number")
    state = fields.text("state")
    if state not in PR_STATES:
        raise fields.bad("state", " or ".join(PR_STATES))
    merged_at = fields.obj["mergedAt"]
    if merged_at is not None and not (isinstance(merged_at, str) and merged_at.isprintable()):
        raise fields.bad("mergedAt", "a time or null")
    return PullRequest(
        number=number,
        title=fields.text("title"),
        state=state,
        merge_commit=_oid(fields, fields.inner("mergeCommit", "oid", optional=True), "mergeCommit"),
        base=_ref_name(fields, "baseRefName"),
        head=_ref_name(fields, "headRefName"),
        head_oid=_oid(fields, fields.text("headRefOid"), "headRefOid"),
        labels=fields.names("labels"),
        milestone=fields.inner("milestone", "title", optional=True),
        url=fields.text("url", line=True),
        author=fields.inner("author", "login", optional=True) or "",
        merged_at=None if merged_at in (None, "", _ZERO_TIME) else merged_at,
    )


def release_of(obj: object) -> GitHubRelease:
    """A release from ``gh release view --json`` (:data:`RELEASE_FIELDS`), every field checked."""
    tag = obj.get("tagName") if isinstance(obj, dict) else None
    fields = _Fields(obj, f"release {tag}" if isinstance(tag, str) else "a release", RELEASE_FIELDS)
    return GitHubRelease(
        tag=fields.text("tagName", line=True),
        name=fields.text("name"),
        body=fields.text("body"),
        is_prerelease=fields.flag("isPrerelease"),
        is_draft=fields.flag("isDraft"),
        assets=fields.names("assets"),
        url=fields.text("url", line=True),
    )

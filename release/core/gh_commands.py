"""Every ``gh`` command line the tool can send, built here and nowhere else. Pure.

Each builder returns the argv without the leading ``gh``. ``tests/functional/test_gh_help.py`` runs
the real ``gh <command> <sub> --help`` for each of :data:`ALL_BUILDERS` and checks that
every flag used is one that ``gh`` lists, so a line built here is one ``gh`` takes.

Invariants (the values come from config, tags, notes and GitHub itself):

- the repository always goes as ``--repo SPEC`` (:attr:`GitHubRepo.spec`, of GitHub's
  own shapes);
- a free-text value goes in the same argument as its flag (``--title=TEXT``), so it can
  never be read as another flag, whatever it starts with;
- a positional value (a tag, a file) that could read as a flag (a leading ``-``), a
  label that ``gh`` would split (a ``,`` or ``"``: its list flags are comma-separated),
  an asset path that ``gh`` would cut at ``#`` (its display-label syntax), and any text
  with a control character are refused with :class:`~release.errors.GitHubError`;
- bodies and notes go through files (``--body-file``, ``--notes-file``), never argv.
"""

from __future__ import annotations

from collections.abc import Sequence

from release.core.github import PR_FIELDS, RELEASE_FIELDS, GitHubRepo
from release.errors import GitHubError

__all__ = [
    "ALL_BUILDERS",
    "LIST_STATES",
    "milestone_search",
    "pr_create",
    "pr_list",
    "pr_view",
    "release_create",
    "release_edit",
    "release_upload",
    "release_view",
]

LIST_STATES = ("open", "closed", "merged", "all")


def _line(value: str, what: str) -> str:
    if not isinstance(value, str) or not value.strip() or not value.isprintable():
        raise GitHubError(f"{what} for gh must be one line of printable text, got {value!r}")
    return value


def _positional(value: str, what: str) -> str:
    if _line(value, what).startswith("-"):
        raise GitHubError(f"{what} for gh must not start with '-': {value!r}")
    return value


def _label(value: str) -> str:
    if any(ch in _line(value, "a label") for ch in ',"'):
        raise GitHubError(f"a label for gh must not hold ',' or '\"': {value!r}")
    return value


def _asset(path: str) -> str:
    if "#" in _positional(path, "an asset's path"):
        raise GitHubError(f"an asset's path for gh must not hold '#': {path!r}")
    return path


def _repo(repo: GitHubRepo) -> list[str]:
    return ["--repo", repo.spec]


def _flag(name: str, on: bool) -> str:
    return f"--{name}={'true' if on else 'false'}"


def milestone_search(name: str) -> str:
    """The ``--search`` query of a milestone's PRs (gh 2.23's ``pr list`` has no
    ``--milestone``)."""
    if '"' in _line(name, "a milestone") or "\\" in name:
        raise GitHubError(f"a milestone for gh's search must not hold '\"' or '\\': {name!r}")
    return f'milestone:"{name}"'


def pr_view(repo: GitHubRepo, number: int) -> list[str]:
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise GitHubError(f"not a PR number: {number!r}")
    return ["pr", "view", str(number), *_repo(repo), "--json", ",".join(PR_FIELDS)]


def pr_list(
    repo: GitHubRepo,
    *,
    state: str,
    search: str | None = None,
    label: str | None = None,
    head: str | None = None,
    base: str | None = None,
    limit: int = 1000,
) -> list[str]:
    if state not in LIST_STATES:
        raise GitHubError(f"gh pr list --state: {state!r} is not one of {', '.join(LIST_STATES)}")
    argv = ["pr", "list", *_repo(repo), f"--state={state}", f"--limit={int(limit)}"]
    if search is not None:
        argv.append(f"--search={_line(search, 'a search')}")
    if label is not None:
        argv.append(f"--label={_label(label)}")
    if head is not None:
        argv.append(f"--head={_line(head, 'a head branch')}")
    if base is not None:
        argv.append(f"--base={_line(base, 'a base branch')}")
    return [*argv, "--json", ",".join(PR_FIELDS)]


def pr_create(
    repo: GitHubRepo,
    *,
    base: str,
    head: str,
    title: str,
    body_file: str,
    labels: Sequence[str] = (),
    milestone: str | None = None,
) -> list[str]:
    argv = [
        "pr",
        "create",
        *_repo(repo),
        f"--base={_line(base, 'a base branch')}",
        f"--head={_line(head, 'a head branch')}",
        f"--title={_line(title, 'a title')}",
        f"--body-file={_line(body_file, 'a body file')}",
    ]
    argv += [f"--label={_label(label)}" for label in labels]
    if milestone is not None:
        argv.append(f"--milestone={_line(milestone, 'a milestone')}")
    return argv


def release_view(repo: GitHubRepo, tag: str) -> list[str]:
    fields = ",".join(RELEASE_FIELDS)
    return ["release", "view", _positional(tag, "a tag"), *_repo(repo), "--json", fields]


def release_create(
    repo: GitHubRepo,
    tag: str,
    *,
    title: str,
    notes_file: str,
    prerelease: bool,
    latest: bool,
    files: Sequence[str] = (),
) -> list[str]:
    """``--verify-tag``: the tag is this tool's to make and push; gh never makes one."""
    return [
        "release",
        "create",
        _positional(tag, "a tag"),
        *(_asset(path) for path in files),
        *_repo(repo),
        f"--title={_line(title, 'a title')}",
        f"--notes-file={_line(notes_file, 'a notes file')}",
        _flag("prerelease", prerelease),
        _flag("latest", latest),
        "--verify-tag",
    ]


def release_edit(
    repo: GitHubRepo, tag: str, *, title: str, notes_file: str, prerelease: bool, latest: bool
) -> list[str]:
    return [
        "release",
        "edit",
        _positional(tag, "a tag"),
        *_repo(repo),
        f"--title={_line(title, 'a title')}",
        f"--notes-file={_line(notes_file, 'a notes file')}",
        _flag("prerelease", prerelease),
        _flag("latest", latest),
    ]


def release_upload(repo: GitHubRepo, tag: str, files: Sequence[str]) -> list[str]:
    if not files:
        raise GitHubError("gh release upload: no files to upload")
    return [
        "release",
        "upload",
        _positional(tag, "a tag"),
        *(_asset(path) for path in files),
        *_repo(repo),
        "--clobber",
    ]


_EXAMPLE = GitHubRepo("github.com", "vllm-project", "vllm-gaudi")
_GHE = GitHubRepo("ghe.example.com", "org", "engine")
_BRANCH = "releases/v0.11.0"
_NOTES = "/tmp/notes.md"
# (name, an argv the builder makes with every option it can send): what the help check runs
ALL_BUILDERS: tuple[tuple[str, list[str]], ...] = (
    ("pr_view", pr_view(_EXAMPLE, 1745)),
    (
        "pr_list",
        pr_list(
            _GHE,
            state="merged",
            search=milestone_search("v0.11.0"),
            label="cherry-pick",
            head="release-pick/v0.11.0",
            base=_BRANCH,
            limit=50,
        ),
    ),
    (
        "pr_create",
        pr_create(
            _EXAMPLE,
            base=_BRANCH,
            head="release-pick/v0.11.0-1745",
            title="[Cherry-pick] Fix",
            body_file="/tmp/body.md",
            labels=("cherry-pick", "bug"),
            milestone="v0.11.0",
        ),
    ),
    ("release_view", release_view(_EXAMPLE, "v0.11.0rc1")),
    (
        "release_create",
        release_create(
            _EXAMPLE,
            "v0.11.0rc1",
            title="v0.11.0rc1",
            notes_file=_NOTES,
            prerelease=True,
            latest=False,
            files=("/tmp/rc.html", "/tmp/manifest.json"),
        ),
    ),
    (
        "release_edit",
        release_edit(
            _GHE, "v0.11.0", title="v0.11.0", notes_file=_NOTES, prerelease=False, latest=True
        ),
    ),
    ("release_upload", release_upload(_EXAMPLE, "v0.11.0rc1", ["/tmp/manifest.json"])),
)

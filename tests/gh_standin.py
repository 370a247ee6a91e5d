#!/usr/bin/env python3
"""A recording stand-in for GitHub's CLI, ``gh``, for tests (nothing here reaches GitHub).

Put a program named ``gh`` that runs this file first on PATH and set ``GH_STANDIN_DIR``
(:mod:`tests.github_support` does both). It keeps its state in that directory
(``state.json``: pull requests, releases and faults per repository, as the tests set
them), records every call (``calls.jsonl``: the argv without ``gh``, and the text of the
files named by ``--body-file`` and ``--notes-file``, which the caller removes afterwards),
and answers as gh 2.23 does:

- ``pr view N``, ``pr list`` (``--state``, ``--search`` with ``milestone:"X"`` and plain
  words, ``--label``, ``--head``, ``--base``, ``--limit``), ``release view``: ``--json``
  with only the fields asked for, compact with sorted keys (as gh does off a terminal);
- ``pr create``: a new OPEN PR, its URL on stdout; a second open PR of the same head into
  the same base is refused with gh's words;
- ``release create|edit|upload``: the release made, changed, its assets copied under
  ``assets/``;
- a fault set by the tests: the next calls whose argv (joined by spaces) holds the match
  fail as gh fails (the same words, the same exit code).

Anything it does not know (a command, a flag, a search qualifier, a missing required
flag) exits 1 with ``gh stand-in: unsupported: ARGV``, so a test fails loudly rather than
passing by accident. :data:`FLAGS` is every flag it takes; a test checks each against the
real gh's ``--help``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# (command, sub) -> {long flag: (short flag or "", kind)}; kind: value, list (repeatable,
# comma-separated, as pflag's string slices are) or bool
FLAGS: dict[tuple[str, str], dict[str, tuple[str, str]]] = {
    ("pr", "view"): {"--repo": ("-R", "value"), "--json": ("", "value")},
    ("pr", "list"): {
        "--repo": ("-R", "value"),
        "--json": ("", "value"),
        "--state": ("-s", "value"),
        "--limit": ("-L", "value"),
        "--search": ("-S", "value"),
        "--label": ("-l", "list"),
        "--head": ("-H", "value"),
        "--base": ("-B", "value"),
    },
    ("pr", "create"): {
        "--repo": ("-R", "value"),
        "--base": ("-B", "value"),
        "--head": ("-H", "value"),
        "--title": ("-t", "value"),
        "--body-file": ("-F", "value"),
        "--label": ("-l", "list"),
        "--milestone": ("-m", "value"),
    },
    ("release", "view"): {"--repo": ("-R", "value"), "--json": ("", "value")},
    ("release", "create"): {
        "--repo": ("-R", "value"),
        "--title": ("-t", "value"),
        "--notes-file": ("-F", "value"),
        "--prerelease": ("-p", "bool"),
        "--latest": ("", "bool"),
        "--verify-tag": ("", "bool"),
    },
    ("release", "edit"): {
        "--repo": ("-R", "value"),
        "--title": ("-t", "value"),
        "--notes-file": ("-F", "value"),
        "--prerelease": ("", "bool"),
        "--latest": ("", "bool"),
    },
    ("release", "upload"): {"--repo": ("-R", "value"), "--clobber": ("", "bool")},
}
FAULT_KINDS = ("not-logged-in", "404", "rate-limit", "network")
NOT_LOGGED_IN = (
    "To get started with GitHub CLI, please run:  gh auth login\n"
    "Alternatively, populate the GH_TOKEN environment variable with a GitHub API "
    "authentication token.\n"
)
# gh 2.23 where CI is set (non-empty) in its environment: the same stop, other words
NOT_LOGGED_IN_CI = "gh: To use GitHub CLI in automation, set the GH_TOKEN environment variable.\n"
# what gh 2.23 can print with --json for each: the stand-in refuses any other field
PR_JSON = {
    "additions", "assignees", "author", "baseRefName", "body", "changedFiles", "closed",
    "closedAt", "comments", "commits", "createdAt", "deletions", "files", "headRefName",
    "headRefOid", "headRepository", "headRepositoryOwner", "id", "isCrossRepository",
    "isDraft", "labels", "latestReviews", "maintainerCanModify", "mergeCommit",
    "mergeStateStatus", "mergeable", "mergedAt", "mergedBy", "milestone", "number",
    "potentialMergeCommit", "projectCards", "reactionGroups", "reviewDecision",
    "reviewRequests", "reviews", "state", "statusCheckRollup", "title", "updatedAt", "url",
}  # fmt: skip
RELEASE_JSON = {
    "apiUrl", "assets", "author", "body", "createdAt", "id", "isDraft", "isPrerelease",
    "name", "publishedAt", "tagName", "tarballUrl", "targetCommitish", "uploadUrl", "url",
    "zipballUrl",
}  # fmt: skip


class Exit(Exception):
    def __init__(self, code: int, stderr: str = "", stdout: str = "") -> None:
        super().__init__(stderr)
        self.code, self.stderr, self.stdout = code, stderr, stdout


def unsupported(argv: list[str]) -> Exit:
    return Exit(1, f"gh stand-in: unsupported: {shlex.join(argv)}\n")


def repo_key(spec: str) -> str:
    """A repository as the state keeps it: ``OWNER/NAME`` on github.com, else
    ``HOST/OWNER/NAME``, lower case."""
    key = spec.strip().lower()
    return key.removeprefix("github.com/")


def host_of(key: str) -> str:
    return key.split("/")[0] if key.count("/") == 2 else "github.com"


def web_url(key: str) -> str:
    return f"https://{host_of(key)}/{'/'.join(key.split('/')[-2:])}"


def api_url(key: str, path: str) -> str:
    host, slug = host_of(key), "/".join(key.split("/")[-2:])
    base = "https://api.github.com" if host == "github.com" else f"https://{host}/api/v3"
    return f"{base}/repos/{slug}/{path}"


# -- state -------------------------------------------------------------------------------


@contextlib.contextmanager
def locked_state(folder: Path) -> Iterator[dict[str, Any]]:
    """The state, read under a lock and written back when the block ends."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "state.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = folder / "state.json"
        state = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        state.setdefault("repos", {})
        state.setdefault("faults", [])
        try:
            yield state
        finally:  # a refusal changes nothing but the faults it used: each changes after its checks
            scratch = path.with_suffix(".tmp")
            scratch.write_text(json.dumps(state, indent=1, sort_keys=True), encoding="utf-8")
            scratch.replace(path)


def repo_state(state: dict[str, Any], key: str) -> dict[str, Any]:
    repo: dict[str, Any] = state["repos"].setdefault(key, {})
    repo.setdefault("prs", {})
    repo.setdefault("releases", {})
    return repo


# -- parsing, as pflag does ----------------------------------------------------------------


def parse(argv: list[str]) -> tuple[tuple[str, str], list[str], dict[str, Any]]:
    if len(argv) < 2 or (argv[0], argv[1]) not in FLAGS:
        raise unsupported(argv)
    command = (argv[0], argv[1])
    known = FLAGS[command]
    shorts = {short: name for name, (short, _) in known.items() if short}
    positional: list[str] = []
    options: dict[str, Any] = {}
    rest = argv[2:]
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            positional += rest
            break
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            given: str | None = value if eq else None
        else:
            name, given = shorts.get(arg[:2], "?"), (arg[2:] or None)
        if name not in known:
            raise unsupported(argv)
        kind = known[name][1]
        if kind == "bool":
            if given not in (None, "true", "false"):
                raise unsupported(argv)
            options[name] = given != "false"
            continue
        if given is None:
            if not rest:
                raise unsupported(argv)
            given = rest.pop(0)
        if kind == "list":
            options.setdefault(name, []).extend(v for v in given.split(",") if v)
        else:
            options[name] = given
    if "--repo" not in options:
        raise unsupported(argv)  # the tool always names the repository
    return command, positional, options


def fields_of(options: dict[str, Any], known: set[str], argv: list[str]) -> list[str]:
    if "--json" not in options:
        raise unsupported(argv)
    fields = [f for f in options["--json"].split(",") if f]
    unknown = [f for f in fields if f not in known]
    if unknown or not fields:
        raise Exit(1, f"Unknown JSON field: {unknown[0] if unknown else '(none)'}\n")
    return fields


def only(record: dict[str, Any], fields: list[str]) -> dict[str, Any]:
    return {f: record.get(f) for f in fields}


def dumped(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


# -- faults --------------------------------------------------------------------------------


def fault_text(kind: str, command: tuple[str, str], positional: list[str], key: str) -> Exit:
    host = host_of(key)
    if kind == "not-logged-in":
        return Exit(4, NOT_LOGGED_IN_CI if os.environ.get("CI") else NOT_LOGGED_IN)
    if kind == "network":
        api = "api.github.com" if host == "github.com" else host
        return Exit(
            1,
            f"error connecting to {api}\ncheck your internet connection or https://githubstatus.com\n",
        )
    if kind == "rate-limit":
        if command[0] == "pr":
            return Exit(1, "GraphQL: API rate limit exceeded for user ID 1.\n")
        url = api_url(key, "releases")
        return Exit(1, f"HTTP 403: API rate limit exceeded for user ID 1. ({url})\n")
    # 404
    if command == ("pr", "view"):
        number = positional[0] if positional else "0"
        return Exit(
            1,
            f"GraphQL: Could not resolve to a PullRequest with the number of {number}. "
            "(repository.pullRequest)\n",
        )
    if command[0] == "release":
        return Exit(1, "release not found\n")
    slug = "/".join(key.split("/")[-2:])
    return Exit(
        1, f"GraphQL: Could not resolve to a Repository with the name '{slug}'. (repository)\n"
    )


def take_fault(state: dict[str, Any], joined: str) -> str | None:
    for fault in state["faults"]:
        if fault["left"] > 0 and fault["match"] in joined:
            fault["left"] -= 1
            return str(fault["kind"])
    return None


# -- pull requests ---------------------------------------------------------------------------


def pr_view(
    repo: dict[str, Any], positional: list[str], options: dict[str, Any], argv: list[str]
) -> str:
    fields = fields_of(options, PR_JSON, argv)
    if len(positional) != 1 or not positional[0].isdigit():
        raise unsupported(argv)
    pr = repo["prs"].get(str(int(positional[0])))
    if pr is None:
        raise Exit(
            1,
            f"GraphQL: Could not resolve to a PullRequest with the number of {positional[0]}. "
            "(repository.pullRequest)\n",
        )
    return dumped(only(pr, fields))


_QUALIFIER = re.compile(r'(?P<key>[a-z-]+):(?:"(?P<quoted>[^"]*)"|(?P<plain>\S+))|(?P<word>\S+)')
_STATES = {"open": {"OPEN"}, "closed": {"CLOSED", "MERGED"}, "merged": {"MERGED"}}


def matches_search(pr: dict[str, Any], search: str, argv: list[str]) -> bool:
    for match in _QUALIFIER.finditer(search):
        if match["key"] not in (None, "milestone"):
            raise unsupported(argv)
        if match["word"]:
            if match["word"].lower() not in pr.get("title", "").lower():
                return False
        elif match["key"] == "milestone":
            wanted = match["quoted"] if match["quoted"] is not None else match["plain"]
            if (pr.get("milestone") or {}).get("title") != wanted:
                return False
    return True


def pr_list(repo: dict[str, Any], options: dict[str, Any], argv: list[str]) -> str:
    fields = fields_of(options, PR_JSON, argv)
    state = options.get("--state", "open")
    if state not in (*_STATES, "all") or not options.get("--limit", "30").isdigit():
        raise unsupported(argv)
    if "--search" in options:
        matches_search({"title": "", "milestone": None}, options["--search"], argv)
    found = []
    for pr in sorted(repo["prs"].values(), key=lambda p: -p["number"]):
        labels = {label["name"] for label in pr.get("labels", [])}
        if state != "all" and pr["state"] not in _STATES[state]:
            continue
        if not set(options.get("--label", [])) <= labels:
            continue
        if options.get("--head", pr["headRefName"]) != pr["headRefName"]:
            continue
        if options.get("--base", pr["baseRefName"]) != pr["baseRefName"]:
            continue
        if "--search" in options and not matches_search(pr, options["--search"], argv):
            continue
        found.append(only(pr, fields))
    return dumped(found[: int(options.get("--limit", "30"))])


def remote_oid(repo: dict[str, Any], ref: str) -> str | None:
    """The commit ``ref`` names in the bare repository linked to this one (None: none is
    linked, or it has no such ref)."""
    remote = repo.get("remote")
    if not remote:
        return None
    import subprocess

    proc = subprocess.run(
        ["git", "--git-dir", remote, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip() or None


def pr_create(key: str, repo: dict[str, Any], options: dict[str, Any], argv: list[str]) -> str:
    required = ("--base", "--head", "--title", "--body-file")
    if any(name not in options for name in required):
        raise unsupported(argv)  # gh would prompt for them
    base, head = options["--base"], options["--head"]
    for pr in repo["prs"].values():
        if pr["state"] == "OPEN" and pr["headRefName"] == head and pr["baseRefName"] == base:
            raise Exit(
                1,
                f'a pull request for branch "{head}" into branch "{base}" already exists:\n'
                f"{pr['url']}\n",
            )
    head_oid = ""
    if repo.get("remote"):
        head_oid = remote_oid(repo, f"refs/heads/{head}") or ""
        if not head_oid or not remote_oid(repo, f"refs/heads/{base}"):
            raise Exit(
                1,
                "pull request create failed: GraphQL: Head sha can't be blank, Base sha can't "
                f"be blank, No commits between {base} and {head}, Head ref must be a branch "
                "(createPullRequest)\n",
            )
    number = max((int(n) for n in repo["prs"]), default=0) + 1
    number = max(number, repo.get("next_number", 1))
    repo["next_number"] = number + 1
    milestone = options.get("--milestone")
    pr = {
        "number": number,
        "title": options["--title"],
        "body": read_file(options["--body-file"], argv),
        "state": "OPEN",
        "mergeCommit": None,
        "baseRefName": base,
        "headRefName": head,
        "headRefOid": head_oid,
        "labels": [{"name": label} for label in options.get("--label", [])],
        "milestone": {"title": milestone} if milestone else None,
        "url": f"{web_url(key)}/pull/{number}",
        "author": {"login": os.environ.get("GH_STANDIN_LOGIN", "release-maintainer")},
        "mergedAt": None,
        "isDraft": False,
    }
    repo["prs"][str(number)] = pr
    return pr["url"] + "\n"


def read_file(path: str, argv: list[str]) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise Exit(1, f"open {path}: {err.strerror.lower() if err.strerror else err}\n") from None


# -- releases --------------------------------------------------------------------------------


def release_view(
    repo: dict[str, Any], positional: list[str], options: dict[str, Any], argv: list[str]
) -> str:
    fields = fields_of(options, RELEASE_JSON, argv)
    if len(positional) != 1:
        raise unsupported(argv)
    release = repo["releases"].get(positional[0])
    if release is None:
        raise Exit(1, "release not found\n")
    return dumped(only(release, fields))


def store_assets(
    folder: Path, key: str, release: dict[str, Any], files: list[str], clobber: bool
) -> None:
    names = {asset["name"] for asset in release["assets"]}
    for path in files:
        name = os.path.basename(path)
        if not os.path.isfile(path):
            raise Exit(1, f"open {path}: no such file or directory\n")
        if name in names and not clobber:
            raise Exit(1, f"asset under the same name already exists: [{name}]\n")
    for path in files:
        name = os.path.basename(path)
        target = folder / "assets" / key.replace("/", "+") / release["tagName"] / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        release["assets"] = [a for a in release["assets"] if a["name"] != name]
        release["assets"].append({"name": name, "size": target.stat().st_size, "url": str(target)})


def set_latest(repo: dict[str, Any], tag: str, latest: bool | None) -> None:
    if latest:
        for other in repo["releases"].values():
            other["isLatest"] = other["tagName"] == tag


def release_create(
    folder: Path, key: str, repo: dict[str, Any], positional: list[str], options: dict[str, Any],
    argv: list[str],
) -> str:  # fmt: skip
    if not positional or "--notes-file" not in options or "--title" not in options:
        raise unsupported(argv)
    tag, files = positional[0], positional[1:]
    if tag in repo["releases"]:
        raise Exit(
            1,
            f"HTTP 422: Validation Failed ({api_url(key, 'releases')})\n"
            "Release.tag_name already exists\n",
        )
    if (
        options.get("--verify-tag")
        and repo.get("remote")
        and not remote_oid(repo, f"refs/tags/{tag}")
    ):
        slug = "/".join(key.split("/")[-2:])
        raise Exit(
            1, f"tag {tag} doesn't exist in the repo {slug}, aborting due to --verify-tag flag\n"
        )
    release = {
        "tagName": tag,
        "name": options["--title"],
        "body": read_file(options["--notes-file"], argv),
        "isPrerelease": bool(options.get("--prerelease", False)),
        "isDraft": False,
        "isLatest": False,
        "assets": [],
        "url": f"{web_url(key)}/releases/tag/{tag}",
    }
    store_assets(folder, key, release, files, clobber=False)
    repo["releases"][tag] = release
    set_latest(repo, tag, options.get("--latest"))
    return release["url"] + "\n"


def release_edit(
    repo: dict[str, Any], positional: list[str], options: dict[str, Any], argv: list[str]
) -> str:
    if len(positional) != 1:
        raise unsupported(argv)
    release = repo["releases"].get(positional[0])
    if release is None:
        raise Exit(1, "release not found\n")
    if "--notes-file" in options:
        release["body"] = read_file(options["--notes-file"], argv)
    if "--title" in options:
        release["name"] = options["--title"]
    if "--prerelease" in options:
        release["isPrerelease"] = options["--prerelease"]
    set_latest(repo, release["tagName"], options.get("--latest"))
    if options.get("--latest") is False:
        release["isLatest"] = False
    return release["url"] + "\n"


def release_upload(
    folder: Path, key: str, repo: dict[str, Any], positional: list[str], options: dict[str, Any],
    argv: list[str],
) -> str:  # fmt: skip
    if len(positional) < 2:
        raise unsupported(argv)
    release = repo["releases"].get(positional[0])
    if release is None:
        raise Exit(1, "release not found\n")
    store_assets(folder, key, release, positional[1:], clobber=bool(options.get("--clobber")))
    return ""


# -- the program -------------------------------------------------------------------------------


def answer(folder: Path, argv: list[str]) -> str:
    command, positional, options = parse(argv)
    key = repo_key(options["--repo"])
    with locked_state(folder) as state:
        kind = take_fault(state, " ".join(argv))
        if kind is not None:
            raise fault_text(kind, command, positional, key)
        repo = repo_state(state, key)
        if command == ("pr", "view"):
            return pr_view(repo, positional, options, argv)
        if command == ("pr", "list"):
            if positional:
                raise unsupported(argv)
            return pr_list(repo, options, argv)
        if command == ("pr", "create"):
            return pr_create(key, repo, options, argv)
        if command == ("release", "view"):
            return release_view(repo, positional, options, argv)
        if command == ("release", "create"):
            return release_create(folder, key, repo, positional, options, argv)
        if command == ("release", "edit"):
            return release_edit(repo, positional, options, argv)
        return release_upload(folder, key, repo, positional, options, argv)


def record(folder: Path, argv: list[str]) -> None:
    """The call, with the text of the files it names for a body or notes."""
    files = {}
    for index, arg in enumerate(argv):
        for flag in ("--body-file", "--notes-file"):
            path = arg.removeprefix(flag + "=") if arg.startswith(flag + "=") else None
            if arg == flag and index + 1 < len(argv):
                path = argv[index + 1]
            if path and os.path.isfile(path):
                files[flag] = Path(path).read_text(encoding="utf-8", errors="replace")
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "calls.jsonl").open("a", encoding="utf-8") as out:
        out.write(json.dumps({"argv": argv, "files": files}) + "\n")


def main(argv: list[str]) -> int:
    folder = os.environ.get("GH_STANDIN_DIR")
    if not folder:
        sys.stderr.write("gh stand-in: GH_STANDIN_DIR is not set\n")
        return 1
    record(Path(folder), argv)
    try:
        out = answer(Path(folder), argv)
    except Exit as stop:
        sys.stdout.write(stop.stdout)
        sys.stderr.write(stop.stderr)
        return stop.code
    sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

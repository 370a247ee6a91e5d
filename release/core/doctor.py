"""What ``release check`` says: one item per thing checked, ``ok``, ``problem`` or ``not
checked`` (with why), and what to do. The judging that needs no outside world is here:
git's version, the privileges the snapshot round trip gives CRIU, the registries images
go to. Pure: :mod:`release.flows.doctor` reads the world.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from release.core.matrix import ImageMatrix
from release.core.references import repository

__all__ = ["MIN_GIT", "Item", "Status", "git_version_item", "registries", "snapshot_privileges"]

# git rev-parse --path-format=absolute (how a repository is opened) came in git 2.31
MIN_GIT = (2, 31)


class Status(enum.Enum):
    OK = "ok"
    PROBLEM = "problem"
    NOT_CHECKED = "not checked"


@dataclass(frozen=True)
class Item:
    """One line of the check: what was checked, how it stands, and what it found or what
    to do about it."""

    name: str
    status: Status
    detail: str

    def line(self) -> str:
        return f"{self.status.value:<11}  {self.name}: {self.detail}"


def ok(name: str, detail: str) -> Item:
    return Item(name, Status.OK, detail)


def problem(name: str, detail: str) -> Item:
    return Item(name, Status.PROBLEM, detail)


def not_checked(name: str, why: str) -> Item:
    return Item(name, Status.NOT_CHECKED, why)


def git_version_item(answer: str | None) -> Item:
    """``git version``'s answer judged against :data:`MIN_GIT`."""
    want = ".".join(map(str, MIN_GIT))
    match = re.search(r"(\d+)\.(\d+)", answer or "")
    if match is None:
        return problem("git", f"git does not run here; install git {want} or later")
    found = (int(match[1]), int(match[2]))
    text = (answer or "").strip().removeprefix("git version ")
    if found < MIN_GIT:
        return problem("git", f"git {text} is older than {want}; install git {want} or later")
    return ok("git", f"git {text}")


# what CRIU needs in the container to dump and restore a process tree
_NEEDS = {
    "CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE)": {"SYS_ADMIN", "CHECKPOINT_RESTORE", "ALL"},
    "CAP_SYS_PTRACE": {"SYS_PTRACE", "ALL"},
}


def snapshot_privileges(matrix: ImageMatrix) -> Item | None:
    """Whether the snapshot rule's ``run-options`` give CRIU what it needs (the
    capabilities, and no seccomp filter in its way); None without a snapshot rule."""
    rule = matrix.snapshot
    if rule is None or not rule.runtime:
        return None
    options = rule.serving.run_options
    name = "snapshot privileges"
    if "--privileged" in options:
        return ok(name, "the snapshot containers run --privileged")
    added = {o.split("=", 1)[1].removeprefix("CAP_") for o in options if o.startswith("--cap-add=")}
    missing = [need for need, caps in _NEEDS.items() if not added & caps]
    if "--security-opt=seccomp=unconfined" not in options:
        missing.append("seccomp=unconfined")
    if missing:
        return problem(
            name,
            f"CRIU needs {', '.join(missing)} in the snapshot containers; add them to "
            '[tool.release.images.snapshot] run-options (e.g. "--cap-add", "SYS_ADMIN")',
        )
    return ok(name, "run-options give CRIU " + ", ".join(_NEEDS) + " and seccomp=unconfined")


def registries(matrix: ImageMatrix) -> list[str]:
    """The registries images are pushed to: the images' name's, CI's and the release
    registry where set."""
    found = [repository(matrix.name).split("/", 1)[0]]
    for prefix in (matrix.ci_registry, matrix.registry):  # CI's, and the release registry
        if prefix:
            found.append(repository(prefix + "/x").split("/", 1)[0])
    return list(dict.fromkeys(found))

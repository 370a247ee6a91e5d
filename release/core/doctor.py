"""What ``release check`` says: one item per thing checked, ``ok``, ``problem``, ``not
checked`` (with why) or ``note`` (worth knowing, not a problem), and what to do. The
judging that needs no outside world is here: git's version, the privileges the snapshot
round trip gives CRIU, whether the tag template reads the repository's release tags, the
registries the images are pushed to and those their bases come from. Pure:
:mod:`release.flows.doctor` reads the world.

Logins, as decided: a registry ``release`` pushes to (the release ``registry``, and the
CI registry: ``ci-registry``, or the release registry's ``/ci``) needs one, and its
missing login is a problem. A registry a base image comes from does not, as far as can be
told offline: public images (``nvidia/cuda``, ``rocm/...``, Docker Hub's official ones)
are pulled anonymously, and whether a base is private cannot be told without asking the
registry. Its missing login is a note, never a problem. The images' ``name`` is a local
tag: nothing is pushed to its registry, so it asks no login.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from release.core.matrix import ImageMatrix
from release.core.references import repository
from release.core.tag_survey import best_template, survey
from release.core.versions import TagTemplate

__all__ = [
    "MIN_GIT",
    "Health",
    "Item",
    "RegistryUse",
    "git_version_item",
    "registry_uses",
    "snapshot_privileges",
    "tag_template_item",
]

# git rev-parse --path-format=absolute (how a repository is opened) came in git 2.31
MIN_GIT = (2, 31)


class Health(enum.Enum):
    OK = "ok"
    PROBLEM = "problem"
    NOT_CHECKED = "not checked"
    NOTE = "note"


@dataclass(frozen=True)
class Item:
    """One line of the check: what was checked, how it stands, and what it found or what
    to do about it."""

    name: str
    status: Health
    detail: str

    def line(self) -> str:
        return f"{self.status.value:<11}  {self.name}: {self.detail}"


def ok(name: str, detail: str) -> Item:
    return Item(name, Health.OK, detail)


def problem(name: str, detail: str) -> Item:
    return Item(name, Health.PROBLEM, detail)


def not_checked(name: str, why: str) -> Item:
    return Item(name, Health.NOT_CHECKED, why)


def note(name: str, detail: str) -> Item:
    return Item(name, Health.NOTE, detail)


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


@dataclass(frozen=True)
class RegistryUse:
    """A registry the configuration reaches: whether ``release`` pushes to it, and the
    base images that come from it."""

    host: str
    pushed: bool
    bases: tuple[str, ...] = ()


def _host(ref: str) -> str:
    return repository(ref).split("/", 1)[0]


def registry_uses(matrix: ImageMatrix) -> list[RegistryUse]:
    """The registries images are pushed to (the release registry, CI's), then those the
    variants' base images come from."""
    ci = matrix.ci_registry or (f"{matrix.registry}/ci" if matrix.registry else "")
    pushed = [_host(prefix + "/x") for prefix in (matrix.registry, ci) if prefix]
    out = [RegistryUse(host, True) for host in dict.fromkeys(pushed)]
    bases: dict[str, list[str]] = {}
    for variant in matrix.variants:
        host = _host(variant.base_image)
        if host not in pushed and variant.base_image not in bases.get(host, []):
            bases.setdefault(host, []).append(variant.base_image)
    return out + [RegistryUse(host, False, tuple(refs)) for host, refs in bases.items()]


def _listed(names: list[str] | tuple[str, ...]) -> str:
    shown = ", ".join(names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def tag_template_item(template: TagTemplate, tags: list[str]) -> Item:
    """Whether ``tag`` reads the repository's release tags (those that name a version in
    any spelling): reading none of them is a problem, naming three it does not read and
    the template that would."""
    name = "tag template"
    found = survey(template, tags)
    shown = f'tag = "{template.template}"'
    if not found.looking:
        return ok(name, f"{shown}; no release tags here yet")
    if found.read:
        rest = f" (not: {_listed(found.unread)})" if found.unread else ""
        return ok(name, f"{shown} reads {len(found.read)} of the {len(found.looking)} release "
                        f"tags here{rest}")  # fmt: skip
    best = best_template(found.looking)
    fix = (
        f'tag = "{best[0]}" would read {len(best[1])} of them: set it in [tool.release]'
        if best
        else "no PREFIX{version} template reads them (release reads X.Y.Z, X.Y.ZrcN, X.Y.Z.postN, X.Y.Z.N)"
    )
    return problem(
        name,
        f"{shown} reads none of the {len(found.looking)} release tags here "
        f"({_listed(found.looking)}); {fix}",
    )

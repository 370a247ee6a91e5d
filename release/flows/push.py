"""``push``: the release branch, its new tags and their manifests in one ``git push
--atomic``.

Either every ref lands on the remote or none does; a rejected or failed push changes
nothing locally (git updates remote-tracking refs only on success), so a retry is safe.
A tag's manifest is its notes ref (``refs/notes/release/<tag>``, see
:mod:`release.adapters.git_notes`); it is sent when the remote lacks it or has an older
one, and refused when the remote's was written elsewhere. A push the server refuses because
the release branch is protected (GitHub's ``GH006``) is said as such, with the setting that
sends picks there by pull request (:mod:`release.flows.pick_route`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from release.adapters.git_notes import NOTES_PREFIX
from release.adapters.git_remotes import RefRecord
from release.adapters.lock import repo_lock
from release.core.pick_pr import protected_refusal
from release.core.plan import Plan, Step, StepKind, short
from release.core.plan_steps import RefAt
from release.errors import GitError, RefusedError
from release.flows.context import ReleaseContext

__all__ = ["PushInfo", "plan_push", "push"]


@dataclass(frozen=True)
class PushInfo:
    """What a push's plan knows: the remote, and the release branch it sends."""

    remote: str
    branch: str

    def to_dict(self) -> dict[str, object]:
        return {"remote": self.remote, "branch": self.branch}


def plan_push(
    remote: str,
    branch: str,
    local_branch: str,
    remote_branch: str | None,
    local_tags: dict[str, str],
    remote_tags: dict[str, str],
    manifests: dict[str, str] | None = None,
) -> Plan[PushInfo]:
    """Refs to send. Pure: compares local and remote tips. ``manifests``: tag -> the
    tip of its local notes ref, for the manifests the remote lacks or has older."""
    steps: list[Step] = []
    for name, sha in sorted(local_tags.items()):
        there = remote_tags.get(name)
        if there is not None and there != sha:
            raise RefusedError(
                f"tag {name} on {remote} points at {short(there)}, here at {short(sha)}; "
                "tags are never moved, resolve this by hand"
            )
    if remote_branch != local_branch:
        if remote_branch is None:
            detail = f"create branch {branch} on {remote} at {short(local_branch)}"
        else:
            detail = (
                f"update {branch} on {remote} from {short(remote_branch)} to {short(local_branch)}"
            )
        steps.append(Step(StepKind.PUSH_REF, detail, RefAt(f"refs/heads/{branch}", local_branch)))
    for name, sha in sorted(local_tags.items()):
        if name not in remote_tags:
            steps.append(
                Step(
                    StepKind.PUSH_REF,
                    f"push tag {name} ({short(sha)})",
                    RefAt(f"refs/tags/{name}", sha),
                )
            )
    for name, sha in sorted((manifests or {}).items()):
        steps.append(
            Step(
                StepKind.PUSH_REF,
                f"push the manifest of {name} ({NOTES_PREFIX}{name})",
                RefAt(f"{NOTES_PREFIX}{name}", sha),
            )
        )
    summary = (
        f"push to {remote} atomically: {len(steps)} ref(s)" if steps else f"{remote} is up to date"
    )
    return Plan("push", summary, tuple(steps), PushInfo(remote, branch))


def _read(ctx: ReleaseContext) -> Plan[PushInfo]:
    ctx.require_settled()
    branch, named = ctx.current_release()
    remote = ctx.config.remote
    if not ctx.repo.remotes.has(remote):
        raise RefusedError(
            f"no remote named {remote!r}; add it (git remote add {remote} URL) or set remote in [tool.release]"
        )
    try:
        refs = ctx.repo.remotes.refs(
            remote, f"refs/heads/{branch}", "refs/tags/*", f"{NOTES_PREFIX}*"
        )
    except GitError as err:
        raise RefusedError(
            f"{err.message}; nothing was pushed, retry when it is reachable"
        ) from None
    listed = refs.get(f"refs/heads/{branch}")
    remote_branch = listed.sha if listed else None
    # tags compare by the commit they point to: an annotated tag's, peeled
    remote_tags = {
        name.removeprefix("refs/tags/"): ref.target
        for name, ref in refs.items()
        if name.startswith("refs/tags/")
    }
    local_branch = ctx.repo.head()  # the release branch is checked out
    # is_ancestor is False too when the remote's commit is not even here
    if remote_branch not in (None, local_branch) and not ctx.repo.is_ancestor(
        str(remote_branch), local_branch
    ):
        raise RefusedError(
            f"{branch} on {remote} has commits that are not here (it is at {short(remote_branch)}); "
            f"git fetch {remote} and merge {remote}/{branch}, then push again"
        )
    # the tags of the branch's line in its history: its rcs, finals and patch releases
    line = ctx.release_line(branch, named, ctx.tags(remote=False))
    ours = {t.name: t.commit for t in line.tags}
    manifests = _manifests_to_send(ctx, remote, ours, refs)
    return plan_push(remote, branch, local_branch, remote_branch, ours, remote_tags, manifests)


def _manifests_to_send(
    ctx: ReleaseContext, remote: str, tags: dict[str, str], refs: dict[str, RefRecord]
) -> dict[str, str]:
    """Tag -> local notes tip, for each manifest of ``tags`` the remote lacks or has an
    ancestor of; a remote manifest written elsewhere is refused, never overwritten."""
    out: dict[str, str] = {}
    for name in tags:
        ref = NOTES_PREFIX + name
        local = ctx.repo.rev(ref)
        there = refs[ref].sha if ref in refs else None
        if local is None or there == local:
            continue
        if there is not None and not ctx.repo.is_ancestor(there, local):
            raise RefusedError(
                f"the manifest of {name} on {remote} was written elsewhere ({short(there)}); "
                f"compare it (git fetch {remote} {ref}:{ref}-remote) and publish one"
            )
        out[name] = local
    return out


def push(
    ctx: ReleaseContext, *, dry_run: bool = False, say: Callable[[str], None] = print
) -> Plan[PushInfo]:
    plan = _read(ctx)
    if dry_run:
        return plan
    with repo_lock(ctx.repo.common_dir, "push", notify=say):
        plan = _read(ctx)
        if plan.steps:
            _send(ctx, plan)
        # as git push leaves it, also when a killed push had already landed on the remote
        ctx.repo.set_remote_tracking(plan.info.remote, plan.info.branch, ctx.repo.head())
    return plan


def _send(ctx: ReleaseContext, plan: Plan[PushInfo]) -> None:
    refs = [s.data_of(RefAt).ref for s in plan.steps]
    refspecs = [f"{ref}:{ref}" for ref in refs]
    result = ctx.repo.remotes.push_atomic(plan.info.remote, refspecs)
    if not result.ok:
        said = result.stdout + "\n" + result.stderr
        protected = protected_refusal(said)
        if protected is not None:
            raise RefusedError(
                f"push to {plan.info.remote} refused: {plan.info.branch} is a protected "
                f"branch there (the remote said: {protected}); nothing was pushed. Picks reach a "
                "protected branch by pull request: set protected = true under "
                "[tool.release.github], then release pick opens one"
            )
        reason = _rejection(said)
        raise GitError(
            f"push to {plan.info.remote} failed, nothing was pushed: {reason}; "
            "local branch and tags are unchanged, retry when fixed"
        )
    after = _read(ctx)
    if after.steps:
        raise GitError(
            f"push reported success but {len(after.steps)} ref(s) are still missing on the remote"
        )


def _rejection(text: str) -> str:
    """Why the remote refused, in one line: the refs it rejected and what it said.

    With ``--atomic`` every ref is reported rejected, most as "(atomic push failure)";
    the ref that caused it, and the remote hook's own words, are what help.
    """
    lines = [line.strip() for line in text.splitlines()]
    rejected: list[tuple[str, str]] = []
    for line in text.splitlines():
        if line.startswith("!") and line.count("\t") >= 2:
            _, spec, why = line.split("\t", 2)
            ref = spec.rpartition(":")[2].removeprefix("refs/heads/").removeprefix("refs/tags/")
            rejected.append((ref, why.strip()))
    said = [line.removeprefix("remote:").strip() for line in lines if line.startswith("remote:")]
    said = [s for s in said if s and not s.startswith("error: hook declined")]
    if rejected:
        causes = [r for r in rejected if "atomic push fail" not in r[1]] or rejected
        reason = ", ".join(f"{ref} {why}" for ref, why in causes)
        return reason + (f" (the remote said: {said[0]})" if said else "")
    for line in lines:
        if line.startswith(("remote:", "error:", "fatal:")):
            return line
    return lines[-1] if any(lines) else "unknown error"

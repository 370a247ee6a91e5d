"""``release check``: the configuration, whether its tag template reads the repository's
release tags, git, docker and BuildKit, the engine, the snapshot runtime's privileges, an
engine repository's ``noxfile.py`` and the registry logins, one line each (``ok``,
``problem``, ``not checked``, ``note``) with what to do; exit 1 on a problem, and only on
one (a note is not). With ``--tag``, the tag's and its manifest's signatures too, against
the tester's trust roots: one that does not verify (or, ``--require-signed``, none that
does) is refused, exit 7."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from release.commands.common import opened
from release.commands.outcome import JSONValue, OutcomeDefaults, Run
from release.core.doctor import Health, Item
from release.errors import ExitCode, SignatureError, UsageError
from release.flows.doctor import check_items

__all__ = ["CheckOutcome", "CheckRequest", "check"]


@dataclass(frozen=True)
class CheckRequest:
    tag: str | None = None  # only: this checkout is the tag's, and release reads it so
    job: str | None = None  # with tag: the pipeline's kind (build or promote) the tag must fit
    trust: tuple[str, ...] = ()  # with tag: allowed-signers files or keyrings the tester holds
    require_signed: bool = False  # with tag: refuse a tag or manifest not signed by one of them
    json: bool = False


@dataclass(frozen=True)
class CheckOutcome(OutcomeDefaults):
    items: tuple[Item, ...]

    @property
    def problems(self) -> list[Item]:
        return [i for i in self.items if i.status is Health.PROBLEM]

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.FAILED if self.problems else ExitCode.OK

    def text(self) -> Iterable[str]:
        yield from (item.line() for item in self.items)
        unchecked = sum(i.status is Health.NOT_CHECKED for i in self.items)
        notes = sum(i.status is Health.NOTE for i in self.items)
        more = f", {notes} note(s)" if notes else ""
        yield (
            f"{len(self.problems)} problem(s), {unchecked} not checked{more}"
            if self.problems
            else f"no problems ({unchecked} not checked{more})"
        )

    def document(self) -> Mapping[str, JSONValue]:
        return {
            "ok": not self.problems,
            "items": [
                {"name": i.name, "status": i.status.value, "detail": i.detail} for i in self.items
            ],
        }


def check(request: CheckRequest, run: Run) -> CheckOutcome:
    if request.tag is not None:  # "" too: a CI variable that was not set is no tag
        item = tag_item(run, request.tag, request.job or None)
        return CheckOutcome((item, *signature_items(run, request)))
    if request.trust or request.require_signed:
        raise UsageError("--trust and --require-signed check a tag's signatures: add --tag TAG")
    return CheckOutcome(tuple(check_items(run.repo)))


def signature_items(run: Run, request: CheckRequest) -> list[Item]:
    """The tag's signature and its manifest's, one item each, where the tag is here;
    :class:`SignatureError` where the run must stop."""
    from release.adapters.git import GitRepo
    from release.core.doctor import note, ok
    from release.core.signatures import SignatureState
    from release.core.terminal_text import escaped
    from release.flows.signatures import trust_roots, verify_tag

    repo = GitRepo(run.repo)
    tag = request.tag or ""
    commit = repo.rev(f"refs/tags/{tag}") if tag else None
    if commit is None:
        if request.require_signed:
            raise SignatureError(f"no tag {escaped(tag)} here to verify (--require-signed)")
        return []
    found = verify_tag(repo, tag, commit, trust_roots(repo, request.trust))
    refused = found.refusal(request.require_signed)
    if refused:
        raise SignatureError(escaped(refused))
    names = ("tag signature", "manifest signature")
    return [
        (ok if v.state is SignatureState.SIGNED else note)(name, escaped(v.line()))
        for name, v in zip(names, found.verdicts, strict=False)
    ]


def tag_item(run: Run, tag: str, job: str | None = None) -> Item:
    """What a CI job checks before it builds for a pushed tag: HEAD is the tag's commit, the
    version ``release`` computes here is the tag's (a checkout by commit has no tags, and
    would build a ``.devN``), no tag here names the same version on another commit in any
    spelling the template reads (``v0.1.0rc1`` beside ``v0.1.0-rc1``: a second rc1 from other
    code would publish under the first one's name), and, given ``job``, the tag is of that
    pipeline's kind: an rc or a post release is built, a final is promoted from its last rc,
    never rebuilt."""
    from release.core.doctor import ok, problem
    from release.core.terminal_text import escaped
    from release.images.source import read_source

    name = f"tag {escaped(tag)}"
    if not tag:
        return problem("tag", "none given (is the job running for a tag push?)")
    ctx = opened(run)
    wanted = ctx.config.tag.parse_any(tag)
    if wanted is None:
        return problem(
            name, f"not a release tag of this repository (tag = {escaped(ctx.config.tag.template)})"
        )
    final = wanted.is_final
    if job == "build" and final:
        return problem(
            name,
            "a final: its images are the last rc's, given its tags by the promote job "
            "(release images.promote), never built again",
        )
    if job == "promote" and not final:
        return problem(name, "not a final: an rc or a post release is built, not promoted")
    commit = ctx.repo.rev(f"refs/tags/{tag}")
    if commit is None:
        remote = escaped(ctx.config.remote)
        return problem(name, f"no such tag here: fetch the tags first (git fetch --tags {remote})")
    head = ctx.repo.head()
    if commit != head:
        return problem(
            name, f"HEAD is {head[:12]}, {escaped(tag)} is {commit[:12]}: check out the tag"
        )
    twins = [t for t in ctx.tags(remote=False) if t.version == wanted and t.commit != commit]
    if twins:
        more = f" (and {len(twins) - 1} more)" if len(twins) > 1 else ""
        return problem(
            name,
            f"{escaped(twins[0].name)} names {wanted.pep440()} too, on commit "
            f"{twins[0].commit[:12]}{more}: one version is one commit; delete the tag made "
            "by mistake and tag the next rc",
        )
    found = read_source(ctx, None, allow_dirty=True, allow_shallow=True).version
    if found != wanted.pep440():
        return problem(
            name,
            f"release reads version {escaped(found)} here, the tag is {wanted.pep440()}: fetch "
            "the tags (git fetch --tags) and the history it counts from",
        )
    verb = "promotes" if job == "promote" else "builds"
    return ok(name, f"HEAD is {escaped(tag)}; release {verb} it as {escaped(found)}")

"""``reproduce``'s trust checks, made before anything is pulled or built: the tag's and
its manifest's signatures against the tester's trust roots (:class:`Trusting`), and the
consent the tag's host-reaching container options need (the tester's ``--allow-host``, or
the signer they trust for it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from release.adapters.devices import devices_here
from release.adapters.engine import gpu_present
from release.adapters.git import GitRepo
from release.core.host_access import asked_by, spelt
from release.core.matrix import ImageMatrix, Variant
from release.core.say import Say
from release.core.terminal_text import escaped
from release.errors import RefusedError, SignatureError
from release.flows.context import ReleaseContext
from release.flows.published_tag import PublishedTag

__all__ = ["Trusting", "allowed_by", "verified"]


@dataclass(frozen=True)
class Trusting:
    """What the tester trusts: ``roots``, the ``--trust`` files (else their git config's
    allowed signers); ``require_signed``: refuse what is not signed by one of them;
    ``host_signers``: the signers whose host-reaching options are allowed."""

    roots: Sequence[str] = ()
    require_signed: bool = False
    host_signers: Sequence[str] = ()


def verified(
    ctx: ReleaseContext,
    clone: GitRepo,
    found: PublishedTag,
    trust: Trusting,
    say: Say,
) -> tuple[Mapping[str, object], str | None]:
    """The tag's and its manifest's signatures, judged before anything is pulled or built
    (as the verdict records them); and the signer whose host options the tester allows,
    where the tag verifies as theirs."""
    from release.flows.signatures import host_signers, trust_roots, verify_tag

    roots = trust_roots(ctx.repo, trust.roots)
    verdict = verify_tag(clone, found.name, found.commit, roots)
    for line in verdict.lines():
        say(escaped(line))
    refused = verdict.refusal(trust.require_signed)
    if refused:
        raise SignatureError(escaped(refused))
    signer = verdict.signer()
    trusted = signer if signer in host_signers(ctx.repo, trust.host_signers) else None
    return verdict.to_dict(), trusted


def allowed_by(
    matrix: ImageMatrix,
    variants: Sequence[Variant],
    tag: str,
    allowed: frozenset[str],
    signer: str | None = None,
) -> str | None:
    """Refuse before building when the tag's containers would reach into this host in a
    way the tester has not allowed, option by option, nor by trusting its ``signer``; the
    notice to say where the signer's trust allowed them (None: nothing was asked)."""
    kinds = (v.accelerator.kind for v in variants)
    asked = asked_by(matrix, variants, gpu=gpu_present(), devices=devices_here(kinds))
    wanted = [o for options in asked.values() for o in options if o not in allowed]
    if not wanted:
        return None
    if signer is not None:
        return (
            f"allowed {spelt(dict.fromkeys(wanted))}: {tag} is signed by {signer}, whose "
            "host options you trust (allow-host-signed-by)"
        )
    shown = "; ".join(f"{what}: {' '.join(options)}" for what, options in asked.items())
    raise RefusedError(
        f"{tag}'s configuration gives its containers access to this host ({shown}); "
        f"they run only with your consent to each: add --allow-host {spelt(dict.fromkeys(wanted))}"
        " (nothing was built)"
    )

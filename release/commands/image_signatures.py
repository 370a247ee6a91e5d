"""``images.signatures``: the signature stores the signing CI jobs kept, merged into the
store served beside the registry (:mod:`release.images.image_signing`)."""

from __future__ import annotations

from dataclasses import dataclass

from release.commands.image_outcomes import SignaturesOutcome
from release.commands.outcome import Run

__all__ = ["SignaturesRequest", "signatures"]


@dataclass(frozen=True)
class SignaturesRequest:
    merge: tuple[str, ...] = ()
    into: str = ""
    json: bool = False


def signatures(request: SignaturesRequest, run: Run) -> SignaturesOutcome:
    """Merge; what was added."""
    from release.images.image_signing import merge_signatures

    added = merge_signatures(request.merge, request.into, run.say)
    return SignaturesOutcome(request.into, tuple(request.merge), tuple(added))

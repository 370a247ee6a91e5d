"""``images.signatures``: the signature stores the signing CI jobs kept, merged into the
store served beside the registry (:mod:`release.images.image_signing`)."""

from __future__ import annotations

from dataclasses import dataclass

from release.commands.outcome import JSONValue, Report, Run

__all__ = ["SignaturesRequest", "signatures"]


@dataclass(frozen=True)
class SignaturesRequest:
    merge: tuple[str, ...] = ()
    into: str = ""
    json: bool = False


def signatures(request: SignaturesRequest, run: Run) -> Report:
    """Merge; what was added."""
    from release.images.image_signing import merge_signatures

    added = merge_signatures(request.merge, request.into, run.say)
    merged: list[JSONValue] = list(request.merge)
    written: list[JSONValue] = list(added)
    return Report((), {"into": request.into, "merged": merged, "added": written})

"""``images.attest``: the SBOM and provenance of each published platform image, attached
in the release registry (:mod:`release.images.attest`)."""

from __future__ import annotations

from dataclasses import dataclass

from release.commands.common import ids, opened
from release.commands.image_outcomes import AttestOutcome
from release.commands.outcome import Run

__all__ = ["AttestRequest", "attest"]


@dataclass(frozen=True)
class AttestRequest:
    variant: str | None = None
    version: str | None = None
    sign_with: str | None = None
    dry_run: bool = False
    json: bool = False


def attest(request: AttestRequest, run: Run) -> AttestOutcome:
    """Attach, or (dry) say what would be; a document per platform image."""
    from release.images.attest import attest_images
    from release.images.image_signing import provenance_signer
    from release.images.workspace import Workspace

    signer = provenance_signer(request.sign_with)
    ws = Workspace.open(opened(run), request.version)
    done = attest_images(
        ws, ids(request.variant), dry_run=request.dry_run, say=run.say, signer=signer
    )
    return AttestOutcome(ws.source.version, tuple(done), request.dry_run)

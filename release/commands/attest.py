"""``images.attest``: the SBOM and provenance of each published platform image, attached
in the release registry (:mod:`release.images.attest`)."""

from __future__ import annotations

from dataclasses import dataclass

from release.commands.common import ids, opened
from release.commands.outcome import Report, Run

__all__ = ["AttestRequest", "attest"]


@dataclass(frozen=True)
class AttestRequest:
    variant: str | None = None
    version: str | None = None
    sign_with: str | None = None
    dry_run: bool = False
    json: bool = False


def attest(request: AttestRequest, run: Run) -> Report:
    """Attach, or (dry) say what would be; a document per platform image."""
    from release.images.attest import attest_images
    from release.images.image_signing import provenance_signer
    from release.images.workspace import Workspace

    signer = provenance_signer(request.sign_with)
    ws = Workspace.open(opened(run), request.version)
    done = attest_images(
        ws, ids(request.variant), dry_run=request.dry_run, say=run.say, signer=signer
    )
    lines = tuple(
        f"{a.row}: {a.subject}: SBOM {a.sbom or '(not attached yet)'}"
        + (f" ({a.packages} packages)" if a.packages is not None else "")
        + f", provenance {a.provenance or '(not attached yet)'} "
        + (f"(signed by {a.signed_by})" if a.signed_by else "(unsigned)")
        for a in done
    )
    return Report(
        ("dry run, nothing attached:", *lines) if request.dry_run else lines,
        {
            "dry_run": request.dry_run,
            "version": ws.source.version,
            "images": [
                {
                    "row": a.row,
                    "subject": a.subject,
                    "repository": a.repository,
                    "sbom": {"digest": a.sbom, "packages": a.packages},
                    "provenance": {
                        "digest": a.provenance,
                        "signed": a.signed_by is not None,
                        "signed_by": a.signed_by,
                    },
                    "written": list(a.written),
                }
                for a in done
            ],
        },
    )

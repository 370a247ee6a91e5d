"""The outcomes of the image commands (``images.*``): the records the image floor gave,
serialised only here, as the document ``--json`` prints and the lines a person reads.

The documents are the ones these commands have always printed, field for field: CI jobs
and ``release schema`` readers depend on them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from release.commands.common import as_json
from release.commands.outcome import JSONValue, OutcomeDefaults
from release.errors import ExitCode

if TYPE_CHECKING:
    from release.core.matrix import ImageMatrix
    from release.images.attest import Attached
    from release.images.build import BuildResult
    from release.images.publish import PublishedIndex
    from release.images.reproduce import Reproduction
    from release.images.smoke_checks import SmokeReport
    from release.images.snapshot import SnapshotReport

__all__ = [
    "AttestOutcome",
    "BuildOutcome",
    "MatrixOutcome",
    "PublishOutcome",
    "PullOutcome",
    "ReproduceOutcome",
    "SignaturesOutcome",
    "SmokeOutcome",
    "SnapshotOutcome",
    "TransferOutcome",
]


@dataclass(frozen=True)
class BuildOutcome(OutcomeDefaults):
    """``images.build``: each variant's build (a failed one raises before this is made)."""

    version: str
    results: tuple[BuildResult, ...]
    exit_code: ExitCode = ExitCode.OK
    error: str | None = None

    def text(self) -> tuple[str, ...]:
        return ()  # the summary was said as the builds ended

    def document(self) -> dict[str, JSONValue]:
        return {
            "version": self.version,
            "variants": [
                {
                    "variant": r.variant,
                    "status": str(r.status.value),
                    "tags": list(r.tags),
                    "image_id": r.image_id,
                    "seconds": round(r.seconds, 3),
                }
                for r in self.results
            ],
        }


@dataclass(frozen=True)
class SmokeOutcome(OutcomeDefaults):
    """``images.smoke``: every variant's report; exit 1 and ``error`` where one failed."""

    version: str
    reports: tuple[SmokeReport, ...]
    error: str | None = None  # said as ``error: ...`` after the document

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.reports)

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.OK if self.passed else ExitCode.FAILED

    def text(self) -> tuple[str, ...]:
        return ()  # each verdict was said as its variant ended

    def document(self) -> dict[str, JSONValue]:
        return {
            "version": self.version,
            "passed": self.passed,
            "variants": [r.to_dict() for r in self.reports],
        }


@dataclass(frozen=True)
class SnapshotOutcome(OutcomeDefaults):
    """``images.snapshot``: the round trip of each variant, or (``dry_run``) the variants
    whose plan was said."""

    version: str
    reports: tuple[SnapshotReport, ...] = ()
    dry_run: bool = False
    chosen: tuple[str, ...] = ()  # a dry run's variants
    exit_code: ExitCode = ExitCode.OK
    error: str | None = None

    def text(self) -> tuple[str, ...]:
        return ()  # said while it ran

    def document(self) -> dict[str, JSONValue]:
        if self.dry_run:
            return {"dry_run": True, "variants": list(self.chosen)}
        return {
            "version": self.version,
            "variants": [
                {"variant": r.variant, "record": as_json(r.record), "path": str(r.path)}
                for r in self.reports
            ],
        }


@dataclass(frozen=True)
class TransferOutcome(OutcomeDefaults):
    """``images.push``: the references pushed to the transfer registry."""

    pushed: tuple[str, ...]
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> tuple[str, ...]:
        return ()

    def document(self) -> dict[str, JSONValue]:
        return {"pushed": list(self.pushed)}


@dataclass(frozen=True)
class PullOutcome(OutcomeDefaults):
    """``images.pull``: the references pulled from the transfer registry."""

    pulled: tuple[str, ...]
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> tuple[str, ...]:
        return ()

    def document(self) -> dict[str, JSONValue]:
        return {"pulled": list(self.pulled)}


@dataclass(frozen=True)
class PublishOutcome(OutcomeDefaults):
    """``images.publish``: each variant's index and platform images, published or (dry)
    to be; ``signed_by``: the key that signed them (None: unsigned, or a dry run)."""

    version: str
    indexes: tuple[PublishedIndex, ...]
    dry_run: bool
    signed_by: str | None = None
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> tuple[str, ...]:
        lines = tuple(
            f"{'would publish' if self.dry_run else 'published'} {p.group}: "
            f"{p.digest or '(index not made yet)'} as {', '.join(p.refs)}"
            for p in self.indexes
        )
        return ("dry run, nothing pushed:", *lines) if self.dry_run else lines

    def document(self) -> dict[str, JSONValue]:
        return {
            "dry_run": self.dry_run,
            "version": self.version,
            "variants": [
                {
                    "variant": p.group,
                    "index": {"digest": p.digest, "tags": list(p.refs), "written": list(p.written)},
                    "signed_by": self.signed_by,
                    "platforms": [
                        {
                            "row": i.row,
                            "platform": i.platform,
                            "image_id": i.image_id,
                            "digest": i.digest,
                            "tag": i.ref,
                            "pushed": i.pushed,
                            "from": i.source,
                        }
                        for i in p.images
                    ],
                }
                for p in self.indexes
            ],
        }


@dataclass(frozen=True)
class AttestOutcome(OutcomeDefaults):
    """``images.attest``: each platform image's SBOM and provenance, attached or (dry) to
    be."""

    version: str
    attached: tuple[Attached, ...]
    dry_run: bool
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> tuple[str, ...]:
        lines = tuple(
            f"{a.row}: {a.subject}: SBOM {a.sbom or '(not attached yet)'}"
            + (f" ({a.packages} packages)" if a.packages is not None else "")
            + f", provenance {a.provenance or '(not attached yet)'} "
            + (f"(signed by {a.signed_by})" if a.signed_by else "(unsigned)")
            for a in self.attached
        )
        return ("dry run, nothing attached:", *lines) if self.dry_run else lines

    def document(self) -> dict[str, JSONValue]:
        return {
            "dry_run": self.dry_run,
            "version": self.version,
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
                for a in self.attached
            ],
        }


@dataclass(frozen=True)
class SignaturesOutcome(OutcomeDefaults):
    """``images.signatures``: the stores merged into ``into``, and the signatures added."""

    into: str
    merged: tuple[str, ...]
    added: tuple[str, ...]
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> tuple[str, ...]:
        return ()

    def document(self) -> dict[str, JSONValue]:
        return {"into": self.into, "merged": list(self.merged), "added": list(self.added)}


@dataclass(frozen=True)
class MatrixOutcome(OutcomeDefaults):
    """``images.matrix``: the image matrix (None: the repository has none), one line per
    variant, or as data for CI fan-out."""

    matrix: ImageMatrix | None
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> tuple[str, ...]:
        m = self.matrix
        if m is None:
            return ("no [tool.release.images] in this repository",)
        width = max(8, *(len(v.id) for v in m.variants))
        tags = max(40, *(len(m.tag(v, "v{version}")) for v in m.variants))
        return tuple(
            f"{v.id:{width}} {v.accelerator.label:13}{m.tag(v, 'v{version}'):{tags}} "
            f"{'snapshot' if m.has_snapshot(v) else 'no snapshot':12} base {v.base_image}"
            + (f" ({v.platform})" if v.platform else "")
            for v in m.variants
        )

    def document(self) -> dict[str, JSONValue]:
        from release.images.workspace import matrix_document

        return {"variants": []} if self.matrix is None else matrix_document(self.matrix)


@dataclass(frozen=True)
class ReproduceOutcome(OutcomeDefaults):
    """``reproduce``: the tag's images rebuilt and compared; exit 1 on drift."""

    found: Reproduction

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.FAILED if self.found.drifted else ExitCode.OK

    def text(self) -> tuple[str, ...]:
        return (self.found.summary(),)

    def document(self) -> dict[str, JSONValue]:
        found = self.found
        return {
            "tag": found.tag,
            "drifted": list(found.drifted),
            "verdicts": {
                variant: [as_json(_field(f)) for f in fields]
                for variant, fields in found.verdicts.items()
            },
            "notices": list(found.notices),
            "against": found.against,
            "signatures": as_json(found.signatures),
            "host_allowed_by": found.host_allowed_by,
            "image_signatures": [as_json(c.to_dict()) for c in found.image_signatures],
            "provenance_signatures": {
                row: as_json(c.to_dict()) for row, c in found.provenance_signatures.items()
            },
        }


def _field(verdict: object) -> object:
    import dataclasses

    return dataclasses.asdict(verdict) if dataclasses.is_dataclass(verdict) else str(verdict)  # type: ignore[arg-type]

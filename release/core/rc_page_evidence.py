"""The rc page's evidence beside each published platform image: who signed it, its SBOM
and its provenance, as the tag's manifest records them (the ``publish`` part's
``signed_by``, the ``attest`` part). Pure.

Every value is the manifest's, untrusted: it reaches the page through
:func:`release.core.html_text.text` only. The DOM says what is shown, for a program to
check: ``span.signer[data-signed-by]`` (empty: unsigned), ``li.sbom[data-digest]``
(``data-packages`` where a count is recorded) and ``li.provenance[data-digest]
[data-signed-by]``, each with ``data-digest=""`` and the word *none* where nothing was
attached.
"""

from __future__ import annotations

from dataclasses import dataclass

from release.core.html_text import text
from release.core.manifest_records import AttestRecord

__all__ = ["Attested", "attested_of", "data_attrs", "evidence", "signer"]


@dataclass(frozen=True)
class Attested:
    """A platform image's attachments, as recorded: each attachment's manifest digest."""

    sbom: str
    packages: int | None
    provenance: str
    provenance_signed_by: str | None = None


def attested_of(attest: AttestRecord | None) -> Attested | None:
    """The ``attest`` part (checked against the manifest's schema) as the page shows it."""
    if attest is None:
        return None
    provenance = attest.provenance
    return Attested(
        attest.sbom.digest,
        attest.sbom.packages,
        provenance.digest,
        provenance.signed_by if provenance.signed else None,
    )


def data_attrs(**values: object) -> str:
    """`` data-row="..." ...`` (``data_row`` spelt with a dash), each value escaped."""
    return "".join(f' {k.replace("_", "-")}="{text(v)}"' for k, v in values.items())


def signer(fpr: str | None) -> str:
    """Who signed a published manifest, as the rc's manifest records it."""
    if not fpr:
        return ' <span class="signer badge quiet" data-signed-by="">unsigned</span>'
    return (
        f' <span class="signer"{data_attrs(data_signed_by=fpr)}>signed by '
        f"<code>{text(fpr)}</code></span>"
    )


_NONE = '<span class="badge quiet">none</span>'


def _sbom(found: Attested | None) -> str:
    if found is None:
        return f'<li class="sbom" data-digest="">SBOM: {_NONE}</li>'
    count = found.packages
    attrs = data_attrs(data_digest=found.sbom) + (
        data_attrs(data_packages=count) if count is not None else ""
    )
    said = f" ({count} packages)" if count is not None else ""
    return f'<li class="sbom"{attrs}>SBOM <code>{text(found.sbom)}</code>{said}</li>'


def _provenance(found: Attested | None) -> str:
    if found is None:
        return f'<li class="provenance" data-digest="" data-signed-by="">provenance: {_NONE}</li>'
    attrs = data_attrs(
        data_digest=found.provenance, data_signed_by=found.provenance_signed_by or ""
    )
    fpr = found.provenance_signed_by
    said = (
        f"signed by <code>{text(fpr)}</code>"
        if fpr
        else '<span class="badge quiet">unsigned</span>'
    )
    return f'<li class="provenance"{attrs}>provenance <code>{text(found.provenance)}</code> {said}</li>'


def evidence(found: Attested | None) -> str:
    """A published platform image's SBOM and provenance, or *none* for each."""
    return f'<ul class="evidence">{_sbom(found)}{_provenance(found)}</ul>'

"""The rc page: one static HTML page for a tag, the asset a maintainer attaches to its
GitHub release. Pure: typed values in (:mod:`release.core.rc_page_input` makes them from
the manifest, the tag's message and a reproduce record), text out.

Invariants:

- every value from the manifest, the notes or a reproduce record is untrusted: it reaches
  the page only through :func:`text` (control and bidi characters shown as escapes, then
  HTML-escaped, quotes included), in element text or in a double-quoted attribute; no
  value names an element, an attribute or a URL, except a notes link, which is made only
  for an ``http(s)`` URL of a strict shape;
- the page reads nothing: no script, no external style, font or image, and a
  Content-Security-Policy that forbids fetching anything, so it shows the same offline;
- the DOM says what the page shows, for a program to check against the manifest: each
  row ``tr[data-row][data-platform]`` in ``#matrix``, its ``td.build``, ``td.smoke``,
  ``td.snapshot`` and ``td.reproduce`` with ``data-status``, and every pull line a
  ``code.pull[data-digest][data-kind]`` (``index`` or ``platform``); each published
  platform image's signer, SBOM and provenance as :mod:`release.core.rc_page_evidence`
  marks them.
"""

from __future__ import annotations

import datetime as _dt
import enum
from collections.abc import Iterable
from dataclasses import dataclass, field

from release.core.html_text import notes_html, text
from release.core.rc_page_evidence import Attested, data_attrs, evidence, signer
from release.core.rc_page_style import STYLE
from release.core.references import IMAGE_REFERENCE

__all__ = [
    "ENGINES_OWN",
    "NOT_REPRODUCED",
    "Figure",
    "Published",
    "RcPage",
    "ReproduceState",
    "Reproduced",
    "Row",
    "Smoke",
    "SmokeResult",
    "Snapshot",
    "render",
]

ENGINES_OWN = "engine's own"  # a row built for the platform of the engine that built it


@dataclass(frozen=True)
class SmokeResult:
    name: str
    status: str  # passed, failed, timed out, not run
    reason: str = ""


@dataclass(frozen=True)
class Smoke:
    passed: bool
    checks: tuple[SmokeResult, ...] = ()

    def count(self, status: str) -> int:
        return sum(1 for c in self.checks if c.status == status)


@dataclass(frozen=True)
class Figure:
    name: str  # as the snapshot record names it: dump_s
    seconds: float


@dataclass(frozen=True)
class Snapshot:
    status: str  # passed, failed, omitted, not run
    reason: str = ""
    figures: tuple[Figure, ...] = ()


@dataclass(frozen=True)
class Published:
    """A row's image in the release registry: its platform manifest and its variant's
    multi-arch index, each by digest."""

    registry: str  # REGISTRY/PATH
    platform: str
    digest: str
    tags: tuple[str, ...]
    index_digest: str
    index_tags: tuple[str, ...]
    signed_by: str | None = None  # the key's fingerprint, as recorded
    index_signed_by: str | None = None


class ReproduceState(enum.Enum):
    MATCH = "match"
    DRIFT = "drift"
    NOT_COMPARED = "not compared"  # reproduce ran on the row but compared no field
    NOT_RUN = "not run"


@dataclass(frozen=True)
class Reproduced:
    state: ReproduceState
    drifted: tuple[str, ...] = ()  # the fields that drifted


NOT_REPRODUCED = Reproduced(ReproduceState.NOT_RUN)


@dataclass(frozen=True)
class Row:
    """One image of the tag: a variant on one platform."""

    id: str
    group: str  # the variant as configured; a group's rows share one index
    platform: str | None  # None: the engine's own
    accelerator: str  # as prose names it: "CUDA 12.9.1", "ROCm 6.4.1", "CPU"
    image_id: str
    base_ref: str
    standin_base: bool
    smoke: Smoke
    snapshot: Snapshot
    publish: Published | None = None
    reproduce: Reproduced = NOT_REPRODUCED
    attest: Attested | None = None  # its SBOM and provenance, where attached


@dataclass(frozen=True)
class RcPage:
    image: str
    tag: str
    version: str
    commit: str
    source_date_epoch: int
    rows: tuple[Row, ...]
    promoted_from: str | None = None  # the rc a final was promoted from
    notes: str | None = None  # the tag's message; None: a lightweight tag
    reproduced: bool = False  # a reproduce record of this tag was read
    notices: tuple[str, ...] = field(default=())  # what the page could not show, and why
    tool_version: str = ""


_CSP = "default-src 'none'; style-src 'unsafe-inline'"  # nothing fetched, no script


def render(page: RcPage) -> str:
    sections = (_header, _matrix, _digests, _timings, _notes, _footer)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{text(page.image)} {text(page.tag)}</title>\n<style>{STYLE}</style>\n"
        "</head>\n<body>\n" + "\n".join(s(page) for s in sections) + "\n</body>\n</html>\n"
    )


_attrs = data_attrs


def _short(digest: str) -> str:
    return digest.removeprefix("sha256:")[:12]


def _header(page: RcPage) -> str:
    date = _dt.datetime.fromtimestamp(page.source_date_epoch, _dt.UTC)
    facts = [
        ("version", text(page.version)),
        ("commit", f"<code>{text(page.commit)}</code>"),
        ("source date", f"{date:%Y-%m-%d %H:%M} UTC"),
        ("images", f"{len(page.rows)} ({len({r.group for r in page.rows})} variants)"),
    ]
    if page.promoted_from:
        came = f'<span class="promoted">{text(page.promoted_from)}</span> (same images)'
        facts.insert(1, ("promoted from", came))
    listed = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in facts)
    kind = "final release" if page.promoted_from else "release candidate"
    attrs = _attrs(
        data_image=page.image,
        data_tag=page.tag,
        data_version=page.version,
        data_commit=page.commit,
        data_promoted_from=page.promoted_from or "",
    )
    return (
        f'<header id="header"{attrs}><p class="kind">{kind}</p>'
        f'<h1><span class="image">{text(page.image)}</span> '
        f'<span class="tag">{text(page.tag)}</span></h1>'
        f'<dl class="facts">{listed}</dl></header>'
    )


# status -> (what the page says, the badge's class): the class is never a value read
_SAID = {
    "passed": ("passed", "good"),
    "match": ("match", "good"),
    "failed": ("FAILED", "bad"),
    "timed out": ("TIMED OUT", "bad"),
    "drift": ("DRIFT", "bad"),
    "omitted": ("omitted", "quiet"),
    "not run": ("not run", "quiet"),
    "not compared": ("not compared", "quiet"),
}


def _badge(status: str) -> str:
    said, kind = _SAID.get(status, (status, "quiet"))
    return f'<span class="badge {kind}">{text(said)}</span>'


def _platform(row: Row) -> str:
    return row.platform or ENGINES_OWN


def _matrix(page: RcPage) -> str:
    heads = ("variant", "platform", "accelerator", "build", "smoke", "snapshot", "reproduce")
    head = "".join(f'<th scope="col">{h}</th>' for h in heads)
    body = "".join(_row(row) for row in page.rows)
    return (
        f'<section id="matrix"><h2>Images</h2>{_reproduce_summary(page)}'
        f'<table class="matrix"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        f"{_notices(page.notices)}</section>"
    )


def _row(row: Row) -> str:
    attrs = _attrs(data_row=row.id, data_group=row.group, data_platform=_platform(row))
    sub = "" if row.id == row.group else f'<div class="sub">{text(row.id)}</div>'
    return (
        f'<tr{attrs}><th scope="row" class="variant">{text(row.group)}{sub}</th>'
        f'<td class="platform">{text(_platform(row))}</td><td class="accelerator">{text(row.accelerator)}</td>'
        f"{_build(row)}{_smoke(row.smoke)}{_snapshot(row.snapshot)}"
        f"{_reproduce(row.reproduce)}</tr>"
    )


def _build(row: Row) -> str:
    attrs = _attrs(data_image_id=row.image_id, data_standin=str(row.standin_base).lower())
    marker = ' <span class="badge warn">stand-in base</span>' if row.standin_base else ""
    return (
        f'<td class="build"{attrs}><code title="{text(row.image_id)}">'
        f"{text(_short(row.image_id))}</code>{marker}"
        f'<div class="reason">base {text(row.base_ref)}</div></td>'
    )


def _smoke(smoke: Smoke) -> str:
    broken = smoke.count("failed") + smoke.count("timed out")
    status = "passed" if smoke.passed and not broken else "failed"
    total, passed = len(smoke.checks), smoke.count("passed")
    others = "".join(
        f" · {smoke.count(s)} {s}" for s in ("failed", "timed out", "not run") if smoke.count(s)
    )
    listed = "".join(
        f"<li{_attrs(data_check=c.name, data_status=c.status)}><b>{text(c.name)}</b> "
        f"{text(c.status)}{': ' + text(c.reason) if c.reason else ''}</li>"
        for c in smoke.checks
        if c.status != "passed"
    )
    attrs = _attrs(data_status=status, data_passed=passed, data_total=total)
    return (
        f'<td class="smoke"{attrs}>{_badge(status)}<div class="count">{passed}/{total} passed'
        f"{others}</div>{_listed(listed)}</td>"
    )


def _listed(items: str) -> str:
    return f'<ul class="checks">{items}</ul>' if items else ""


def _snapshot(snapshot: Snapshot) -> str:
    reason = f'<div class="reason">{text(snapshot.reason)}</div>' if snapshot.reason else ""
    return (
        f'<td class="snapshot"{_attrs(data_status=snapshot.status)}>'
        f"{_badge(snapshot.status)}{reason}</td>"
    )


def _reproduce(found: Reproduced) -> str:
    fields = ", ".join(found.drifted)
    detail = f'<div class="reason">{text(fields)}</div>' if fields else ""
    return (
        f'<td class="reproduce"{_attrs(data_status=found.state.value)}>'
        f"{_badge(found.state.value)}{detail}</td>"
    )


def _reproduce_summary(page: RcPage) -> str:
    if not page.reproduced:
        said = (
            "Reproduce: not run on this machine "
            f"(<code>release reproduce {text(page.tag)}</code> records its verdict here)."
        )
    else:
        counts = {s: sum(1 for r in page.rows if r.reproduce.state is s) for s in ReproduceState}
        said = (
            "Reproduce: " + ", ".join(f"{n} {text(s.value)}" for s, n in counts.items() if n) + "."
        )
    return f'<p class="summary"{_attrs(data_reproduced=str(page.reproduced).lower())}>{said}</p>'


def _notices(notices: Iterable[str]) -> str:
    items = "".join(f"<li>{text(n)}</li>" for n in notices)
    return f'<ul class="notices">{items}</ul>' if items else ""


def _pull(kind: str, registry: str, image: str, digest: str) -> str:
    """A ``docker pull`` line to copy, made only of an image reference: never of text that
    a shell would read as more than one (a registry such as ``x; rm -rf ~ #``)."""
    ref = f"{registry}/{image}@{digest}"
    if not IMAGE_REFERENCE.fullmatch(ref):
        return (
            f'<p class="unpullable"{_attrs(data_kind=kind, data_digest=digest)}>'
            f'<span class="badge bad">no pull line</span> {text(ref)} is not an image '
            "reference</p>"
        )
    return (
        f'<pre><code class="pull"{_attrs(data_kind=kind, data_digest=digest, data_ref=ref)}>'
        f"docker pull {text(ref)}</code></pre>"
    )


def _digests(page: RcPage) -> str:
    blocks = []
    for group in dict.fromkeys(r.group for r in page.rows):
        rows = [r for r in page.rows if r.group == group]
        indexes: dict[str, Published] = {}  # each digest once, as its first row names it
        for published in (r.publish for r in rows if r.publish):
            indexes.setdefault(published.index_digest, published)
        index = "".join(
            f'<div class="index"{_attrs(data_digest=digest)}><p class="label"><b>multi-arch '
            f"index</b> <code>{text(digest)}</code>{_tags(p.index_tags)}{signer(p.index_signed_by)}</p>"
            f"{_pull('index', p.registry, page.image, digest)}</div>"
            for digest, p in indexes.items()
        ) or (
            '<p class="index not-published" data-kind="index">'
            '<span class="badge quiet">not published</span> no multi-arch index</p>'
        )
        platforms = "".join(_platform_digest(page.image, r) for r in rows)
        blocks.append(
            f'<div class="variant"{_attrs(data_group=group)}><h3>{text(group)}</h3>{index}'
            f"{platforms}</div>"
        )
    return f'<section id="digests"><h2>Digests</h2>{"".join(blocks)}</section>'


def _tags(tags: tuple[str, ...]) -> str:
    shown = ", ".join(f"<code>{text(t)}</code>" for t in tags)
    return f'<span class="tags"> tagged {shown}</span>' if shown else ""


def _platform_digest(image: str, row: Row) -> str:
    """A row's image: its platform manifest and pull line, or the local image id."""
    name = f'<b>{text(_platform(row))}</b> <span class="sub">{text(row.id)}</span> '
    attrs = _attrs(data_row=row.id, data_platform=_platform(row))
    if row.publish is None:
        return (
            f'<div class="platform-image not-published"{attrs}{_attrs(data_image_id=row.image_id)}>'
            f'<p class="label">{name}<span class="badge quiet">not published</span> local image '
            f'<code class="image-id">{text(row.image_id)}</code></p></div>'
        )
    p = row.publish
    return (
        f'<div class="platform-image published"{attrs}><p class="label">{name}platform manifest '
        f"<code>{text(p.digest)}</code>{_tags(p.tags)}{signer(p.signed_by)}</p>"
        f"{_pull('platform', p.registry, image, p.digest)}{evidence(row.attest)}</div>"
    )


def _figure_name(name: str) -> str:
    return name.removesuffix("_s").replace("_", " ")


def _timings(page: RcPage) -> str:
    timed = [r for r in page.rows if r.snapshot.figures]
    if not timed:
        return (
            '<section id="timings"><h2>Snapshot timings</h2><p class="summary">No snapshot '
            "recorded timings (omitted, not run, or no round trip).</p></section>"
        )
    names = list(dict.fromkeys(f.name for r in timed for f in r.snapshot.figures))
    head = "".join(
        f'<th scope="col"{_attrs(data_figure=n)}>{text(_figure_name(n))} (s)</th>' for n in names
    )
    body = "".join(_timing_row(r, names) for r in timed)
    return (
        '<section id="timings"><h2>Snapshot timings</h2><table class="timings"><thead><tr>'
        f'<th scope="col">image</th>{head}</tr></thead><tbody>{body}</tbody></table></section>'
    )


def _timing_row(row: Row, names: list[str]) -> str:
    by_name = {f.name: f.seconds for f in row.snapshot.figures}
    cells = "".join(
        f'<td class="figure"{_attrs(data_figure=n, data_seconds=repr(by_name[n]))}>'
        f"{by_name[n]:.3f}</td>"
        if n in by_name
        else '<td class="figure missing">&ndash;</td>'
        for n in names
    )
    attrs = _attrs(data_row=row.id, data_platform=_platform(row))
    return f'<tr{attrs}><th scope="row">{text(row.id)}</th>{cells}</tr>'


def _notes(page: RcPage) -> str:
    if page.notes is None:
        body = '<p class="summary">No notes: the tag has no message (a lightweight tag).</p>'
    else:
        body = f'<div class="notes">{notes_html(page.notes)}</div>'
    return f'<section id="notes"><h2>Notes</h2>{body}</section>'


def _footer(page: RcPage) -> str:
    tool = f" (written by release {text(page.tool_version)})" if page.tool_version else ""
    record = ", this machine's reproduce record" if page.reproduced else ""
    return (
        f"<footer><p>Made from the release manifest <code>refs/notes/release/{text(page.tag)}"
        f"</code>{tool}{record} and the tag's message. A static page: nothing on it is "
        "fetched.</p></footer>"
    )

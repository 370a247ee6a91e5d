"""``release report TAG --out DIR``: the rc page of a tag, one static HTML file
(``DIR/<tag>.html``) to attach to its GitHub release.

``DIR`` is made when it is missing and its parent is a directory (nothing further up is
made); anything but a directory there is refused, and so is anything but a regular file
where the page goes. Both are checked before anything is read; the page is written
atomically, with a comment saying what wrote it and the sha256 of the rest
(:mod:`release.core.generated`): a page there already is replaced only where release wrote
it and nobody changed it since, else with ``--force`` (refused, exit 3).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from release.commands.common import context, forced_lines
from release.commands.outcome import JSONValue, OutcomeDefaults, Run
from release.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from release.adapters.generated_files import Written
    from release.core.rc_page import RcPage

__all__ = ["RcPageOutcome", "ReportRequest", "page_name", "report"]


@dataclass(frozen=True)
class ReportRequest:
    tag: str
    out: str
    force: bool = False
    json: bool = False


def page_name(tag: str) -> str:
    """The page's file name: ``v0.31.0rc1.html`` (a ``/`` of a tag's name as ``-``)."""
    return tag.replace("/", "-") + ".html"


@dataclass(frozen=True)
class RcPageOutcome(OutcomeDefaults):
    """``report``: the rc page written to ``path``, what it shows, and the page ``--force``
    let it replace."""

    tag: str
    path: Path
    page: RcPage
    written: tuple[Written, ...]
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> tuple[str, ...]:
        from release.core.terminal_text import escaped

        page = self.page
        said = f"{len(page.rows)} image(s) of {page.image}" + (
            "" if page.reproduced else ", reproduce not run here"
        )
        return (
            *(f"note: {escaped(n)}" for n in page.notices),
            f"wrote {self.path} ({escaped(said)})",
            *forced_lines(self.written),
        )

    def document(self) -> dict[str, JSONValue]:
        return {
            "path": str(self.path),
            "replaced": [str(w.path) for w in self.written if w.forced],
            "tag": self.tag,
            "rows": [r.id for r in self.page.rows],
            "reproduced": self.page.reproduced,
            "notices": list(self.page.notices),
        }


def report(request: ReportRequest, run: Run) -> RcPageOutcome:
    from release.adapters.files import output_path
    from release.adapters.generated_files import Generated, write_generated, written_by
    from release.core.generated import Spelling
    from release.core.rc_page import render
    from release.flows.published_tag import check_tag_name
    from release.flows.rc_page import gather

    check_tag_name(request.tag)
    ctx = context(run)
    directory = _directory(Path(request.out), request.tag)
    path = output_path(directory / page_name(request.tag), "--out", tree=ctx.root, made=True)
    page = gather(ctx, request.tag)
    directory.mkdir(exist_ok=True)
    by = written_by(["release", "report", request.tag])
    written = write_generated(
        [Generated(path, render(page), Spelling.HTML, by)],
        force=request.force,
        command="release report",
        root=ctx.root,
    )
    return RcPageOutcome(request.tag, path, page, tuple(written))


def _directory(path: Path, tag: str) -> Path:
    """``--out``: a directory, or none yet in a directory that exists."""
    if os.path.lexists(path) and not path.is_dir():
        raise UsageError(
            f"--out {path} is not a directory: name the directory to write {page_name(tag)} in"
        )
    parent = Path(os.path.abspath(path)).parent
    if not path.is_dir() and not parent.is_dir():
        raise UsageError(f"--out {path}: there is no directory {parent}; make it first")
    return path

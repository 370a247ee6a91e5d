"""``notes``: the release notes of a range, printed or written to ``--out``."""

from __future__ import annotations

import enum
import sys
from dataclasses import dataclass
from pathlib import Path

from release.commands.common import context
from release.commands.outcome import OutcomeDefaults, Run
from release.errors import ExitCode

__all__ = ["NotesFormat", "NotesOutcome", "NotesRequest", "NotesView", "notes"]


class NotesFormat(enum.Enum):
    MD = "md"
    JSON = "json"


class NotesView(enum.Enum):
    RC = "rc"
    FINAL = "final"


@dataclass(frozen=True)
class NotesRequest:
    since: str | None = None
    until: str = "HEAD"
    format: NotesFormat = NotesFormat.MD
    view: NotesView = NotesView.RC
    out: str | None = None
    json: bool = False


@dataclass(frozen=True)
class NotesOutcome(OutcomeDefaults):
    """The notes: a document printed whole (Markdown or JSON), or written to ``--out``."""

    text_: str
    written: Path | None
    format: NotesFormat
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> tuple[str, ...]:
        return ()

    def document(self) -> dict[str, object]:
        import json

        if self.format is NotesFormat.JSON:
            return dict(json.loads(self.text_))
        return {"markdown": self.text_}

    @property
    def whole(self) -> str | None:
        """What goes to stdout as it is (the document), when not written to a file."""
        return None if self.written else self.text_


def notes(request: NotesRequest, run: Run) -> NotesOutcome:
    from release.adapters.files import atomic_write, output_path
    from release.core.terminal_text import escaped
    from release.flows.notes_output import notes_output
    from release.flows.notes_range import default_range, given_range

    fmt = NotesFormat.JSON if request.json else request.format
    ctx = context(run)
    target = output_path(Path(request.out), "--out", tree=ctx.root) if request.out else None
    rng = (
        given_range(ctx, request.since, request.until)
        if request.since is not None
        else default_range(ctx, request.until, request.view.value)
    )
    text, guessed = notes_output(ctx, rng, fmt.value)
    for prefix, category in guessed:
        line = f"note: [{escaped(prefix)}] is no known spelling; read as {escaped(category)}"
        print(escaped(line + " (one edit away)"), file=sys.stderr, flush=True)
    if target is not None:
        atomic_write(target, text)
    return NotesOutcome(text, target, fmt)

"""``status`` as lines for a person.

They show names, subjects, reasons, paths, manifest fields and notes that come from git,
the work tree, a picks file and a tag's manifest: each is a single-line field, its control
characters escaped (:mod:`release.core.terminal_text`), so none can forge a line.
"""

from __future__ import annotations

from release.core.terminal_text import escaped
from release.flows.branch_picks import FromGitHub
from release.flows.status import Status

__all__ = ["render_status"]


def _from_github(g: FromGitHub) -> list[str]:
    """A milestone or label of the picks file: its pending count and what is not pickable,
    or, in one line, why GitHub could not be read."""
    if g.unread is not None:
        return [f"{escaped(g.source)}: could not be read from GitHub: {escaped(g.unread)}"]
    refused = f", {len(g.not_pickable)} not pickable" if g.not_pickable else ""
    head = f"{escaped(g.source)}: {g.pending} pending{refused}"
    return [head, *(f"  not pickable  {n.line()}" for n in g.not_pickable)]


def render_status(s: Status) -> list[str]:
    lines = [
        f"branch:   {escaped(s.branch or '(detached)')}"
        + (f"  (release {s.release})" if s.release else "")
    ]
    if s.release is None:
        if s.release_branches:
            lines.append("release branches: " + ", ".join(map(escaped, s.release_branches)))
    else:
        if s.tags:
            pushed = "" if s.remote_checked else " (remote not checked)"
            shown = [
                escaped(t.name)
                + (pushed if not s.remote_checked else "" if t.remote else " (not pushed)")
                + ("" if t.local else " (remote only)")
                for t in s.tags[-4:]
            ]
            lines.append("tags:     " + ", ".join(shown))
        else:
            lines.append("tags:     none yet")
        lines.append(f"next rc:  {s.next_rc or '-'}" + (f"   final: {s.final}" if s.final else ""))
        if s.untagged_commits:
            lines.append(f"untagged: {s.untagged_commits} commit(s) since the last tag")
        held = f", {len(s.picks_held)} held" if s.picks_held else ""
        lines.append(f"picks:    {len(s.picks_done)} done, {len(s.picks_pending)} pending{held}")
        for done in s.picks_done[-10:]:
            reason = f" [{escaped(done.reason)}]" if done.reason else ""
            reason += "" if done.how == "-x" else f" ({done.how})"
            lines.append(
                f"  done     {escaped(done.picked_from[:10])} {escaped(done.subject)}{reason}"
            )
        for pending in s.picks_pending:
            via = f" ({escaped(pending.via)})" if pending.via else ""
            lines.append(f"  pending  {pending.sha[:10]} {escaped(pending.subject)}{via}")
        for hold in s.picks_held:
            lines.append(
                f"  held     {hold.sha[:10]} {escaped(hold.subject)} ({escaped(hold.likely or '')};"
                f" --repick {hold.sha[:10]} picks it anyway)"
            )
        for source in s.from_github:
            lines += _from_github(source)
        if s.reverts_pending:
            lines.append(
                f"reverts:  {len(s.reverts_pending)} on main undo what the branch carries"
                " (release pick --reverts picks them all)"
            )
        for r in s.reverts_pending[:10]:
            lines.append(
                f"  revert   {r.sha[:10]} {escaped(r.subject)} (reverts {escaped(r.reverts[:10])},"
                f" {escaped(r.carried)}): {r.command}"
            )
        if len(s.reverts_pending) > 10:
            lines.append(
                f"  ... and {len(s.reverts_pending) - 10} more (status --json lists them all)"
            )
        if s.pick_in_progress:
            conflict = s.pick_in_progress.conflict
            where = (
                f" stopped on {escaped(conflict.sha[:10])}"
                f" ({', '.join(map(escaped, conflict.files))})"
                if conflict
                else ""
            )
            lines.append(f"in progress: pick{where}, {s.pick_in_progress.remaining} left")
    if s.interrupted:
        command, name = s.interrupted
        lines.append(f"in progress: {command} of {escaped(name)}, stopped before it was done")
    if s.images is not None:
        lines.append(f"images:   {escaped(s.images.tag)} (manifest: {s.images.manifest})")
        width = max(len(v) for v in s.images.variants)
        for variant, row in s.images.variants.items():
            built, smoked, snapshot = (escaped(row[k]) for k in ("built", "smoked", "snapshot"))
            lines.append(
                f"  {variant:<{width}}  built {built}, smoke {smoked}, snapshot {snapshot}"
            )
    if s.dirty:
        lines.append(f"dirty:    {', '.join(map(escaped, s.dirty[:5]))}")
    lines += [f"note:     {escaped(n)}" for n in s.notes]
    lines.append(f"next:     {escaped(s.next_command)}")
    return lines

"""Image sessions for nox, parametrized from ``[tool.release.images]``.

An engine repository gets them with one call in its ``noxfile.py``::

    from release.cli.nox_sessions import image_sessions
    image_sessions()

``build(<id>)`` and ``smoke(<id>)`` exist for every variant, ``snapshot(<id>)`` only
where the snapshot rule applies (the same rule that adds the image's snapshot-runtime
build step). Sessions are tagged ``images`` and ``<id>`` and need no virtualenv.
Posargs: ``--version V``, ``--force``, ``--baseline FILE`` (snapshot), ``--json`` (the outcome
as a JSON document),
and for every session ``--allow-dirty`` and ``--allow-shallow`` (a build of uncommitted
changes, or in a shallow clone, is refused without them: :mod:`release.images.source`).
What a session logs is :func:`~release.cli.console.printable`: its secrets taken out, its
control characters escaped but the newlines between lines, and its error line all of them.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["image_sessions"]


def _options(posargs: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="nox -s SESSION --", add_help=False)
    parser.add_argument("--version")
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--allow-dirty", action="store_true")
    parser.add_argument("--allow-shallow", action="store_true")
    return parser.parse_args(posargs)


def _run(session: Any, root: Path, kind: str, variant: str) -> None:
    """Run the command ``images.<kind>`` for one variant and log its outcome."""
    import json

    from release.cli.console import printable
    from release.cli.entry import sigterm_stops
    from release.commands import images
    from release.commands.image_outcomes import BuildOutcome, SmokeOutcome, SnapshotOutcome
    from release.commands.outcome import Run, schema_of
    from release.errors import ReleaseError, Terminated

    try:
        opts = _options(list(session.posargs))
    except SystemExit:
        session.error(
            "posargs: --version V, --force, --baseline FILE, --json, --allow-dirty, --allow-shallow"
        )
    guards = {"allow_dirty": opts.allow_dirty, "allow_shallow": opts.allow_shallow}
    run = Run(root, lambda line: session.log(printable(line, keep_newlines=True)))
    try:
        with sigterm_stops():
            outcome: BuildOutcome | SmokeOutcome | SnapshotOutcome
            if kind == "build":
                outcome = images.build(
                    images.BuildRequest(variant, version=opts.version, force=opts.force, **guards),
                    run,
                )
            elif kind == "smoke":
                outcome = images.smoke(
                    images.SmokeRequest(variant, version=opts.version, **guards), run
                )
            else:
                baseline = str(opts.baseline) if opts.baseline else None
                outcome = images.snapshot(
                    images.SnapshotRequest(
                        variant, version=opts.version, baseline=baseline, **guards
                    ),
                    run,
                )
    except ReleaseError as err:
        session.error(printable(err.one_line()))
        return
    except Terminated:
        session.error("terminated; re-run the session to continue where it stopped")
        return
    if opts.json:
        document = {"schema": schema_of(f"images.{kind}"), **outcome.document()}
        session.log(printable(json.dumps(document, indent=2), keep_newlines=True))
    for line in outcome.text():
        run.say(line)
    if outcome.error is not None:
        session.error(printable(outcome.error))


def image_sessions(root: str | Path | None = None) -> None:
    """Define ``build``, ``smoke`` and ``snapshot`` sessions for the repository at ``root``."""
    import nox

    from release.adapters.config_file import load_config

    base = Path(root) if root is not None else Path.cwd()
    matrix = load_config(base).matrix
    if matrix is None:
        return

    sessions = matrix.session_ids()  # the CI pipelines are made from the same (release ci)

    def params(ids: tuple[str, ...]) -> list[Any]:
        # a platform's row is tagged with its variant too: nox -t cu129 runs every platform
        groups = {v.id: v.group for v in matrix.variants}
        return [nox.param(i, id=i, tags=list(dict.fromkeys((i, groups[i])))) for i in ids]

    def define(name: str, ids: tuple[str, ...], doc: str) -> None:
        def session_func(session: nox.Session, variant: str) -> None:
            _run(session, base, name, variant)

        session_func.__doc__ = doc
        session_func.__name__ = name
        nox.session(name=name, python=False, tags=["images"], default=False)(
            nox.parametrize("variant", params(ids))(session_func)
        )

    define(
        "build",
        sessions["build"],
        "Build the variant's image (skipped when its inputs are unchanged).",
    )
    define(
        "smoke",
        sessions["smoke"],
        "Smoke-test the variant's image (builds it first if missing).",
    )
    define(
        "snapshot",
        sessions["snapshot"],
        f"Check the snapshot runtime and record its state (only where {matrix.snapshot.selector.prose if matrix.snapshot else '-'}).",
    )

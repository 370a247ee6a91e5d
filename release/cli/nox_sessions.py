"""Image sessions for nox, parametrized from ``[tool.release.images]``.

An engine repository gets them with one call in its ``noxfile.py``::

    from release.cli.nox_sessions import image_sessions
    image_sessions()

``build(<id>)`` and ``smoke(<id>)`` exist for every variant, ``snapshot(<id>)`` only
where the snapshot rule applies (the same rule that adds the image's snapshot-runtime
build step). Sessions are tagged ``images`` and ``<id>`` and need no virtualenv.
Posargs are the options of ``release images.<kind>`` but ``--variant`` (the session names
it), parsed from the same declaration: ``--version V``, ``--force`` (build), ``--baseline
FILE`` (snapshot), ``--json`` (the outcome as a JSON document), ``--allow-dirty`` and
``--allow-shallow`` (a build of uncommitted changes, or in a shallow clone, is refused
without them: :mod:`release.images.source`).
What a session logs is :func:`~release.cli.console.printable`: its secrets taken out, its
control characters escaped but the newlines between lines, and its error line all of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["image_sessions"]


def _run(session: Any, root: Path, kind: str, variant: str) -> None:
    """Run the command ``images.<kind>`` for the session's variant, its posargs parsed by the
    command's own declaration (what ``release images.<kind> --help`` lists), through the
    dispatcher the console script uses; log its outcome."""
    import json

    from release.cli.arguments import ArgumentsRefused, parser_of
    from release.cli.console import printable
    from release.cli.dispatch import execute
    from release.cli.entry import sigterm_stops
    from release.commands.outcome import Run, schema_of
    from release.commands.registry import by_name
    from release.errors import ReleaseError, Terminated

    command = by_name()[f"images.{kind}"]
    try:
        values = vars(parser_of(command).parse_args(list(session.posargs)))
    except ArgumentsRefused as err:
        session.error(printable(f"posargs: {err} (release {command.name} --help lists them)"))
        return
    except SystemExit:  # --help: argparse printed it
        return
    if values.get("variant") is not None:
        session.error(f"posargs: the session runs {variant}; run another session, not --variant")
        return
    values["variant"] = variant
    run = Run(root, lambda line: session.log(printable(line, keep_newlines=True)))
    try:
        with sigterm_stops():
            outcome = execute(command, values, run)
    except ReleaseError as err:
        session.error(printable(err.one_line()))
        return
    except Terminated:
        session.error("terminated; re-run the session to continue where it stopped")
        return
    if values.get("json"):
        document = {"schema": schema_of(command.name), **outcome.document()}
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

"""The ``release`` console script's first step: it keeps the garbage collector off while
the command runs (the imports make tens of thousands of objects that live as long as the
process, and the shutdown would walk them all) and hands the command line to
:mod:`release.cli.program`."""

from __future__ import annotations

import gc

__all__ = ["main"]


def main() -> None:
    collecting = gc.isenabled()
    gc.disable()
    try:
        from release.cli.program import main as run
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
    try:
        run()
    finally:
        # The interpreter's shutdown runs the cycle collector over every object left (the
        # modules of GitPython among them): 15-25 ms of every command, here. Frozen, they
        # are skipped. The process ends here and nothing waits on a collection to be
        # finalized (processes, locks and files are closed by then).
        gc.freeze()

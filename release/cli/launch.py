"""The ``release`` console script's first step: ``release --version`` (or ``-V``) is answered
at once, with what invoke's ``Program`` prints; any other command line goes to
:mod:`release.cli.program`, which loads invoke (without the modules it imports for tests
and its own version: :mod:`release.cli.lean_import`), the tasks and (for git) GitPython.
"""

from __future__ import annotations

import gc
import sys

from release import __version__
from release.cli.lean_import import lean_invoke

__all__ = ["main"]

_VERSION = (["--version"], ["-V"])


def main() -> None:
    if sys.argv[1:] in _VERSION:
        print(f"release {__version__}")  # invoke's Program.print_version: name and version
        return
    # The imports (invoke, the tasks) make tens of thousands of objects that live as long as
    # the process: no collection runs while they are made, and none walks them afterwards.
    collecting = gc.isenabled()
    gc.disable()
    try:
        with lean_invoke():
            from release.cli.program import main as run
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
    try:
        run()
    finally:
        # The interpreter's shutdown runs the cycle collector over every object left (the
        # modules of invoke and GitPython among them): 15-25 ms of every command, here.
        # Frozen, they are skipped. The process ends here and nothing waits on a
        # collection to be finalized (processes, locks and files are closed by then).
        gc.freeze()

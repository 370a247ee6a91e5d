"""How a workflow speaks as it goes: one line at a time, to whoever listens (a terminal,
the rehearsal's log, a test's list). Declared once; every workflow takes this type."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Say"]

Say = Callable[[str], None]

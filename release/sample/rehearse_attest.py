"""The rehearsal's SBOM and signed provenance: rc1's ``images.attest`` of one row
(:data:`ATTESTED`), its provenance signed by the maintainer's throwaway image key; the
tester's ``reproduce`` verifies that signature with the key's public half before building
and compares the statement and the SBOM with its rebuild; the rc page shows the row's
SBOM and provenance (signed by the key) and *none* for the rows not attested.

One row, not all: syft reads a whole image each time (the engine's ``docker save`` of it,
then every layer indexed: 7 to 8 s for a sample image on a quiet 2-core machine, over 30 s
when it is busy), and ``reproduce`` scans the rebuild of every attested row again. One row
shows each check and costs two scans; the six rows would cost twelve.

Where syft, gpg or the registry is missing, the step and its checks say *not run* and
why; they never pass.
"""

from __future__ import annotations

import re
from pathlib import Path

from release.adapters.syft import SyftError, syft_binary
from release.sample.rehearse_image_keys import ImageKeys
from release.sample.rehearse_registry import RegistrySide
from release.sample.rehearse_terminal import StepOutcome, Terminal

__all__ = ["ATTESTED", "attest_args", "attest_note", "page_evidence", "provenance_checks"]

ATTESTED = "cu128"  # not the drift step's variant: its reproduce scans nothing more


def attest_args(
    registry: RegistrySide, keys: ImageKeys
) -> tuple[tuple[str, ...], dict[str, str] | None, str]:
    """``images.attest``'s arguments and environment (the maintainer's keyring), or why
    it is not run."""
    args: tuple[str, ...] = ("images.attest", "--variant", ATTESTED)
    if not registry.ready:
        return args, None, registry.detail
    if not keys.ready:
        return args, None, keys.detail
    try:
        syft_binary()
    except SyftError as err:
        return args, None, err.one_line()
    return (*args, "--sign-with", keys.fpr), keys.env(), ""


def attest_note(seconds: float) -> str:
    """What the step cost, measured: the rehearsal's time is CI's longest test."""
    return (
        f"images.attest of {ATTESTED} took {seconds:.1f} s (syft's scan of the image is most "
        "of it; the tester's reproduce scans its rebuild once more)"
    )


def _rows(output: str, row: str) -> dict[str, str]:
    """The verdict table's fields of ``row`` (``  provenance signature  match``)."""
    found: dict[str, str] = {}
    inside = False
    for line in output.splitlines():
        if re.match(rf"^{re.escape(row)}: ", line):
            inside = True
        elif inside and not line.startswith("  "):
            break
        elif inside and (m := re.match(r"^  (\S.*?)\s{2,}(match|drift|not compared)$", line)):
            found[m[1]] = m[2]
    return found


def provenance_checks(
    t: Terminal, keys: ImageKeys, reproduced: StepOutcome | None, step: str
) -> None:
    """The tester's reproduce of rc1 verified the row's provenance as signed by the image
    key, and matched its statement and SBOM with the rebuild."""
    signed = f"provenance {ATTESTED}: signed by {keys.fpr}"
    what = f"the tester verifies {ATTESTED}'s provenance with the image key's public half: {signed}"
    why = step.removeprefix("not run: ") if step != "ok" else "reproduce did not run"
    if step != "ok" or reproduced is None:
        t.check(what, None, why)
        t.check(f"{ATTESTED}'s signed provenance and its SBOM match the rebuild", None, why)
        return
    t.check(what, signed in reproduced.stdout)
    fields = _rows(reproduced.stdout, ATTESTED)
    wanted = ("provenance signature", "provenance SBOM", "provenance commit", "SBOM packages")
    t.check(
        f"{ATTESTED}'s signed provenance and its SBOM match the rebuild ({', '.join(wanted)})",
        all(fields.get(name) == "match" for name in wanted),
        ", ".join(f"{n}: {fields.get(n, 'absent')}" for n in wanted),
    )


_LI = re.compile(r'<li class="(sbom|provenance)"([^>]*)>')


def page_evidence(t: Terminal, page: Path | None, fpr: str, step: str) -> None:
    """The rc page shows the attested row's SBOM and provenance (signed by the key), and
    none for every other published row."""
    what = f"the rc page shows {ATTESTED}'s SBOM and provenance signed by {fpr}, none elsewhere"
    if page is None or step != "ok":
        t.check(what, None, step.removeprefix("not run: ") if step != "ok" else "no page")
        return
    found = [(kind, attrs) for kind, attrs in _LI.findall(page.read_text(encoding="utf-8"))]
    provenance = [a for k, a in found if k == "provenance"]
    sboms = [a for k, a in found if k == "sbom"]
    signed = [
        a for a in provenance if f'data-signed-by="{fpr}"' in a and 'data-digest="sha256:' in a
    ]
    none = [a for a in provenance if 'data-digest=""' in a]
    counted = [a for a in sboms if 'data-digest="sha256:' in a and "data-packages=" in a]
    t.check(
        what,
        len(signed) == 1 == len(counted) and len(none) == len(provenance) - 1 > 0,
        f"{len(signed)} signed, {len(none)} none of {len(provenance)}",
    )

"""The rehearsal's rc tester: a clone of the remote, ``reproduce`` of rc1 against the
manifest, the registry and the keys the tester pinned (the tag's and note's, the images',
the signed provenance's), the rc page it writes, and a note changed after signing refused.
"""

from __future__ import annotations

import os

from release.adapters.git import GitRepo
from release.sample.rehearse_attest import page_evidence, provenance_checks
from release.sample.rehearse_base import Sandbox
from release.sample.rehearse_image_keys import image_checks
from release.sample.rehearse_report import Tags
from release.sample.rehearse_signing import MAINTAINER, Keys, tampered_note_refused
from release.sample.story import VERSION

__all__ = ["TAGS", "TesterSide"]

TAGS = Tags(f"v{VERSION}rc1", f"v{VERSION}rc2", f"v{VERSION}")


class TesterSide(Sandbox):
    """The tester's steps of the story, on the maintainer's sandbox."""

    keys: Keys

    def reproduce(self) -> None:
        t = self.t
        t.step(f"an rc tester reproduces {TAGS.rc1} from a clone of the remote")
        assert self.engine is not None and self.engine.remote is not None
        t.git(self.repo, "clone", "--quiet", str(self.engine.remote), str(self.tester))
        tagged = GitRepo(self.tester).rev(TAGS.rc1)
        t.check(
            f"the tester's clone has {TAGS.rc1} on the maintainer's commit",
            tagged is not None and tagged == self.repo.rev(TAGS.rc1),
        )
        blocked = self.no_manifest(TAGS.rc1)
        if not blocked:  # the tag's container options reach into the host: asked, not taken
            asked = t.release(self.tester, "reproduce", TAGS.rc1, *self.trust(), expect=None)
            t.check(
                f"without the tester's consent, {TAGS.rc1}'s snapshot options are refused "
                "before anything is built (exit 3)",
                asked.code == 3 and f"--allow-host {self.allow_host()}" in asked.stderr,
            )
            t.check(
                f"the tester verifies {TAGS.rc1} and its manifest: signed by {MAINTAINER}",
                f"tag {TAGS.rc1}: signed by {MAINTAINER}" in asked.stdout
                and f"manifest of {TAGS.rc1}: signed by {MAINTAINER}" in asked.stdout,
            )
        keys = self.image_keys  # rc1's images: checked against the public half too
        outcome = self.image_command(
            self.tester,
            "reproduce",
            ("reproduce", TAGS.rc1, "--jobs", "2", *self.trust(), "--require-signed",
             "--allow-host", self.allow_host(), *keys.tester_args()),
            blocked=blocked,
        )  # fmt: skip
        ids = self.matrix().ids
        self.ledger.reproduced = self.verdicts(outcome, ids, "reproduce")
        what = f"the tester's reproduce of {TAGS.rc1}: a match for {', '.join(ids)} (exit 0)"
        if not self.ran("reproduce"):
            t.check(what, None, self.ledger.steps["reproduce"].removeprefix("not run: "))
        else:
            t.check(what, all(self.ledger.reproduced[i] == "match" for i in ids))
            at = self.registry.prefix
            image_checks(t, keys, outcome, self.tester, TAGS.rc1, at, self.allow_host())
        attested = self.ledger.steps.get(f"{TAGS.rc1} images.attest", "not run")
        provenance_checks(t, keys, outcome if self.ran("reproduce") else None, attested)
        self.rc_page()
        if not blocked:
            tampered_note_refused(t, self.repo, self.tester, TAGS.rc1, self.keys, self.allow_host())

    def trust(self) -> tuple[str, ...]:
        """The tester's trust root: the maintainer's public key, pinned by the tester in a
        file beside their clone (named from it, as they would type it)."""
        return ("--trust", os.path.relpath(self.keys.allowed, self.tester))

    def rc_page(self) -> None:
        """The tester's rc page of rc1 (its verdict on it), kept beside the sandbox."""
        if self.no_manifest(TAGS.rc1):
            self.t.note(f"the rc page: not written: {self.no_manifest(TAGS.rc1)}")
            return
        out = self.sandbox.parent / f"{self.sandbox.name}-page"
        notes = "refs/notes/release/*:refs/notes/release/*"  # what reproduce read, kept here
        self.t.git(GitRepo(self.tester), "fetch", "--quiet", "origin", notes)
        written = self.t.release(self.tester, "report", TAGS.rc1, "--out", str(out), expect=None)
        self.page = out / f"{TAGS.rc1}.html" if written.code == 0 else None
        self.t.check(f"the rc page of {TAGS.rc1} is written", self.page is not None)
        attested = self.ledger.steps.get(f"{TAGS.rc1} images.attest", "not run")
        page_evidence(self.t, self.page, self.image_keys.fpr, attested)

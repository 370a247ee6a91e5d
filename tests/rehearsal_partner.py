"""A second rehearsal, cut short, for the test of two rehearsals on one engine at once
(``python -m tests.rehearsal_partner WORKDIR``, beside a whole ``release rehearse``).

It does what can collide with another rehearsal, on one variant: names of its own (its
image name, its tag of the sample's base), the sweep of killed rehearsals' tags, its own
registry on a port of its own, its own keys; rc1 signed, the drift variant built, smoked
and published, then its base changed on purpose and put back; and it tidies (its tags
removed, none of another's). What it leaves out (the other variants, the tester, rc2,
the final) the whole rehearsal beside it runs. Exit 0 when every step and check passed.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from release.errors import ReleaseError
from release.sample.rehearse import Rehearsal, _verdict
from release.sample.rehearse_base import DRIFT_VARIANT, SAMPLE_DRIFT_BASE
from release.sample.rehearse_images import OWN_PREFIX
from release.sample.rehearse_terminal import StepFailed
from release.sample.rehearse_tester import TAGS


class Partner(Rehearsal):
    def run(self) -> None:
        try:
            self.start()
            self.cut_and_pick()
            self.rc1()
            self.one_variant()
            self.own_drift()
        except (StepFailed, ReleaseError) as err:
            why = err.one_line() if isinstance(err, ReleaseError) else str(err)
            self.ledger.failures.append(why)
            self.t.say(f"rehearsal stopped: {why}")

    def one_variant(self) -> None:
        self.t.step(f"{TAGS.rc1}'s {DRIFT_VARIANT} image: build, smoke, publish")
        one = ("--variant", DRIFT_VARIANT)
        steps: list[tuple[tuple[str, ...], Mapping[str, str] | None]] = [
            (("images.build", *one), None),
            (("images.smoke", *one), None),
        ]
        if self.registry.ready:
            publish = (*one, "--registry", self.registry.prefix, *self.image_keys.publish_args())
            steps.append((("images.publish", *publish), self.image_keys.env()))
        for args, env in steps:
            if self.image_command(self.root, f"{TAGS.rc1} {args[0]}", args, env=env) is None:
                raise StepFailed(f"release {args[0]} did not succeed")

    def own_drift(self) -> None:
        t, docker = self.t, self.ledger.docker
        t.step(f"drift on purpose: another {DRIFT_VARIANT} base of its own")
        engine = docker.engine
        assert engine is not None
        ref = self.matrix().variant(DRIFT_VARIANT).base_image
        shared = engine.image_id(SAMPLE_DRIFT_BASE)
        with docker.changed_base(ref, self.sandbox / "drift-base", self.show) as swap:
            t.check(
                f"{ref} is changed, {SAMPLE_DRIFT_BASE} is not",
                engine.image_id(ref) == swap.drifted
                and engine.image_id(SAMPLE_DRIFT_BASE) == shared,
            )
        t.check(
            f"{ref} is the original base again, the changed one removed",
            swap.restored and swap.removed and swap.original == shared,
        )

    def result(self) -> None:
        self.t.step("the result")
        self.t.end_step()

    def images_made(self) -> list[str]:
        """Every tag in the engine under this rehearsal's own names."""
        if not self.own:
            return []
        return sorted(self.ledger.docker.tags(f"{OWN_PREFIX}{self.own}/*"))


def main(argv: list[str]) -> int:
    base = Path(argv[0])
    base.mkdir(parents=True, exist_ok=True)
    sandbox = Path(tempfile.mkdtemp(prefix="release-rehearsal-", dir=base)).resolve()
    partner = Partner(sandbox, print)
    try:
        partner.run()
        partner.result()
    finally:
        made = partner.images_made()
        partner.tidy(keep=False)
        left = partner.images_made()
        print(f"partner made: {', '.join(made) or 'none'}; left: {', '.join(left) or 'none'}")
    return 0 if _verdict(partner, partner.t.say) and made and not left else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

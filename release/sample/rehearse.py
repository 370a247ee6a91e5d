"""``rehearse``: the v0.31.0rc1 story, end to end, on the bundled sample engine, in a
throwaway sandbox with a local bare remote.

Every step runs the real command as a maintainer, or an rc tester, would type it:

1. the story's history on main (:mod:`release.sample.story`); ``status``;
2. ``cut 0.31.0``; main moves on; picks: #59102 conflicts and is resolved by hand, then
   continued; #59118 (the snapshot rule ``!=12.*``) with a reason; the feature refused;
3. ``tag --sign``: v0.31.0rc1, signed with a throwaway SSH key made in the sandbox (the
   manifest note is signed by the same key when it is recorded);
4. its images: ``images.build`` (the CUDA 12.x variants without the snapshot runtime
   step, cu130 and the ROCm and CPU variants, each on its own Dockerfile, with it; cu129
   for linux/amd64 and, under emulation, linux/arm64), ``images.smoke`` (every platform;
   each accelerator's layout on its stand-in, its device check not run),
   ``images.snapshot`` (cu130, rocm and cpu: the rule omits the CUDA 12.x ones),
   ``images.publish`` to a release registry of the sandbox's own (Debian's
   docker-registry on 127.0.0.1: per platform, then one multi-arch index per tag),
   ``images.attest`` of rc1's cu128 (its SBOM, and its provenance signed by the image
   key: :mod:`release.sample.rehearse_attest`), ``manifest`` (recorded as the tag's git
   note); ``push`` sends tags, branch and notes refs in one atomic push;
5. an rc tester clones the remote and reproduces v0.31.0rc1, against the manifest and
   the images the registry serves, the tag and note verified against the key's public
   half the tester pinned, and cu128's signed provenance before anything is built: a
   match (:mod:`release.sample.rehearse_tester`); the rc page of v0.31.0rc1, with each
   image's signer, SBOM and provenance; a note changed on the remote after signing is
   refused (exit 7) and put back; the GitHub release of v0.31.0rc1 as a ``--dry-run``
   plan (the sandbox reaches no GitHub);
6. a late fix from the picks file, rc2, its images (every variant rebuilt: the version
   is baked into each image);
7. ``promote``: v0.31.0 on rc2's commit, rc2's published digests given the final's tags
   inside the registry (no pull, no rebuild, no blob upload); push; the notes; its GitHub
   release as a plan;
8. drift on purpose: the cu130 base replaced, the tester's ``reproduce --variant cu130``
   says drift (exit 1); the original base is put back whatever happens;
9. the result: the checks, a table per variant, the time per step.

With no Docker Engine the image steps say *not run*, and how to start one; without
docker-registry and skopeo, the registry steps (and promote is by image id); without
arm64 emulation, cu129 is built for the engine's own platform only, and it says so. The
git steps and their checks run as ever. Without ``--keep`` the sandbox and the image tags the
rehearsal made are removed afterwards; tags that were there before are left as they were.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from release.adapters.emulation import emulation_problem
from release.core.accelerator import Accelerator
from release.core.say import Say
from release.errors import ReleaseError
from release.sample.rehearse_attest import attest_args, attest_note
from release.sample.rehearse_base import DRIFT_CUDA, DRIFT_VARIANT, SAMPLE_DRIFT_BASE
from release.sample.rehearse_github import github_plan
from release.sample.rehearse_image_keys import ImageKeys
from release.sample.rehearse_images import OWN_PREFIX, DockerSide, own_id
from release.sample.rehearse_registry import RegistrySide, registry_checks
from release.sample.rehearse_report import (
    build_notes,
    manifest_of,
    result_table,
    snapshot_note,
    verify,
)
from release.sample.rehearse_signing import make_keys
from release.sample.rehearse_terminal import StepFailed, not_run_reasons, shown
from release.sample.rehearse_tester import TAGS, TesterSide
from release.sample.story import (
    AFTER_CUT,
    LATE_FIX,
    MULTI_ARCH,
    RESOLVED_SCHEDULER,
    VERSION,
    OwnNames,
    make_story_engine,
)

__all__ = ["Rehearsal", "rehearse"]

BRANCH = f"releases/v{VERSION}"
PICKS_FILE = "release-picks.txt"
PICKS = f"# picks for {TAGS.rc2}\n#59140 critical\n#59102 regression\n"
IMAGE_STEPS: tuple[tuple[str, ...], ...] = (
    ("images.build", "--jobs", "2"),
    ("images.smoke",),
    ("images.snapshot",),
    ("images.publish",),  # --registry: the sandbox's
    ("images.attest",),  # rc1's, of one row: its SBOM and signed provenance
    ("manifest",),
)


class Rehearsal(TesterSide):
    def run(self) -> None:
        """The story; a command that exits otherwise than expected stops it (the result
        and the checks are still shown)."""
        try:
            self.start()
            self.cut_and_pick()
            self.rc1()
            self.images(TAGS.rc1)
            self.reproduce()
            github_plan(self.t, self.root, TAGS.rc1, prerelease=True)
            self.rc2()
            self.images(TAGS.rc2)
            self.final()
            self.drift()
        except (StepFailed, ReleaseError) as err:
            why = err.one_line() if isinstance(err, ReleaseError) else str(err)
            self.ledger.failures.append(why)
            self.t.say(f"rehearsal stopped: {why}")

    # -- the story -------------------------------------------------------------------
    def start(self) -> None:
        t = self.t
        t.step("a sandbox: the engine's history on main, a bare remote")
        t.note(f"sandbox: {self.sandbox}")
        arm = emulation_problem("linux/arm64")
        self.own = own_id(self.sandbox)
        self.names = OwnNames(
            f"{OWN_PREFIX}{self.own}/tinyengine",
            f"{OWN_PREFIX}{self.own}/{SAMPLE_DRIFT_BASE.split('/', 1)[1]}",
        )
        self.engine = make_story_engine(self.sandbox, arm64=arm is None, own=self.names)
        t.note(
            f"{MULTI_ARCH} is built for linux/amd64 and linux/arm64 (arm64 under emulation)"
            if arm is None
            else f"{MULTI_ARCH} for the engine's platform only: not run: no arm64 emulation ({arm})"
        )
        assert self.engine.remote is not None
        t.note(
            f"{self.repo.history.count(until='HEAD')} commits on main, up to the cut; "
            f"bare remote {shown(self.engine.remote, self.sandbox)}"
        )
        docker = self.own_names(DockerSide.detect())
        t.note(docker.detail if docker.ready else f"image steps: not run: {docker.not_run}")
        self.registry = RegistrySide.start(self.sandbox / "registry", docker)
        t.note(
            self.registry.detail
            if self.registry.ready
            else f"publish: not run: {self.registry.detail}"
        )
        self.image_keys = ImageKeys.make(t, self.sandbox / "image-keys", self.registry)
        self.image_name = self.matrix().name
        self.images_before = docker.tags(self.image_name)
        self.ledger.docker = docker  # only now: tidy() removes what is not in images_before
        t.release(self.root, "status")

    def own_names(self, docker: DockerSide) -> DockerSide:
        """On an engine: the tags killed rehearsals left removed, this one recorded, and the
        drift variant's base made a tag of this rehearsal's own. Where that base cannot be
        had, the image steps are not run, and say why (nothing is pulled by a name of ours)."""
        if not docker.ready:
            return docker
        t = self.t
        if docker.heal_base(SAMPLE_DRIFT_BASE):  # a changed shared base an older version left
            t.note(f"{SAMPLE_DRIFT_BASE} was the changed base a killed rehearsal left: untagged")
        swept = docker.sweep()
        if swept:
            t.note(f"removed {len(swept)} tag(s) of killed rehearsals: {', '.join(swept)}")
        docker.record(self.own, self.sandbox)
        self.recorded = True
        try:
            image = docker.own_base(
                SAMPLE_DRIFT_BASE, self.names.drift_base, Accelerator("cuda", DRIFT_CUDA), t.note
            )
        except ReleaseError as err:
            why = f"the {DRIFT_VARIANT} base could not be had: {err.one_line()}"
            return replace(docker, blocked=why)
        t.note(
            f"{self.names.drift_base}: {SAMPLE_DRIFT_BASE} ({image[7:19]}) under this "
            "rehearsal's own name, the base its drift step changes; images: "
            f"{self.names.image}"
        )
        return docker

    def cut_and_pick(self) -> None:
        t, engine = self.t, self.engine
        assert engine is not None
        t.step(f"cut {BRANCH}; main moves on; picks")
        t.release(self.root, "cut", VERSION, "--no-switch")
        cut_at = self.repo.head()
        for change in AFTER_CUT:
            engine.commit(change)
        t.note(
            "main moved on: #59087 (a rename), #59102 (a fix written against it), "
            "#59110 (a feature), #59118 (the snapshot rule `!=12.*`, by a maintainer)"
        )
        t.git(self.repo, "push", "--quiet", "origin", "main")
        t.git(self.repo, "switch", "--quiet", BRANCH)
        t.release(self.root, "pick", "#59102 #59031", "--reason", "regression", "--dry-run")
        t.release(self.root, "pick", "#59102", "--reason", "regression", expect=4)
        t.check(
            "the conflict left the branch at the cut and the tree clean",
            self.repo.head() == cut_at and not self.repo.worktree.dirty_paths(),
        )
        t.note("resolving #59102 by hand: it was written against #59087's rename, not picked")
        t.git(self.repo, "cherry-pick", "-x", engine.shas[59102], check=False)
        (self.root / "tinyengine" / "scheduler.py").write_text(RESOLVED_SCHEDULER, "utf-8")
        t.typed(self.root, "$EDITOR tinyengine/scheduler.py   # the fix, on the old names")
        t.git(self.repo, "add", "tinyengine/scheduler.py")
        t.release(self.root, "pick", "--continue")
        t.release(self.root, "pick", "#59118", "--reason", "release-only")
        t.release(self.root, "pick", "#59110", expect=3)  # feature work is refused
        t.check(f"{BRANCH} has #59118's snapshot rule `!=12.*`", self.rule() == "!=12.*")

    def rc1(self) -> None:
        self.t.step(f"tag {TAGS.rc1}, signed")
        self.keys = make_keys(self.t, self.sandbox, self.repo)
        self.t.release(self.root, "tag", "--sign")

    def images(self, tag: str) -> None:
        t = self.t
        attest = ", attest" if tag == TAGS.rc1 else ""
        t.step(f"{tag}'s images: build, smoke, snapshot, publish{attest}, manifest; push")
        blocked = ""
        for args in IMAGE_STEPS:
            env = None  # publish and attest sign with the maintainer's keyring
            if args[0] == "images.attest":
                if tag != TAGS.rc1:
                    continue
                args, env, why = attest_args(self.registry, self.image_keys)
                if why:
                    self.skip(f"{tag} {args[0]}", args, why)
                    continue
            elif args[0] == "images.publish":
                if not self.registry.ready:
                    self.skip(f"{tag} {args[0]}", args, self.registry.detail)
                    continue
                args = (*args, "--registry", self.registry.prefix, *self.image_keys.publish_args())
                env = self.image_keys.env()
            started = time.perf_counter()
            outcome = self.image_command(
                self.root, f"{tag} {args[0]}", args, blocked=blocked, env=env
            )
            if outcome is not None and args[0] == "images.attest":
                t.note(attest_note(time.perf_counter() - started))
            if outcome is None:
                blocked = blocked or f"release {args[0]} did not succeed"
            elif args[0] == "images.build":
                for line in build_notes(self.matrix(), tag, tag == TAGS.rc1, outcome.stdout):
                    self.t.note(line)
            elif args[0] == "images.snapshot":
                self.t.note(snapshot_note(self.matrix()))
        t.release(self.root, "push")

    def rc2(self) -> None:
        t, engine = self.t, self.engine
        assert engine is not None
        t.step(f"a late fix on main, picked from the picks file; tag {TAGS.rc2}")
        t.git(self.repo, "switch", "--quiet", "main")
        engine.commit(LATE_FIX)
        t.note(f"main: {LATE_FIX.subject}")
        t.git(self.repo, "push", "--quiet", "origin", "main")
        t.git(self.repo, "switch", "--quiet", BRANCH)
        (self.root / PICKS_FILE).write_text(PICKS, encoding="utf-8")
        t.typed(self.root, f"cat {PICKS_FILE}   # #59102 is on the branch already")
        for line in PICKS.splitlines():
            t.say("    " + line)
        t.release(self.root, "status")
        t.release(self.root, "pick", "--file", PICKS_FILE)
        t.release(self.root, "tag")
        t.release(self.root, "notes", "--since", TAGS.rc1)

    def final(self) -> None:
        t = self.t
        how = "by digest in the registry" if self.registry.ready else "by id"
        t.step(f"the final: {TAGS.final} on {TAGS.rc2}'s commit, its images {how}; notes")
        t.release(self.root, "promote", "--dry-run")
        before = self.registry.traffic()
        promoted = t.release(self.root, "promote", expect=None)
        after = self.registry.traffic()
        if before is not None and after is not None:
            self.promote_uploads = after.uploads - before.uploads
        if promoted.code != 0:  # refused before any change, or stopped after its git side
            self.ledger.failures.append(f"release promote exited {promoted.code}")
        t.release(self.root, "push")
        self.notes = t.release(self.root, "notes", "--view", "final", "--until", TAGS.final).stdout
        github_plan(t, self.root, TAGS.final, prerelease=False)

    def drift(self) -> None:
        t, docker = self.t, self.ledger.docker
        t.step(f"drift on purpose: another {DRIFT_VARIANT} base; the tester reproduces again")
        ref = self.matrix().variant(DRIFT_VARIANT).base_image
        t.note(f"{DRIFT_VARIANT}'s base, as [tool.release.images.variants] names it: {ref}")
        blocked = self.no_manifest(TAGS.rc1)
        why = docker.not_run if not docker.ready else blocked
        args = (
            "reproduce",
            TAGS.rc1,
            "--variant",
            DRIFT_VARIANT,
            "--allow-host",
            self.allow_host(),
        )
        if why:
            self.skip("drift", args, why)
            t.check(f"reproduce on a changed {DRIFT_VARIANT} base says drift", None, why)
            return
        swap, outcome = None, None
        try:
            with docker.changed_base(ref, self.sandbox / "drift-base", self.show) as swap:
                outcome = self.image_command(
                    self.tester,
                    "drift",
                    args,
                    expect=1,
                )
        except ReleaseError as err:
            self.ledger.failures.append(f"the changed base: {err.one_line()}")
        found = self.verdicts(outcome, (DRIFT_VARIANT,), "drift")
        self.ledger.drifted = found
        t.check(
            f"reproduce on a changed {DRIFT_VARIANT} base: a drift verdict, exit 1",
            outcome is not None and found[DRIFT_VARIANT].startswith("drift"),
        )
        t.check(
            f"{ref} is the original base again"
            + (f" ({swap.original[7:19]})" if swap else "")
            + ", the changed one removed",
            swap is not None and swap.restored and swap.removed,
        )

    def result(self) -> None:
        t = self.t
        t.step("the result")
        assert self.engine is not None and self.engine.remote is not None
        matrix = self.matrix()
        verify(t, self.repo, self.engine.remote, matrix, TAGS, self.notes, self.ledger)
        if self.ledger.docker.ready:
            manifests = {tag: manifest_of(self.repo, tag)[0] for tag in (TAGS.rc2,)}
            registry_checks(
                t, self.registry, matrix, manifests, TAGS.final, TAGS.rc2, self.promote_uploads
            )
        t.end_step()
        t.say("")
        for line in result_table(self.repo, matrix, TAGS, self.ledger, t):
            t.say(line)

    # -- afterwards --------------------------------------------------------------------
    def tidy(self, keep: bool) -> None:
        """Remove the sandbox and the image tags made here, unless ``keep``."""
        docker, say, name = self.ledger.docker, self.t.say, self.image_name
        self.registry.stop()
        self.image_keys.stop()
        if self.page is not None:
            say(f"the rc page of {TAGS.rc1}: {self.page}")
        if keep:
            say(f"sandbox kept at {self.sandbox}")
            if docker.ready:
                made = docker.made_since(name, self.images_before)
                say(f"images kept: {', '.join(made) or 'none'}")
            return
        if docker.ready:
            try:
                changed = docker.put_back(name, self.images_before)
                docker.untag(self.names.drift_base)
                say(
                    f"removed the {len(changed)} image tag(s) of {name} the rehearsal made "
                    f"and its base tag {self.names.drift_base}"
                )
            except ReleaseError as err:
                say(f"could not remove the image tags of {name} made here: {err.one_line()}")
        shutil.rmtree(self.sandbox, ignore_errors=True)
        if self.recorded:
            DockerSide.forget(self.own)


def rehearse(*, keep: bool = False, workdir: str | None = None, say: Say = print) -> bool:
    """The whole story in a new sandbox (under ``workdir`` when given); True when every
    check that ran passed and no step failed."""
    base = Path(workdir) if workdir else None
    if base is not None:
        base.mkdir(parents=True, exist_ok=True)
    sandbox = Path(tempfile.mkdtemp(prefix="release-rehearsal-", dir=base)).resolve()
    rehearsal = Rehearsal(sandbox, say)
    try:
        rehearsal.run()
        if rehearsal.engine is not None:
            rehearsal.result()
    finally:
        rehearsal.tidy(keep)
    return _verdict(rehearsal, rehearsal.t.say)


def _verdict(rehearsal: Rehearsal, say: Say) -> bool:
    checks, failures = rehearsal.t.checks, rehearsal.ledger.failures
    run = [c for c in checks if c.ok is not None]
    passed = sum(1 for c in run if c.ok)
    ok = passed == len(run) and not failures
    skipped = len(checks) - len(run)
    say(
        f"rehearsal {'passed' if ok else 'FAILED'}: {passed}/{len(run)} checks"
        + (f" ({skipped} not run: {not_run_reasons(checks)})" if skipped else "")
    )
    for failure in failures:
        say(f"  failed: {failure}")
    return ok

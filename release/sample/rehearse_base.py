"""The rehearsal's sandbox and its image steps: what the story (:mod:`.rehearse`) runs
on, and how an image step runs or says why it is *not run* (no engine, a step it needs
failed, no registry)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from release.adapters.config_file import load_config
from release.adapters.git import GitRepo
from release.core.host_access import asked_by, spelt
from release.core.matrix import ImageMatrix
from release.core.say import Say
from release.errors import ConfigError
from release.sample import SampleEngine
from release.sample.rehearse_image_keys import ImageKeys
from release.sample.rehearse_images import DockerSide
from release.sample.rehearse_registry import RegistrySide
from release.sample.rehearse_report import Ledger, manifest_of, parse_verdicts
from release.sample.rehearse_terminal import StepOutcome, Terminal
from release.sample.story import OwnNames

__all__ = ["DRIFT_CUDA", "DRIFT_VARIANT", "SAMPLE_DRIFT_BASE", "Sandbox"]

DRIFT_VARIANT = "cu130"
DRIFT_CUDA = "13.0.1"
SAMPLE_DRIFT_BASE = "nvidia/cuda:13.0.1-base-ubuntu24.04"  # the sample's; a tag of it is ours


class Sandbox:
    """The rehearsal's state and how it runs a step: the engine repository, the ledger of
    the image steps, and ``release ARGS`` when what it needs is there (else *not run*)."""

    def __init__(self, sandbox: Path, say: Say) -> None:
        self.sandbox = sandbox
        self.t = Terminal(say, sandbox)
        self.ledger = Ledger(DockerSide(None, "not asked yet"), drifted={DRIFT_VARIANT: "not run"})
        self.engine: SampleEngine | None = None
        self.tester = sandbox / "tester"
        self.notes = ""
        self.image_name = ""  # the sample's [tool.release.images] name
        self.own = ""  # this rehearsal's id: its names are rehearsal-<id>/...
        self.names = OwnNames("", "")
        self.recorded = False  # its id is in the cache's record of running rehearsals
        self.images_before: dict[str, str] = {}  # its tags before the rehearsal, and their ids
        self.registry = RegistrySide(None, "not started yet")
        self.image_keys = ImageKeys(detail="not made yet")  # the images' signing keys
        self.promote_uploads: int | None = None  # blob uploads promote asked of the registry
        self.page: Path | None = None  # the rc page, kept when the sandbox is removed

    @property
    def repo(self) -> GitRepo:
        assert self.engine is not None
        return self.engine.repo

    @property
    def root(self) -> Path:
        return self.repo.root

    def matrix(self) -> ImageMatrix:
        """The image matrix as the checked-out branch has it (the rule changes with #59118)."""
        matrix = load_config(self.root).matrix
        if matrix is None:
            raise ConfigError("the sample engine has no [tool.release.images]")
        return matrix

    # -- image steps -----------------------------------------------------------------
    def image_command(
        self,
        where: Path,
        key: str,
        args: tuple[str, ...],
        *,
        blocked: str = "",
        expect: int = 0,
        env: Mapping[str, str] | None = None,
    ) -> StepOutcome | None:
        """``release ARGS`` when an engine answers and nothing it needs failed; its outcome
        when it exits ``expect``, else None (the failure recorded)."""
        docker = self.ledger.docker
        why = docker.not_run if not docker.ready else blocked
        if why:
            self.skip(key, args, why)
            return None
        outcome = self.t.release(where, *args, expect=None, env=env)
        if outcome.code != expect:
            self.ledger.steps[key] = f"FAILED (exit {outcome.code})"
            self.ledger.failures.append(f"release {' '.join(args)} exited {outcome.code}")
            return None
        self.ledger.steps[key] = "ok"
        return outcome

    def skip(self, key: str, args: tuple[str, ...], why: str) -> None:
        self.ledger.steps[key] = f"not run: {why}"
        self.t.note(f"release {' '.join(args)}: not run: {why}")

    def ran(self, key: str) -> bool:
        return not self.ledger.steps.get(key, "").startswith("not run")

    def allow_host(self) -> str:
        """The tester's consent to the sample's snapshot options (CRIU's capabilities)."""
        matrix = self.matrix()
        return spelt(
            o for opts in asked_by(matrix, matrix.variants, gpu=False).values() for o in opts
        )

    def no_manifest(self, tag: str) -> str:
        if manifest_of(self.repo, tag)[0] is None:
            return f"{tag} has no manifest (an image step before failed)"
        return ""

    def verdicts(
        self, outcome: StepOutcome | None, ids: tuple[str, ...], key: str
    ) -> dict[str, str]:
        said = self.ledger.steps.get(key, "not run")
        if outcome is None:
            return dict.fromkeys(ids, "not run" if said.startswith("not run") else said)
        found = parse_verdicts(outcome.output, ids)
        return {i: found.get(i, "no verdict") for i in ids}

    def rule(self) -> str:
        snapshot = self.matrix().snapshot
        return snapshot.selector.text if snapshot is not None else "(none)"

    def show(self, command: str) -> None:
        self.t.typed(self.root, command)

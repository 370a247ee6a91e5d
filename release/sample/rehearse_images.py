"""The rehearsal and the Docker Engine: whether one answers, which image tags the
rehearsal made (only those are removed afterwards; a tag that was there before is put
back where it pointed), and a base image swapped for another on purpose, then put back.

On an engine others use too, a rehearsal keeps to names of its own: its images are
``rehearsal-<id>/tinyengine`` and the base its drift step changes is
``rehearsal-<id>/cuda:13.0.1-base-ubuntu24.04``, a tag of its own on the sample's base
(:meth:`DockerSide.own_base`). No build elsewhere sees the changed base, and two
rehearsals at once never touch each other's tags. A rehearsal records its id and sandbox
in the cache (``rehearsals/<id>``) while it runs; one killed before it could tidy leaves
tags whose sandbox is gone, and the next rehearsal removes them
(:meth:`DockerSide.sweep`). A kept sandbox keeps its tags.

The swap is what a changed base looks like to an rc tester: the variant's base
reference names an image built from the base plus one extra file. The original is
re-tagged by its id when the ``with`` block ends, whatever ends it.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from release.adapters.cache import user_cache_dir
from release.adapters.engine import ContainerEngine
from release.adapters.engine_cli import START_HINT
from release.adapters.process import last_line
from release.core.accelerator import Accelerator
from release.errors import EngineError, ReleaseError
from release.images.standin import ensure_base

__all__ = [
    "DRIFT_LABEL",
    "NO_ENGINE",
    "OWN_PREFIX",
    "START_ENGINE",
    "BaseSwap",
    "DockerSide",
    "own_id",
]

NO_ENGINE = "no Docker Engine answers"
START_ENGINE = "sudo dockerd >/tmp/dockerd.log 2>&1 &"
DRIFT_FILE = "rehearsal-drift.txt"
DRIFT_LABEL = "org.release.rehearsal"
OWN_PREFIX = "rehearsal-"  # rehearsal-<id>/...: the names one rehearsal makes its own
_ID = re.compile(r"[a-z0-9]{4,32}")


def own_id(sandbox: Path) -> str:
    """The rehearsal's id from its sandbox's name (``release-rehearsal-ab12cd34``): what
    a reference may hold of it, lower-case letters and digits."""
    found = re.sub(r"[^a-z0-9]", "", sandbox.name.removeprefix("release-rehearsal-").lower())
    if not _ID.fullmatch(found):
        raise ValueError(f"no rehearsal id in the sandbox's name {sandbox.name!r}")
    return found


def _records() -> Path:
    return user_cache_dir() / "rehearsals"


@dataclass
class BaseSwap:
    ref: str
    original: str  # image id
    drifted: str  # image id
    restored: bool = False  # ref names the original again
    removed: bool = False  # the changed base is gone


@dataclass(frozen=True)
class DockerSide:
    engine: ContainerEngine | None
    detail: str  # the engine's description, or why none answers
    blocked: str = ""  # why the image steps cannot run though an engine answers

    @classmethod
    def detect(cls) -> DockerSide:
        try:
            engine = ContainerEngine.detect()
            version = engine.ping()
        except ReleaseError as err:
            return cls(None, err.one_line())
        return cls(engine, f"Docker Engine {version}; client {engine.description}")

    @property
    def ready(self) -> bool:
        return self.engine is not None and not self.blocked

    @property
    def not_run(self) -> str:
        """What an image step says when it cannot run: why (no engine answers: how to
        start one)."""
        return self.blocked or f"{NO_ENGINE} (start one: {START_ENGINE})"

    def _engine(self) -> ContainerEngine:
        if self.engine is None:
            raise EngineError(f"{NO_ENGINE}; {START_HINT}")
        return self.engine

    # -- the tags the rehearsal makes ------------------------------------------------
    def tags(self, name: str) -> dict[str, str]:
        """Every ``name:tag`` in the engine and the image id it points at."""
        if self.engine is None:
            return {}
        listing = self.engine.run(
            [
                "images",
                "--no-trunc",
                "--format",
                "{{.Repository}}:{{.Tag}}\t{{.ID}}",
                "--filter",
                f"reference={name}",
            ],
            timeout=60,
        ).stdout
        pairs = (line.split("\t", 1) for line in listing.splitlines() if "\t" in line)
        return {ref: image for ref, image in pairs if not ref.endswith(":<none>")}

    def made_since(self, name: str, before: dict[str, str]) -> list[str]:
        """The tags of ``name`` that are new or point elsewhere since ``before``."""
        return sorted(ref for ref, image in self.tags(name).items() if before.get(ref) != image)

    def put_back(self, name: str, before: dict[str, str]) -> list[str]:
        """Remove the tags of ``name`` made since ``before`` and point the tags that were
        there before back at their images (where those still exist); the tags changed."""
        engine = self._engine()
        changed = self.made_since(name, before)
        back = [ref for ref in changed if ref in before and engine.image_id(before[ref])]
        for ref in back:  # first: an image whose last tag then goes is removed with it
            engine.tag(before[ref], [ref])
        for ref in changed:
            if ref not in back:
                engine.remove_image(ref)
        return changed

    # -- names of its own ------------------------------------------------------------
    def own_base(
        self, shared: str, own: str, accelerator: Accelerator, say: Callable[[str], None]
    ) -> str:
        """``own`` made a tag of ``shared`` (present, pulled or a stand-in made, as a build
        would have it); ``own``'s image id. ``shared`` itself is left as it was."""
        engine = self._engine()
        base = ensure_base(engine, shared, accelerator, say)
        engine.tag(base.id, [own])
        return base.id

    def untag(self, ref: str) -> None:
        """``ref`` removed, a name of the rehearsal's own: the image stays where another
        name points at it."""
        if ref.startswith(OWN_PREFIX):
            self._engine().remove_image(ref)

    @staticmethod
    def record(rehearsal: str, sandbox: Path) -> None:
        """Note that rehearsal ``rehearsal`` runs in ``sandbox`` (for :meth:`sweep`)."""
        records = _records()
        records.mkdir(parents=True, exist_ok=True)
        (records / rehearsal).write_text(str(sandbox) + "\n", encoding="utf-8")

    @staticmethod
    def forget(rehearsal: str) -> None:
        (_records() / rehearsal).unlink(missing_ok=True)

    def sweep(self) -> list[str]:
        """The tags of rehearsals killed before they could tidy (their sandbox is gone),
        removed; each such rehearsal forgotten. The tags removed."""
        records = _records()
        if self.engine is None or not records.is_dir():
            return []
        removed: list[str] = []
        for record in sorted(records.iterdir()):
            if not _ID.fullmatch(record.name):
                continue
            sandbox = record.read_text(encoding="utf-8", errors="replace").strip()
            if sandbox and Path(sandbox).exists():
                continue  # running, or kept: its tags are its own
            for ref in sorted(self.tags(f"{OWN_PREFIX}{record.name}/*")):
                self.engine.remove_image(ref)
                removed.append(ref)
            record.unlink(missing_ok=True)
        return removed

    # -- a changed base ------------------------------------------------------------
    def heal_base(self, ref: str) -> bool:
        """A rehearsal killed while ``ref`` named the changed base (SIGKILL leaves no time
        to put it back): untag it, so the next build makes the base again. True if so."""
        if self.engine is None:
            return False
        data = self.engine.inspect_image(ref)
        if data is None or data.labels.get(DRIFT_LABEL) != "drift":
            return False
        self.engine.remove_image(ref)
        return True

    @contextlib.contextmanager
    def changed_base(
        self, ref: str, scratch: Path, show: Callable[[str], None]
    ) -> Iterator[BaseSwap]:
        """``ref`` names the base plus one extra file while inside; afterwards the original
        image again (by id), and the extra image is removed."""
        engine = self._engine()
        original = engine.image_id(ref)
        if original is None:
            raise EngineError(f"{ref} is not in this engine: there is no base to change")
        drifted = self._build_drift(engine, ref, scratch)
        show(f"docker build {scratch.name}   # FROM {ref}, plus /etc/{DRIFT_FILE}: {drifted[7:19]}")
        show(f"docker tag {drifted[7:19]} {ref}   # was {original[7:19]}")
        swap = BaseSwap(ref, original, drifted)
        try:
            engine.tag(drifted, [ref])
            yield swap
        finally:
            show(f"docker tag {original[7:19]} {ref}   # the original base again")
            engine.tag(original, [ref])
            engine.remove_image(drifted)
            swap.restored = engine.image_id(ref) == original
            swap.removed = engine.inspect_image(drifted) is None

    @staticmethod
    def _build_drift(engine: ContainerEngine, ref: str, scratch: Path) -> str:
        scratch.mkdir(parents=True, exist_ok=True)
        (scratch / DRIFT_FILE).write_text("the base changed on purpose\n", encoding="utf-8")
        dockerfile = scratch / "Dockerfile"
        dockerfile.write_text(f"FROM {ref}\nCOPY {DRIFT_FILE} /etc/{DRIFT_FILE}\n", "utf-8")
        iidfile, log = scratch / "image.id", scratch / "build.log"
        result = engine.build(
            context=scratch,
            dockerfile=dockerfile,
            build_args={},
            labels={DRIFT_LABEL: "drift"},
            iidfile=iidfile,
            platform=None,
            log=log,
            timeout=300,
        )
        if not result.ok or not iidfile.exists():
            said = log.read_text(errors="replace") if log.exists() else result.stderr
            raise EngineError(f"could not build the changed base: {last_line(said, 'no output')}")
        return iidfile.read_text(encoding="utf-8").strip()

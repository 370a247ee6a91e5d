"""The container engine adapter: the only module that runs ``docker`` (and the tools that
talk to the engine themselves, such as container-structure-test).

Every call goes through :meth:`ContainerEngine.run`, which echoes the command when asked
(``RELEASE_ECHO``), enforces a timeout, runs docker in a process group of its own (killed
on timeout, Ctrl-C or any failure, and dying with this process) and turns failures into
:class:`EngineError`; one whose output is read as docker writes it goes through
:meth:`~ContainerEngine.stream`, the same but for the timeout. Which CLI, and how it
builds, is chosen once (:mod:`release.adapters.engine_cli`). Every container and image
made here is ``org.release.managed``, and every container names its owner: the next run
removes what a killed one left (:mod:`release.adapters.leftovers`). Workflows use the
named methods; they never spell docker argv.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Any, TypeVar

from release.adapters import leftovers, process
from release.adapters.engine_cli import START_HINT, choose_cli
from release.adapters.image_info import ImageInfo
from release.adapters.leftovers import MANAGED_LABEL
from release.adapters.process import Result
from release.errors import EngineError

__all__ = ["MANAGED_LABEL", "ContainerEngine", "RunResult", "gpu_present"]

RunResult = Result  # what every engine command answers
_Inspected = dict[str, ImageInfo | None]  # ref -> what docker says of it, None where missing
_T = TypeVar("_T")


class ContainerEngine:
    def __init__(self, cli: str, *, builder: str, description: str) -> None:
        self.cli = cli
        self.builder = builder  # "buildx" or "classic-buildkit"
        self.description = description
        self._ahead: tuple[frozenset[str], Future[_Inspected]] | None = None
        self._platform: str | None = None

    def kill_all(self) -> None:
        process.stop_all()  # every docker still running (after Ctrl-C in the main thread)

    @classmethod
    def detect(cls, env: Mapping[str, str] | None = None) -> ContainerEngine:
        """The first docker CLI that can build with BuildKit (see :func:`choose_cli`)."""
        cli, builder, description = choose_cli(env)
        return cls(cli, builder=builder, description=description)

    # -- the choke point -------------------------------------------------------
    def run(
        self,
        args: Sequence[str],
        *,
        timeout: float | None = None,
        check: bool = True,
        stdin: str | None = None,
        env: Mapping[str, str] | None = None,
        log: Path | None = None,
        on_timeout: Callable[[], None] | None = None,
    ) -> Result:
        result = self.run_tool(
            [self.cli, *args], timeout=timeout, stdin=stdin, env=env, log=log, on_timeout=on_timeout
        )
        if check and not result.ok:
            raise EngineError(self._failure(args, result, log))
        return result

    def run_tool(
        self,
        argv: Sequence[str],
        *,
        timeout: float | None = None,
        stdin: str | None = None,
        env: Mapping[str, str] | None = None,
        log: Path | None = None,
        on_timeout: Callable[[], None] | None = None,
    ) -> Result:
        """Run a program that talks to the engine (docker itself, container-structure-test)."""
        process.echo(["docker", *argv[1:]] if argv[0] == self.cli else argv)
        return process.run(
            argv,
            error=EngineError,
            env=env,
            stdin=stdin,
            timeout=timeout,
            log=log,
            own_group=True,
            on_timeout=on_timeout,
        )

    def stream(self, args: Sequence[str]) -> process.Stream:
        """``docker ARGS`` whose output is read as docker writes it (no timeout: it lasts as
        long as the reading; leaving the ``with`` block stops it)."""
        process.echo(["docker", *args])
        return process.stream([self.cli, *args], error=EngineError, own_group=True)

    def _failure(self, args: Sequence[str], result: Result, log: Path | None) -> str:
        if result.timed_out:
            return f"docker {args[0]} timed out after {result.seconds:.0f}s"
        text = (result.stderr or result.stdout).strip()
        if log is not None and log.exists():
            text = log.read_text(errors="replace").strip()
        if _unreachable(text):
            return f"no Docker Engine is reachable ({process.last_line(text)}); {START_HINT}"
        return f"docker {args[0]} failed: {process.last_line(text)}"

    # -- queries -----------------------------------------------------------------
    def ping(self) -> str:
        result = self.run(["version", "--format", "{{.Server.Version}}"], timeout=20, check=False)
        if not result.ok or not result.stdout.strip():
            raise EngineError(
                f"no Docker Engine is reachable ({process.last_line(result.stderr) or 'no answer'}); {START_HINT}"
            )
        return result.stdout.strip()

    def platform(self) -> str:  # the engine's own, os/arch (asked once)
        if self._platform is None:
            said = self.run(["version", "--format", "{{.Server.Os}}/{{.Server.Arch}}"], timeout=20)
            self._platform = said.stdout.strip()
        return self._platform

    def inspect_image(self, ref: str) -> ImageInfo | None:
        result = self.run(["image", "inspect", ref], check=False, timeout=60)
        if not result.ok:
            if "No such image" in result.stderr or "No such object" in result.stderr:
                return None
            if "Cannot connect" in result.stderr:
                raise EngineError(self._failure(["image"], result, None))
            return None
        data = json.loads(result.stdout)
        first = data[0] if isinstance(data, list) and data else None
        return ImageInfo.of(first) if isinstance(first, dict) else None

    def inspect_ahead(self, refs: Sequence[str]) -> None:
        """Start :meth:`inspect_images` of ``refs`` in the background, for the next call to
        answer from when it asks for some of them: a build's first question to the engine,
        asked while git's reads of the source run. Used once: the call after it asks docker
        (images change once anything is built)."""
        future: Future[_Inspected] = Future()

        def ask() -> None:
            try:
                future.set_result(self._inspect_now(refs))
            except BaseException as err:  # raised where the answer is taken
                future.set_exception(err)

        threading.Thread(target=ask, name="inspect-ahead", daemon=True).start()
        self._ahead = (frozenset(refs), future)

    def inspect_images(self, refs: Sequence[str]) -> _Inspected:
        """``docker image inspect REF...`` in one call: each ref's data, None where it is missing.

        Doubles as the ping: an engine that does not answer raises the :class:`EngineError`
        that says how to start one. docker prints the images found as one JSON array and
        exits 1 naming each missing ref on stderr; entries are matched back to refs by their
        tags, digests or id. A ref neither matched nor reported missing (a spelling we do
        not recognise, or another error) is inspected on its own, as :meth:`inspect_image`.
        """
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0].issuperset(refs):
            answered = ahead[1].result()
            return {ref: answered[ref] for ref in refs}
        return self._inspect_now(refs)

    def _inspect_now(self, refs: Sequence[str]) -> _Inspected:
        unique = list(dict.fromkeys(refs))
        if not unique:
            self.ping()
            return {}
        result = self.run(["image", "inspect", *unique], check=False, timeout=60)
        errors = result.stderr.strip()
        if result.timed_out or _unreachable(errors):
            raise EngineError(
                f"no Docker Engine is reachable ({'no answer within 60s' if result.timed_out else process.last_line(errors)}); {START_HINT}"
            )
        missing = {m.strip() for m in _MISSING.findall(errors)}
        try:
            parsed = json.loads(result.stdout or "[]")
        except json.JSONDecodeError:
            parsed = []
        found: list[dict[str, Any]] = [
            d for d in (parsed if isinstance(parsed, list) else []) if isinstance(d, dict)
        ]
        out: dict[str, ImageInfo | None] = {}
        for ref in unique:
            if ref in missing:
                out[ref] = None
                continue
            match = next((data for data in found if _names(data, ref)), None)
            out[ref] = ImageInfo.of(match) if match is not None else self.inspect_image(ref)
        return out

    def image_id(self, ref: str) -> str | None:
        return data.id if (data := self.inspect_image(ref)) else None

    def gpu_usable(self) -> bool:
        """Whether a container can be given a GPU here: a device and the ``nvidia`` runtime."""
        if not gpu_present():
            return False
        said = self.run(["info", "--format", "{{json .Runtimes}}"], check=False, timeout=30)
        return "nvidia" in said.stdout

    def containers_of(self, image: str, *, mine: bool = False) -> list[str]:
        """Ids of every container (any state) made from ``image`` or an image made of it
        (container-structure-test commits one); by its id, so another run's image can be
        the same one: ``mine`` keeps only those this process made (its owner label, or
        made of a tag that names it)."""
        shown = f'{{{{.ID}}}}\t{{{{.Label "{leftovers.OWNER_LABEL}"}}}}\t{{{{.Image}}}}'
        result = self.run(
            ["ps", "--all", "--no-trunc", "--filter", f"ancestor={image}", "--format", shown],
            check=False,
            timeout=60,
        )
        rows = [[*line.split("\t"), "", ""][:3] for line in result.stdout.splitlines()]
        return [c for c, owner, made in rows if c and (not mine or leftovers.mine(owner, made))]

    def untagged_since(self, image: str) -> list[str]:
        """Ids of untagged images made after ``image``."""
        result = self.run(
            ["images", "--all", "--quiet", "--no-trunc", "--filter", "dangling=true",
             "--filter", f"since={image}"],
            check=False,
            timeout=60,
        )  # fmt: skip
        return result.stdout.split()

    def remove_container(self, name: str) -> None:
        self.run(["rm", "--force", "--volumes", name], check=False, timeout=60)

    # -- actions -----------------------------------------------------------------
    def build(
        self,
        *,
        context: Path,
        dockerfile: Path,
        build_args: Mapping[str, str],
        labels: Mapping[str, str],
        iidfile: Path,
        platform: str | None,
        log: Path,
        timeout: float | None = None,
        no_cache: bool = False,
        target: str = "",
        cache_from: str | None = None,
    ) -> RunResult:
        """Build (the stage ``target``, where named) without tagging; the caller tags by id
        once the build is complete; ``cache_from``: an image whose layer cache is read."""
        args = (
            ["buildx", "build", "--load"] if self.builder == "buildx" else ["build", "--force-rm"]
        )
        if no_cache:
            args.append("--no-cache")
        args += ["--file", str(dockerfile), "--iidfile", str(iidfile), "--progress", "plain"]
        picked = {"--platform": platform, "--target": target, "--cache-from": cache_from}
        args += [x for flag, value in picked.items() if value for x in (flag, value)]
        for key, value in build_args.items():
            args += ["--build-arg", f"{key}={value}"]
        for key, value in labels.items():
            args += ["--label", f"{key}={value}"]
        args.append(str(context))
        env = {"DOCKER_BUILDKIT": "1"} if self.builder == "classic-buildkit" else {}
        return self.run(args, env=env, log=log, timeout=timeout, check=False)

    def pull(self, ref: str, platform: str | None = None) -> bool:
        """Pull ``ref`` (for ``platform``); False when it cannot be had."""
        where = ["--platform", platform] if platform else []
        return self.run(["pull", "--quiet", *where, ref], timeout=120, check=False).ok

    def push(self, ref: str) -> Result:
        """Push ``ref`` to its registry (the caller says what a failure means)."""
        return self.run(["push", "--quiet", ref], check=False)

    def push_index(self, ref: str, members: Sequence[str], *, insecure: bool) -> Result:
        """A multi-arch index of ``members`` (each ``NAME@sha256:...``, in the registry
        already) pushed as ``ref`` with ``docker manifest``; a local list left by a killed
        run is dropped first. ``stdout`` holds the index's digest."""
        env = {"DOCKER_CLI_EXPERIMENTAL": "enabled"}  # the 20.10 CLI marks it experimental
        flag = ["--insecure"] if insecure else []
        self.run(["manifest", "rm", ref], check=False, timeout=60, env=env)
        made = self.run(
            ["manifest", "create", *flag, ref, *members], check=False, env=env, timeout=300
        )
        if not made.ok:
            return made
        return self.run(
            ["manifest", "push", *flag, "--purge", ref], check=False, env=env, timeout=300
        )

    def tag(self, image_id: str, tags: Sequence[str]) -> None:
        for tag in tags:
            self.run(["tag", image_id, tag], timeout=60)

    def remove_image(self, ref: str) -> None:
        self.run(["image", "rm", "--force", ref], check=False, timeout=60)

    def remove_if_dangling(self, image_id: str, data: ImageInfo | None = None) -> bool:
        """Remove a project image (``org.release.managed``) that no tag points at and no
        container uses, e.g. the one a rebuilt tag pointed at before. ``data``: its inspect
        data when already at hand. Anything else is left alone; True when removed."""
        if data is None:
            data = self.inspect_image(image_id)
        if data is None or data.repo_tags:
            return False
        if data.labels.get(MANAGED_LABEL) != "true" or self.containers_of(data.id):
            return False
        # not --force: docker itself refuses if a tag or a container appeared meanwhile
        return self.run(["image", "rm", data.id], check=False, timeout=60).ok

    def new_container(self) -> tuple[str, list[str]]:
        """A name for a container about to be made and its ``--name`` and ``--label`` options
        (managed, this process's); the first call sweeps (:func:`.leftovers.sweep`)."""
        leftovers.sweep(self)
        name = f"release-{uuid.uuid4().hex[:12]}"
        return name, ["--name", name, *leftovers.container_labels()]

    def run_container(
        self,
        image: str,
        argv: Sequence[str],
        *,
        timeout: float,
        entrypoint: str | None = None,
        labels: Mapping[str, str] | None = None,
        stdin: str | None = None,
        gpus: bool = False,
        extra: Sequence[str] = (),
    ) -> RunResult:
        """``docker run --rm`` with a name and labels; killed and removed on timeout or Ctrl-C."""
        name, identity = self.new_container()
        args = ["run", "--rm", *identity, "--network", "none"]
        for key, value in (labels or {}).items():
            args += ["--label", f"{key}={value}"]
        if stdin is not None:
            args.append("--interactive")
        if gpus:
            args += ["--gpus", "all"]
        if entrypoint is not None:
            args += ["--entrypoint", entrypoint]
        args += [*extra, image, *argv]
        try:
            return self.run(
                args,
                timeout=timeout,
                check=False,
                stdin=stdin,
                on_timeout=lambda: self.remove_container(name),
            )
        except BaseException:
            self.remove_container(name)
            raise

    @contextlib.contextmanager
    def created_container(self, image: str) -> Iterator[str]:
        """The name of a container of ``image`` for the ``with`` block: created, never
        started (its file system is there to be read), no network, no pull. It is named and
        labelled before it exists, so leaving the block removes it whatever ends the block,
        a ``docker create`` cut short by Ctrl-C included."""
        name, identity = self.new_container()
        try:
            self.run(
                ["create", *identity, "--network", "none", "--pull", "never",
                 "--entrypoint", "true", image],
                timeout=120,
            )  # fmt: skip
            yield name
        finally:
            self.remove_container(name)

    def export_container(self, name: str, read: Callable[[IO[bytes]], _T]) -> _T:
        """What ``read`` makes of ``docker export NAME``: the container's file system as a
        tar stream, read as docker writes it (never on disk). docker is stopped when
        ``read`` raises; docker failing by itself raises :class:`EngineError`, also when
        ``read`` choked on what it was given."""
        args = ["export", name]
        with self.stream(args) as export:
            try:
                answer = export.read_bytes(read)
            except Exception:
                self._exported(args, export)  # docker's own failure explains the reader's
                raise
            self._exported(args, export)
        return answer

    def _exported(self, args: Sequence[str], export: process.Stream) -> None:
        """Raise docker's failure when it exited with an error (not stopped by a signal)."""
        status = export.close()
        if status > 0:
            failed = Result(export.argv, status, "", export.stderr)
            raise EngineError(self._failure(args, failed, None))

    def import_rootfs(self, tarball: Path, ref: str, changes: Sequence[str]) -> None:
        options = [part for change in changes for part in ("--change", change)]
        self.run(["import", *options, str(tarball), ref], timeout=600)


_MISSING = re.compile(r"No such (?:image|object): (\S+)")


def gpu_present() -> bool:  # whether a GPU check gets --gpus all here (no engine asked)
    return os.path.exists("/dev/nvidiactl")


_UNREACHABLE = (
    "Cannot connect to the Docker daemon",
    "connect: no such file",
    "permission denied while trying to connect to the Docker daemon",
    "error during connect",
)


def _unreachable(text: str) -> bool:
    return any(marker in text for marker in _UNREACHABLE)


def _ref_names(ref: str) -> set[str]:
    """Spellings of ``ref`` as docker reports it in RepoTags and RepoDigests."""
    name, at, digest = ref.partition("@")
    for prefix in ("docker.io/", "index.docker.io/"):
        if name.startswith(prefix):
            name = name.removeprefix(prefix)
            if name.startswith("library/") and name.count("/") == 1:
                name = name.removeprefix("library/")
            break
    tagged = ":" in name.rsplit("/", 1)[-1]
    if at:
        return {ref, f"{name.rsplit(':', 1)[0] if tagged else name}@{digest}"}
    return {ref, name if tagged else f"{name}:latest"}


def _names(data: Mapping[str, Any], ref: str) -> bool:
    """Whether inspect ``data`` is the image ``ref`` names (a tag, a digest or its id)."""
    image_id = str(data.get("Id", ""))
    if ref == image_id or (
        re.fullmatch(r"(sha256:)?[0-9a-f]{12,64}", ref)
        and image_id.startswith(ref if ref.startswith("sha256:") else "sha256:" + ref)
    ):
        return True
    known = set(data.get("RepoTags") or ()) | set(data.get("RepoDigests") or ())
    return bool(_ref_names(ref) & known)

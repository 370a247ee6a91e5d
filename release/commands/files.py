"""What ``release`` writes for builders and CI beyond this machine (``bake``, ``ci``), and the
rehearsal of the whole rc cycle (``rehearse``).

Every file written here carries the header of :mod:`release.core.generated` and is
written by :func:`~release.adapters.generated_files.write_generated`: a file there that
release did not write, or that was changed since, is refused (exit 3, nothing of the set
written) unless ``--force``."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from release.commands.common import context, forced_lines, registry_option
from release.commands.outcome import JSONValue, OutcomeDefaults, Run
from release.errors import ConfigError, ExitCode, RefusedError

if TYPE_CHECKING:
    from release.adapters.generated_files import Written
    from release.core.ci_config import CiSettings
    from release.core.tool_pins import ToolInstall
    from release.flows.context import ReleaseContext

__all__ = [
    "BakeOutcome",
    "BakeRequest",
    "CiFormat",
    "CiOutcome",
    "CiRequest",
    "RehearseOutcome",
    "RehearseRequest",
    "bake",
    "ci",
    "rehearse",
]

DEFAULT_DIRS = {"buildkite": ".buildkite", "github": ".github/workflows"}  # by format


def _with_matrix(run: Run) -> ReleaseContext:
    ctx = context(run)
    if ctx.config.matrix is None:
        raise ConfigError("[tool.release.images] is missing: no image matrix to write")
    return ctx


@dataclass(frozen=True)
class BakeRequest:
    out: str = "docker-bake.json"
    version: str | None = None
    allow_dirty: bool = False
    allow_shallow: bool = False
    force: bool = False
    json: bool = False


@dataclass(frozen=True)
class BakeOutcome(OutcomeDefaults):
    """``bake``: the bake file written, its targets (one per variant) and the files only
    ``--force`` let it replace."""

    path: Path
    image: str
    targets: tuple[str, ...]
    written: tuple[Written, ...]
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> tuple[str, ...]:
        head = f"wrote {self.path}: {len(self.targets)} target(s) of {self.image}"
        return (head, *forced_lines(self.written))

    def document(self) -> dict[str, JSONValue]:
        return {
            "path": str(self.path),
            "targets": list(self.targets),
            "replaced": [str(w.path) for w in self.written if w.forced],
        }


def bake(request: BakeRequest, run: Run) -> BakeOutcome:
    from release.adapters.files import output_path
    from release.adapters.generated_files import Generated, write_generated, written_by
    from release.core.generated import Spelling
    from release.images.bake import bake_json
    from release.images.source import given_version, read_source

    ctx = _with_matrix(run)
    matrix = ctx.config.matrix
    assert matrix is not None
    path = output_path(Path(request.out), "--out", tree=ctx.root)
    given = given_version(request.version) if request.version is not None else None
    source = read_source(
        ctx, given, allow_dirty=request.allow_dirty, allow_shallow=request.allow_shallow
    )
    if source.refusal:
        raise RefusedError(source.refusal)
    for line in source.lines():
        run.say(line)
    made = ["release", "bake"]
    made += ["--version", request.version] if request.version is not None else []
    made += ["--allow-dirty"] if request.allow_dirty else []
    made += ["--allow-shallow"] if request.allow_shallow else []
    written = write_generated(
        [Generated(path, bake_json(matrix, source), Spelling.BAKE_JSON, written_by(made))],
        force=request.force,
        command="release bake",
        root=ctx.root,
    )
    targets = tuple(v.id for v in matrix.variants)
    return BakeOutcome(path, matrix.name, targets, tuple(written))


class CiFormat(enum.Enum):
    BUILDKITE = "buildkite"
    GITHUB = "github"


@dataclass(frozen=True)
class CiRequest:
    format: CiFormat
    out: str | None = None
    install: str | None = None
    runner: str | None = None
    registry: str | None = None
    write_noxfile: bool = False
    force: bool = False
    json: bool = False


NOXFILE = "from release.cli.nox_sessions import image_sessions\n\nimage_sessions()\n"


def _noxfile(ctx: ReleaseContext, write: bool) -> Path | None:
    """The jobs run ``nox -s ...`` in the engine's repository: its ``noxfile.py`` must make
    the image sessions. Where to write it (none there and ``write``), or None (there, and
    making them); refused otherwise. Nothing is written here."""
    from release.adapters.files import read_tree_text
    from release.flows.doctor import NOXFILE_CALL

    found = read_tree_text(ctx.root, "noxfile.py", "noxfile.py")
    if found is not None and NOXFILE_CALL in found.text:
        return None
    if found is not None:
        raise RefusedError(
            f"noxfile.py does not call {NOXFILE_CALL}: the jobs run nox -s 'build(ID)' and "
            f"the rest; add: {NOXFILE.strip().replace(chr(10) * 2, '; ')} (nothing was written)"
        )
    if not write:
        raise RefusedError(
            "the jobs run nox -s 'build(ID)' and the rest, and this repository has no "
            "noxfile.py: pass --write-noxfile to write the two lines that make the sessions "
            "(nothing was written)"
        )
    return ctx.root / "noxfile.py"


def _install(ctx: ReleaseContext, given: str | None, settings: CiSettings) -> ToolInstall:
    """How every job installs this tool, pinned: ``--install``, else the requirements file,
    else ``install`` of ``[tool.release.ci]``, else this tool as it is installed here;
    refused (nothing written) where that cannot be pinned, saying how to pin it."""
    from release import __version__
    from release.adapters.files import read_tree_text
    from release.adapters.tool_source import installed_tool, nox_pin
    from release.core.pinned_requirements import requirements_pin
    from release.core.tool_pins import pin_installed, pin_requirement

    if given is not None:
        return pin_requirement(given, "--install", nox_pin(), __version__)
    if settings.requirements:
        where = f"[tool.release.ci] requirements {settings.requirements}"
        found = read_tree_text(ctx.root, settings.requirements, where, error=RefusedError)
        if found is None:
            raise RefusedError(f"{where}: no such file in the work tree (nothing was written)")
        return requirements_pin(settings.requirements, found.text)
    if settings.install:
        where = "[tool.release.ci] install"
        return pin_requirement(settings.install, where, nox_pin(), __version__)
    return pin_installed(installed_tool(), nox_pin())


def _install_line(install: ToolInstall) -> str:
    """What the output says of the jobs' install: what is pinned, how, and by what."""
    from release.core.tool_pins import PinKind

    if install.kind is PinKind.REQUIREMENTS:
        return f"the jobs install what {install.requirement} pins, hash-checked ({install.origin})"
    return (
        f"the jobs install {install.requirement} and {install.nox} ({install.kind.value}; "
        f"from {install.origin})"
    )


@dataclass(frozen=True)
class CiOutcome(OutcomeDefaults):
    """``ci``: the pipeline files written (``first`` the one the output leads with), the
    jobs in them, the noxfile written (None: there already), how the jobs install this
    tool; ``said``: what the output says of them, before the files ``--force`` replaced."""

    first: Path
    paths: tuple[Path, ...]
    jobs: tuple[str, ...]
    noxfile: Path | None
    written: tuple[Written, ...]
    install: ToolInstall
    said: tuple[str, ...]
    exit_code: ExitCode = ExitCode.OK

    def text(self) -> tuple[str, ...]:
        return (*self.said, *forced_lines(self.written))

    def document(self) -> dict[str, JSONValue]:
        install = self.install
        return {
            "path": str(self.first),
            "paths": [str(p) for p in self.paths],
            "jobs": list(self.jobs),
            "noxfile": None if self.noxfile is None else str(self.noxfile),
            "replaced": [str(w.path) for w in self.written if w.forced],
            "install": {
                "kind": install.kind.name.lower(),
                "requirement": install.line,
                "nox": install.nox or None,
                "from": install.origin,
            },
        }


def ci(request: CiRequest, run: Run) -> CiOutcome:
    from release.adapters.files import output_path
    from release.adapters.generated_files import Generated, write_generated, written_by
    from release.core.ci_config import CiSettings
    from release.core.ci_triggers import tag_kinds
    from release.core.generated import Spelling
    from release.core.pipeline_files import pipeline_files
    from release.core.pipelines import (
        FORMATS,
        PipelinePlan,
        final_job,
        pipeline_jobs,
        runner_label,
        transfer_registry,
    )

    registry = registry_option(request.registry)
    fmt = request.format.value
    runner = runner_label(request.runner, "--runner") if request.runner is not None else None
    ctx = _with_matrix(run)
    matrix = ctx.config.matrix
    assert matrix is not None
    # the default places are the repository's (made when missing, never through a symlink
    # out of it); a directory given is taken as given, from where the command runs
    where = Path(request.out) if request.out else ctx.root / DEFAULT_DIRS[fmt]
    paths = {
        name: output_path(where / name, "--out", tree=ctx.root, made=not request.out)
        for name in FORMATS[fmt]
    }
    noxfile = _noxfile(ctx, request.write_noxfile)
    settings = ctx.config.ci or CiSettings()
    made = ["release", "ci", "--format", fmt]
    made += ["--install", request.install] if request.install is not None else []
    made += ["--runner", runner] if runner else []
    made += ["--registry", registry] if registry is not None else []
    install = _install(ctx, request.install, settings)
    plan = PipelinePlan(
        matrix,
        settings,
        install,
        transfer_registry(matrix, registry),
        tag_kinds(ctx.config.tag),
        runner,
        github_release=ctx.config.github.release,
    )
    files = pipeline_files(plan, fmt)
    # written once nothing can be refused any more, each checked before any is written: a
    # refusal leaves the tree as it was
    generated = [
        Generated(paths[n], text, Spelling.HASH, written_by(made)) for n, text in files.items()
    ]
    if noxfile is not None:
        by = written_by([*made, "--write-noxfile"])
        generated.append(Generated(noxfile, NOXFILE, Spelling.HASH, by))
    written = write_generated(generated, force=request.force, command="release ci", root=ctx.root)
    jobs = pipeline_jobs(matrix)
    promote = final_job(plan)
    first = paths[FORMATS[fmt][0]]
    lines = [
        f"wrote {first}: {len(jobs)} jobs for rc and post tags ({', '.join(j.label for j in jobs)})"
    ]
    lines.append(_install_line(install))
    if promote is not None and fmt == "github":
        lines.append(f"wrote {paths['promote.yml']}: the {promote.label} job, for final tags")
    elif promote is not None:
        lines.append(f"  and the {promote.label} step, for final tags")
    if promote is None or promote.kind != "promote":
        lines.append(
            "no promote job: no registry in [tool.release.images]; release promote gives the "
            "rc's images the final's tags where they are"
        )
        stale = [p for n, p in paths.items() if n not in files and p.is_file()]
        lines += [f"left {p}: release ci no longer makes it; remove it" for p in stale]
    if not settings.push_manifest:
        lines.append("push-manifest = false: a tag's manifest is left as an artifact, not recorded")
    if plan.github_release:
        lines.append(
            "the tag's job makes its GitHub release (release github-release; GH_TOKEN: "
            + ("the job's token, contents: write on that job only)" if fmt == "github"
               else "the agent's environment)")
        )  # fmt: skip
    lines += [f"wrote {noxfile}: the image sessions the jobs run"] if noxfile else []
    return CiOutcome(
        first,
        tuple(paths[n] for n in files),
        tuple(j.label for j in [*jobs, *([promote] if promote else [])]),
        noxfile,
        tuple(written),
        install,
        tuple(lines),
    )


@dataclass(frozen=True)
class RehearseRequest:
    keep: bool = False
    workdir: str | None = None
    json: bool = False


@dataclass(frozen=True)
class RehearseOutcome(OutcomeDefaults):
    """``rehearse``: whether the whole rc cycle passed (its story was said as it ran)."""

    passed: bool

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.OK if self.passed else ExitCode.FAILED

    def text(self) -> tuple[str, ...]:
        return ()

    def document(self) -> dict[str, JSONValue]:
        return {"passed": self.passed}


def rehearse(request: RehearseRequest, run: Run) -> RehearseOutcome:
    from release.sample.rehearse import rehearse as story

    ok = story(keep=request.keep, workdir=request.workdir, say=run.say)
    return RehearseOutcome(ok)

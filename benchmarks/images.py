"""Image matrix figures, each measured in the same run as the raw docker command it is compared with.

| figure | compared with | target |
|---|---|---|
| unchanged re-run (3 variants), sample context | raw `docker build` of the same 3, fully cached | <= 0.5 |
| the same, engine-sized context (~3,000 files, ~50 MB) | the same | <= 0.5 |
| cold matrix build (--no-cache), --jobs 2 | the same, --jobs 1 (runs interleaved) | <= 0.8 |
| smoke of one variant | `docker run --rm IMAGE true` x number of checks run | report |
| snapshot round trip of cu130: CRIU restore + first answer, in a fresh container | the server's cold start to its first answer | report |
| `reproduce` of the tag, 3 variants (rebuild without cache, content digests, inventory, smoke, snapshot, verdict) | raw `docker build --no-cache` of the same 3, one after another | report |

Runs on a throwaway copy of the bundled sample engine (image name ``release-bench/...``)
and removes its images afterwards. The sample's context is a handful of files, so its
figure is mostly start-up; the engine-sized one adds a generated source tree of about the
size of vLLM's build context, where reading the context is what a re-run costs. Needs a Docker Engine; prints why and exits 0 without one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NotRequired, TypedDict

DOCKER = os.environ.get("DOCKER", "/usr/bin/docker")
# Bytecode as on a user's machine (see run.py).
_BASE_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
VERSION = "0.1.0rc1"


class Figure(TypedDict):
    """One row of the table (and of ``--json``): the median seconds of ours and of the raw
    route it is compared with, and the ratio's target (None: reported only)."""

    figure: str
    ours_s: float
    raw: str
    raw_s: float
    target: float | None
    ours_runs: NotRequired[list[float]]  # each run's seconds, where the figure is a median
    raw_runs: NotRequired[list[float]]


def _timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    proc = subprocess.run(
        argv,
        cwd=cwd,
        env={**_BASE_ENV, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(
            f"benchmark command failed: {' '.join(argv)}\n{proc.stdout}\n{proc.stderr}"
        )
    return elapsed


def _median(argv: list[str], cwd: Path, runs: int, env: dict[str, str] | None = None) -> float:
    return statistics.median(_timed(argv, cwd, env) for _ in range(runs))


def _release(*args: str) -> list[str]:
    return [sys.executable, "-m", "release", *args]


def _raw_build_argvs(root: Path) -> list[list[str]]:
    """The docker builds ``release images.build`` ran, spelt out (same args, labels, context)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from dataclasses import replace

    from release.adapters.engine import ContainerEngine
    from release.adapters.image_content import image_content_digest
    from release.flows.context import ReleaseContext
    from release.images.inputs import DIGEST_LABEL, input_digest
    from release.images.labels import labels_for
    from release.images.standin import ensure_base
    from release.images.workspace import Workspace

    ws = Workspace.open(ReleaseContext(root), VERSION)
    engine = ContainerEngine.detect()
    argvs = []
    for variant in ws.matrix.variants:
        args = ws.matrix.build_args_for(variant, ws.source.version)
        base = ensure_base(
            engine,
            variant.base_image,
            variant.accelerator,
            print,
            inspected=engine.inspect_image(variant.base_image),
        )
        labels = labels_for(variant, ws.source, base)
        context = root / ws.matrix.context
        dockerfile = root / ws.matrix.dockerfile
        labels[DIGEST_LABEL] = input_digest(
            context,
            dockerfile,
            args,
            replace(base, content=image_content_digest(engine, base.id).digest).identity,
            labels,
            variant.platform,
        )
        argv = [
            DOCKER,
            "build",
            "--quiet",
            "--file",
            str(dockerfile),
            "--tag",
            f"release-bench/raw:{variant.id}",
        ]
        for key, value in args.items():
            argv += ["--build-arg", f"{key}={value}"]
        for key, value in labels.items():
            argv += ["--label", f"{key}={value}"]
        argvs.append([*argv, str(context)])
    return argvs


GENERATED = "tinyengine/generated"
GENERATED_FILES = 3000


def _generate_tree(root: Path, files: int = GENERATED_FILES) -> tuple[int, int]:
    """A deterministic source tree of ``files`` Python modules (2-31 KB each, ~50 MB in
    all) under ``GENERATED``; returns (files, bytes)."""
    total = 0
    for i in range(files):
        target = (2 + (i * 7919) % 30) * 1024
        lines = []
        size = 0
        j = 0
        while size < target:
            line = f"def f_{i}_{j}(x: int) -> int:\n    return x * {j * 31 + i} + {i ^ j}\n\n\n"
            lines.append(line)
            size += len(line)
            j += 1
        path = root / GENERATED / f"pkg_{i // 100:02d}" / f"mod_{i:04d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(lines), encoding="utf-8")
        total += size
    return files, total


def _image_ids(repository: str) -> list[str]:
    proc = subprocess.run(
        [DOCKER, "images", "--no-trunc", "--format", "{{.ID}}", repository],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.split()


def _remove_if_untagged(ids: list[str]) -> None:
    """Images the raw builds' tags moved off (left dangling)."""
    for image in ids:
        proc = subprocess.run(
            [DOCKER, "image", "inspect", "--format", "{{len .RepoTags}}", image],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode == 0 and proc.stdout.strip() == "0":
            subprocess.run([DOCKER, "image", "rm", image], capture_output=True, check=False)


def _unchanged(
    build: list[str], root: Path, runs: int, figure: str, *, warm_ours: bool = False
) -> Figure:
    """``release images.build`` with every variant unchanged vs the raw cached builds."""
    raw = _raw_build_argvs(root)
    env = {"DOCKER_BUILDKIT": "1"}
    for argv in raw:
        _timed(argv, root, env)  # warm the raw path too
    if warm_ours:
        _timed(build, root)
    ours = _median(build, root, runs)
    theirs = statistics.median(sum(_timed(argv, root, env) for argv in raw) for _ in range(runs))
    return {
        "figure": figure,
        "ours_s": ours,
        "raw": "docker build x3, cached",
        "raw_s": theirs,
        "target": 0.5,
    }


def _engine_up() -> str | None:
    proc = subprocess.run(
        [DOCKER, "version", "--format", "{{.Server.Version}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip() if proc.returncode == 0 else None


def measure(runs: int, cold: bool, quick: bool = False) -> list[Figure]:
    """The figures; ``quick``: each step once, the reproduce figure with the builder's
    cache (every step of it still runs: the consent, the rebuild, the comparison) and
    no engine-sized context."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from release.sample import make_sample_engine

    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="release-bench-images-") as tmp:
        engine = make_sample_engine(Path(tmp), with_remote=False)
        root = engine.root
        pyproject = root / "pyproject.toml"
        pyproject.write_text(
            pyproject.read_text().replace(
                'name = "example/tinyengine"', 'name = "release-bench/tinyengine"'
            )
        )
        engine.repo.run("commit", "--quiet", "-am", "[CI/Build] Bench image name")
        build = _release("images.build", "--version", VERSION)
        _timed([*build, "--jobs", "2"], root)  # warm: stand-in bases, layer cache, tags

        figures.append(_unchanged(build, root, runs, "unchanged re-run, sample context"))

        if cold:  # the snapshot step downloads from Debian's archive: medians, interleaved
            ones, twos = [], []
            for _ in range(runs):
                ones.append(_timed([*build, "--no-cache", "--jobs", "1"], root))
                twos.append(_timed([*build, "--no-cache", "--jobs", "2"], root))
            one, two = statistics.median(ones), statistics.median(twos)
            figures.append(
                {
                    "figure": "cold matrix build, --jobs 2",
                    "ours_s": two,
                    "raw": "the same, --jobs 1",
                    "raw_s": one,
                    "target": 0.8,
                    "ours_runs": twos,
                    "raw_runs": ones,
                }
            )

        smoke = _release("images.smoke", "--variant", "cu130", "--version", VERSION, "--json")
        proc = subprocess.run(smoke, cwd=root, capture_output=True, text=True, check=False)
        report = json.loads(proc.stdout)["variants"][0]
        ran = sum(1 for c in report["checks"] if c["status"] != "not run")
        image = report["image"]
        ours = _median(smoke, root, runs)
        true_runs = statistics.median(
            sum(
                _timed([DOCKER, "run", "--rm", "--entrypoint", "true", image], root)
                for _ in range(ran)
            )
            for _ in range(runs)
        )
        figures.append(
            {
                "figure": "smoke of one variant",
                "ours_s": ours,
                "raw": f"docker run --rm IMAGE true x{ran}",
                "raw_s": true_runs,
                "target": None,
            }
        )

        figures.append(_round_trip(root, runs))

        if cold or quick:
            figures.append(_reproduce(root, runs, cache=quick))
        if quick:
            _cleanup()
            return figures

        # an engine-sized context: the sample plus a generated source tree, committed
        files, size = _generate_tree(root)
        engine.repo.run("add", GENERATED)
        engine.repo.run("commit", "--quiet", "-m", "[Misc] Generated modules")
        raw_before = _image_ids("release-bench/raw")
        _timed([*build, "--jobs", "2"], root)  # warm: the new tree in every image
        label = f"unchanged re-run, engine-sized context ({files} files, {size / 1e6:.0f} MB)"
        # one more unmeasured run of ours, as the raw builds get: a file hashed seconds
        # after it was written is not recorded yet (its mtime could still change)
        figures.insert(1, _unchanged(build, root, runs, label, warm_ours=True))
        _remove_if_untagged(raw_before)
        _cleanup()
    return figures


def _round_trip(root: Path, runs: int) -> Figure:
    """The snapshot session's CRIU round trip of cu130: restore plus its first answer (in a
    fresh container) against the cold start of the same server, both from the record it
    writes (the medians of ``runs`` sessions)."""
    snapshot = _release("images.snapshot", "--variant", "cu130", "--version", VERSION)
    restored, cold, dumps = [], [], []
    record = root / ".git" / "release" / "snapshots" / VERSION / "cu130.json"
    for _ in range(runs):
        _timed(snapshot, root)
        figures = json.loads(record.read_text())["snapshot_runtime"]["figures"]
        restored.append(figures["restore_s"] + figures["first_answer_s"])
        cold.append(figures["cold_start_s"])
        dumps.append(figures["dump_s"])
    return {
        "figure": f"snapshot: restore + first answer (dump {statistics.median(dumps) * 1000:.0f} ms)",
        "ours_s": statistics.median(restored),
        "raw": "cold start of the same server",
        "raw_s": statistics.median(cold),
        "target": None,
    }


def _reproduce(root: Path, runs: int, cache: bool = False) -> Figure:
    """``release reproduce`` of a tag whose manifest is recorded here, against the raw
    builds it makes (``docker build --no-cache`` of each variant, one after another);
    ``cache``: both with the builder's cache."""
    tag = f"v{VERSION}"
    subprocess.run(["git", "tag", "-a", tag, "-m", tag], cwd=root, check=True)
    for step in ("images.smoke", "images.snapshot", "manifest"):
        subprocess.run(_release(step), cwd=root, check=True, capture_output=True)
    argvs = [
        [*argv[:2], *([] if cache else ["--no-cache"]), *argv[2:]]
        for argv in _raw_build_argvs(root)
    ]
    reproduce = _release("reproduce", tag, "--allow-host", _host_consent(root))
    if cache:
        reproduce.append("--cache")
    ours, raw = [], []
    for _ in range(runs):  # interleaved: the snapshot step downloads from Debian's archive
        ours.append(_timed(reproduce, root))
        raw.append(sum(_timed(argv, root) for argv in argvs))
    how = "cached" if cache else "--no-cache"
    return {
        "figure": f"reproduce of the tag, 3 variants{', builder cache' if cache else ''}",
        "ours_s": statistics.median(ours),
        "raw": f"docker build {how} of the 3, one after another",
        "raw_s": statistics.median(raw),
        "target": None,
        "ours_runs": ours,
        "raw_runs": raw,
    }


def _host_consent(root: Path) -> str:
    """The tester's consent to what the sample's containers ask of this host (the snapshot's
    CRIU capabilities, a device check's devices), as ``reproduce`` works it out: without it
    reproduce refuses before building."""
    from release.adapters.config_file import load_config
    from release.adapters.devices import devices_here
    from release.adapters.engine import gpu_present
    from release.core.host_access import asked_by, spelt

    matrix = load_config(root).matrix
    assert matrix is not None, "the sample engine has an image matrix"
    kinds = (v.accelerator.kind for v in matrix.variants)
    asked = asked_by(matrix, matrix.variants, gpu=gpu_present(), devices=devices_here(kinds))
    return spelt(dict.fromkeys(o for options in asked.values() for o in options))


def _cleanup() -> None:
    proc = subprocess.run(
        [DOCKER, "images", "--format", "{{.Repository}}:{{.Tag}}", "release-bench/*"],
        capture_output=True,
        text=True,
        check=False,
    )
    refs = proc.stdout.split()
    if refs:
        subprocess.run([DOCKER, "image", "rm", "--force", *refs], capture_output=True, check=False)


def print_table(figures: list[Figure]) -> None:
    width = max([40, *(len(str(f["figure"])) for f in figures)])
    print(f"{'figure':{width}} {'release':>9} {'raw':>9} {'ratio':>7}  target        compared with")
    for f in figures:
        ours, raw, target = f["ours_s"], f["raw_s"], f["target"]
        ratio = ours / raw if raw else float("nan")
        verdict = (
            "report"
            if target is None
            else (f"<= {target}" + (" met" if ratio <= target else " MISSED"))
        )
        print(
            f"{f['figure']:{width}} {ours:8.2f}s {raw:8.2f}s {ratio:7.2f}  {verdict:12}  {f['raw']}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-build figure (slow)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--quick", action="store_true",
        help="each step once, reproduce with the builder's cache, no engine-sized context",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.no_cold = 1, True
    server = _engine_up()
    if server is None:
        print("image figures: no Docker Engine answers; start one (dockerd &) to measure them")
        return 0
    print(f"image figures (Docker Engine {server}, {args.runs} runs each, medians)")
    figures = measure(args.runs, cold=not args.no_cold, quick=args.quick)
    if args.json:
        print(json.dumps(figures, indent=2))
    print_table(figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

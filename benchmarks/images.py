"""Image matrix figures, each measured in the same run as the raw docker command it is compared with.

| figure | compared with | target |
|---|---|---|
| unchanged matrix (3 variants) re-run | raw `docker build` of the same 3, fully cached | <= 0.5 |
| cold matrix build (--no-cache), --jobs 2 | the same, --jobs 1 (runs interleaved) | <= 0.8 |
| smoke of one variant | `docker run --rm IMAGE true` x number of checks run | report |

Runs on a throwaway copy of the bundled sample engine (image name ``release-bench/...``)
and removes its images afterwards. Needs a Docker Engine; prints why and exits 0 without one.
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

DOCKER = os.environ.get("DOCKER", "/usr/bin/docker")
VERSION = "0.1.0rc1"


def _timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    proc = subprocess.run(
        argv,
        cwd=cwd,
        env={**os.environ, **(env or {})},
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
    from release.build import DIGEST_LABEL, input_digest, labels_for
    from release.engine import ContainerEngine
    from release.images import Workspace

    ws = Workspace.open(root, VERSION)
    engine = ContainerEngine.detect()
    argvs = []
    for variant in ws.matrix.variants:
        args = ws.matrix.build_args_for(variant, ws.source.version)
        labels = labels_for(ws.matrix, variant, ws.source)
        base_id = engine.image_id(variant.base_image) or ""
        context = root / ws.matrix.context
        dockerfile = root / ws.matrix.dockerfile
        labels[DIGEST_LABEL] = input_digest(
            context, dockerfile, args, base_id, labels, variant.platform
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


def _engine_up() -> str | None:
    proc = subprocess.run(
        [DOCKER, "version", "--format", "{{.Server.Version}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip() if proc.returncode == 0 else None


def measure(runs: int, cold: bool) -> list[dict[str, object]]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from release.sample import make_sample_engine

    figures: list[dict[str, object]] = []
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

        raw = _raw_build_argvs(root)
        env = {"DOCKER_BUILDKIT": "1"}
        for argv in raw:
            _timed(argv, root, env)  # warm the raw path too
        ours = _median(build, root, runs)
        theirs = statistics.median(
            sum(_timed(argv, root, env) for argv in raw) for _ in range(runs)
        )
        figures.append(
            {
                "figure": "unchanged matrix (3 variants) re-run",
                "ours_s": ours,
                "raw": "docker build x3, cached",
                "raw_s": theirs,
                "target": 0.5,
            }
        )

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
        report = json.loads(proc.stdout[proc.stdout.index("{") :])
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
        _cleanup()
    return figures


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


def print_table(figures: list[dict[str, object]]) -> None:
    print(f"{'figure':40} {'release':>9} {'raw':>9} {'ratio':>7}  target  compared with")
    for f in figures:
        ours, raw, target = float(f["ours_s"]), float(f["raw_s"]), f["target"]  # type: ignore[arg-type]
        ratio = ours / raw if raw else float("nan")
        verdict = (
            "report"
            if target is None
            else (f"<= {target}" + (" met" if ratio <= target else " MISSED"))
        )
        print(f"{f['figure']:40} {ours:8.2f}s {raw:8.2f}s {ratio:7.2f}  {verdict:12}  {f['raw']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-build figure (slow)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    server = _engine_up()
    if server is None:
        print("image figures: no Docker Engine answers; start one (dockerd &) to measure them")
        return 0
    print(f"image figures (Docker Engine {server}, {args.runs} runs each, medians)")
    figures = measure(args.runs, cold=not args.no_cold)
    if args.json:
        print(json.dumps(figures, indent=2))
    print_table(figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Publishing figures, each measured in the same run as what it is compared with.

| figure | compared with | target |
|---|---|---|
| `images.publish` of an rc published already (nothing uploaded) | the first publish of it, into an empty registry | <= 0.2, 0 bytes |
| `images.publish --from` the transfer registry: every image copied inside the registry, the index made, every tag read before and after | `skopeo copy --preserve-digests` of the same images, nothing read or checked | <= 1.5 (floor: the start-up of `release`) |
| `promote` in the registry: the final's tags by digest | the hand route: `docker pull` + `tag` + `push` per platform image, `docker manifest create` + `push` per index tag | report, 0 blobs |
| `images.build` of the arm64 image, under emulation, no cache | the same build of the amd64 image | report |

Runs on a throwaway copy of the bundled sample engine whose matrix is two variants (the
default ``cu129`` for linux/amd64 and linux/arm64 where arm64 is emulated here, ``cu128``;
with ``--quick``, ``cu129`` alone and one run of each figure), no snapshot rule, an rc tagged and its manifest recorded; each round publishes into a new
registry (Debian's docker-registry on 127.0.0.1, storage in a temporary directory), whose
access log and storage count what was uploaded. Needs a Docker Engine, docker-registry and
skopeo; prints why and exits 0 without one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmarks.images import Figure
    from release.adapters.registry_server import LocalRegistry

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DOCKER = os.environ.get("DOCKER", "/usr/bin/docker")
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
RC, FINAL = "v0.1.0rc1", "v0.1.0"
NAME = "release-bench/published"


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    proc = subprocess.run(
        argv, cwd=cwd, env={**_ENV, **(env or {})}, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(
            f"benchmark command failed: {' '.join(argv)}\n{proc.stdout}\n{proc.stderr}"
        )
    return time.perf_counter() - started


def _release(*args: str) -> list[str]:
    return [sys.executable, "-m", "release", *args]


def _config(arm64: bool, quick: bool = False) -> str:
    platforms = 'platforms = ["linux/amd64", "linux/arm64"]\n' if arm64 else ""
    cu128 = (
        ""
        if quick
        else '[[tool.release.images.variants]]\nid = "cu128"\ncuda = "12.8.1"\n'
        'base-image = "nvidia/cuda:12.8.1-base-ubuntu22.04"\n\n'
    )
    return (
        '[project]\nname = "tinyengine"\nversion = "0.0.0"\n\n'
        '[tool.release]\nmain-branch = "main"\n\n'
        f'[tool.release.images]\nname = "{NAME}"\ndockerfile = "docker/Dockerfile"\n'
        'context = "."\ndefault-variant = "cu129"\nversion-arg = "ENGINE_VERSION"\n\n'
        f"{cu128}"
        '[[tool.release.images.variants]]\nid = "cu129"\ncuda = "12.9.1"\n'
        f'base-image = "nvidia/cuda:12.9.1-base-ubuntu22.04"\n{platforms}\n'
        '[tool.release.images.smoke]\npackage = "tinyengine"\n'
    )


def _engine_repo(tmp: Path, arm64: bool, quick: bool = False) -> Path:
    from release.sample import make_sample_engine

    engine = make_sample_engine(tmp, with_remote=False)
    root = engine.root
    (root / "pyproject.toml").write_text(_config(arm64, quick), encoding="utf-8")
    engine.repo.run("commit", "--quiet", "-am", "[CI/Build] The bench matrix")
    engine.repo.run("tag", "--annotate", "--message", RC, RC)
    for step in ("images.build", "images.smoke"):
        _run(_release(step, "--jobs", "2") if step == "images.build" else _release(step), root)
    return root


def _publish_figure(root: Path, work: Path, runs: int) -> tuple[Figure, object]:
    from release.adapters.registry_server import LocalRegistry

    first, again, uploaded = [], [], []
    last = None
    for n in range(runs):
        server = LocalRegistry(work / f"registry-{n}")
        server.start()
        at = f"{server.address}/rel"
        first.append(_run(_release("images.publish", "--registry", at), root))
        before = server.traffic()
        again.append(_run(_release("images.publish", "--registry", at), root))
        after = server.traffic()
        uploaded.append((after.uploads - before.uploads, after.blob_bytes - before.blob_bytes))
        if last is not None:
            last.stop()
        last = server
    uploads = max(u for u, _ in uploaded)
    stored = max(b for _, b in uploaded)
    return (
        {
            "figure": f"publish of a published rc again ({uploads} uploads, {stored} bytes stored)",
            "ours_s": statistics.median(again),
            "raw": "its first publish, into an empty registry",
            "raw_s": statistics.median(first),
            "target": 0.2,
        },
        last,
    )


def _publish_from_figure(root: Path, work: Path, runs: int) -> Figure:
    """Publish from the transfer registry against skopeo copying the same images, each
    into a registry of its own round (nothing there yet), with the layer uploads counted."""
    from release.adapters.registry_server import LocalRegistry

    ours, raw, floor, sent = [], [], [], []
    for n in range(runs):
        with LocalRegistry(work / f"transfer-{n}") as server:
            ci = f"{server.address}/ci"
            refs = [line.split(" -> ")[1].split(" ")[0] for line in _pushed(root, ci)]
            floor.append(_run(_release("images.matrix", "--json"), root))  # a start-up
            started = time.perf_counter()
            for ref in refs:  # the raw tool: the same images, by tag, nothing checked
                tag = ref.rsplit("/", 1)[1]
                _run(["skopeo", "copy", "--all", "--preserve-digests", "--quiet",
                      "--src-tls-verify=false", "--dest-tls-verify=false",
                      f"docker://{ref}", f"docker://{server.address}/raw/{tag}"], root)  # fmt: skip
            raw.append(time.perf_counter() - started)
            since = len(_requests(server))
            ours.append(
                _run(
                    _release(
                        "images.publish",
                        "--from",
                        ci,
                        "--registry",
                        f"{server.address}/rel",
                        "--version",
                        RC[1:],
                    ),
                    root,
                )
            )
            asked = _requests(server)[since:]
            mounted = sum(m == "POST" and "mount=" in u for m, u in asked)
            streamed = sum(m == "PUT" and "/blobs/uploads/" in u for m, u in asked)
            sent.append((mounted, streamed))
    return {
        "figure": f"publish --from the transfer registry ({max(m for m, _ in sent)} blobs "
        f"mounted, {max(b for _, b in sent)} sent; floor {statistics.median(floor):.2f}s)",
        "ours_s": statistics.median(ours),
        "raw": "skopeo copy --preserve-digests of the same images",
        "raw_s": statistics.median(raw),
        "target": 1.5,
    }


def _requests(server: LocalRegistry) -> list[tuple[str, str]]:
    """(method, path) of each request the registry's access log holds, in order."""
    import re

    return re.findall(r'"([A-Z]+) (/v2/\S*) HTTP', server.log.read_text(errors="replace"))


def _pushed(root: Path, ci: str) -> list[str]:
    """The lines ``images.push`` says as it pushes this checkout's images to ``ci``."""
    proc = subprocess.run(
        _release("images.push", "--registry", ci, "--version", RC[1:]), cwd=root, env=_ENV, capture_output=True,
        text=True, check=True,
    )  # fmt: skip
    return [line for line in proc.stdout.splitlines() + proc.stderr.splitlines() if " -> " in line]


def _promote_figure(root: Path, server: object, runs: int) -> Figure:
    from release.adapters.registry_server import LocalRegistry
    from release.flows.context import ReleaseContext
    from release.flows.manifest_store import published_manifest
    from release.images.promote_registry import final_copies, promote_in_registry

    assert isinstance(server, LocalRegistry)
    _run(_release("manifest"), root)
    ctx = ReleaseContext(root)
    commit = str(ctx.repo.rev(RC))
    read = published_manifest(ctx.repo, RC, commit)
    assert read is not None and ctx.config.matrix is not None
    rc = read.manifest
    ours, hand, blobs = [], [], []
    for n in range(runs):
        final = f"v0.1.{n}"
        ctx.repo.run("tag", final, RC, mutating=True)
        before = server.traffic()
        started = time.perf_counter()
        os.chdir(root)
        promote_in_registry(
            ctx, rc, final_tag=final, final_version=final[1:], commit=commit, say=lambda _: None
        )
        ours.append(time.perf_counter() - started)
        blobs.append(server.traffic().uploads - before.uploads)
        # the hand route's tags
        copies, _ = final_copies(read.manifest, ctx.config.matrix, f"h{final}")
        platform = [c for c in copies if c.ref.rsplit(":", 1)[1].endswith(("amd64", "arm64"))]
        indexes = [c for c in copies if c not in platform]
        started = time.perf_counter()
        for c in platform:
            source = f"{c.ref.rsplit(':', 1)[0]}@{c.digest}"
            _run([DOCKER, "pull", "--quiet", source], root)
            _run([DOCKER, "tag", source, c.ref], root)
            _run([DOCKER, "push", "--quiet", c.ref], root)
            _run([DOCKER, "image", "rm", c.ref], root)
        for c in indexes:
            members = [p.ref for p in platform if _group(p.ref) == _group(c.ref)] or [
                p.ref for p in platform
            ]
            env = {"DOCKER_CLI_EXPERIMENTAL": "enabled"}
            _run([DOCKER, "manifest", "create", "--insecure", c.ref, *members], root, env)
            _run([DOCKER, "manifest", "push", "--insecure", "--purge", c.ref], root, env)
        hand.append(time.perf_counter() - started)
    return {
        "figure": f"promote in the registry, {len(copies)} tags ({max(blobs)} blob uploads)",
        "ours_s": statistics.median(ours),
        "raw": "the hand route: docker pull/tag/push, docker manifest create/push",
        "raw_s": statistics.median(hand),
        "target": None,
    }


def _group(ref: str) -> str:
    tag = ref.rsplit(":", 1)[1]
    return "cu128" if "cu128" in tag else "cu129"


def _arm64_figure(root: Path, runs: int) -> Figure | None:
    from release.adapters.emulation import emulation_problem

    if emulation_problem("linux/arm64") is not None:
        return None
    build = _release("images.build", "--no-cache")
    arm = statistics.median(_run([*build, "--variant", "cu129-arm64"], root) for _ in range(runs))
    amd = statistics.median(_run([*build, "--variant", "cu129-amd64"], root) for _ in range(runs))
    return {
        "figure": "images.build of the arm64 image under emulation, no cache",
        "ours_s": arm,
        "raw": "the same build of the amd64 image",
        "raw_s": amd,
        "target": None,
    }


def _missing() -> str | None:
    from release.adapters.registry_server import registry_binary

    version = subprocess.run(
        [DOCKER, "version", "--format", "{{.Server.Version}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if version.returncode != 0:
        return "no Docker Engine answers; start one (dockerd &)"
    if registry_binary() is None or shutil.which("skopeo") is None:
        return "no docker-registry or skopeo here (apt-get install docker-registry skopeo)"
    return None


def _cleanup() -> None:
    proc = subprocess.run(
        [DOCKER, "images", "--format", "{{.Repository}}:{{.Tag}}", f"{NAME}*"],
        capture_output=True,
        text=True,
        check=False,
    )
    refs = [r for r in proc.stdout.split() if not r.endswith(":<none>")]
    if refs:
        subprocess.run([DOCKER, "image", "rm", "--force", *refs], capture_output=True, check=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--quick", action="store_true", help="one variant (cu129) and one run of each figure"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.runs = 1
    why = _missing()
    if why is not None:
        print(f"publishing figures: not run: {why}")
        return 0
    from benchmarks.images import print_table
    from release.adapters.emulation import emulation_problem

    arm64 = emulation_problem("linux/arm64") is None
    print(
        f"publishing figures ({args.runs} runs each, medians; arm64 {'emulated' if arm64 else 'not run: no emulation'})"
    )
    figures: list[Figure] = []
    home = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="release-bench-registry-") as tmp:
        try:
            root = _engine_repo(Path(tmp), arm64, args.quick)
            publish, server = _publish_figure(root, Path(tmp), args.runs)
            figures.append(publish)
            figures.append(_promote_figure(root, server, args.runs))
            figures.append(_publish_from_figure(root, Path(tmp), args.runs))
            arm = _arm64_figure(root, max(1, args.runs - 1))
            if arm is not None:
                figures.append(arm)
            server.stop()  # type: ignore[attr-defined]
        finally:
            os.chdir(home)
            _cleanup()
    print_table(figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

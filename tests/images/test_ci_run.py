"""The generated GitHub Actions workflow, run here job by job as a runner would: each job
in a fresh clone, its ``run`` steps in bash with the job's env, artifacts handed over by
name, and the engine without the project's images when a job starts (a fresh runner).
A small engine of our own, one variant: build, smoke, then the manifest merge; the image
travels as an artifact, or through a registry on loopback (Debian's docker-registry).
No job writes under ``.git`` (its files compared before and after each job), the merged
manifest is complete, and a pulled image of another commit is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import invoke.vendor.yaml as yaml
import pytest

from release.adapters.config_file import load_config
from release.adapters.engine import ContainerEngine
from release.adapters.registry_server import LocalRegistry
from release.core.ci_config import parse_ci
from release.core.pipelines import INSTALL_ENV
from tests.ci_runner import Artifacts
from tests.ci_support import PINNED, pipeline_text
from tests.conftest import run_cli
from tests.docker_support import purge, remove_repository
from tests.engine_support import BASE_1291, Repo, make_engine_repo

images = pytest.mark.images


def git_files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root/.git`` with its size and modification time."""
    git = root / ".git"
    return {
        p.relative_to(git).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in git.rglob("*")
        if p.is_file()
    }


class Runner:
    """Runs one workflow's jobs on this machine, each in a clone of ``origin``."""

    def __init__(self, origin: Repo, work: Path, engine: ContainerEngine) -> None:
        self.origin = origin
        self.engine = engine
        self.work = work
        self.kept = Artifacts(work / "artifacts")
        self.store = self.kept.store
        bin_dir = str(Path(sys.executable).parent)  # nox and release, as pip put them
        self.env = {**origin.env, "PATH": bin_dir + os.pathsep + os.environ["PATH"]}
        self.tag = "v0.1.0rc1"  # the pushed tag the jobs run for
        self.jobs: dict[str, Any] = {}
        self.printed: dict[str, str] = {}  # job -> what its steps printed

    def run(self, job_id: str, job: dict[str, Any]) -> dict[str, tuple[int, int]]:
        """Run ``job``; what changed under its clone's ``.git`` (empty: nothing)."""
        remove_repository(self.engine, self.origin.name)  # a fresh runner has none of them
        workspace = self.work / self.tag / job_id / "repo"
        subprocess.run(
            ["git", "clone", "--quiet", str(self.origin.root), str(workspace)],
            env=self.origin.env,
            check=True,
        )
        before = git_files(workspace)
        env = {
            **self.env,
            **{
                key: value.replace("${{ github.workspace }}", str(workspace))
                for key, value in (job.get("env") or {}).items()
            },
        }
        env |= {"GITHUB_REF_NAME": self.tag, "GITHUB_REF_TYPE": "tag"}  # an rc's push
        for step in job["steps"][1:]:  # the first is actions/checkout: the clone above
            uses = step.get("uses", "")
            condition = step.get("if")
            assert condition in (None, "github.ref_type == 'tag'"), condition  # read, not skipped
            if INSTALL_ENV in step.get("env", {}):
                # the job's Python is this test environment's, with this tool: its pinned
                # install runs for real in test_ci_install.py and test_ci_pipelines.py
                assert step["env"][INSTALL_ENV] == PINNED.requirement
                continue
            if "run" in step:
                proc = subprocess.run(
                    ["bash", "-e", "-c", step["run"]],
                    cwd=workspace,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=600,
                    check=False,
                )
                assert proc.returncode == 0, f"{job_id}: {step['run']}\n{proc.stdout}{proc.stderr}"
                self.printed[job_id] = self.printed.get(job_id, "") + proc.stdout + proc.stderr
            elif uses.startswith("actions/upload-artifact"):
                self.kept.upload(workspace, step["with"])
            elif uses.startswith("actions/download-artifact"):
                self.kept.download(workspace, step["with"])
        after = git_files(workspace)
        return {k: v for k, v in after.items() if before.get(k) != v}


@pytest.fixture(scope="module")
def ci_registry(registry: LocalRegistry) -> str:
    """The CI path of the module's registry (Debian's docker-registry on loopback)."""
    return f"{registry.address}/ci"


@pytest.fixture
def engine_repo(docker: ContainerEngine, tmp_path: Path) -> Iterator[Repo]:
    repo = make_engine_repo(
        tmp_path / "engine",
        tmp_path / "home",
        variants=[{"id": "one", "cuda": "12.9.1", "base-image": BASE_1291}],
        checks=[{"name": "says hello", "command": ["echo", "hello"], "expect-output": "hello"}],
        default="one",
    )
    try:
        yield repo
    finally:
        purge(docker, repo.name, repo.head)


def run_workflow(repo: Repo, work: Path, engine: ContainerEngine, ci_registry: str) -> Runner:
    """Every job of the workflow ``release ci --format github`` writes, in order."""
    matrix = load_config(repo.root).matrix
    assert matrix is not None
    repo.git("tag", "-d", "v0.1.0")  # the workflow builds an rc (a final is promoted)
    repo.git("tag", "v0.1.0rc1")
    # push-manifest = false: no job records a note, so none writes under .git (the one
    # that records and pushes it runs in tests/images/test_ci_pipelines.py)
    settings = parse_ci({"push-manifest": False})
    text = pipeline_text(matrix, "github", registry=ci_registry, settings=settings)
    workflow = yaml.safe_load(text)
    jobs = workflow["jobs"]
    assert list(jobs) == ["build-one", "smoke-one", "manifest"]
    runner = Runner(repo, work, engine)
    runner.jobs = jobs
    for job_id, job in jobs.items():
        changed = runner.run(job_id, job)
        assert changed == {}, f"{job_id} wrote under .git: {sorted(changed)}"
    # the logs and records went to RELEASE_STATE_DIR, beside the clone
    jobs_of = work / "v0.1.0rc1"
    assert (jobs_of / "build-one" / "release-state" / "logs" / "build-one.log").exists()
    assert (jobs_of / "smoke-one" / "release-state" / "smoke" / "0.1.0rc1" / "one.json").exists()
    return runner


def merged(runner: Runner, repo: Repo) -> dict[str, Any]:
    """The manifest the last job merged, complete, the smoke on the image the build made."""
    document = json.loads((runner.store / "manifest" / "manifest.json").read_text("utf-8"))
    assert document["tag"] == "v0.1.0rc1" and document["commit"] == repo.head
    one = document["variants"]["one"]
    assert one["build"]["image_id"].startswith("sha256:")
    assert one["smoke"]["passed"] is True
    assert one["smoke"]["image_id"] == one["build"]["image_id"]
    assert "says hello" in [c["name"] for c in one["smoke"]["checks"]]
    assert one["snapshot"]["status"] == "omitted"
    return document


@images
def test_the_workflow_with_the_image_as_an_artifact(
    engine_repo: Repo, tmp_path: Path, docker: ContainerEngine
) -> None:
    runner = run_workflow(engine_repo, tmp_path / "runner", docker, "")
    assert sorted(runner.kept.files) == [
        "image-one",
        "manifest",
        "manifest-parts-build-one",
        "manifest-parts-smoke-one",
    ]
    merged(runner, engine_repo)
    smoke_tree = tmp_path / "runner" / "smoke-one" / "repo"
    assert not list(smoke_tree.glob("image-*.tar.gz"))  # removed once loaded


@images
def test_the_workflow_with_the_image_through_a_registry(
    engine_repo: Repo, tmp_path: Path, docker: ContainerEngine, ci_registry: str
) -> None:
    runner = run_workflow(engine_repo, tmp_path / "runner", docker, ci_registry)
    assert not [name for name in runner.kept.files if name.startswith("image-")]
    merged(runner, engine_repo)
    aliases = docker.run(
        ["images", "--format", "{{.Repository}}", "--filter", f"reference={ci_registry}/*/*"]
    )
    assert aliases.stdout.split() == []  # the registry aliases are dropped on both sides

    # rc2 of the same sources, on a fresh runner: its build job builds from rc1's layers,
    # read through the registry (the cache image rc1's push kept)
    from tests.registry_support import served

    engine_repo.git("tag", "v0.1.0rc2")
    runner.tag = "v0.1.0rc2"
    assert runner.run("build-one", runner.jobs["build-one"]) == {}
    cache = f"{ci_registry}/{engine_repo.name}:cache-one"
    assert f"cache from {cache}" in runner.printed["build-one"], runner.printed["build-one"]
    found = [
        served(f"{ci_registry}/{engine_repo.name}:{tag}") for tag in ("v0.1.0rc1", "v0.1.0rc2")
    ]
    assert None not in found
    rc1, rc2 = (manifest for _, manifest in found)  # type: ignore[misc]
    assert rc1["config"] != rc2["config"]  # type: ignore[index]  # rc2's own image: its version
    assert rc2["layers"] == rc1["layers"]  # type: ignore[index]  # every layer rc1's


@images
def test_a_pulled_image_of_another_commit_is_refused(
    engine_repo: Repo, docker: ContainerEngine, ci_registry: str
) -> None:
    built = engine_repo.release("images.build")
    assert built.code == 0, built.output
    pushed = engine_repo.release("images.push", "--registry", ci_registry)
    assert pushed.code == 0, pushed.output
    tag = f"{engine_repo.name}:v0.1.0"
    assert f"push(one): {tag} -> {ci_registry}/{tag}" in pushed.stdout
    built_by = engine_repo.head
    (engine_repo.root / "NEWS").write_text("later\n")
    engine_repo.git("add", "NEWS")
    engine_repo.git("commit", "--quiet", "-m", "A later commit")
    remove_repository(docker, engine_repo.name)
    pulled = engine_repo.release("images.pull", "--registry", ci_registry, "--version", "0.1.0")
    assert pulled.code == 3, pulled.output
    assert pulled.stderr.strip() == (
        f"error: {ci_registry}/{tag} is not this checkout's build: built from {built_by}, "
        f"not {engine_repo.head}; not used"
    )
    assert docker.image_id(tag) is None and docker.image_id(f"{ci_registry}/{tag}") is None
    unbuilt = engine_repo.release("images.push", "--registry", ci_registry)
    assert unbuilt.code == 3, unbuilt.output  # nothing of this commit is built here
    assert "is not here: build it first" in unbuilt.stderr
    missing = run_cli(engine_repo.root, "images.push", env=engine_repo.env)
    assert missing.code == 2 and "no registry: pass --registry" in missing.stderr


@images
def test_the_publish_job_takes_the_images_from_the_transfer_registry_and_pulls_none(
    engine_repo: Repo, tmp_path: Path, docker: ContainerEngine, ci_registry: str
) -> None:
    from tests.registry_support import served

    release = f"{ci_registry.split('/')[0]}/rel"
    config = engine_repo.root / "pyproject.toml"
    text = config.read_text("utf-8").replace(
        "[tool.release.images]\n", f'[tool.release.images]\nregistry = "{release}"\n', 1
    )
    config.write_text(text, "utf-8")
    engine_repo.git("commit", "--quiet", "-am", "Publish to the release registry")
    matrix = load_config(engine_repo.root).matrix
    assert matrix is not None and matrix.registry == release
    engine_repo.git("tag", "-d", "v0.1.0")
    engine_repo.git("tag", "v0.1.0rc1")
    settings = parse_ci({"push-manifest": False})
    jobs = yaml.safe_load(pipeline_text(matrix, "github", registry=ci_registry, settings=settings))[
        "jobs"
    ]
    assert list(jobs) == ["build-one", "smoke-one", "publish-one", "manifest"]
    runs = [s.get("run", "") for s in jobs["publish-one"]["steps"]]
    assert not any("images.pull" in r or "docker load" in r for r in runs), runs
    runner = Runner(engine_repo, tmp_path / "runner", docker)
    for job_id, job in jobs.items():
        assert runner.run(job_id, job) == {}, job_id
        if job_id == "publish-one":  # its runner started empty and stayed so
            left = docker.run(["images", "--quiet", "--filter", f"reference={engine_repo.name}"])
            assert left.stdout.split() == []
            aliases = docker.run(["images", "--quiet", "--filter", f"reference={ci_registry}/*/*"])
            assert aliases.stdout.split() == []
    document = json.loads((runner.store / "manifest" / "manifest.json").read_text("utf-8"))
    published = document["variants"]["one"]["publish"]
    transfer = served(f"{ci_registry}/{engine_repo.name}:v0.1.0rc1")
    assert transfer is not None
    assert published["digest"] == transfer[0]  # digest exact: the build job's push
    assert published["image_id"] == document["variants"]["one"]["build"]["image_id"]
    index = served(f"{release}/{engine_repo.name}:v0.1.0rc1")
    assert index is not None and index[0] == published["index"]["digest"]
    assert [m["digest"] for m in index[1]["manifests"]] == [transfer[0]]  # type: ignore[index]

"""The image matrix as files for other builders and CI systems, without a Docker Engine:
``release bake`` (a buildx bake file) and ``release ci`` (a Buildkite pipeline or a GitHub
Actions workflow), checked against what ``images.build`` uses and against the session list
of a real ``nox -l --json -t images``."""

from __future__ import annotations

import json
import os
import posixpath
import subprocess
from pathlib import Path
from typing import Any

import invoke.vendor.yaml as yaml
import pytest

from release import __version__
from release.adapters.config_file import load_config
from release.core.matrix import ImageMatrix, parse_images
from release.core.pipelines import (
    PARTS_DIR,
    REVISION_LABEL,
    VARIANT_LABEL,
    pipeline_jobs,
)
from release.core.yaml_text import dump_yaml
from release.errors import ConfigError
from release.images.bake import UNSET_LABELS, bake_document, bake_json, target_name
from release.images.labels import labels_for
from release.images.source import BuildSource
from release.images.standin import BaseImage
from tests.ci_support import (
    COMMIT,
    PINNED,
    REGISTRY,
    as_written,
    buildkite_pipeline,
    github_workflow,
    pipeline_text,
    root_matrix,
)
from tests.conftest import run_cli, run_nox
from tests.matrix_support import sample_table

ROOT = Path(__file__).resolve().parents[2]
SHA = "0123456789abcdef0123456789abcdef01234567"
# how a job installs the tool where a test writes the pipelines with release ci: pinned by
# a commit (how this test environment has it installed is no test's business)
PIN = f"release @ git+https://git.example.com/org/release@{COMMIT}"


def source(**changes: Any) -> BuildSource:
    fields: dict[str, Any] = {
        "root": ROOT,
        "revision": SHA,
        "epoch": 1_767_225_600,
        "version": "0.31.0rc1",
        "tagged": True,
        "url": "https://github.com/example/tinyengine",
    }
    fields.update(changes)
    return BuildSource(**fields)


def nox_sessions(cwd: Path) -> list[str]:
    proc = run_nox(cwd, "-l", "--json", "-t", "images")
    assert proc.returncode == 0, proc.stderr
    return [s["session"] for s in json.loads(proc.stdout)]


# -- bake -----------------------------------------------------------------------------------


def test_bake_has_a_target_per_variant_with_builds_args_and_tags() -> None:
    matrix, src = root_matrix(), source()
    document = json.loads(bake_json(matrix, src))
    targets = document["target"]
    assert list(targets) == [target_name(v) for v in matrix.variants] == ["cu128", "cu129", "cu130"]
    assert document["group"]["default"]["targets"] == list(targets)
    resolved = BaseImage(
        "nvidia/cuda:x", "sha256:" + "1" * 64, False, "pulled", "sha256:" + "2" * 64
    )
    for variant in matrix.variants:
        target = targets[target_name(variant)]
        # the very functions images.build calls (release.images.build._build_one)
        assert target["args"] == matrix.build_args_for(variant, src.version)
        assert target["tags"] == [matrix.tag(variant, src.image_version)]
        built = labels_for(variant, src, resolved)
        assert target["labels"] == {k: v for k, v in built.items() if k not in UNSET_LABELS}
        assert not set(UNSET_LABELS) & set(target["labels"])
        assert posixpath.join(target["context"], target["dockerfile"]) == matrix.dockerfile
        assert "platforms" not in target
    assert targets["cu130"]["tags"] == ["example/tinyengine:v0.31.0rc1"]
    assert targets["cu130"]["args"]["INSTALL_SNAPSHOT_RUNTIME"] == "1"
    assert "INSTALL_SNAPSHOT_RUNTIME" not in targets["cu128"]["args"]
    labels = targets["cu129"]["labels"]
    assert labels["org.opencontainers.image.version"] == "0.31.0rc1"
    assert labels["org.opencontainers.image.revision"] == SHA
    assert labels["org.opencontainers.image.created"] == "2026-01-01T00:00:00Z"
    assert labels["org.opencontainers.image.source"] == "https://github.com/example/tinyengine"
    assert labels[VARIANT_LABEL] == "cu129" and labels["org.release.cuda"] == "12.9.1"


def test_bake_platforms_where_set_and_target_names_bake_accepts() -> None:
    table = sample_table()
    table["variants"][0]["platform"] = "linux/arm64"
    table["variants"][1]["id"] = "cu12.9"
    matrix = parse_images(table)
    assert matrix is not None
    targets = bake_document(matrix, source())["target"]
    first, second = (target_name(v) for v in matrix.variants[:2])
    assert targets[first]["platforms"] == ["linux/arm64"]
    assert second == "cu12_9" and "platforms" not in targets[second]
    table["variants"][0]["id"] = "cu12_9"  # two ids, one target name: refused, not merged
    clash = parse_images(table)
    assert clash is not None
    with pytest.raises(ConfigError, match="bake target 'cu12_9'"):
        bake_document(clash, source())


def test_bake_has_a_target_per_platform_row_in_step_with_the_build() -> None:
    table = sample_table()
    table["variants"][1]["platforms"] = ["linux/amd64", "linux/arm64"]
    matrix = parse_images(table)
    assert matrix is not None
    built = source()
    targets = bake_document(matrix, built)["target"]
    rows = matrix.rows_of(table["variants"][1]["id"])
    assert [r.platform for r in rows] == ["linux/amd64", "linux/arm64"]
    for row in rows:
        target = targets[target_name(row)]
        assert target["platforms"] == [row.platform]
        assert target["tags"] == [matrix.tag(row, built.image_version)]  # what images.build tags
        assert target["tags"][0].endswith("-" + row.platform.split("/")[1])
        assert target["args"] == matrix.build_args_for(row, built.version)
    assert len({t["tags"][0] for t in targets.values()}) == len(targets)


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@example.com",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@example.com",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def test_bake_task_writes_the_tagged_version_and_refuses_a_dirty_tree(tmp_path: Path) -> None:
    repo = tmp_path / "engine"
    (repo / "docker").mkdir(parents=True)
    (repo / "docker" / "Dockerfile").write_text("FROM scratch\n")
    (repo / "pyproject.toml").write_text(
        "[tool.release.images]\n"
        'name = "org/engine"\ndockerfile = "docker/Dockerfile"\ncontext = "."\n'
        '[[tool.release.images.variants]]\nid = "cu128"\ncuda = "12.8.1"\n'
        'base-image = "nvidia/cuda:12.8.1-base-ubuntu22.04"\nplatform = "linux/amd64"\n'
        '[[tool.release.images.variants]]\nid = "cu130"\ncuda = "13.0.1"\n'
        'base-image = "nvidia/cuda:13.0.1-base-ubuntu24.04"\n'
    )
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "engine")
    _git(repo, "tag", "-a", "v0.31.0rc1", "-m", "rc1")
    out = tmp_path / "bake" / "docker-bake.json"
    out.parent.mkdir()  # a directory given is never made (tests/functional/test_trust_paths.py)
    result = run_cli(repo, "bake", "--out", str(out))
    assert result.code == 0, result.stderr
    assert f"wrote {out}: 2 target(s) of org/engine" in result.stdout
    targets = json.loads(out.read_text())["target"]
    assert targets["cu128"]["tags"] == ["org/engine:v0.31.0rc1-cu128"]
    assert targets["cu130"]["tags"] == ["org/engine:v0.31.0rc1"]
    assert targets["cu128"]["platforms"] == ["linux/amd64"]
    assert targets["cu128"]["dockerfile"] == "docker/Dockerfile"
    head = _git(repo, "rev-parse", "HEAD")
    assert targets["cu130"]["labels"]["org.opencontainers.image.revision"] == head
    (repo / "stray.txt").write_text("not committed\n")  # in the context docker would send
    refused = run_cli(repo, "bake", "--out", str(out))
    assert refused.code == 3 and "--allow-dirty" in refused.stderr
    allowed = run_cli(repo, "bake", "--out", str(out), "--version", "0.31.0rc2", "--allow-dirty")
    assert allowed.code == 0, allowed.stderr
    assert json.loads(out.read_text())["target"]["cu130"]["tags"] == ["org/engine:v0.31.0rc2-dirty"]


# -- ci -------------------------------------------------------------------------------------


def _buildkite(matrix: ImageMatrix) -> dict[str, dict[str, Any]]:
    """The command steps by label (the block steps apart: tests/functional/test_ci_approval.py)."""
    parsed = yaml.safe_load(pipeline_text(matrix, "buildkite"))
    assert parsed == buildkite_pipeline(matrix)
    return {step["label"]: step for step in parsed["steps"] if "block" not in step}


def _github(matrix: ImageMatrix) -> dict[str, dict[str, Any]]:
    parsed = yaml.safe_load(pipeline_text(matrix, "github"))
    assert parsed == github_workflow(matrix)
    assert set(parsed) == {"name", "on", "permissions", "concurrency", "jobs"}  # "on": a key
    assert parsed["permissions"] == {}  # least privilege: each job says what it needs
    return {job["name"]: {**job, "id": key} for key, job in parsed["jobs"].items()}


def test_pipelines_have_exactly_noxs_image_sessions() -> None:
    sessions = nox_sessions(ROOT)
    assert "snapshot(cu130)" in sessions and "snapshot(cu128)" not in sessions
    matrix = root_matrix()
    assert [j.label for j in pipeline_jobs(matrix)] == [*sessions, "manifest"]
    assert list(_buildkite(matrix)) == [*sessions, "manifest"]
    assert list(_github(matrix)) == [*sessions, "manifest"]


def test_pipelines_follow_an_engines_own_rule(tmp_path: Path) -> None:
    text = (ROOT / "release" / "sample" / "engine" / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(text.replace('cuda = "!=12.*"', 'cuda = ">=12.9"'))
    (tmp_path / "noxfile.py").write_text(
        "from release.cli.nox_sessions import image_sessions\n\nimage_sessions()\n"
    )
    sessions = nox_sessions(tmp_path)
    matrix = load_config(tmp_path).matrix
    assert matrix is not None
    assert [j for j in sessions if j.startswith("snapshot(")] == [
        "snapshot(cu129)",
        "snapshot(cu130)",
    ]
    assert list(_buildkite(matrix))[:-1] == sessions == list(_github(matrix))[:-1]


def test_buildkite_steps_depend_on_their_build_and_carry_the_image() -> None:
    matrix = root_matrix()
    steps = _buildkite(matrix)
    keys = {label: step["key"] for label, step in steps.items()}
    for variant in matrix.ids:
        build = steps[f"build({variant})"]
        archive = f"image-{variant}.tar.gz"
        assert "depends_on" not in build
        # the values come from the step's env; the lines are the same for every variant
        assert build["env"]["RELEASE_CI_SESSION"] == f"build({variant})"
        assert build["env"]["RELEASE_CI_VARIANT"] == variant
        assert build["env"]["RELEASE_CI_ARCHIVE"] == archive
        assert 'nox -s "$$RELEASE_CI_SESSION"' in build["command"]
        save = build["command"][-1]
        assert save.startswith("docker save $$(docker image ls")
        assert save.endswith('| gzip > "$$RELEASE_CI_ARCHIVE"')
        assert f'"label={VARIANT_LABEL}=$$RELEASE_CI_VARIANT"' in save
        assert f'"label={REVISION_LABEL}=$$(git rev-parse HEAD)"' in save
        assert build["artifact_paths"] == [archive, f"{PARTS_DIR}/**/*"]
        for kind in ("smoke", "snapshot"):
            step = steps.get(f"{kind}({variant})")
            if step is None:
                continue
            assert step["depends_on"] == [build["key"]]
            assert step["env"]["RELEASE_CI_BUILD_STEP"] == build["key"]
            assert step["env"]["RELEASE_CI_ARCHIVE"] == archive
            assert step["env"]["RELEASE_CI_SESSION"] == f"{kind}({variant})"
            assert step["command"][-4:] == [
                'export RELEASE_STATE_DIR="$$(mktemp -d)"',
                'buildkite-agent artifact download "$$RELEASE_CI_ARCHIVE" . '
                '--step "$$RELEASE_CI_BUILD_STEP"',
                'gunzip -c "$$RELEASE_CI_ARCHIVE" | docker load && rm -f "$$RELEASE_CI_ARCHIVE"',
                'nox -s "$$RELEASE_CI_SESSION"',
            ]
            assert step["artifact_paths"] == [f"{PARTS_DIR}/**/*"]
    for label, step in steps.items():
        assert step["env"]["RELEASE_CI_INSTALL"] == PINNED.requirement
        assert step["env"]["RELEASE_CI_NOX"] == PINNED.nox
        if label != "manifest":
            assert step["env"]["RELEASE_MANIFEST_DIR"] == PARTS_DIR
    final = steps["manifest"]
    sessions = [k for label, k in keys.items() if label != "manifest"]
    assert final["depends_on"] == [*sessions, "approve-manifest"]  # it records: after a block
    assert final["command"][-1] == (
        f"release manifest --parts {PARTS_DIR} --out manifest.json --push"
    )  # recorded as the tag's note and pushed, with the agent's own git credentials
    assert "agents" not in final
    queued = buildkite_pipeline(matrix, runner="gpu")["steps"]
    assert all(s["agents"] == {"queue": "gpu"} for s in queued if "block" not in s)


def test_github_jobs_need_their_build_and_pass_artifacts() -> None:
    matrix = root_matrix()
    jobs = _github(matrix)
    for label, job in jobs.items():
        steps = job["steps"]
        assert steps[0]["uses"].startswith("actions/checkout@")
        assert steps[0]["with"] == {"fetch-depth": 0, "persist-credentials": False}
        assert steps[2] == {
            "run": 'python -m pip install --quiet "$RELEASE_CI_INSTALL" "$RELEASE_CI_NOX"',
            "env": {"RELEASE_CI_INSTALL": PINNED.requirement, "RELEASE_CI_NOX": PINNED.nox},
        }
        assert job["runs-on"] == "ubuntu-latest"
        pushes = label == "manifest"  # the one job that writes: the tag's note, pushed
        assert job["permissions"] == {"contents": "write" if pushes else "read"}
        assert job["timeout-minutes"] >= 1
        runs = [s["run"] for s in steps if "run" in s]
        uploads = [s["with"] for s in steps if s.get("uses", "").startswith("actions/upload-")]
        downloads = [s["with"] for s in steps if s.get("uses", "").startswith("actions/download-")]
        if label == "manifest":
            assert job["needs"] == [j["id"] for j in jobs.values() if j is not job]
            assert downloads == [
                {"pattern": f"{PARTS_DIR}-*", "path": PARTS_DIR, "merge-multiple": True}
            ]
            assert runs[-1].endswith(
                f"release manifest --parts {PARTS_DIR} --out manifest.json --push"
            )
            pushing = [s for s in steps if "run" in s and "--push" in s["run"]]
            assert pushing[0]["env"] == {"PUSH_TOKEN": "${{ github.token }}"}
            continue
        kind, variant = label.rstrip(")").split("(")
        archive = f"image-{variant}.tar.gz"
        assert job["env"] == {
            "RELEASE_MANIFEST_DIR": PARTS_DIR,
            "RELEASE_STATE_DIR": "${{ github.workspace }}/../release-state",
            "RELEASE_CI_SESSION": label,
            "RELEASE_CI_VARIANT": variant,
            "RELEASE_CI_ARCHIVE": archive,
        }
        assert 'nox -s "$RELEASE_CI_SESSION"' in runs
        assert {"name": f"{PARTS_DIR}-{job['id']}", "path": PARTS_DIR} | {
            "if-no-files-found": "error"
        } in uploads
        if kind == "build":
            assert "needs" not in job and not downloads
            assert runs[-1].startswith("docker save $(docker image ls")
            assert {"name": f"image-{variant}", "path": archive, "if-no-files-found": "error"} in (
                uploads
            )
        else:
            assert job["needs"] == [jobs[f"build({variant})"]["id"]]
            assert downloads == [{"name": f"image-{variant}"}]
            assert runs[-2:] == [
                'gunzip -c "$RELEASE_CI_ARCHIVE" | docker load && rm -f "$RELEASE_CI_ARCHIVE"',
                'nox -s "$RELEASE_CI_SESSION"',
            ]


def test_nothing_in_the_pipelines_writes_under_git() -> None:
    matrix = root_matrix()
    for fmt in ("buildkite", "github"):
        text = pipeline_text(matrix, fmt)
        assert ".git/" not in text.replace(".github/", "")
        assert not PARTS_DIR.startswith(".git")


def test_ci_task_writes_each_format_and_refuses_an_unknown_one(tmp_path: Path) -> None:
    from release.adapters.tool_source import nox_pin
    from release.core.tool_pins import pin_requirement

    for fmt, name in (("buildkite", "pipeline.yml"), ("github", "images.yml")):
        (tmp_path / fmt).mkdir()
        result = run_cli(
            ROOT, "ci", "--format", fmt, "--out", str(tmp_path / fmt), "--install", PIN
        )
        assert result.code == 0, result.stderr
        written = (tmp_path / fmt / name).read_text()
        install = pin_requirement(PIN, "--install", nox_pin(), __version__)
        # [tool.release.github] release is true unless set: the tag's job makes the release
        body = pipeline_text(root_matrix(), fmt, install=install, github_release=True)
        assert written == as_written(body, ["release", "ci", "--format", fmt, "--install", PIN])
        assert "8 jobs for rc and post tags (build(cu128)" in result.stdout
        assert f"the jobs install {PIN} and {nox_pin()} (a VCS URL at a commit" in result.stdout
        assert "no promote job: no registry in [tool.release.images]" in result.stdout
        assert "github-release" in result.stdout and "the tag's job makes its GitHub release" in (
            result.stdout
        )
    bad = run_cli(ROOT, "ci", "--format", "jenkins", "--out", str(tmp_path))
    assert bad.code == 2 and "use buildkite or github" in bad.stderr


def test_yaml_text_reads_back_as_written() -> None:
    document = {
        "on": {"yes": "no", "12.9": 12.9},
        "strings": ["on", "off", "null", "~", "12.9", "a: b", "#x", "'q'", '"d"', "é\n\tz", ""],
        "nested": [{"a": [1, True, None], "b": {}}, [], ["x", ["y"]]],
        "key with space": "v",
    }
    text = dump_yaml(document, ["made here"])
    assert text.startswith("# made here\n")
    assert yaml.safe_load(text) == document


PUSH = 'release images.push --variant "$RELEASE_CI_VARIANT" --registry "$RELEASE_CI_REGISTRY"'
PULL = 'release images.pull --variant "$RELEASE_CI_VARIANT" --registry "$RELEASE_CI_REGISTRY"'
PUBLISH_FROM = (
    'release images.publish --variant "$RELEASE_CI_VARIANT" --from "$RELEASE_CI_REGISTRY"'
)


def test_with_a_registry_images_travel_through_it_not_as_artifacts() -> None:
    matrix = root_matrix()
    github = github_workflow(matrix, registry=REGISTRY)["jobs"]
    buildkite = {s["key"]: s for s in buildkite_pipeline(matrix, registry=REGISTRY)["steps"]}
    for job in pipeline_jobs(matrix):
        runs = [s["run"] for s in github[job.key]["steps"] if "run" in s]
        named = [s["with"].get("name", "") for s in github[job.key]["steps"] if "with" in s]
        commands = [c.replace("$$", "$") for c in buildkite[job.key]["command"]]
        assert not any(n.startswith("image-") for n in named)
        assert not any("docker save" in c or "docker load" in c for c in [*runs, *commands])
        if job.kind == "manifest":
            continue
        for env in (github[job.key]["env"], buildkite[job.key]["env"]):
            assert env["RELEASE_CI_REGISTRY"] == REGISTRY
            assert env["RELEASE_CI_VARIANT"] == job.variant and "RELEASE_CI_ARCHIVE" not in env
        if job.kind == "build":
            assert runs[-1] == PUSH and commands[-1] == PUSH
            assert buildkite[job.key]["artifact_paths"] == [f"{PARTS_DIR}/**/*"]
        else:
            assert runs[-2:] == [PULL, 'nox -s "$RELEASE_CI_SESSION"'] == commands[-2:]


def test_ci_registry_is_configuration_and_the_option_overrides_it(tmp_path: Path) -> None:
    table = sample_table()
    table["ci-registry"] = REGISTRY + "/"
    matrix = parse_images(table)
    assert matrix is not None and matrix.ci_registry == REGISTRY
    jobs = github_workflow(matrix)["jobs"]
    assert jobs["smoke-cu129"]["env"]["RELEASE_CI_REGISTRY"] == REGISTRY
    assert PULL in [s.get("run") for s in jobs["smoke-cu129"]["steps"]]
    assert "docker load" in pipeline_text(matrix, "github", registry="")  # "": artifacts
    table["ci-registry"] = "Not A Registry"
    with pytest.raises(ConfigError) as caught:
        parse_images(table)
    assert "ci-registry: 'Not A Registry' is not a registry path" in str(caught.value)
    result = run_cli(
        ROOT, "ci", "--format", "buildkite", "--out", str(tmp_path), "--registry", "a b"
    )
    assert result.code == 2 and "--registry: 'a b' is not a registry path" in result.stderr
    result = run_cli(
        ROOT, "ci", "--format", "buildkite", "--out", str(tmp_path), "--registry", REGISTRY,
        "--install", PIN,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    written = (tmp_path / "pipeline.yml").read_text()
    assert f'--install "{PIN}" --registry {REGISTRY}\n' in written  # the header says how
    steps = {s["key"]: s for s in yaml.safe_load(written)["steps"]}
    assert steps["build-cu130"]["env"]["RELEASE_CI_REGISTRY"] == REGISTRY
    assert PUSH.replace("$", "$$") in steps["build-cu130"]["command"]


# -- [tool.release.ci] and what a job checks -----------------------------------------------


def test_ci_settings_choose_runners_and_timeouts_by_job_kind_and_platform() -> None:
    from release.core.ci_config import CiSettings, parse_ci

    settings = parse_ci(
        {
            "runners": {"build": "b", "build-arm64": "arm", "smoke": "s", "default": "d"},
            "timeouts": {"build": 240},
        }
    )
    assert settings.runner("build") == "b" and settings.runner("build", "arm64") == "arm"
    assert settings.runner("gpu") == "s"  # no gpu label: the smoke's
    assert settings.runner("snapshot") == "d" and settings.queue("manifest", None, "cli") == "cli"
    assert CiSettings().queue("build") is None and CiSettings().runner("build") == "ubuntu-latest"
    assert settings.timeout("build") == 240 and settings.timeout("smoke") == 30
    for table, said in (
        ({"runners": {"biuld": "x"}}, "runners.biuld: not a job kind"),
        ({"runners": {"build": "a\nb"}}, "expected a runner label"),
        ({"timeouts": {"build": 0}}, "expected minutes, 1 to 4320"),
        ({"timeouts": {"snap": 5}}, "timeouts.snap: not a job kind"),
        ({"python": "3"}, "expected a Python version"),
        ({"install": "a\nb"}, "install: expected a pinned pip requirement (one line)"),
        ({"requirements": "../r.txt"}, "requirements: '../r.txt' leads out of the work tree"),
        (
            {"install": "release==1", "requirements": "r.txt"},
            "install and requirements: give one",
        ),
        ({"runner": {}}, "did you mean 'runners'?"),
    ):
        with pytest.raises(ConfigError) as refused:
            parse_ci(table)
        assert said in refused.value.one_line(), table


def test_the_jobs_install_this_tool_in_their_own_python_never_the_engine(tmp_path: Path) -> None:
    from importlib.metadata import version

    unpinned = "release @ git+https://git.example.com/org/release"
    settings_text = f'[tool.release.ci]\npython = "3.12"\ninstall = "{unpinned}"\n'
    text = (ROOT / "release" / "sample" / "engine" / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(text + settings_text)
    (tmp_path / "noxfile.py").write_text(
        "from release.cli.nox_sessions import image_sessions\n\nimage_sessions()\n"
    )
    subprocess.run(["git", "init", "--quiet", str(tmp_path)], check=True)
    before = sorted(p.name for p in tmp_path.iterdir())
    refused = run_cli(tmp_path, "ci", "--format", "github", "--out", str(tmp_path))
    assert refused.code == 3, refused.output
    assert f"[tool.release.ci] install {unpinned!r} is not pinned" in refused.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written
    (tmp_path / "pyproject.toml").write_text(text + settings_text.replace(unpinned, PIN))
    result = run_cli(tmp_path, "ci", "--format", "github", "--out", str(tmp_path))
    assert result.code == 0, result.stderr
    workflow = yaml.safe_load((tmp_path / "images.yml").read_text())
    steps = workflow["jobs"]["build-cu128"]["steps"]
    assert steps[1]["with"] == {"python-version": "3.12"}
    assert steps[2] == {
        "run": 'python -m pip install --quiet "$RELEASE_CI_INSTALL" "$RELEASE_CI_NOX"',
        "env": {"RELEASE_CI_INSTALL": PIN, "RELEASE_CI_NOX": f"nox=={version('nox')}"},
    }
    assert all("-e ." not in s.get("run", "") for s in steps)  # never the engine
    bad = tmp_path / "pyproject.toml"
    bad.write_text(text + settings_text + "runtimes = 1\n")
    refused = run_cli(tmp_path, "ci", "--format", "github", "--out", str(tmp_path))
    assert refused.code == 2 and "[tool.release.ci]: unknown key 'runtimes'" in refused.stderr


def _sample_checkout(tmp_path: Path) -> Path:
    """A git work tree at ``tmp_path`` with the sample engine's pyproject.toml (its jobs
    installing the tool by a commit) and no noxfile.py; an empty ``out`` directory in it,
    returned."""
    text = (ROOT / "release" / "sample" / "engine" / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(f'{text}[tool.release.ci]\ninstall = "{PIN}"\n')
    subprocess.run(["git", "init", "--quiet", str(tmp_path)], check=True)
    out = tmp_path / "out"
    out.mkdir()
    return out


def test_ci_checks_the_engines_noxfile_and_writes_it_only_when_asked(tmp_path: Path) -> None:
    out = _sample_checkout(tmp_path)
    refused = run_cli(tmp_path, "ci", "--format", "github", "--out", str(out))
    assert refused.code == 3 and "pass --write-noxfile" in refused.stderr
    assert not (out / "images.yml").exists() and not (tmp_path / "noxfile.py").exists()
    (tmp_path / "noxfile.py").write_text("import nox\n")
    other = run_cli(tmp_path, "ci", "--format", "github", "--out", str(out), "--write-noxfile")
    assert other.code == 3 and "noxfile.py does not call image_sessions" in other.stderr
    assert (tmp_path / "noxfile.py").read_text() == "import nox\n"  # never replaced
    (tmp_path / "noxfile.py").unlink()
    made = run_cli(tmp_path, "ci", "--format", "github", "--out", str(out), "--write-noxfile")
    assert made.code == 0, made.stderr
    assert f"wrote {tmp_path / 'noxfile.py'}" in made.stdout
    assert "image_sessions()" in (tmp_path / "noxfile.py").read_text()
    sessions = run_nox(tmp_path, "-l")
    assert "build(cu128)" in sessions.stdout


def test_a_refused_ci_writes_no_noxfile_either(tmp_path: Path) -> None:
    out = _sample_checkout(tmp_path)
    refused = run_cli(
        tmp_path, "ci", "--format", "github", "--out", str(out), "--write-noxfile",
        "--registry", "a b",
    )  # fmt: skip
    assert refused.code == 2 and "is not a registry path" in refused.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [".git", "out", "pyproject.toml"]
    assert list(out.iterdir()) == []


def test_check_tag_says_whether_this_checkout_is_the_tags(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    origin.mkdir()
    _git(origin, "init", "--quiet", "--initial-branch=main")
    (origin / "pyproject.toml").write_text('[tool.release]\nmain-branch = "main"\n')
    _git(origin, "add", "pyproject.toml")
    _git(origin, "commit", "--quiet", "-m", "one")
    _git(origin, "tag", "-a", "v0.31.0rc1", "-m", "rc1")
    good = run_cli(origin, "check", "--tag", "v0.31.0rc1")
    assert good.code == 0 and "ok           tag v0.31.0rc1: HEAD is v0.31.0rc1" in good.stdout
    # a checkout by commit with no tags (a Buildkite agent's): told to fetch them
    agent = tmp_path / "agent"
    agent.mkdir()
    _git(agent, "init", "--quiet")
    _git(agent, "fetch", "--quiet", "--no-tags", str(origin), "main")
    _git(agent, "checkout", "--quiet", "FETCH_HEAD")
    untagged = run_cli(agent, "check", "--tag", "v0.31.0rc1")
    assert untagged.code == 1 and "fetch the tags first" in untagged.stdout
    _git(agent, "fetch", "--quiet", "--tags", str(origin))
    assert run_cli(agent, "check", "--tag", "v0.31.0rc1").code == 0
    (origin / "NEWS").write_text("later\n")
    _git(origin, "add", "NEWS")
    _git(origin, "commit", "--quiet", "-m", "later")
    moved = run_cli(origin, "check", "--tag", "v0.31.0rc1")
    assert moved.code == 1 and "check out the tag" in moved.stdout
    for name, said in (("", "none given"), ("nightly", "not a release tag")):
        assert said in run_cli(origin, "check", "--tag", name).stdout
    # the pipeline's kind: a final is never built, an rc never promoted
    _git(origin, "tag", "-a", "v0.31.0", "-m", "final")
    assert run_cli(origin, "check", "--tag", "v0.31.0", "--job", "promote").code == 0
    built = run_cli(origin, "check", "--tag", "v0.31.0", "--job", "build")
    assert built.code == 1 and "a final: its images are the last rc's" in built.stdout
    _git(origin, "tag", "-a", "v0.31.1rc1", "-m", "rc1")
    promoted = run_cli(origin, "check", "--tag", "v0.31.1rc1", "--job", "promote")
    assert promoted.code == 1 and "not a final" in promoted.stdout
    assert run_cli(origin, "check", "--tag", "v0.31.1rc1", "--job", "build").code == 0


def test_a_registry_adds_publish_jobs_and_a_promote_pipeline_for_finals() -> None:
    from dataclasses import replace

    from tests.ci_support import github_promote

    matrix = replace(root_matrix(), registry="registry.example.com/org/release")
    jobs = {j.key: j for j in pipeline_jobs(matrix)}
    assert [k for k in jobs if k.startswith("publish-")] == [f"publish-{g}" for g in matrix.groups]
    assert jobs["publish-cu130"].needs == ("build-cu130", "smoke-cu130", "snapshot-cu130")
    assert set(jobs["manifest"].needs) == set(jobs) - {"manifest"}
    images = github_workflow(matrix)
    assert images["on"]["push"]["tags"][0] == "v[0-9]+.[0-9]+.[0-9]+rc[0-9]+"
    publish = images["jobs"]["publish-cu130"]
    steps = publish["steps"]
    assert {
        "if": "github.ref_type == 'tag'",
        "run": PUBLISH_FROM,
    } in steps
    # images travel under the release registry's ci path, apart from the published tags
    assert publish["env"]["RELEASE_CI_REGISTRY"] == "registry.example.com/org/release/ci"
    assert publish["env"]["RELEASE_CI_VARIANT"] == publish["env"]["RELEASE_CI_ROW_1"] == "cu130"
    # and are published from there, copied inside the registries: nothing is pulled or loaded
    runs = [s.get("run", "") for s in steps]
    assert not any("images.pull" in r or "docker load" in r for r in runs), runs
    bk_publish = {s["key"]: s for s in buildkite_pipeline(matrix)["steps"]}["publish-cu130"]
    bk_lines = bk_publish["command"]
    assert bk_lines[-1] == PUBLISH_FROM.replace("$", "$$")
    assert not any("images.pull" in c or "artifact download" in c for c in bk_lines), bk_lines
    # without a transfer registry the images come as artifacts and are loaded, as before
    loaded = github_workflow(matrix, registry="")["jobs"]["publish-cu130"]["steps"]
    runs = [s.get("run", "") for s in loaded]
    assert any("docker load" in r for r in runs)
    assert 'release images.publish --variant "$RELEASE_CI_VARIANT"' in runs
    login = next(s for s in steps if "docker login" in s.get("run", ""))
    assert login["env"]["RELEASE_CI_LOGIN_1"] == "registry.example.com"
    assert "RELEASE_CI_LOGIN_2" not in login["env"]  # one host, logged in to once
    promote = github_promote(matrix)
    assert promote is not None and promote["on"] == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}}
    (job,) = promote["jobs"].values()
    assert job["permissions"] == {"contents": "write"}
    runs = [s["run"] for s in job["steps"] if "run" in s]
    assert runs[-1].endswith('release images.promote --tag "$GITHUB_REF_NAME" --push')
    assert not any("nox" in r.split(" ", 1)[0] or "images.build" in r for r in runs)
    steps = {s["key"]: s for s in buildkite_pipeline(matrix)["steps"]}
    assert steps["promote"]["if"].startswith("build.tag != null && build.tag =~ /^v(")
    # a branch builds, smokes and snapshots; publishing and after it on a tag only
    released = ("publish-", "manifest", "promote", "approve-")
    assert all(
        s["if"].startswith("build.tag != null && ") is k.startswith(released)
        for k, s in steps.items()
    )
    # without push credentials: the manifest is an artifact, not recorded; nothing writes
    from release.core.ci_config import parse_ci

    quiet = github_workflow(matrix, settings=parse_ci({"push-manifest": False}))
    manifest = quiet["jobs"]["manifest"]
    assert manifest["permissions"] == {"contents": "read"}
    runs = [s["run"] for s in manifest["steps"] if "run" in s]
    assert f"release manifest --parts {PARTS_DIR} --out manifest.json --no-record" in runs
    assert any("push-manifest = false: the manifest is not recorded" in r for r in runs)
    assert not any("PUSH_TOKEN" in r for r in runs)


def test_a_manifest_pushed_again_converges_and_another_is_never_overwritten(
    tmp_path: Path,
) -> None:
    from release.adapters.git import GitRepo
    from release.adapters.git_notes import write_note
    from release.errors import RefusedError
    from release.images.manifest import push_manifest

    remote = tmp_path / "remote.git"
    _git(tmp_path, "init", "--quiet", "--bare", str(remote))
    clones = []
    for name in ("first", "second"):
        work = tmp_path / name
        if name == "first":
            work.mkdir()
            _git(work, "init", "--quiet", "--initial-branch=main")
            (work / "a").write_text("a\n")
            _git(work, "add", "a")
            _git(work, "commit", "--quiet", "-m", "one")
            _git(work, "tag", "-a", "v1.0.0rc1", "-m", "rc1")
            _git(work, "remote", "add", "origin", str(remote))
            _git(work, "push", "--quiet", "origin", "main", "v1.0.0rc1")
        else:
            _git(tmp_path, "clone", "--quiet", str(remote), str(work))
        clones.append(GitRepo(work))
    first, second = clones
    commit = first.head()
    write_note(first, "v1.0.0rc1", commit, '{"a": 1}\n')
    assert push_manifest(first, "origin", "v1.0.0rc1", commit) is True
    write_note(second, "v1.0.0rc1", commit, '{"a": 1}\n')  # a job run again: same note
    assert push_manifest(second, "origin", "v1.0.0rc1", commit) is False
    assert second.rev("refs/notes/release/v1.0.0rc1") == first.rev("refs/notes/release/v1.0.0rc1")
    write_note(second, "v1.0.0rc1", commit, '{"a": 2}\n')
    before = _git(remote, "rev-parse", "refs/notes/release/v1.0.0rc1")
    with pytest.raises(RefusedError) as refused:
        push_manifest(second, "origin", "v1.0.0rc1", commit)
    assert "has another manifest of v1.0.0rc1" in str(refused.value)
    assert _git(remote, "rev-parse", "refs/notes/release/v1.0.0rc1") == before
    assert not _git(second.root, "for-each-ref", "refs/notes/release-scratch")


def test_images_promote_refuses_what_is_not_a_final_of_a_recorded_rc(tmp_path: Path) -> None:
    """The promote job's command says why it promotes nothing, and promotes nothing: an rc
    given, a final with no rc on its commit, an rc with no manifest here or on the remote."""
    from release.sample import make_sample_engine

    engine = make_sample_engine(tmp_path)
    root = engine.root
    pyproject = root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            'version-arg = "ENGINE_VERSION"\n',
            'version-arg = "ENGINE_VERSION"\nregistry = "127.0.0.1:9/rel"\n',
        )
    )
    _git(root, "commit", "--quiet", "-am", "registry")
    _git(root, "tag", "-a", "v0.31.0rc1", "-m", "rc1")
    rc = run_cli(root, "images.promote", "--tag", "v0.31.0rc1")
    assert rc.code == 2 and "v0.31.0rc1 is not a final" in rc.stderr
    none = run_cli(root, "images.promote")
    assert none.code == 2 and "no final tag at HEAD" in none.stderr
    (root / "NEWS").write_text("after the rc\n")
    _git(root, "add", "NEWS")
    _git(root, "commit", "--quiet", "-m", "after the rc")
    _git(root, "tag", "-a", "v0.31.0", "-m", "final")  # not on the rc's commit
    moved = run_cli(root, "images.promote")
    assert moved.code == 3, moved.output
    assert "no rc of 0.31.0 is on v0.31.0's commit (the last is v0.31.0rc1" in moved.stderr
    _git(root, "tag", "-d", "v0.31.0")
    _git(root, "tag", "-a", "v0.31.0", "-m", "final", "v0.31.0rc1^{commit}")
    _git(root, "switch", "--quiet", "--detach", "v0.31.0")  # a checkout of the final
    unrecorded = run_cli(root, "images.promote", "--tag", "v0.31.0", "--push")
    assert unrecorded.code == 3, unrecorded.output
    assert "v0.31.0rc1 has no manifest (refs/notes/release/v0.31.0rc1, here or on origin)" in (
        unrecorded.stderr
    )
    assert not _git(root, "for-each-ref", "refs/notes")  # nothing recorded
    assert not _git(tmp_path / "remote.git", "for-each-ref", "refs/notes")  # nothing pushed

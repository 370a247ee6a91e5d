"""Both generated pipelines run end to end in the sample engine's own repository, as a
maintainer adopting the tool would have them: ``release ci`` writes them into the engine,
the maintainer cuts the release branch, tags rc1 and pushes it; the rc's pipeline runs (each
job in a fresh clone of the engine at the tag, in a fresh virtual environment that installs
this tool's own wheel, hash-checked, from a package index on loopback that also serves
decoys of its name; the lines as written: :mod:`tests.ci_runner`): it builds, smokes, snapshots and publishes each
variant to the release registry (Debian's docker-registry on loopback) and records the
manifest as the tag's note on the remote. Then ``release promote`` and ``release push``:
the final's pipeline runs the promote job only, no build at all, and the final's tags
serve rc1's digests. The tag's job makes the tag's GitHub release (through the recording
stand-in for ``gh``): rc1 a pre-release with its rc page and manifest, the final latest;
the job's token reaches ``gh`` and no job prints it. Nothing is released before a reviewer
approves: rc1's images are built, smoked and snapshotted, then the run waits with nothing
published, recorded or released (the registry, the remote and GitHub as they were) until
it is approved; the approval environment's registry secrets reach its jobs only (GitHub:
they log in, the build jobs do not)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import invoke.vendor.yaml as yaml
import pytest

from release import __version__
from release.adapters.engine import ContainerEngine
from release.adapters.registry import Registry
from release.adapters.registry_server import LocalRegistry
from release.core.ci_config import ENVIRONMENT, TRANSFER_ENVIRONMENT
from release.core.pipeline_signing import SIGNATURES_DIR, SIGNING_SECRET
from release.sample import make_sample_engine
from tests.ci_runner import (
    JOB_TOKEN,
    Approve,
    Runner,
    buildkite_condition,
    tag_filter_matches,
)
from tests.conftest import run_cli
from tests.docker_support import image_env, purge, remove_repository, unique_name
from tests.github_support import GhStandIn
from tests.index_support import PackageIndex, decoys_in, dependencies
from tests.signing_support import make_key, skopeo_accepts

images = pytest.mark.images
RC, FINAL, BRANCH = "v0.31.0rc1", "v0.31.0", "releases/v0.31.0"


@pytest.fixture(scope="module")
def registry_address(registry: LocalRegistry) -> str:
    """The module's registry (Debian's docker-registry on loopback), as its address."""
    return registry.address


@pytest.fixture(scope="module")
def cached(local_index: PackageIndex, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The dependencies of this tool and nox, as a runner's cache holds them."""
    return dependencies(local_index, tmp_path_factory.mktemp("cached"))


@dataclass(frozen=True)
class SigningKey:
    """The images' signing key of the CI: its fingerprint, its armoured secret half (the
    approval environment's secret), its public half (as a tester pins it)."""

    fpr: str
    secret: str
    public: Path
    scratch: Path  # short: the jobs' TMPDIR (their GnuPG homes, whose agents are stopped)


@pytest.fixture(scope="module")
def signing_key() -> Iterator[SigningKey]:
    root = Path(tempfile.mkdtemp(prefix="rel-cik-", dir="/tmp"))  # gpg-agent's socket path
    key = make_key(root, "ci")
    try:
        secret = subprocess.run(
            ["gpg", "--homedir", str(key.home), "--batch", "--armor", "--export-secret-keys",
             key.fpr], check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        (root / "jobs").mkdir()
        yield SigningKey(key.fpr, secret, key.public, root / "jobs")
    finally:
        key.close()
        for home in (root / "jobs").glob("tmp.*"):  # the signing steps' own
            subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "all"],
                           check=False, capture_output=True)  # fmt: skip
        shutil.rmtree(root, ignore_errors=True)


def signatures(runner: Runner, fmt: str, jobs: list[str], into: Path) -> Path:
    """The lookaside store a maintainer serves: the signing jobs' artifacts, merged as the
    README says (each job numbers its signatures from signature-1: a copy would lose some)."""
    kept = []
    for job in jobs:
        store = runner.store / "github" / f"signatures-{job}"
        if fmt == "buildkite":
            store = runner.store / "buildkite" / job / SIGNATURES_DIR
        assert any(p.is_file() for p in store.rglob("*")), f"{job} kept no signature"
        kept += ["--merge", str(store)]
    into.parent.mkdir(parents=True, exist_ok=True)
    merged = run_cli(into.parent, "images.signatures", *kept, "--into", str(into))
    assert merged.code == 0, merged.output
    return into


class Engine:
    """The sample engine with its remote, set up as a maintainer adopting the tool would."""

    def __init__(
        self, root: Path, registry_address: str, fmt: str, install: str, signing: str
    ) -> None:
        self.env = image_env(root / "home")
        self.name = unique_name()
        with pytest.MonkeyPatch.context() as mp:
            for key in ("HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_NOSYSTEM"):
                mp.setenv(key, self.env[key])
            made = make_sample_engine(root / "sample")
        assert made.remote is not None
        self.root, self.remote = made.root, made.remote
        self.registry = f"{registry_address}/rel"
        pyproject = self.root / "pyproject.toml"
        text = pyproject.read_text(encoding="utf-8")
        # two of the sample's variants: one snapshotted (cu130), one the rule omits (cu129)
        start = text.index('[[tool.release.images.variants]]\nid = "cu128"')
        end = text.index('[[tool.release.images.variants]]\nid = "cu129"')
        text = text[:start] + text[end:]
        text = text.replace('name = "example/tinyengine"', f'name = "{self.name}"')
        text = text.replace(
            'version-arg = "ENGINE_VERSION"\n',
            f'version-arg = "ENGINE_VERSION"\nregistry = "{self.registry}"\n',
        )
        text += f'\n[tool.release.ci]\ninstall = "{install}"\n'  # each job installs it so
        text += f'image-signing-key = "{signing}"\n'  # publish and promote sign by it
        pyproject.write_text(text, encoding="utf-8")
        written = self.release("ci", "--format", fmt, "--write-noxfile")
        assert written.code == 0, written.output
        self.git("add", "--all")
        self.git("commit", "--quiet", "-m", "[CI/Build] Image pipelines (#120)")
        self.git("push", "--quiet", "origin", "main")
        folder = ".buildkite" if fmt == "buildkite" else ".github/workflows"
        self.files = {
            p.name: yaml.safe_load(p.read_text(encoding="utf-8"))
            for p in sorted((self.root / folder).glob("*.yml"))
        }

    def release(self, *args: str) -> Any:
        return run_cli(self.root, *args, env=self.env, timeout=300)

    def git(self, *args: str) -> str:
        import subprocess

        return subprocess.run(
            ["git", *args], cwd=self.root, env=self.env, capture_output=True, text=True, check=True
        ).stdout.strip()

    def remote_note(self, tag: str) -> dict[str, Any]:
        import subprocess

        shown = subprocess.run(
            ["git", "notes", f"--ref=release/{tag}", "show", f"{tag}^{{commit}}"],
            cwd=self.remote, env=self.env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert shown.returncode == 0, f"no manifest of {tag} on the remote: {shown.stderr}"
        return json.loads(shown.stdout)


SPEC = "example/tinyengine"  # the sample's repo-url
# the approval environment's secrets (the registry on loopback takes any login)
PUBLISHER = {"RELEASE_REGISTRY_USER": "publisher", "RELEASE_REGISTRY_PASSWORD": "pw-0f1e2d3c4b5a"}
SESSIONS = [
    "build-cu129", "build-cu130", "smoke-cu129", "smoke-cu130", "snapshot-cu130",
]  # fmt: skip
LOGGED_IN = "Login Succeeded"  # docker login's word


def reviewers(approved: bool) -> Approve:
    """The approval environment's reviewers, or the block step's unblocker: ``approved``;
    the CI registry's environment has none, so its jobs start at once."""
    return lambda key, where: approved or where == TRANSFER_ENVIRONMENT


def repositories(registry_address: str, name: str) -> list[str]:
    """The repositories of the image ``name`` the registry holds (its catalog; the
    registry is the module's, other tests' images are there too)."""
    import urllib.request

    with urllib.request.urlopen(f"http://{registry_address}/v2/_catalog", timeout=10) as answer:
        held = json.loads(answer.read())["repositories"]
    return sorted(r for r in held if r.endswith(f"/{name}"))


def remote_refs(engine: Engine) -> str:
    import subprocess

    return subprocess.run(
        ["git", "for-each-ref"], cwd=engine.remote, capture_output=True, text=True, check=True
    ).stdout


def _held(engine: Engine, runner: Runner, fmt: str, registry_address: str, gh: GhStandIn) -> Any:
    """rc1's run before anyone approves it: every session ran, nothing released."""
    refs, held = remote_refs(engine), ["publish-cu129", "publish-cu130"]
    if fmt == "github":
        rc = runner.github(engine.files, RC, reviewers(False))
    else:
        rc = runner.buildkite(engine.files["pipeline.yml"], RC, BRANCH, reviewers(False))
        held.insert(0, "approve-publish")  # the block step, then what depends on it
    assert rc.jobs == SESSIONS and rc.waiting == [*held, "manifest"]
    # the images went to the CI path only; the release registry has none, the remote no
    # note, GitHub no release: as they were
    assert repositories(registry_address, engine.name) == [f"rel/ci/{engine.name}"]
    assert remote_refs(engine) == refs and gh.releases(SPEC) == []
    if fmt == "github":  # the sessions run in the CI registry's environment: no secrets
        assert rc.approved == SESSIONS
        assert not [k for k in SESSIONS if LOGGED_IN in rc.output[k]]
    return runner.resume(rc, reviewers(True))


def _cycle(
    engine: Engine,
    runner: Runner,
    fmt: str,
    docker: ContainerEngine,
    gh: GhStandIn,
    registry_address: str,
) -> str:
    """rc1 held, approved and published, then the final promoted (then promoted again, on
    GitHub's route); what every job printed."""

    def run(tag: str) -> Any:
        if fmt == "github":
            return runner.github(engine.files, tag, reviewers(True))
        return runner.buildkite(engine.files["pipeline.yml"], tag, BRANCH, reviewers(True))

    for step in ("cut", "tag", "push"):
        args = ("cut", "0.31.0") if step == "cut" else (step,)
        done = engine.release(*args)
        assert done.code == 0, done.output
    rc = _held(engine, runner, fmt, registry_address, gh)
    # rc1, approved: every session, each variant's publish, the manifest recorded; no promote
    assert rc.jobs == [*SESSIONS, "publish-cu129", "publish-cu130", "manifest"]
    assert rc.waiting == []
    published = sorted([f"rel/ci/{engine.name}", f"rel/{engine.name}"])
    assert repositories(registry_address, engine.name) == published
    if fmt == "github":  # the approval environment's secrets: its jobs log in with them
        assert [k for k in rc.jobs if LOGGED_IN in rc.output[k]] == [
            "publish-cu129",
            "publish-cu130",
        ]
    assert "release builds it as 0.31.0rc1" in rc.output["build-cu130"]
    manifest = engine.remote_note(RC)
    assert manifest["tag"] == RC and manifest["version"] == "0.31.0rc1"
    cu130 = manifest["variants"]["cu130"]
    assert cu130["smoke"]["passed"] is True and cu130["snapshot"]["status"] == "passed"
    assert manifest["variants"]["cu129"]["snapshot"]["status"] == "omitted"
    reg = Registry()
    digests = {}
    for variant, entry in manifest["variants"].items():
        published = entry["publish"]
        assert published["registry"] == engine.registry
        index = published["index"]
        for ref in index["tags"]:
            served = reg.served(ref)
            assert served is not None and served.digest == index["digest"], ref
        digests[variant] = index["digest"]
    assert "pushed origin: refs/notes/release/v0.31.0rc1" in rc.output["manifest"]
    # the manifest job made rc1's GitHub release last: a pre-release, its page and manifest
    assert f"made a pre-release {RC} on {SPEC}" in rc.output["manifest"]
    (made,) = gh.releases(SPEC)
    assert made["tagName"] == RC and made["isPrerelease"] is True
    assert sorted(a["name"] for a in made["assets"]) == [f"{RC}-manifest.json", f"{RC}.html"]
    assert json.loads(gh.asset(SPEC, RC, f"{RC}-manifest.json")) == manifest
    assert runner.pythons if fmt == "github" else not runner.pythons
    assert [decoys_in(python) for python in runner.pythons] == [[]] * len(runner.pythons)

    # the final: tagged and pushed by the maintainer; CI promotes, builds nothing
    for step in ("promote", "push"):
        done = engine.release(step)
        assert done.code == 0, done.output
    before = docker.run(["images", "-q", "--filter", f"reference={engine.name}"]).stdout.split()
    final = run(FINAL)
    assert final.jobs == ["promote"]
    assert final.approved == ["promote" if fmt == "github" else "approve-promote"]
    assert "release promotes it as 0.31.0" in final.output["promote"]
    assert f"made a release, marked latest {FINAL} on {SPEC}" in final.output["promote"]
    releases = {r["tagName"]: r for r in gh.releases(SPEC)}
    assert sorted(releases) == [FINAL, RC] and releases[FINAL]["isPrerelease"] is False
    assert releases[FINAL]["isLatest"] is True and releases[FINAL]["assets"] == []
    after = docker.run(["images", "-q", "--filter", f"reference={engine.name}"]).stdout.split()
    assert after == [] and before == []  # no image of the engine was built or pulled
    promoted = engine.remote_note(FINAL)
    assert promoted["promoted_from"]["tag"] == RC
    assert promoted["promoted_from"]["commit"] == manifest["commit"]
    for variant, digest in digests.items():
        for ref in promoted["variants"][variant]["publish"]["index"]["tags"]:
            assert ":v0.31.0" in ref and "rc1" not in ref
            served = reg.served(ref)
            assert served is not None and served.digest == digest, ref
    latest = reg.served(f"{engine.registry}/{engine.name}:latest")
    assert latest is not None and latest.digest == digests["cu130"]  # the default variant

    printed = [*rc.output.values(), *final.output.values()]
    if fmt == "github":
        # run again (a job retried): everything converges, nothing is pushed twice. The
        # promote job's lines are the same in both pipelines (pipelines.promote_command):
        # their re-run is one route's
        again = run(FINAL)
        assert "already on origin: refs/notes/release/v0.31.0" in again.output["promote"]
        assert len(gh.releases(SPEC)) == 2  # the final's release edited in place, not made again
        assert ["release", "create"] not in [c[:2] for c in gh.calls()[-3:]]
        printed += again.output.values()
    everything = "\n".join(printed)
    assert JOB_TOKEN not in everything and PUBLISHER["RELEASE_REGISTRY_PASSWORD"] not in everything
    return everything


@images
@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["github", "buildkite"])
def test_rc_then_final_through_the_generated_pipeline(
    fmt: str,
    tmp_path: Path,
    registry_address: str,
    docker: ContainerEngine,
    local_index: PackageIndex,
    cached: Path,
    gh_standin: GhStandIn,
    signing_key: SigningKey,
) -> None:
    # this tool's own wheel, hash-checked, from an index that also serves decoys of its name
    install = f"release=={__version__} --hash=sha256:{local_index.sha256}"
    engine = Engine(tmp_path, registry_address, fmt, install, signing_key.fpr)
    engine.env = gh_standin.env(engine.env)  # the jobs' gh: the recording stand-in
    if fmt == "github":
        assert sorted(engine.files) == ["images.yml", "promote.yml"]
    else:
        assert sorted(engine.files) == ["pipeline.yml"]
    secret = {SIGNING_SECRET: signing_key.secret}
    jobs_env = {**engine.env, "TMPDIR": str(signing_key.scratch)}
    if fmt == "buildkite":  # the publishing agents' own environment holds it
        jobs_env |= secret
    runner = Runner(
        engine.remote, tmp_path / "ci", jobs_env,
        lambda: remove_repository(docker, engine.name), local_index, cached,
        secrets={ENVIRONMENT: {**PUBLISHER, **secret}},  # the CI registry on loopback needs none
    )  # fmt: skip
    try:
        printed = _cycle(engine, runner, fmt, docker, gh_standin, registry_address)
        _signed(engine, runner, fmt, signing_key, tmp_path / "tester", printed)
    finally:
        purge(docker, engine.name)


def _signed(
    engine: Engine, runner: Runner, fmt: str, key: SigningKey, tester: Path, printed: str
) -> None:
    """The publish and promote jobs signed by the CI's key: a tester's skopeo, with the
    public half and the signatures the jobs kept, accepts the rc's and the final's tags;
    the manifests name the key; the secret was never printed."""
    store = signatures(
        runner, fmt, ["publish-cu129", "publish-cu130", "promote"], tester / "sigstore"
    )
    rc, final = engine.remote_note(RC), engine.remote_note(FINAL)
    for variant in ("cu129", "cu130"):
        assert key.fpr in json.dumps(rc["variants"][variant]["publish"]), variant
        for ref in final["variants"][variant]["publish"]["index"]["tags"]:
            if ref.endswith(":latest"):
                continue  # a moving tag is not signed
            accepted, why = skopeo_accepts(ref, key.public, store, tester)
            assert accepted, f"{ref}: {why}"
        ref = rc["variants"][variant]["publish"]["index"]["tags"][0]
        accepted, why = skopeo_accepts(ref, key.public, store, tester)
        assert accepted, f"{ref}: {why}"
    body = key.secret.splitlines()[3]  # a line of the armoured key itself
    assert body and body not in printed, "the secret key was printed"


def test_github_tag_filters_and_buildkite_conditionals_choose_by_kind() -> None:
    """The patterns written for the default tag template, evaluated as the CI evaluates
    them: an rc or a post release builds, a final promotes, anything else runs nothing."""
    from release.core.ci_triggers import BUILT, PROMOTED, tag_kinds
    from release.core.versions import TagTemplate

    for template, rc, post, final in (
        ("v{version}", "v0.31.0rc1", "v0.31.0.post1", "v0.31.0"),
        ("release/{major}.{minor}/v{version}", "release/1.2/v1.2.0-rc.3", "release/1.2/v1.2.0+post.1", "release/1.2/v1.2.0"),
    ):  # fmt: skip
        scheme = "semver" if "-rc." in rc else "pep440"
        kinds = tag_kinds(TagTemplate(template, "tag", scheme))
        built, promoted = kinds.globs(BUILT), kinds.globs(PROMOTED)
        built_if = f"build.tag == null || build.tag =~ /{kinds.regex(BUILT)}/"
        final_if = f"build.tag != null && build.tag =~ /{kinds.regex(PROMOTED)}/"
        for tag, kind in ((rc, "rc"), (post, "post"), (final, "final")):
            assert kinds.kind_of(tag) == kind
            assert tag_filter_matches(built, tag) is (kind != "final"), (template, tag)
            assert tag_filter_matches(promoted, tag) is (kind == "final"), (template, tag)
            assert buildkite_condition(built_if, tag) is (kind != "final")
            assert buildkite_condition(final_if, tag) is (kind == "final")
        for other in (final + "x", "x" + final, final.replace("0", "a", 1), "main", rc + ".dev1"):
            assert kinds.kind_of(other) is None, other
            assert not tag_filter_matches(built + promoted, other), other
            assert not buildkite_condition(final_if, other)
        assert buildkite_condition(built_if, None) and not buildkite_condition(final_if, None)

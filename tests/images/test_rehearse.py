"""The rehearsal (the README's first command) as a new user runs it: ``release rehearse``
in a separate process.

With a Docker Engine, the whole v0.31.0rc1 story is asserted on its final table and on
the sandbox it keeps: tags and notes refs on the remote, the manifests (read with ``git
notes show``, checked against the schema), the final's images (the same ids as rc2's).
Without one, the git steps run and pass and every image step says it was not run and how
to start an engine. The parts a whole run cannot make fail are tested on their own:
reading reproduce's verdicts, putting image tags back, and the changed base undone when
what runs on it fails.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from release.adapters.config_file import load_config
from release.adapters.emulation import emulation_problem
from release.adapters.engine import ContainerEngine
from release.adapters.git import GitRepo
from release.adapters.registry_server import registry_binary
from release.core.manifest import loads
from release.sample.rehearse_images import DRIFT_LABEL, OWN_PREFIX, DockerSide
from release.sample.rehearse_report import Ledger, Tags, manifest_of, parse_verdicts, verify
from release.sample.rehearse_terminal import Terminal, not_run_reasons
from tests.conftest import run_cli
from tests.docker_support import CACHE_DIR, image_env, remove_repository, unique_name

NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent.sock"}
ROOT = Path(__file__).resolve().parents[2]


def syft_here() -> bool:
    from release.adapters.syft import SyftError, syft_binary

    try:
        return bool(syft_binary())
    except SyftError:
        return False


TAGS = ("v0.31.0rc1", "v0.31.0rc2", "v0.31.0")
# cu129 is built for amd64 and arm64 where arm64 is emulated here (one row each)
ARM64 = emulation_problem("linux/arm64") is None
CUDA_ROWS = (
    ("cu128", "cu129-amd64", "cu129-arm64", "cu130") if ARM64 else ("cu128", "cu129", "cu130")
)
VARIANTS = (*CUDA_ROWS, "rocm", "cpu")  # the story adds a ROCm and a CPU variant
SNAPSHOTTED = ("cu130", "rocm", "cpu")  # not CUDA 12.x: the rule `!=12.*` takes them
ACCELERATORS = {"cu128": "CUDA 12.8.1", "cu130": "CUDA 13.0.1", "rocm": "ROCm 6.4.1", "cpu": "CPU"}
REGISTRY = registry_binary() is not None and shutil.which("skopeo") is not None
SYFT = REGISTRY and shutil.which("gpg") is not None and syft_here()
ALLOW_HOST = (
    "--allow-host cap-add=SYS_ADMIN,cap-add=SYS_PTRACE,cap-add=NET_ADMIN,cap-add=SYS_TIME,"
    "security-opt=seccomp=unconfined,security-opt=apparmor=unconfined"
)
TRUST = "--trust ../tester-trust/allowed_signers"  # the tester's, beside their clone
SIGNER = "maintainer@tinyengine.invalid"
IMAGE_COMMANDS = (
    "images.build --jobs 2",
    "images.smoke",
    "images.snapshot",
    "images.publish",
    "images.attest --variant cu128",
    "manifest",
    f"reproduce v0.31.0rc1 --jobs 2 {TRUST} --require-signed {ALLOW_HOST}",
    f"reproduce v0.31.0rc1 --variant cu130 {ALLOW_HOST}",
)


def table(stdout: str) -> dict[str, dict[str, str]]:
    """The final table: variant -> column -> cell (columns are two or more spaces apart)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"variant +accelerator", line))
    header = re.split(r" {2,}", lines[start])
    rows = {}
    for line in lines[start + 1 : start + 1 + len(VARIANTS)]:
        cells = re.split(r" {2,}", line)
        assert len(cells) == len(header), (header, line)
        rows[cells[0]] = dict(zip(header, cells, strict=True))
    assert sorted(rows) == sorted(VARIANTS), stdout
    return rows


def steps(stdout: str) -> list[str]:
    return re.findall(r"^== \d+\. (.*)  \[[0-9.ms]+\]$", stdout, re.MULTILINE)


# -- the whole story, with an engine ------------------------------------------------------


@pytest.fixture
def rehearsals(docker: ContainerEngine) -> Iterator[list[Path]]:
    """The sandboxes the test's rehearsals kept; afterwards they are removed, and with them
    (the next sweep's work, done here) every tag the rehearsals made."""
    kept: list[Path] = []
    yield kept
    for sandbox in kept:
        shutil.rmtree(sandbox, ignore_errors=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RELEASE_CACHE_DIR", str(CACHE_DIR))  # where the rehearsals recorded theirs
        DockerSide(docker, "").sweep()


def start_rehearsal(work: Path) -> subprocess.Popen[bytes]:
    """``release rehearse --keep`` in ``work``, its output to ``work/out`` (a file: a pipe
    nobody reads until the end would fill)."""
    work.mkdir()
    with (work / "out").open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "release", "rehearse", "--keep", "--workdir", str(work / "w")],
            cwd=work,
            env=image_env(work / "home"),
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def start_partner(work: Path) -> subprocess.Popen[bytes]:
    """The second rehearsal, cut short (:mod:`tests.rehearsal_partner`), in ``work``, its
    output to ``work/out``."""
    work.mkdir()
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    with (work / "out").open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.rehearsal_partner", str(work / "w")],
            cwd=work,
            env=image_env(work / "home", PYTHONPATH=path),
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def own_of(out: str) -> tuple[set[str], set[str], set[str]]:
    """A rehearsal's own names, its registry's address and its sandbox, as it said them."""
    return (
        set(re.findall(r"(rehearsal-[a-z0-9]+)/tinyengine", out)),
        set(re.findall(r"release registry (127\.0\.0\.1:\d+)/", out)),
        set(re.findall(r"^# sandbox: (.+)$", out, re.MULTILINE)),
    )


@pytest.mark.images
@pytest.mark.slow
def test_a_rehearsal_tells_the_story_end_to_end_beside_another_on_one_engine(
    docker: ContainerEngine, rehearsals: list[Path], tmp_path: Path
) -> None:
    """A whole rehearsal and, at once on the same engine, a second one cut short to what
    can collide (its names, registry, keys, its tag of the sample's base changed and put
    back, the sweep, its tidying; on one variant): both pass, on names, registry ports and
    sandboxes of their own; the sample's shared base is the same image from before the
    first starts to after both end (looked at twice a second); the whole one's story is
    checked to its end, its image tags all there after the other tidied."""
    base_ref = cu130_base()
    base_before = docker.image_id(base_ref)
    works = [tmp_path / "whole", tmp_path / "partner"]
    running = [start_rehearsal(works[0]), start_partner(works[1])]
    seen = set()
    deadline = time.monotonic() + 1500
    while any(r.poll() is None for r in running) and time.monotonic() < deadline:
        seen.add(docker.image_id(base_ref))
        time.sleep(0.5)
    for r in running:
        r.wait(timeout=max(1.0, deadline - time.monotonic()))
    outputs = [(work / "out").read_text(encoding="utf-8", errors="replace") for work in works]
    kept = re.search(r"^sandbox kept at (.+)$", outputs[0], re.MULTILINE)
    if kept:
        rehearsals.append(Path(kept[1]))
    codes = [r.returncode for r in running]
    assert codes == [0, 0], "\n\n".join(outputs)
    whole, partner = own_of(outputs[0]), own_of(outputs[1])
    for said, theirs in zip(whole, partner, strict=True):
        assert len(said) == 1 and len(theirs) == 1 and not said & theirs, (whole, partner)
    if not REGISTRY:
        assert whole[1] == partner[1] == set()
    made = re.search(r"^partner made: (.+); left: none$", outputs[1], re.MULTILINE)
    assert made is not None, outputs[1]
    (name,) = partner[0]
    refs = made[1].split(", ")  # its cu130 image, and its tag of the base, now removed
    assert f"{name}/cuda:13.0.1-base-ubuntu24.04" in refs, refs
    assert any(ref.startswith(f"{name}/tinyengine:") for ref in refs), refs
    assert "rehearsal passed" in outputs[1] and "FAIL" not in outputs[1]
    seen.add(docker.image_id(base_ref))
    assert len(seen - {None}) == 1, seen  # the shared base never changed (or was made once)
    if base_before is not None:
        assert seen == {base_before}
    check_the_story(docker, outputs[0])


def check_the_story(docker: ContainerEngine, out: str) -> None:
    assert (
        "rehearsal passed" in out and "FAIL" not in out and "not run" not in out.split("== 10.")[1]
    )
    assert len(steps(out)) == 10
    # the tester is asked before the tag's snapshot options run on their machine
    assert f"(tester) $ release reproduce v0.31.0rc1 {TRUST}\n" in out
    # rc1 is signed; the tester verifies it with the public half, and a changed note is refused
    assert f"    tag v0.31.0rc1: signed by {SIGNER}\n" in out
    assert f"ok   the tester verifies v0.31.0rc1 and its manifest: signed by {SIGNER}\n" in out
    assert (
        "ok   a note changed after signing: the tester's reproduce of v0.31.0rc1 refuses it "
        "(exit 7)\n"
    ) in out
    assert "    error: manifest of v0.31.0rc1: signature does not verify (the signed" in out
    # rc1's GitHub release, a plan with the rc page and the manifest recorded by then
    assert (
        "    assets: v0.31.0rc1.html (the rc page), v0.31.0rc1-manifest.json (the release "
        "manifest)\n" in out
    )
    assert "ok   the GitHub release of v0.31.0rc1 is shown as a plan of a pre-release" in out
    assert f"they run only with your consent to each: add {ALLOW_HOST} (nothing was built)" in out
    rows = table(out)
    for variant, row in rows.items():
        assert row["smoked"] == "passed", row
        assert row["snapshot"] == ("passed" if variant in SNAPSHOTTED else "omitted: rule `!=12.*`")
        assert row["accelerator"] == ACCELERATORS.get(variant, "CUDA 12.9.1"), row
        assert row["reproduce v0.31.0rc1"] == "match", row
        assert row["v0.31.0"] == ("= rc2 (registry)" if REGISTRY else "= rc2"), row
        assert (
            row["changed base"].startswith("drift")
            if variant == "cu130"
            else row["changed base"] == "-"
        )
        assert row["built v0.31.0rc1"] != row["built v0.31.0rc2"]  # the version is baked in
    assert re.search(r"^total: \S+ \((under|OVER) the 5-minute mark\)$", out, re.MULTILINE)
    rebuilt = ", ".join(VARIANTS)
    assert re.search(rf"^# rebuilt: {rebuilt}\. The version is baked", out, re.MULTILINE)
    if REGISTRY:  # read back from the registry by the rehearsal itself, as a tester would
        assert "ok   v0.31.0's tags in the registry resolve to v0.31.0rc2's index digests" in out
        assert "ok   promote copied inside the registry: no blob uploaded (0 upload" in out
        page = re.search(r"^the rc page of v0.31.0rc1: (.+)$", out, re.MULTILINE)
        assert page is not None and Path(page[1]).is_file(), out
        shown = Path(page[1]).read_text(encoding="utf-8")
        assert all(f'data-row="{row}"' in shown for row in VARIANTS)
        assert '<td class="accelerator">ROCm 6.4.1</td>' in shown
        # rc1's images signed at publish, verified by the tester with the public half; one
        # re-signed by another key refused before anything is built
        assert "ok   the tester verifies every image and index of v0.31.0rc1 with the public" in out
        assert "ok   an image of v0.31.0rc1 re-signed by another key is refused before" in out
        assert re.search(r"^    publish\(cu130\): signed \S+ \(sha256:", out, re.MULTILINE), out
        assert "signed by" in shown and 'class="signer badge quiet"' not in shown  # the rc page
        # rc1's cu128 attested with its provenance signed by the image key: the tester
        # verifies it before building and matches it; the rc page shows it, none elsewhere
        if SYFT:
            assert re.search(
                r"^    attest\(cu128\): attached \S+\.att: sha256:\S+ \(signed by ", out, re.M
            ), out
            for check in (
                "the tester verifies cu128's provenance with the image key's public half: "
                "provenance cu128: signed by ",
                "cu128's signed provenance and its SBOM match the rebuild (provenance signature, "
                "provenance SBOM, provenance commit, SBOM packages)",
                "the rc page shows cu128's SBOM and provenance signed by ",
            ):
                assert f"ok   {check}" in out, check
            assert shown.count('<li class="provenance" data-digest="sha256:') == 1
            assert (
                shown.count('<li class="provenance" data-digest="" data-signed-by="">')
                == len(VARIANTS) - 1
            )
    if ARM64:
        assert "ok   each index lists its variant's platforms (cu129: 2)" in out

    kept = re.search(r"^sandbox kept at (.+)$", out, re.MULTILINE)
    assert kept is not None, out
    sandbox = Path(kept[1])
    repo, remote = GitRepo(sandbox / "engine"), str(sandbox / "remote.git")
    on_remote = repo.remotes.refs(remote)
    assert all(f"refs/tags/{tag}" in on_remote for tag in TAGS)
    assert all(f"refs/notes/release/{tag}" in on_remote for tag in TAGS)
    assert repo.rev("v0.31.0^{commit}") == repo.rev("v0.31.0rc2^{commit}")

    manifests = {tag: published(repo, tag) for tag in TAGS}
    for tag, manifest in manifests.items():
        assert manifest["tag"] == tag and sorted(manifest["variants"]) == sorted(VARIANTS)
        for variant, entry in manifest["variants"].items():
            snapshot = entry["snapshot"]
            if variant in SNAPSHOTTED:
                assert snapshot["status"] == "passed", snapshot
                assert entry["build"]["build_args"].get("INSTALL_SNAPSHOT_RUNTIME") == "1"
            else:
                assert snapshot["status"] == "omitted" and "!=12.*" in snapshot["reason"]
                assert "INSTALL_SNAPSHOT_RUNTIME" not in entry["build"]["build_args"]
    rc2, final = manifests["v0.31.0rc2"], manifests["v0.31.0"]
    assert final["promoted_from"]["tag"] == "v0.31.0rc2"
    for variant in VARIANTS:
        image = rc2["variants"][variant]["build"]["image_id"]
        assert final["variants"][variant]["build"]["image_id"] == image
        refs = rc2["variants"][variant]["build"]["tags"]
        if REGISTRY:  # promoted in the registry: the final's digests are rc2's, read back
            ours, theirs = (m["variants"][variant]["publish"] for m in (final, rc2))
            assert (ours["digest"], ours["index"]["digest"]) == (
                theirs["digest"],
                theirs["index"]["digest"],
            )
            assert all("v0.31.0" in t and "rc" not in t for t in ours["index"]["tags"])
        else:  # promoted here, by image id
            refs = refs + final["variants"][variant]["build"]["tags"]
        assert {docker.image_id(ref) for ref in refs} == {image}, refs  # docker image inspect
    assert any(ref.endswith(":latest") for ref in final["variants"]["cu130"]["build"]["tags"])
    own_base = manifests["v0.31.0rc1"]["variants"]["cu130"]["build"]["base"]["ref"]
    assert re.fullmatch(r"rehearsal-[a-z0-9]+/cuda:13\.0\.1-base-ubuntu24\.04", str(own_base))


def cu130_base() -> str:
    from importlib import resources

    with resources.as_file(resources.files("release") / "sample" / "engine") as engine:
        matrix = load_config(engine).matrix
    assert matrix is not None
    return matrix.variant("cu130").base_image


def published(repo: GitRepo, tag: str) -> dict[str, Any]:
    shown = repo.run("notes", f"--ref=refs/notes/release/{tag}", "show", f"{tag}^{{commit}}")
    return loads(shown.stdout, f"the manifest of {tag}")


# -- without an engine ----------------------------------------------------------------------


@pytest.mark.slow
def test_without_an_engine_the_git_steps_pass_and_the_image_steps_say_not_run(
    tmp_path: Path,
) -> None:
    work = tmp_path / "sandboxes"
    result = run_cli(tmp_path, "rehearse", "--workdir", str(work), env=NO_ENGINE, timeout=300)
    out = result.stdout
    assert result.code == 0, result.output
    # one reason for every check that did not run, said once
    assert re.search(
        r"^rehearsal passed: (\d+)/\1 checks \(\d+ not run: no Docker Engine answers "
        r"\(start one: sudo dockerd >/tmp/dockerd\.log 2>&1 &\)\)$",
        out,
        re.M,
    ), out
    assert "FAIL" not in out
    assert len(steps(out)) == 10
    for command in IMAGE_COMMANDS:
        assert (
            f"# release {command}: not run: no Docker Engine answers "
            "(start one: sudo dockerd >/tmp/dockerd.log 2>&1 &)"
        ) in out, command
    for git_step in (
        "cut 0.31.0 --no-switch",
        "pick '#59102' --reason regression",
        "pick --continue",
        "pick '#59110'",
        "tag --sign",
        "tag",
        "push",
        "promote",
        "pick --file release-picks.txt",
    ):
        assert f"$ release {git_step}\n" in out, git_step
    for check in (
        "the conflict left the branch at the cut and the tree clean",
        "the remote has v0.31.0rc1, v0.31.0rc2 and v0.31.0",
        "the final v0.31.0 is on v0.31.0rc2's commit",
        "each pick (#59102, #59118, #59140) is listed once in the final notes",
        "the GitHub release of v0.31.0rc1 is shown as a plan of a pre-release, nothing sent",
        "the GitHub release of v0.31.0 is shown as a plan of a release marked latest, nothing sent",
    ):
        assert f"ok   {check}\n" in out, check
    assert "# the tester pins the maintainer's public key in tester-trust/allowed_signers:" in out
    # the GitHub steps are plans of what would be sent, never a release made
    for tag in ("v0.31.0rc1", "v0.31.0"):
        assert f"$ release github-release {tag} --dry-run\n" in out, tag
        assert f"# the GitHub release of {tag}: a plan only (--dry-run): nothing sent" in out
    assert "    dry run, nothing sent:\n" in out
    assert "    left out: the rc page and the release manifest: v0.31.0rc1 has no manifest" in out
    assert not re.search(r"^\s*(made|updated) a (pre-)?release", out, re.M)
    assert (
        "--   the image checks (manifests, notes refs, promoted ids) (not run: no Docker Engine "
        "answers (start one: sudo dockerd >/tmp/dockerd.log 2>&1 &))" in out
    )
    for variant, row in table(out).items():
        image_cells = {k: v for k, v in row.items() if k not in ("variant", "accelerator")}
        expected = dict.fromkeys(image_cells, "not run")
        expected["changed base"] = "not run" if variant == "cu130" else "-"
        assert image_cells == expected, row
    assert re.search(r"^total: \S+ \(under the 5-minute mark\)$", out, re.MULTILINE)
    assert list(work.iterdir()) == []  # the sandbox is removed


@pytest.mark.slow
def test_the_checks_fail_on_a_sandbox_that_is_wrong(tmp_path: Path) -> None:
    """The rehearsal's own checks, run on a kept sandbox that was then spoilt."""
    work = tmp_path / "work"
    result = run_cli(tmp_path, "rehearse", "--keep", "--workdir", str(work), env=NO_ENGINE)
    assert result.code == 0, result.output
    (sandbox,) = work.iterdir()
    repo, remote = GitRepo(sandbox / "engine"), sandbox / "remote.git"
    repo.run("push", "--quiet", str(remote), ":refs/tags/v0.31.0")  # the final never arrived
    with (repo.root / "CHANGELOG.md").open("a", encoding="utf-8") as changelog:
        changelog.write("\n## [0.31.0rc1] - left behind\n")
    repo.run(
        "notes",
        "--ref=refs/notes/release/v0.31.0rc1",
        "add",
        "-m",
        '{"schema": 1}',
        "v0.31.0rc1^{commit}",
    )
    said: list[str] = []
    matrix = load_config(repo.root).matrix
    assert matrix is not None
    notes = "- Fix off-by-one ([#59102](u)) [picked]\n- Fix off-by-one ([#59102](u)) [picked]\n"
    verify(
        Terminal(said.append, sandbox),
        repo,
        remote,
        matrix,
        Tags("v0.31.0rc1", "v0.31.0rc2", "v0.31.0"),
        notes + "#59110 #59020",
        Ledger(DockerSide(None, "no engine")),
    )
    failed = {line for line in said if line.startswith("FAIL")}
    assert failed == {
        "FAIL the remote has v0.31.0rc1, v0.31.0rc2 and v0.31.0",
        "FAIL each pick (#59102, #59118, #59140) is listed once in the final notes",
        "FAIL the kernel stub #59020 and its revert #59026 cancel out",
        "FAIL the feature #59110 was not picked",
        "FAIL CHANGELOG.md has the final's section and no rc sections",
    }, said
    manifest, why = manifest_of(repo, "v0.31.0rc1")
    assert manifest is None and "the manifest of v0.31.0rc1" in why and "\n" not in why


# -- the pieces -------------------------------------------------------------------------------


def test_verdicts_are_read_per_variant_and_only_from_a_verdict() -> None:
    said = "cu128: match\n  base  match\ncu130: DRIFT in base, input digest\n  base  drift\n"
    assert parse_verdicts(said, VARIANTS) == {
        "cu128": "match",
        "cu130": "drift (base, input digest)",
    }
    assert parse_verdicts("No idea what 'reproduce' is!\n", VARIANTS) == {}
    assert parse_verdicts("cu1300: match\nbuild(cu130): built\n", VARIANTS) == {}


def test_steps_say_the_time_since_the_start_and_checks_say_not_run() -> None:
    said: list[str] = []
    now = [0.0]
    t = Terminal(said.append, Path("/sandbox"), clock=lambda: now[0])
    t.step("first")
    now[0] = 2.5
    t.step("second")
    t.check("ran", True)
    t.check("could not", None, "no engine")
    t.check("failed", False, "because")
    now[0] = 75.0
    t.step("third")
    t.end_step()
    assert "== 1. first  [0.0s]" in said and "== 2. second  [2.5s]" in said
    assert "== 3. third  [1m15s]" in said
    assert [s.seconds for s in t.steps] == [2.5, 72.5, 0.0]
    for line in ("ok   ran", "--   could not (not run: no engine)", "FAIL failed (because)"):
        assert line in said
    assert not_run_reasons(t.checks) == "no engine"  # one reason: said as it was given


def test_the_summary_gives_each_reason_a_check_did_not_run() -> None:
    """Not "an image step before failed" for all: the registry's own reason, and the
    manifest's, each counted."""
    t = Terminal(lambda line: None, Path("/sandbox"))
    registry = "no docker-registry here (apt-get install docker-registry)"
    for what in ("tags resolve", "no blob uploaded", "platforms listed"):
        t.check(what, None, registry)
    t.check("ran", True)
    t.check("final is rc2", None, "v0.31.0rc2 has no manifest")
    assert not_run_reasons(t.checks) == f"{registry} (3); v0.31.0rc2 has no manifest (1)"


def tiny_image(engine: ContainerEngine, ref: str, content: str, scratch: Path) -> str:
    data = content.encode()
    tarball = scratch / f"image-{content.strip()}.tar"
    with tarfile.open(tarball, "w") as tar:
        info = tarfile.TarInfo("etc/which")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    engine.import_rootfs(tarball, ref, [])
    image = engine.image_id(ref)
    assert image is not None
    return image


@pytest.mark.images
def test_tags_made_are_removed_and_tags_that_were_there_put_back(
    docker: ContainerEngine, tmp_path: Path
) -> None:
    name = unique_name()
    side = DockerSide(docker, "")
    try:
        old = tiny_image(docker, f"{name}:old", "old\n", tmp_path)
        before = side.tags(name)
        assert before == {f"{name}:old": old}
        new = tiny_image(docker, f"{name}:new", "new\n", tmp_path)
        docker.tag(new, [f"{name}:old"])  # a tag that was there moved, as promote moves latest
        assert side.made_since(name, before) == [f"{name}:new", f"{name}:old"]
        assert side.put_back(name, before) == [f"{name}:new", f"{name}:old"]
        assert side.tags(name) == before
        assert docker.inspect_image(new) is None  # no untagged image is left behind
    finally:
        remove_repository(docker, name)


@pytest.mark.images
def test_the_changed_base_is_put_back_when_what_runs_on_it_fails(
    docker: ContainerEngine, tmp_path: Path
) -> None:
    base = f"{unique_name()}-base:13.0.1"
    side = DockerSide(docker, "")
    shown: list[str] = []
    try:
        original = tiny_image(docker, base, "the base\n", tmp_path)
        with (
            pytest.raises(RuntimeError, match="reproduce crashed"),
            side.changed_base(base, tmp_path / "drift", shown.append) as swap,
        ):
            assert docker.image_id(base) == swap.drifted != original
            raise RuntimeError("reproduce crashed")
        assert swap.restored and swap.removed and docker.image_id(base) == original
        assert docker.inspect_image(swap.drifted) is None  # the changed base is removed
        assert any(line.startswith(f"docker tag {original[7:19]} {base}") for line in shown)
    finally:
        remove_repository(docker, base.split(":")[0])


@pytest.mark.images
def test_a_changed_base_a_killed_rehearsal_left_is_untagged_and_any_other_left_alone(
    docker: ContainerEngine, tmp_path: Path
) -> None:
    base = f"{unique_name()}-base:13.0.1"
    side = DockerSide(docker, "")
    try:
        original = tiny_image(docker, base, "the base\n", tmp_path)
        assert not side.heal_base(base) and docker.image_id(base) == original
        # what SIGKILL during the drift step leaves: the base's name on the changed image
        left = tmp_path / "left"
        left.mkdir()
        (left / "Dockerfile").write_text(f"FROM {base}\nLABEL {DRIFT_LABEL}=drift\n")
        built = docker.run(["build", "--quiet", "--tag", base, str(left)], timeout=300)
        assert docker.image_id(base) == built.stdout.strip() != original
        assert side.heal_base(base)
        assert docker.image_id(base) is None  # the next build makes the base again
    finally:
        remove_repository(docker, base.split(":")[0])


@pytest.mark.images
def test_a_killed_rehearsals_tags_are_swept_once_its_sandbox_is_gone(
    docker: ContainerEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What SIGKILL leaves: the record and the tags of its own. The next sweep removes
    those whose sandbox is gone (the image another name points at stays), and leaves a
    running or kept one's alone."""
    monkeypatch.setenv("RELEASE_CACHE_DIR", str(tmp_path / "cache"))
    side = DockerSide(docker, "")
    shared = f"{unique_name()}-base:13.0.1"
    dead, alive = (f"{uuid.uuid4().hex[:10]}" for _ in range(2))
    try:
        base = tiny_image(docker, shared, "the base\n", tmp_path)
        made = {}
        for rehearsal in (dead, alive):
            own = f"{OWN_PREFIX}{rehearsal}/cuda:13.0.1-base-ubuntu24.04"
            docker.tag(base, [own])
            image = f"{OWN_PREFIX}{rehearsal}/tinyengine:v0.31.0rc1"
            made[rehearsal] = (own, image, tiny_image(docker, image, rehearsal + "\n", tmp_path))
            (tmp_path / rehearsal).mkdir()
            side.record(rehearsal, tmp_path / rehearsal)
        (tmp_path / dead).rmdir()  # its sandbox is gone: it was killed, or tidied by hand
        assert sorted(side.sweep()) == sorted(made[dead][:2])
        assert docker.image_id(made[dead][0]) is None and docker.image_id(made[dead][1]) is None
        assert docker.inspect_image(made[dead][2]) is None  # its own image went with its tag
        assert docker.image_id(shared) == base  # the shared base stays
        assert docker.image_id(made[alive][0]) == base  # the living one's tags stay
        assert docker.image_id(made[alive][1]) == made[alive][2]
        assert sorted(p.name for p in (tmp_path / "cache" / "rehearsals").iterdir()) == [alive]
        assert side.sweep() == []  # nothing left to sweep
    finally:
        remove_repository(docker, shared.split(":")[0])
        for rehearsal in (dead, alive):
            for name in ("cuda", "tinyengine"):
                remove_repository(docker, f"{OWN_PREFIX}{rehearsal}/{name}")

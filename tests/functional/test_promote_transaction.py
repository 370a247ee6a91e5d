"""``release promote`` as one transaction across git and the registry.

The sample engine's release branch is cut, narrowed to one variant and tagged v0.1.0rc1;
rc1's images are put in a real registry (Debian's docker-registry on loopback) as files
copied in with skopeo (no engine needed: :mod:`tests.oci_support`), and its manifest,
naming them, is recorded as the tag's note, as ``images.publish`` and ``manifest`` record
it. From that state (restored for each case, registry storage included):

- whatever the registry would refuse (a final tag taken by another image, an rc manifest
  gone or untrue to its digest, the registry away) is refused before git changes: refs,
  work tree, notes and registry compared before and after;
- a promote stopped at every registry call, and between its git and registry sides, by
  SIGKILL to the tool, to its process group, SIGTERM or Ctrl-C, is finished by the next
  run, which ends exactly where an uninterrupted promote ends (refs, notes, registry tags
  and digests; dates pinned);
- a registry failure after the git side keeps the journal and says so on stderr, with no
  ``next:``; ``--no-images`` then ``images.promote`` end where promote ends;
- ``images.promote`` refuses a checkout whose HEAD is not the final's commit.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from release.adapters.git import GitRepo
from release.adapters.git_notes import notes_ref, write_note
from release.adapters.lock import process_group_alive
from release.adapters.registry import Registry
from release.adapters.registry_server import LocalRegistry
from release.core.accelerator import accelerator_fields
from release.core.manifest import Release, merge, part_document, variant_rules
from release.flows.context import ReleaseContext
from release.images.transfer import registry_ref
from release.sample import SampleEngine, make_sample_engine
from tests.conftest import repo_state, run_cli
from tests.docker_support import default_sigint
from tests.manifest_support import build, smoke, snapshot
from tests.oci_support import copy_in, oci_layout

# end to end: a registry of its own on loopback, skopeo against it for every case
pytestmark = pytest.mark.slow

RC, FINAL = "v0.1.0rc1", "v0.1.0"
BRANCH = "releases/v0.1.0"
PINNED = {
    "GIT_AUTHOR_DATE": "2026-11-20T12:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-11-20T12:00:00+00:00",
    "SOURCE_DATE_EPOCH": "1795176000",
}
DEADLINE = 60.0


# -- the rc1 every case starts from --------------------------------------------------------


@dataclass(frozen=True)
class Template:
    """The engine's repository and remote (``base``), and the registry's storage, as they
    are once rc1 is published."""

    base: Path
    storage: Path
    repository: str  # REGISTRY/rel/example/tinyengine


def _one_variant(engine: SampleEngine) -> None:
    """Only cu130 (fewer registry calls per promote, the same kinds of each)."""
    path = engine.root / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    for vid in ("cu128", "cu129"):
        text = re.sub(
            rf'\[\[tool\.release\.images\.variants\]\]\nid = "{vid}"\n(?:[^\[\n][^\n]*\n)*\n',
            "",
            text,
        )
    assert 'id = "cu128"' not in text and 'id = "cu130"' in text
    path.write_text(text, encoding="utf-8")
    engine.repo.run("commit", "--quiet", "--all", "-m", "[CI] Build the cu130 image only")


def _rc_manifest(repo: GitRepo, registry: str, layout: Path) -> dict[str, Any]:
    """rc1's manifest as a build, a smoke, a snapshot and a publish would record it, its
    publish rows naming the images copied into ``registry`` from ``layout``."""
    matrix = ReleaseContext(repo.root).config.matrix
    assert matrix is not None
    commit = repo.rev(f"refs/tags/{RC}")
    assert commit is not None
    release = Release("0.1.0rc1", RC, commit, repo.commit_time(commit), matrix.name, "0.1.0")
    parts = []
    for variant in matrix.variants:
        platform = "linux/amd64"
        images, index = oci_layout(layout / variant.id, [platform], f"{RC} {variant.id}")
        image = images[0]
        platform_tag = matrix.platform_tag(variant, RC, platform)
        index_tags = matrix.index_tags(variant.group, RC)
        copy_in(layout / variant.id, "amd64", registry_ref(registry, platform_tag))
        for tag in index_tags:
            copy_in(layout / variant.id, "index", registry_ref(registry, tag))
        data = build(image.config) | {
            **accelerator_fields(variant.accelerator),
            "build_args": matrix.build_args_for(variant, "0.1.0rc1"),
            "tags": [matrix.tag(variant, RC)],
        }
        data["base"] = data["base"] | {"ref": variant.base_image}
        parts.append(part_document(release, variant.id, "build", data))
        parts.append(part_document(release, variant.id, "smoke", smoke(image.config)))
        if matrix.has_snapshot(variant):
            parts.append(part_document(release, variant.id, "snapshot", snapshot(image.config)))
        published = {
            "registry": registry,
            "platform": platform,
            "image_id": image.config,
            "digest": image.digest,
            "tags": [registry_ref(registry, platform_tag)],
            "index": {"digest": index, "tags": [registry_ref(registry, t) for t in index_tags]},
        }
        parts.append(part_document(release, variant.id, "publish", published))
    return merge(parts, variant_rules(matrix))


@pytest.fixture(scope="module")
def template(registry: LocalRegistry, tmp_path_factory: pytest.TempPathFactory) -> Template:
    base = tmp_path_factory.mktemp("promote-template")
    engine = make_sample_engine(base)
    engine.repo.run("switch", "--quiet", "--create", BRANCH, "main")
    _one_variant(engine)
    tagged = run_cli(engine.root, "tag", env=PINNED)
    assert tagged.code == 0, tagged.output
    where = f"{registry.address}/rel"
    manifest = _rc_manifest(engine.repo, where, tmp_path_factory.mktemp("layout"))
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    write_note(engine.repo, RC, manifest["commit"], text)  # as release manifest records it
    engine.repo.run("push", "--quiet", "origin", "main", BRANCH, RC, notes_ref(RC))
    storage = tmp_path_factory.mktemp("storage") / "data"
    registry.stop()
    shutil.copytree(registry.root / "data", storage)
    registry.start()
    return Template(base, storage, f"{where}/example/tinyengine")


def restore(template: Template, registry: LocalRegistry, dest: Path) -> SampleEngine:
    """A fresh copy of rc1's repository at ``dest``, and the registry as rc1 left it."""
    shutil.copytree(template.base, dest, symlinks=True)
    repo = GitRepo(dest / "engine")
    repo.run("remote", "set-url", "origin", str(dest / "remote.git"))
    repo.run("status", "--porcelain")  # refresh the copied index's stat data
    registry.stop()
    shutil.rmtree(registry.root / "data")
    shutil.copytree(template.storage, registry.root / "data")
    registry.start()
    return SampleEngine(dest / "engine", dest / "remote.git", repo, {})


def served_tags(repository: str) -> dict[str, str]:
    """Every tag of ``repository`` and the digest it serves, read with skopeo."""
    listed = subprocess.run(
        ["skopeo", "list-tags", "--tls-verify=false", f"docker://{repository}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    tags = json.loads(listed.stdout)["Tags"]
    found = Registry().served_all([f"{repository}:{tag}" for tag in tags])
    return {ref.rsplit(":", 1)[1]: served.digest for ref, served in found.items() if served}


def state(engine: SampleEngine, template: Template) -> dict[str, object]:
    """What a promote changes: every ref here and on the remote, HEAD, the work tree,
    what is left under .git/release, the final's note, and the registry's tags."""
    repo = engine.repo
    assert engine.remote is not None
    release_dir = repo.git_dir / "release"
    final = repo.rev(f"refs/tags/{FINAL}")
    note = repo.run("notes", f"--ref={notes_ref(FINAL)}", "show", FINAL, check=False)
    return {
        "refs": repo.out("for-each-ref", "--format=%(refname) %(objectname)"),
        "remote refs": repo.run("--git-dir", str(engine.remote), "for-each-ref").stdout,
        "HEAD": repo.current_branch(),
        "status": repo.out("status", "--porcelain", "--untracked-files=all"),
        "left under .git/release": sorted(
            p.name for p in release_dir.iterdir() if p.name != "picks.cache"
        )
        if release_dir.exists()
        else [],
        "git locks": sorted(p.name for p in repo.git_dir.rglob("*.lock")),
        "final": final,
        "final's note": note.stdout if note.ok else None,
        "registry": served_tags(template.repository),
    }


# -- a skopeo that stops the promote at its nth call ----------------------------------------

SKOPEO = """#!{python}
import fcntl, os, signal, subprocess, sys, time
real, counter, nth, mode = {real!r}, {counter!r}, {nth}, {mode!r}
with open(counter, "a+") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    f.write(" ".join(sys.argv[1:2]) + "\\n")
    f.flush()
    f.seek(0)
    calls = len(f.read().splitlines())
if calls != nth:
    os.execv(real, [real, *sys.argv[1:]])
tool = os.getppid()
if mode == "kill":  # the tool alone: this call never happens
    os.kill(tool, signal.SIGKILL)
    sys.exit(1)
if mode == "group":  # this call done in the registry, then the tool's whole group killed
    subprocess.run([real, *sys.argv[1:]], capture_output=True)
    os.killpg(os.getpgid(tool), signal.SIGKILL)
    sys.exit(1)
if mode == "fail":  # the registry goes away for this one call
    print("pinging container registry: dial tcp 127.0.0.1:1: connect: connection refused", file=sys.stderr)
    sys.exit(1)
os.kill(tool, {{"term": signal.SIGTERM, "int": signal.SIGINT}}[mode])
time.sleep(30)
sys.exit(1)
"""


def stopping_skopeo(where: Path, nth: int = 0, mode: str = "kill") -> tuple[Path, Path]:
    """A skopeo that logs each call and, at its ``nth`` (0: never), stops the promote as
    ``mode`` says; the wrapper and its log."""
    real = shutil.which("skopeo")
    assert real is not None
    where.mkdir(parents=True, exist_ok=True)
    wrapper, counter = where / "skopeo", where / "calls"
    wrapper.write_text(
        SKOPEO.format(python=sys.executable, real=real, counter=str(counter), nth=nth, mode=mode)
    )
    wrapper.chmod(0o755)
    return wrapper, counter


def promote(engine: SampleEngine, *args: str, skopeo: Path | None = None) -> Any:
    env = {**PINNED, **({"RELEASE_SKOPEO": str(skopeo)} if skopeo else {})}
    return run_cli(engine.root, "promote", *args, env=env, timeout=300)


def run_stopped(engine: SampleEngine, skopeo: Path, *, hook: str | None = None) -> int:
    """``release promote`` in its own session, stopped by ``skopeo`` (or by a git ``hook``
    that kills its group); its exit status once every process of it has ended."""
    if hook is not None:
        path = engine.repo.git_dir / "hooks" / hook
        path.write_text("#!/bin/sh\nkill -KILL 0\n", encoding="utf-8")
        path.chmod(0o755)
    proc = subprocess.Popen(
        [sys.executable, "-m", "release", "promote"],
        cwd=engine.root,
        env={**os.environ, **PINNED, "RELEASE_SKOPEO": str(skopeo)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=default_sigint,  # as from a terminal: the suite may run with it ignored
    )
    _, err = proc.communicate(timeout=DEADLINE)
    deadline = time.monotonic() + DEADLINE
    while process_group_alive(proc.pid):
        assert time.monotonic() < deadline, "the stopped promote's group never ended"
        time.sleep(0.01)
    if hook is not None:
        (engine.repo.git_dir / "hooks" / hook).unlink()
    if proc.returncode in (130, 143):
        assert "re-run the same command to continue" in err, err
    print(f"promote exited {proc.returncode}: {err}")  # shown with a failing test
    return proc.returncode


_TWIN: list[tuple[dict[str, object], list[str]]] = []


def uninterrupted(
    template: Template, registry: LocalRegistry, where: Path
) -> tuple[dict[str, object], list[str]]:
    """An uninterrupted promote from rc1: the state it ends in, and its skopeo calls."""
    if not _TWIN:
        engine = restore(template, registry, where / "twin")
        skopeo, calls = stopping_skopeo(where / "twin-skopeo")
        result = promote(engine, skopeo=skopeo)
        assert result.code == 0, result.output
        assert result.stdout.rstrip().endswith("next: release push"), result.output
        _TWIN.append((state(engine, template), calls.read_text().splitlines()))
    return _TWIN[0]


# -- everything the registry would refuse is found before git changes ----------------------


def _refused(engine: SampleEngine, template: Template, code: int, *words: str) -> None:
    before_repo, before = repo_state(engine.root), state(engine, template)
    result = promote(engine)
    assert result.code == code, result.output
    for word in words:
        assert word in result.stderr, result.output
    assert "next:" not in result.stdout, result.output
    assert repo_state(engine.root) == before_repo
    assert state(engine, template) == before


def test_a_final_tag_serving_another_image_is_refused_before_git_changes(
    template: Template, registry: LocalRegistry, tmp_path: Path
) -> None:
    engine = restore(template, registry, tmp_path / "case")
    other, _ = oci_layout(tmp_path / "other", ["linux/amd64"], "someone else's")
    taken = f"{template.repository}:{FINAL}-amd64"
    copy_in(tmp_path / "other", "amd64", taken)
    _refused(engine, template, 3, taken, other[0].digest, "a published tag is not moved")


def test_an_rc_platform_manifest_gone_from_the_registry_is_refused_before_git_changes(
    template: Template, registry: LocalRegistry, tmp_path: Path
) -> None:
    engine = restore(template, registry, tmp_path / "case")
    gone = served_tags(template.repository)[f"{RC}-amd64"]
    subprocess.run(
        ["skopeo", "delete", "--tls-verify=false", f"docker://{template.repository}@{gone}"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    _refused(engine, template, 3, f"{template.repository}@{gone} is not in the registry")


def test_other_bytes_under_the_rcs_index_digest_are_refused_before_git_changes(
    template: Template, registry: LocalRegistry, tmp_path: Path
) -> None:
    engine = restore(template, registry, tmp_path / "case")
    index = served_tags(template.repository)[RC]
    blob = registry.root / "data/docker/registry/v2/blobs/sha256" / index[7:9] / index[7:] / "data"
    document = json.loads(blob.read_bytes())
    document["annotations"] = {"forged": "yes"}
    blob.write_bytes(json.dumps(document).encode())
    result_words = (f"{template.repository}@{index}",)
    before_repo = repo_state(engine.root)
    result = promote(engine)
    assert result.code in (3, 6), result.output  # refused by us, or by skopeo's own check
    assert all(word in result.stderr for word in result_words), result.output
    assert "next:" not in result.stdout
    assert repo_state(engine.root) == before_repo
    assert engine.repo.rev(f"refs/tags/{FINAL}") is None


def test_a_registry_away_is_refused_before_git_changes_and_offers_no_images(
    template: Template, registry: LocalRegistry, tmp_path: Path
) -> None:
    engine = restore(template, registry, tmp_path / "case")
    before = repo_state(engine.root)
    registry.stop()
    try:
        result = promote(engine)
    finally:
        registry.start()
    assert result.code == 6, result.output
    assert "does not answer" in result.stderr and "--no-images" in result.stderr
    assert "next:" not in result.stdout
    assert repo_state(engine.root) == before


def test_a_dry_run_reads_the_registry_and_lists_each_copy(
    template: Template, registry: LocalRegistry, tmp_path: Path
) -> None:
    engine = restore(template, registry, tmp_path / "case")
    before_repo, before = repo_state(engine.root), state(engine, template)
    result = promote(engine, "--dry-run", "--json")
    assert result.code == 0, result.output
    plan = json.loads(result.stdout)
    copies = [s for s in plan["steps"] if s["action"] == "copy-image"]
    wanted = {
        f"{template.repository}:{t}"
        for t in (FINAL, f"{FINAL}-amd64", f"{FINAL}-cu130", "latest", "latest-cu130")
    }
    assert {c["ref"] for c in copies} == wanted
    assert plan["steps"][-1]["action"] == "record-manifest"
    assert repo_state(engine.root) == before_repo and state(engine, template) == before


# -- stopped anywhere, finished by the next run ---------------------------------------------


def _finish(engine: SampleEngine, template: Template, twin: dict[str, object], what: str) -> None:
    again = promote(engine)
    assert again.code == 0, f"{what}: {again.output}"
    assert again.stdout.rstrip().endswith("next: release push"), f"{what}: {again.output}"
    assert state(engine, template) == twin, what


def test_a_promote_stopped_at_any_registry_call_or_between_its_sides_is_finished_by_the_next(
    template: Template, registry: LocalRegistry, tmp_path: Path
) -> None:
    twin, calls = uninterrupted(template, registry, tmp_path)
    copies = [n for n, verb in enumerate(calls, start=1) if verb == "copy"]
    assert copies and len(calls) > len(copies)  # reads, then copies, then reads back
    # between the sides: the changelog commit is promote's last git step
    engine = restore(template, registry, tmp_path / "between")
    skopeo, log = stopping_skopeo(tmp_path / "between-skopeo")
    assert run_stopped(engine, skopeo, hook="post-commit") == -signal.SIGKILL
    assert engine.repo.rev(f"refs/tags/{FINAL}") is not None
    assert "copy" not in log.read_text().split()  # the registry checked, nothing copied
    assert (engine.repo.git_dir / "release" / "promote.json").exists()
    _finish(engine, template, twin, "killed between the git and registry sides")
    for nth in range(1, len(calls) + 1):
        engine = restore(template, registry, tmp_path / f"call-{nth}")
        skopeo, _ = stopping_skopeo(tmp_path / f"skopeo-{nth}", nth, "kill")
        assert run_stopped(engine, skopeo) == -signal.SIGKILL
        if nth >= copies[0]:  # the git side is done, and its journal says what follows
            assert engine.repo.rev(f"refs/tags/{FINAL}") is not None
            assert (engine.repo.git_dir / "release" / "promote.json").exists()
        _finish(engine, template, twin, f"killed at skopeo call {nth} ({calls[nth - 1]})")


@pytest.mark.parametrize(
    ("mode", "verb", "code"),
    [
        ("group", "copy", -signal.SIGKILL),  # the copy made, its caller gone before it knew
        ("term", "copy", 143),
        ("int", "copy", 130),
        ("term", "inspect", 143),  # a read back
    ],
)
def test_a_promote_stopped_by_a_signal_is_finished_by_the_next(
    template: Template, registry: LocalRegistry, tmp_path: Path, mode: str, verb: str, code: int
) -> None:
    twin, calls = uninterrupted(template, registry, tmp_path)
    first_copy = calls.index("copy") + 1
    nth = first_copy + 1 if verb == "copy" else len(calls)
    assert calls[nth - 1] == verb
    engine = restore(template, registry, tmp_path / "case")
    skopeo, _ = stopping_skopeo(tmp_path / "skopeo", nth, mode)
    assert run_stopped(engine, skopeo) == code
    assert (engine.repo.git_dir / "release" / "promote.json").exists()
    _finish(engine, template, twin, f"{mode} at skopeo call {nth}")


def test_a_registry_failure_after_the_git_side_keeps_the_journal_and_a_rerun_finishes(
    template: Template, registry: LocalRegistry, tmp_path: Path
) -> None:
    twin, calls = uninterrupted(template, registry, tmp_path)
    engine = restore(template, registry, tmp_path / "case")
    skopeo, _ = stopping_skopeo(tmp_path / "skopeo", calls.index("copy") + 1, "fail")
    failed = promote(engine, skopeo=skopeo)
    assert failed.code == 6, failed.output
    assert f"{FINAL} is tagged, but its images are not promoted yet" in failed.stderr
    assert "re-run release promote to finish" in failed.stderr
    assert "next:" not in failed.stdout
    assert (engine.repo.git_dir / "release" / "promote.json").exists()
    status = run_cli(engine.root, "status", "--offline")
    assert f"in progress: promote of {FINAL}, stopped before it was done" in status.stdout
    assert (
        f"next:     release promote   (finishes the interrupted promote of {FINAL})"
        in status.stdout
    )
    _finish(engine, template, twin, "after a failed copy")


def test_no_images_then_images_promote_end_where_promote_ends(
    template: Template, registry: LocalRegistry, tmp_path: Path
) -> None:
    twin, _ = uninterrupted(template, registry, tmp_path)
    engine = restore(template, registry, tmp_path / "case")
    tagged = promote(engine, "--no-images")
    assert tagged.code == 0, tagged.output
    assert f"release images.promote --tag {FINAL}" in tagged.stdout
    assert served_tags(template.repository).keys() == {RC, f"{RC}-amd64", f"{RC}-cu130"}
    again = promote(engine)
    assert again.code == 3 and f"release images.promote --tag {FINAL}" in again.stderr
    engine.repo.run("switch", "--quiet", "--detach", FINAL)
    given = run_cli(engine.root, "images.promote", "--tag", FINAL, env=PINNED)
    assert given.code == 0, given.output
    engine.repo.run("switch", "--quiet", BRANCH)
    assert state(engine, template) == twin


def test_images_promote_refuses_a_checkout_of_another_commit(
    template: Template, registry: LocalRegistry, tmp_path: Path
) -> None:
    engine = restore(template, registry, tmp_path / "case")
    assert promote(engine, "--no-images").code == 0
    before_repo, before = repo_state(engine.root), state(engine, template)
    refused = run_cli(engine.root, "images.promote", "--tag", FINAL, env=PINNED)
    assert refused.code == 3, refused.output
    assert (
        f"is not {FINAL}'s commit" in refused.stderr and f"git checkout {FINAL}" in refused.stderr
    )
    assert repo_state(engine.root) == before_repo and state(engine, template) == before

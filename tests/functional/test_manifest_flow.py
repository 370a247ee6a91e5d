"""``release manifest`` in a real repository: parts merged (also from several CI jobs'
directories), the manifest recorded as the tag's note, ``status`` reading it, and bad or
missing parts refused in one line with the repository as it was. No engine needed: the
parts are written as the image jobs write them."""

from __future__ import annotations

import json
from pathlib import Path

from release.adapters.git_notes import notes_ref
from release.flows.context import ReleaseContext
from release.sample import SampleEngine
from tests.conftest import repo_state, run_cli
from tests.manifest_support import (
    TAG,
    all_parts,
    built_by,
    sha,
    tagged,
    write,
)


def test_parts_merge_into_the_tags_manifest_and_status_reads_it(
    cut_engine_copy: SampleEngine,
) -> None:
    engine = cut_engine_copy
    release, parts = tagged(engine)
    all_parts(engine, parts, release)
    result = run_cli(engine.root, "manifest")
    assert result.code == 0, result.output
    assert f"recorded as {notes_ref(TAG)}" in result.stdout
    assert (
        "  cu128: built yes (111111111111), smoke passed, snapshot omitted (CUDA 12.8.1, rule `!=12.*`)"
        in result.stdout
    )
    note = engine.repo.out("notes", f"--ref={notes_ref(TAG)}", "show", f"{TAG}^{{commit}}")
    manifest = json.loads(note)
    assert manifest["tag"] == TAG and manifest["commit"] == release.commit
    assert set(manifest["variants"]) == {"cu128", "cu129", "cu130"}
    assert manifest["variants"]["cu130"]["snapshot"]["status"] == "passed"
    again = run_cli(engine.root, "manifest")
    assert "already recorded" in again.stdout

    state = json.loads(run_cli(engine.root, "status", "--json").stdout)["images"]
    assert state["tag"] == TAG and state["manifest"] == "published" and state["missing"] == []
    assert state["variants"]["cu129"]["snapshot"] == "omitted (CUDA 12.9.1, rule `!=12.*`)"
    text = run_cli(engine.root, "status").stdout
    assert f"images:   {TAG} (manifest: published)\n" in text


def test_parts_from_several_ci_jobs_merge_and_nothing_is_written_under_git(
    cut_engine_copy: SampleEngine, tmp_path: Path
) -> None:
    engine = cut_engine_copy
    release, _ = tagged(engine)
    job1, job2 = tmp_path / "job-cu128" / "deep", tmp_path / "job-rest"
    all_parts(engine, job2, release, skip="cu128.build")
    matrix = ReleaseContext(engine.root).config.matrix
    assert matrix is not None
    write(job1, release, "cu128", "build", built_by(matrix, "cu128", sha("1"), release.version))
    (job1 / "build.log.json").write_text("[1, 2]")  # other files of an artifact pass
    out = tmp_path / "manifest.json"
    result = run_cli(
        engine.root, "manifest", "--parts", f"{job1.parent},{job2}", "--out", str(out), "--push"
    )
    assert result.code == 0, result.output
    assert json.loads(out.read_text())["variants"]["cu128"]["build"]["image_id"] == sha("1")
    assert not (engine.repo.git_dir / "release" / "manifest").exists()
    assert engine.remote is not None
    remote = engine.repo.out("ls-remote", str(engine.remote), notes_ref(TAG))
    assert remote.split("\t")[0] == engine.repo.rev(notes_ref(TAG))


def test_a_missing_part_is_refused_and_partial_says_what_is_missing(
    cut_engine_copy: SampleEngine,
) -> None:
    engine = cut_engine_copy
    release, parts = tagged(engine)
    all_parts(engine, parts, release, skip="cu130.snapshot")
    before = repo_state(engine.root)
    refused = run_cli(engine.root, "manifest")
    assert refused.code == 7
    assert refused.stderr == (
        'error: the manifest is incomplete: cu130: no snapshot (run nox -s "snapshot(cu130)")\n'
    )
    assert repo_state(engine.root) == before
    partial = run_cli(engine.root, "manifest", "--partial")
    assert partial.code == 0
    assert 'missing: cu130: no snapshot (run nox -s "snapshot(cu130)")' in partial.stdout
    assert repo_state(engine.root) == before  # --partial records nothing
    assert json.loads(run_cli(engine.root, "status", "--json").stdout)["images"]["missing"]


def test_a_damaged_part_or_note_is_refused_in_one_line(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    release, parts = tagged(engine)
    all_parts(engine, parts, release)
    damaged = parts / "cu129.smoke.json"
    document = json.loads(damaged.read_text())
    document["data"]["checks"][0]["status"] = "skipped"
    damaged.write_text(json.dumps(document))
    before = repo_state(engine.root)
    refused = run_cli(engine.root, "manifest")
    assert refused.code == 7
    assert refused.stderr.startswith(
        f"error: {damaged}: not a valid release manifest: data.checks.0.status: 'skipped'"
    )
    assert refused.stderr.count("\n") == 1
    assert repo_state(engine.root) == before

    engine.repo.run(
        "notes", f"--ref={notes_ref(TAG)}", "add", "-m", "{not json", f"{TAG}^{{commit}}"
    )
    status = run_cli(engine.root, "status")
    assert status.code == 0
    assert f"the manifest of {TAG} ({notes_ref(TAG)}): not JSON" in status.stdout


def test_status_before_any_part_is_written_says_none_yet(cut_engine_copy: SampleEngine) -> None:
    engine = cut_engine_copy
    engine.repo.run("tag", "-a", TAG, "-m", TAG)
    assert not (engine.repo.git_dir / "release" / "manifest").exists()
    status = run_cli(engine.root, "status")
    assert status.code == 0, status.output
    assert f"images:   {TAG} (manifest: none yet)\n" in status.stdout
    assert "not a directory" not in status.output

"""The final in the registry, and what rc testers read, against a real registry and a
real engine: an rc built, smoked, published and its manifest recorded; ``promote`` copies
its digests to the final's tags inside the registry (no blob uploaded), reads each back and
records the final's manifest; a published final tag that serves another image is refused
before anything is copied, the moving tag moves; a promote killed half-way is finished by
the next; ``reproduce``'s registry fields match, drift when a tag was moved behind the
release's back, and are not compared when the registry is away; ``manifest show`` and
``git notes show TAG`` read the published manifest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from release.adapters.engine import ContainerEngine
from release.adapters.git import GitRepo
from release.adapters.registry_server import LocalRegistry
from release.core.manifest_records import Content, Manifest, PublishRecord
from release.core.verdict import State
from release.errors import RefusedError
from release.flows.context import ReleaseContext
from release.flows.manifest_store import published_manifest
from release.images.image_signing import ImageSigning
from release.images.promote_registry import promote_in_registry
from release.images.registry_check import registry_verdicts
from tests.docker_support import purge
from tests.engine_support import BASE_1291, Repo, images, make_engine_repo
from tests.registry_support import served, stopping_skopeo
from tests.signing_support import Key, skopeo_accepts

RC, FINAL = "v0.1.0rc1", "v0.1.0"


@pytest.fixture(scope="module")
def published_rc(
    docker: ContainerEngine, registry: LocalRegistry, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Repo]:
    """An engine of two variants (``a`` the default) whose rc1 is built, smoked, published
    and recorded as its tag's note."""
    root = tmp_path_factory.mktemp("promote")
    repo = make_engine_repo(
        root / "engine",
        tmp_path_factory.mktemp("home"),
        variants=[
            {"id": "a", "cuda": "12.9.1", "base-image": BASE_1291},
            {"id": "b", "cuda": "12.9.1", "base-image": BASE_1291, "build-args": {"B": "1"}},
        ],
        checks=[],
        default="a",
    )
    repo.git("tag", "--delete", "v0.1.0")
    repo.git("tag", "--annotate", "--message", "rc1\n\nits notes", RC)
    try:
        for args in (
            ("images.build",),
            ("images.smoke",),
            ("images.publish", "--registry", f"{registry.address}/rel"),
            ("manifest",),
        ):
            result = repo.release(*args)
            assert result.code == 0, (args, result.output)
        yield repo
    finally:
        purge(docker, repo.name, repo.head)


def manifest(repo: Repo, tag: str) -> dict[str, Any]:
    git = GitRepo(repo.root)
    found = published_manifest(git, tag, str(git.rev(tag)))
    assert found is not None
    return found.document


def final_refs(repo: Repo, registry: LocalRegistry, final: str = FINAL) -> dict[str, str]:
    """Each final tag and the rc digest it must serve, spelt here."""
    rc1 = manifest(repo, RC)["variants"]
    at = f"{registry.address}/rel/{repo.name}"
    a, b = rc1["a"]["publish"], rc1["b"]["publish"]
    return {
        f"{at}:{final}-amd64": a["digest"],
        f"{at}:{final}-b-amd64": b["digest"],
        f"{at}:{final}": a["index"]["digest"],
        f"{at}:{final}-a": a["index"]["digest"],
        f"{at}:{final}-b": b["index"]["digest"],
        f"{at}:latest": a["index"]["digest"],
        f"{at}:latest-a": a["index"]["digest"],
        f"{at}:latest-b": b["index"]["digest"],
    }


def promote(repo: Repo, final: str = FINAL, signing: ImageSigning | None = None) -> list[str]:
    said: list[str] = []
    old = os.getcwd()
    os.chdir(repo.root)
    try:
        ctx = ReleaseContext(repo.root)
        promote_in_registry(
            ctx,
            Manifest.of(manifest(repo, RC)),
            final_tag=final,
            final_version=final.removeprefix("v"),
            commit=str(ctx.repo.rev(RC)),
            say=said.append,
            signing=signing,
        )
    finally:
        os.chdir(old)
    return said


@images
def test_the_final_gets_the_rcs_digests_inside_the_registry_and_a_rerun_copies_nothing(
    published_rc: Repo, registry: LocalRegistry
) -> None:
    published_rc.git("tag", FINAL, RC)
    wanted = final_refs(published_rc, registry)
    traffic = registry.traffic()
    assert traffic.uploads > 0 and traffic.blob_bytes > 0  # the rc's publish did upload
    said = promote(published_rc)
    assert {ref: (served(ref) or ("nothing",))[0] for ref in wanted} == wanted
    after = registry.traffic()
    assert after.uploads == traffic.uploads and after.blob_bytes == traffic.blob_bytes  # no blob
    assert sum(" -> sha256:" in line for line in said) == len(wanted), said
    final = manifest(published_rc, FINAL)
    assert final["promoted_from"]["tag"] == RC
    for row in ("a", "b"):
        record = final["variants"][row]["publish"]
        assert record["digest"] == manifest(published_rc, RC)["variants"][row]["publish"]["digest"]
        assert all(FINAL in tag for tag in (*record["tags"], *record["index"]["tags"]))
    again = promote(published_rc)
    assert sum(" is there: " in line for line in again) == len(wanted), again
    assert registry.traffic().manifests_written == after.manifests_written


@images
def test_a_final_tag_published_with_another_image_is_refused_before_anything_is_copied(
    published_rc: Repo, registry: LocalRegistry
) -> None:
    final = "v0.1.0.post9"
    published_rc.git("tag", final, RC)
    wanted = final_refs(published_rc, registry, final)
    taken = next(ref for ref in wanted if ref.endswith(f":{final}-b"))
    a_index = next(ref for ref in wanted if ref.endswith(f":{final}-a"))
    copy = ["skopeo", "copy", "--all", "--src-tls-verify=false", "--dest-tls-verify=false"]
    subprocess.run(
        [*copy, f"docker://{a_index.rsplit(':', 1)[0]}@{wanted[a_index]}", f"docker://{taken}"],
        check=True,
        capture_output=True,
    )
    with pytest.raises(RefusedError) as refused:
        promote(published_rc, final)
    assert refused.value.exit_code == 3
    assert taken in refused.value.message and wanted[taken] in refused.value.message
    assert wanted[a_index] in refused.value.message  # both digests
    untouched = [ref for ref in wanted if ref != taken and "latest" not in ref]
    assert all(served(ref) is None for ref in untouched)


@images
def test_the_moving_tag_moves_to_the_newest_final(
    published_rc: Repo, registry: LocalRegistry
) -> None:
    latest = next(ref for ref in final_refs(published_rc, registry) if ref.endswith(":latest-b"))
    a_index = next(ref for ref in final_refs(published_rc, registry) if ref.endswith(":latest-a"))
    copy = ["skopeo", "copy", "--all", "--src-tls-verify=false", "--dest-tls-verify=false"]
    digest = final_refs(published_rc, registry)[a_index]
    subprocess.run(
        [*copy, f"docker://{a_index.rsplit(':', 1)[0]}@{digest}", f"docker://{latest}"],
        check=True,
        capture_output=True,
    )
    final = "v0.1.0.post1"
    published_rc.git("tag", final, RC)
    said = promote(published_rc, final)
    assert any(line.endswith("(moved)") and ":latest-b" in line for line in said), said
    assert served(latest)[0] == final_refs(published_rc, registry)[latest]  # type: ignore[index]


@images
@pytest.mark.slow
def test_a_promote_killed_half_way_is_finished_by_the_next(
    published_rc: Repo, registry: LocalRegistry, tmp_path: Path
) -> None:
    final = "v0.1.0.post2"
    published_rc.git("tag", final, RC)
    wanted = final_refs(published_rc, registry, final)
    skopeo = stopping_skopeo(tmp_path, ("copy",), 3, signal.SIGKILL)
    code = (
        "import sys\n"
        "from tests.images.test_promote_registry import promote, Repo\n"
        "from pathlib import Path\n"
        f"promote(Repo(Path({str(published_rc.root)!r}), {published_rc.name!r}, {{}}), {final!r})\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, **published_rc.env, "RELEASE_SKOPEO": str(skopeo)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    done = [ref for ref in wanted if served(ref) is not None]
    assert 0 < len(done) < len(wanted)
    assert GitRepo(published_rc.root).rev(f"refs/notes/release/{final}") is None  # nothing recorded
    promote(published_rc, final)
    assert {ref: (served(ref) or ("nothing",))[0] for ref in wanted} == wanted
    # a post release stands in for a second final of the one rc, which no command reads
    # as a final's manifest (a final is promoted from an rc of its own version): git does
    note = published_rc.git(
        "notes", f"--ref=refs/notes/release/{final}", "show", f"{final}^{{commit}}"
    )
    assert json.loads(note)["promoted_from"]["tag"] == RC


@images
def test_reproduces_registry_fields_match_drift_and_are_not_compared_without_it(
    published_rc: Repo, registry: LocalRegistry, docker: ContainerEngine
) -> None:
    entry = manifest(published_rc, RC)["variants"]["b"]
    content = entry["build"]["content"]
    published = PublishRecord.of(entry["publish"])
    fields = {f.name: f for f in registry_verdicts(docker, published, Content.of(content))}
    assert fields["registry tag"].state is State.MATCH
    assert fields["registry content"].state is State.MATCH
    drifted = {**content, "digest": "sha256:" + "1" * 64}
    fields = {f.name: f for f in registry_verdicts(docker, published, Content.of(drifted))}
    assert fields["registry content"].state is State.DRIFT
    # the rc's tag moved behind the release's back: a's index under b's tag
    a_index = manifest(published_rc, RC)["variants"]["a"]["publish"]["index"]
    tag = entry["publish"]["index"]["tags"][0]
    copy = ["skopeo", "copy", "--all", "--src-tls-verify=false", "--dest-tls-verify=false"]
    original = f"docker://{tag.rsplit(':', 1)[0]}@{entry['publish']['index']['digest']}"
    subprocess.run(
        [*copy, f"docker://{tag.rsplit(':', 1)[0]}@{a_index['digest']}", f"docker://{tag}"],
        check=True,
        capture_output=True,
    )
    try:
        fields = {f.name: f for f in registry_verdicts(docker, published, Content.of(content))}
        assert fields["registry tag"].state is State.DRIFT
        assert a_index["digest"] in fields["registry tag"].differences[0]
    finally:
        subprocess.run([*copy, original, f"docker://{tag}"], check=True, capture_output=True)
    registry.stop()
    try:
        fields = {f.name: f for f in registry_verdicts(docker, published, Content.of(content))}
    finally:
        registry.start()
    assert {f.state for f in fields.values()} == {State.NOT_COMPARED}
    assert "does not answer" in fields["registry tag"].differences[0]


@images
def test_manifest_show_and_git_notes_show_read_the_published_manifest(published_rc: Repo) -> None:
    shown = published_rc.release("manifest", "show", RC, "--json")
    assert shown.code == 0, shown.output
    assert json.loads(shown.stdout)["variants"]["a"]["publish"]["digest"].startswith("sha256:")
    text = published_rc.release("manifest", "show", RC)
    assert text.code == 0 and f"manifest of 0.1.0rc1 {RC}" in text.stdout
    assert "linux/amd64 sha256:" in text.stdout
    notes = subprocess.run(  # the manual's command, as written
        ["git", "notes", "--ref", f"release/{RC}", "show", RC],
        cwd=published_rc.root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert notes.returncode == 0, notes.stderr
    assert json.loads(notes.stdout) == manifest(published_rc, RC)
    missing = published_rc.release("manifest", "show", "v9.9.9")
    assert missing.code == 3 and "no tag v9.9.9 here" in missing.stderr


@images
def test_a_final_promoted_with_the_key_is_pulled_by_its_own_tags_under_a_signed_by_policy(
    published_rc: Repo,
    registry: LocalRegistry,
    keys: dict[str, Key],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """skopeo, with a ``signedBy`` policy of its own (written here), is the verifier: the
    final's own tags are accepted once promote signed them; another key's policy refuses
    them; the moving tag stays unsigned; a re-run signs nothing more."""
    maintainer = keys["maintainer"]
    final = "v0.1.0.post7"
    published_rc.git("tag", final, RC)
    store = tmp_path / "store"
    store.mkdir()
    at = f"{registry.address}/rel/{published_rc.name}"
    own = [f"{at}:{final}", f"{at}:{final}-b", f"{at}:{final}-amd64", f"{at}:{final}-b-amd64"]
    home = {"GNUPGHOME": str(maintainer.home)}
    # images.promote: a store that is not a directory is refused before anything is read
    refused = published_rc.release("images.promote", "--tag", final, "--sign-with", maintainer.fpr,
                         "--signatures", str(tmp_path / "none"), **home)  # fmt: skip
    assert refused.code == 2 and "--signatures" in refused.output, refused.output
    assert all(served(ref) is None for ref in own)
    monkeypatch.setenv("GNUPGHOME", str(maintainer.home))  # the maintainer's GnuPG
    said = promote(published_rc, final, ImageSigning(maintainer.fpr, store))
    assert any(line.startswith("promote(a): signed ") for line in said), said
    for ref in own:
        accepted, why = skopeo_accepts(ref, maintainer.public, store, tmp_path)
        assert accepted, (ref, why)
        assert not skopeo_accepts(ref, keys["other"].public, store, tmp_path)[0], ref
    assert served(f"{at}:latest") is not None  # the moving tag is there, and unsigned
    assert not skopeo_accepts(f"{at}:latest", maintainer.public, store, tmp_path)[0]
    note = published_rc.git("notes", f"--ref=refs/notes/release/{final}", "show", RC)  # as recorded
    recorded = json.loads(note)["variants"]
    for row in ("a", "b"):
        publish = recorded[row]["publish"]
        assert publish["signed_by"] == publish["index"]["signed_by"] == maintainer.fpr
    files = sorted(p for p in store.rglob("signature-*"))
    again = promote(published_rc, final, ImageSigning(maintainer.fpr, store))
    assert any(" is signed by " in line for line in again), again
    assert sorted(p for p in store.rglob("signature-*")) == files  # none added

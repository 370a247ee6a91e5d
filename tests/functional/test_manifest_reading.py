"""One reading of a tag's manifest note for every command that shows or uses one.

The note is written by whoever can push, apart from the tag. Each damage is made with git
itself on the sample engine's rc (a faithful manifest, changed, written as the note):
``status`` says the note is damaged and why, in a ``note:`` line, and shows none of its
rows; ``manifest show``, ``report``, ``promote``, ``images.promote`` and ``reproduce``
refuse it (exit 7) in that same line, word for word.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from release.adapters.config_file import CONFIG_ENV
from release.core.manifest import MAX_DEPTH, PART_SCHEMA, ManifestError
from release.core.manifest_records import Manifest
from release.errors import UsageError
from release.flows.context import ReleaseContext
from release.flows.manifest_store import published_manifest
from release.images.promote import final_manifest
from release.sample import SampleEngine, make_sample_engine
from tests.conftest import CliResult, copied_engine, cut, repo_state, run_cli
from tests.manifest_support import TAG
from tests.reproduce_support import SNAPSHOT_OPTIONS, clone_of, faithful, publish

FINAL = "v0.1.0"
NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent.sock"}


def _nested(depth: int) -> Callable[[dict[str, Any]], str]:
    """A faithful manifest whose cu130 snapshot record holds a list ``depth`` levels deep."""

    def text(document: dict[str, Any]) -> str:
        deep = "[" * depth + "]" * depth
        return json.dumps(document).replace('"record": {', f'"record": {{"deep": {deep}, ', 1)

    return text


def _other_version(document: dict[str, Any]) -> str:
    return json.dumps(document | {"version": "0.1.0rc7"})


def _unknown_variant(document: dict[str, Any]) -> str:
    variants = document["variants"] | {"cu999": copy.deepcopy(document["variants"]["cu128"])}
    return json.dumps(document | {"variants": variants})


def _published(registry: str, tag: str = "") -> Callable[[dict[str, Any]], str]:
    """A faithful manifest whose cu130 row says it was published to ``registry`` (its tags
    there, unless ``tag`` names one elsewhere): a note's registry and tags reach skopeo."""

    def text(document: dict[str, Any]) -> str:
        document = copy.deepcopy(document)
        row = document["variants"]["cu130"]
        at = f"{registry}/example/tinyengine:v0.1.0rc1"
        row["publish"] = {
            "registry": registry,
            "platform": "linux/amd64",
            "image_id": row["build"]["image_id"],
            "digest": "sha256:" + "7" * 64,
            "tags": [f"{at}-amd64"],
            "index": {"digest": "sha256:" + "8" * 64, "tags": [at, tag or f"{at}-cu130"]},
        }
        return json.dumps(document)

    return text


def _a_part(document: dict[str, Any]) -> str:
    """One of the rc's parts where its manifest should be: it names the tag and commit."""
    header = {k: document[k] for k in ("version", "tag", "commit", "source_date_epoch", "tool")}
    return json.dumps(
        {
            "schema": PART_SCHEMA,
            **header,
            "image": document["image"],
            "variant": "cu130",
            "part": "build",
            "data": document["variants"]["cu130"]["build"],
        }
    )


DAMAGES = {
    "a part, not a manifest": (_a_part, "a part of a release manifest, not a manifest"),
    "another version": (_other_version, "version '0.1.0rc7', the tag's is 0.1.0rc1"),
    "nested 150,000 deep": (_nested(150_000), "not a release manifest (nested too deep to read)"),
    # the parser reads it; the bound refuses it before a schema message, a copy or a dump
    # recurses through it
    "nested past the bound": (
        _nested(MAX_DEPTH),
        "not a release manifest (nested too deep to read)",
    ),
    "an unknown variant": (
        _unknown_variant,
        "variants 'cu128', 'cu129', 'cu130', 'cu999', the tag's are cu128, cu129, cu130",
    ),
    "credentials in its registry": (
        _published("user:hunter2secret@127.0.0.1:5000/rel"),
        "cu130: publish registry: credentials in a registry value are not accepted "
        "('***@127.0.0.1:5000/rel'); log in with docker login 127.0.0.1:5000",
    ),
    "an option for a registry": (
        _published("--src-creds=x:y 127.0.0.1:5000/rel"),
        "cu130: publish registry: '--src-creds=x:y 127.0.0.1:5000/rel' is not a registry path",
    ),
    "a tag outside its registry": (
        _published("127.0.0.1:5000/rel", "evil.example/other:latest"),
        "cu130: publish tags outside 127.0.0.1:5000/rel/example/tinyengine:* (1 of 3)",
    ),
}


@pytest.fixture(params=list(DAMAGES))
def damaged(
    request: pytest.FixtureRequest, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[SampleEngine, str]:
    """The rc tagged and pushed with its manifest note damaged (made once per damage and
    copied); what the damage is."""
    change, said = DAMAGES[request.param]

    def make(root: Path) -> SampleEngine:
        engine = cut(make_sample_engine(root))
        engine.repo.run("tag", "-a", TAG, "-m", TAG)
        publish(engine, TAG, change(faithful(engine.repo, TAG, "0.1.0rc1")) + "\n")
        return engine

    name = f"rc1-damaged-{list(DAMAGES).index(request.param)}"
    return copied_engine(name, make, tmp_path / "copy", tmp_path_factory), said


def said_by_status(engine: SampleEngine) -> str:
    """The damage as ``status`` says it: its note line on the manifest, which must be
    there, with no row of the manifest shown."""
    result = run_cli(engine.root, "status", "--offline")
    assert result.code == 0, result.output
    assert "images:" not in result.stdout and "smoke passed" not in result.stdout
    lines = [line for line in result.stdout.splitlines() if f"the manifest of {TAG}" in line]
    assert len(lines) == 1 and lines[0].startswith("note:"), result.stdout
    return lines[0].removeprefix("note:").strip()


_SAID_BY_STATUS: dict[str, str] = {}  # by damage


def status_line(engine: SampleEngine, said: str) -> str:
    """:func:`said_by_status` of this damage, read once: every test's repository is a copy
    of the same one, so ``status`` says the same of each."""
    if said not in _SAID_BY_STATUS:
        _SAID_BY_STATUS[said] = said_by_status(engine)
    return _SAID_BY_STATUS[said]


def refused(result: CliResult, damage: str) -> None:
    assert result.code == 7, result.output
    assert result.stderr == f"error: {damage}\n", result.output


def test_status_says_the_note_is_damaged_and_why(damaged: tuple[SampleEngine, str]) -> None:
    engine, said = damaged
    damage = said_by_status(engine)
    assert said in damage
    assert damage.startswith(f"the manifest of {TAG} (refs/notes/release/{TAG})")
    _SAID_BY_STATUS[said] = damage


def test_show_report_and_reproduce_refuse_it_in_the_same_words(
    damaged: tuple[SampleEngine, str], tmp_path: Path
) -> None:
    engine, said = damaged
    damage = status_line(engine, said)
    refused(run_cli(engine.root, "manifest", "show", TAG), damage)
    out = tmp_path / "pages"
    refused(run_cli(engine.root, "report", TAG, "--out", str(out)), damage)
    assert not out.exists()
    tester = clone_of(engine, tmp_path / "tester")
    reproduced = run_cli(
        tester, "reproduce", TAG, "--allow-host", SNAPSHOT_OPTIONS, env=NO_ENGINE
    )  # refused before any engine is asked for
    refused(reproduced, damage)


def test_promote_and_images_promote_refuse_it_in_the_same_words(
    damaged: tuple[SampleEngine, str],
) -> None:
    engine, said = damaged
    damage = status_line(engine, said)
    before = repo_state(engine.root)
    promoted = run_cli(engine.root, "promote", "--offline", env=NO_ENGINE)
    refused(promoted, damage)
    assert repo_state(engine.root) == before  # refused before the final was tagged
    engine.repo.run("tag", "-a", FINAL, "-m", FINAL, f"{TAG}^{{commit}}")
    engine.repo.run("switch", "--quiet", "--detach", FINAL)  # a checkout of the final
    refused(run_cli(engine.root, "images.promote", "--tag", FINAL, env=NO_ENGINE), damage)
    assert engine.repo.rev(f"refs/notes/release/{FINAL}") is None  # no final manifest made


def test_a_final_promoted_from_the_rc_is_read_as_the_rc_build(
    cut_engine_copy: SampleEngine,
) -> None:
    """The reading every command shares passes what promote records: the final's manifest,
    of the rc's images, read by status as published."""
    engine = cut_engine_copy
    engine.repo.run("tag", "-a", TAG, "-m", TAG)
    rc = faithful(engine.repo, TAG, "0.1.0rc1")
    publish(engine, TAG, json.dumps(rc) + "\n")
    engine.repo.run("tag", "-a", FINAL, "-m", FINAL)
    matrix = ReleaseContext(engine.root).config.matrix
    assert matrix is not None
    publish(
        engine,
        FINAL,
        json.dumps(final_manifest(Manifest.of(rc), matrix, FINAL, "0.1.0").document()) + "\n",
    )
    state = json.loads(run_cli(engine.root, "status", "--offline", "--json").stdout)["images"]
    assert (state["tag"], state["manifest"], state["missing"]) == (FINAL, "published", [])
    shown = run_cli(engine.root, "manifest", "show", FINAL)
    assert shown.code == 0, shown.output
    assert f"promoted from {TAG}" in shown.stdout


def test_a_note_is_judged_by_the_configuration_the_run_reads_for_its_tag(
    cut_engine_copy: SampleEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a configuration from outside the tree (``--config``), that is the tag's: one
    with no images, or whose tag template does not name the tag, judges no note as passed."""
    engine = cut_engine_copy
    engine.repo.run("tag", "-a", TAG, "-m", TAG)
    publish(engine, TAG, json.dumps(faithful(engine.repo, TAG, "0.1.0rc1")) + "\n")
    commit = str(engine.repo.rev(TAG))
    assert published_manifest(engine.repo, TAG, commit) is not None
    outside = tmp_path / "release.toml"
    monkeypatch.setenv(CONFIG_ENV, str(outside))
    outside.write_text('[tool.release]\nremote = "origin"\n', encoding="utf-8")
    with pytest.raises(ManifestError, match=r"images, the tag's configuration has no \["):
        published_manifest(engine.repo, TAG, commit)
    outside.write_text('[tool.release]\ntag = "release-{version}"\n', encoding="utf-8")
    with pytest.raises(UsageError, match=rf"{TAG} is not a release tag of its repository"):
        published_manifest(engine.repo, TAG, commit)

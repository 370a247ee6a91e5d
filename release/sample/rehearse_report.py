"""What the rehearsal found: the checks of the sandbox after the story, and the table
per variant (built, smoked, snapshot or omitted, the reproduce verdicts) with the time
each step took.

Everything is read back from where a user would look: the bare remote (``git
ls-remote``), the manifests published as git notes (``git notes --ref=... show``,
checked as every command checks them), the engine's image tags (``docker image inspect``) and the
notes the last command printed. Image checks are *not run* when no engine answers;
they never pass without one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from release.adapters.engine import ContainerEngine
from release.adapters.git import GitRepo
from release.adapters.git_notes import notes_ref
from release.core.manifest_records import Manifest, SnapshotRecord, VariantEntry
from release.core.matrix import ImageMatrix
from release.errors import ReleaseError
from release.flows.manifest_store import published_manifest
from release.sample.rehearse_images import DockerSide
from release.sample.rehearse_terminal import Terminal, clock_text

__all__ = ["Ledger", "Tags", "manifest_of", "parse_verdicts", "result_table", "verify"]

PICKS = (59102, 59118, 59140)  # each listed once in the final's notes
REVERT_PAIR = (59020, 59026)
FEATURE = 59110
NOT_RUN = "not run"
MARK = 300.0  # seconds: the whole story, once the stand-in bases are cached


@dataclass(frozen=True)
class Tags:
    rc1: str
    rc2: str
    final: str


@dataclass
class Ledger:
    """What the image steps did, filled in as the story goes."""

    docker: DockerSide
    steps: dict[str, str] = field(default_factory=dict)  # "<tag> images.build" -> result
    reproduced: dict[str, str] = field(default_factory=dict)  # variant -> the tester's verdict
    drifted: dict[str, str] = field(default_factory=dict)  # variant -> verdict on a changed base
    failures: list[str] = field(default_factory=list)


_VERDICT = r"^\s*(?:reproduce\()?(?P<id>{ids})\)?:\s+(?P<verdict>match|drift)\b(?P<rest>.*)$"


def parse_verdicts(text: str, ids: Iterable[str]) -> dict[str, str]:
    """Each variant's verdict as ``reproduce`` prints it (``cu130: match``, ``cu130: DRIFT
    in content digest``): ``match`` or ``drift (...)``."""
    pattern = re.compile(
        _VERDICT.format(ids="|".join(re.escape(i) for i in ids)), re.IGNORECASE | re.MULTILINE
    )
    found = {}
    for m in pattern.finditer(text):
        rest = m["rest"].strip().removeprefix("in ").strip()
        verdict = m["verdict"].lower()
        found[m["id"]] = f"{verdict} ({rest})" if verdict == "drift" and rest else verdict
    return found


def manifest_of(repo: GitRepo, tag: str) -> tuple[Manifest | None, str]:
    """``tag``'s published manifest read as every command reads it (the schema, the tag,
    what the tag builds); (None, why) when there is none or it does not hold."""
    commit = repo.rev(tag)
    try:
        found = published_manifest(repo, tag, commit) if commit else None
    except ReleaseError as err:
        return None, err.one_line()
    if found is None:
        return None, f"no note in {notes_ref(tag)}"
    return found.manifest, ""


def _rule(matrix: ImageMatrix) -> str:
    return matrix.snapshot.selector.text if matrix.snapshot is not None else "(none)"


def build_notes(matrix: ImageMatrix, tag: str, first: bool, said: str) -> list[str]:
    """Which variants a build made, and why (rc1's runtime step, rc2's rebuilds), from
    what ``images.build`` printed."""
    found = dict(re.findall(r"^\s*build\(([^)]+)\): (built|unchanged)", said, re.M))
    built = [i for i in matrix.ids if found.get(i) == "built"]
    kept = [i for i in matrix.ids if found.get(i) == "unchanged"]
    notes = []
    if first:
        plain = [v.id for v in matrix.variants if not matrix.has_snapshot(v)]
        notes.append(
            f"{', '.join(plain)}: without the snapshot runtime step (rule `{_rule(matrix)}`); "
            f"{', '.join(matrix.snapshot_ids())}: with it"
        )
    elif built:
        notes.append(
            f"rebuilt: {', '.join(built)}. The version is baked into every image "
            f"({matrix.version_arg}={tag.removeprefix('v')} writes tinyengine/_version.py) "
            "and #59140 changed tinyengine/server.py, which every variant copies; the "
            "layers before those steps came from the build cache"
        )
    if kept:
        notes.append(
            f"unchanged, not rebuilt: {', '.join(kept)} (images of the same inputs are here)"
        )
    return notes


def snapshot_note(matrix: ImageMatrix) -> str:
    left = [v.id for v in matrix.variants if not matrix.has_snapshot(v)]
    return (
        ", ".join(f"snapshot({i})" for i in left)
        + f" do not exist: the rule `{_rule(matrix)}` omits them, as it omits their runtime step"
    )


# -- the checks ----------------------------------------------------------------------


def verify(
    t: Terminal,
    repo: GitRepo,
    remote: Path,
    matrix: ImageMatrix,
    tags: Tags,
    notes: str,
    ledger: Ledger,
) -> None:
    """The checks of the sandbox after the story; the image ones need an engine."""
    _git_checks(t, repo, str(remote), tags, notes)
    if not ledger.docker.ready:
        t.check(
            "the image checks (manifests, notes refs, promoted ids)", None, ledger.docker.not_run
        )
        return
    refs = repo.remotes.refs(str(remote), "refs/notes/release/*")
    wanted = [notes_ref(tag) for tag in (tags.rc1, tags.rc2, tags.final)]
    t.check(
        "the remote has the manifests' notes refs " + ", ".join(wanted),
        all(ref in refs for ref in wanted),
    )
    for tag in (tags.rc1, tags.rc2):
        _manifest_checks(t, repo, matrix, tag)
    _promoted_checks(t, repo, matrix, tags, ledger)


def _git_checks(t: Terminal, repo: GitRepo, remote: str, tags: Tags, notes: str) -> None:
    remote_refs = repo.remotes.refs(remote)
    t.check(
        f"the remote has {tags.rc1}, {tags.rc2} and {tags.final}",
        all(f"refs/tags/{tag}" in remote_refs for tag in (tags.rc1, tags.rc2, tags.final)),
    )
    t.check(
        f"the final {tags.final} is on {tags.rc2}'s commit",
        repo.rev(tags.final) == repo.rev(tags.rc2),
    )
    branch = repo.current_branch() or ""
    t.check(
        "the remote release branch is the local one",
        (theirs := remote_refs.get(f"refs/heads/{branch}")) is not None
        and theirs.sha == repo.rev(f"refs/heads/{branch}"),
    )
    t.check(
        "each pick (" + ", ".join(f"#{n}" for n in PICKS) + ") is listed once in the final notes",
        all(notes.count(f"#{n}]") == 1 for n in PICKS),
    )
    t.check(
        f"the kernel stub #{REVERT_PAIR[0]} and its revert #{REVERT_PAIR[1]} cancel out",
        all(f"#{n}" not in notes for n in REVERT_PAIR),
    )
    t.check(f"the feature #{FEATURE} was not picked", f"#{FEATURE}" not in notes)
    changelog = (repo.root / "CHANGELOG.md").read_text(encoding="utf-8")
    version = tags.final.removeprefix("v")
    t.check(
        "CHANGELOG.md has the final's section and no rc sections",
        f"## [{version}] - " in changelog and f"[{version}rc" not in changelog,
    )


def _manifest_checks(t: Terminal, repo: GitRepo, matrix: ImageMatrix, tag: str) -> None:
    manifest, why = manifest_of(repo, tag)
    t.check(
        f"{tag}'s manifest (git notes show) holds to its schema and tag", manifest is not None, why
    )
    if manifest is None:
        return
    variants = manifest.variants
    t.check(
        f"{tag}'s manifest lists the {len(matrix.variants)} variants, each built and smoked",
        sorted(variants) == sorted(matrix.ids)
        and all(v.build and v.smoke and v.smoke.passed for v in variants.values()),
    )
    snapshots = {i: v.snapshot for i, v in variants.items()}
    t.check(
        f"{tag}: snapshot passed where the rule applies, omitted by the rule elsewhere",
        all(
            _status(snapshots.get(v.id)) == ("passed" if matrix.has_snapshot(v) else "omitted")
            for v in matrix.variants
        ),
    )
    step_args = dict(matrix.snapshot.build_args) if matrix.snapshot is not None else {}
    with_runtime = sorted(
        i
        for i, v in variants.items()
        if step_args and v.build and step_args.items() <= v.build.build_args.items()
    )
    t.check(
        f"{tag}: the snapshot runtime step is built into {', '.join(matrix.snapshot_ids())} only",
        with_runtime == sorted(matrix.snapshot_ids()),
        f"built into: {', '.join(with_runtime) or 'none'}",
    )


def _promoted_checks(
    t: Terminal, repo: GitRepo, matrix: ImageMatrix, tags: Tags, ledger: Ledger
) -> None:
    engine = ledger.docker.engine
    rc2, _ = manifest_of(repo, tags.rc2)
    final, why = manifest_of(repo, tags.final)
    if engine is None or rc2 is None or final is None:
        t.check(f"{tags.final}'s images are {tags.rc2}'s", False, why or f"no {tags.rc2} manifest")
        return
    ids = {i: v.build.image_id for i, v in rc2.variants.items() if v.build}
    came = final.promoted_from
    t.check(
        f"{tags.final}'s manifest says it came from {tags.rc2}, with the same image ids",
        came is not None and came.tag == tags.rc2 and dict(came.image_ids) == ids,
    )
    if _published(rc2):  # promoted in the registry: its checks read the registry
        return
    refs = [
        (i, ref)
        for i in ids
        for ref in (*_built_tags(rc2.entry(i)), *_final_refs(matrix, i, tags.final))
    ]
    t.check(
        f"{tags.final}'s and {matrix.moving_tag or 'no moving'} tags point at {tags.rc2}'s "
        "image ids (docker image inspect)",
        all(engine.image_id(ref) == ids[i] for i, ref in refs),
    )


def _published(manifest: Manifest) -> bool:
    return all(entry.publish is not None for entry in manifest.variants.values())


def _built_tags(entry: VariantEntry) -> tuple[str, ...]:
    return entry.build.tags if entry.build else ()


def _status(snapshot: SnapshotRecord | None) -> str | None:
    return snapshot.status if snapshot else None


def _final_refs(matrix: ImageMatrix, variant_id: str, final: str) -> list[str]:
    """The final's tags and the moving one, as the matrix spells them (the expectation is
    not taken from the code under check)."""
    variant = matrix.variant(variant_id)
    moving = [matrix.tag(variant, matrix.moving_tag)] if matrix.moving_tag else []
    return [matrix.tag(variant, final), *moving]


# -- the table -------------------------------------------------------------------------


def result_table(
    repo: GitRepo, matrix: ImageMatrix, tags: Tags, ledger: Ledger, t: Terminal
) -> list[str]:
    """One row per variant, then the time each step took and the total."""
    manifests = {tag: manifest_of(repo, tag)[0] for tag in (tags.rc1, tags.rc2)}
    final = manifest_of(repo, tags.final)[0]
    engine = ledger.docker.engine
    header = (
        "variant",
        "accelerator",
        f"built {tags.rc1}",
        f"built {tags.rc2}",
        tags.final,
        "smoked",
        "snapshot",
        f"reproduce {tags.rc1}",
        "changed base",
    )
    rows: list[tuple[str, ...]] = [header]
    for variant in matrix.variants:
        entries = [m.entry(variant.id) if m else VariantEntry() for m in manifests.values()]
        rows.append(
            (
                variant.id,
                variant.accelerator.label,
                *(_built(e) for e in entries),
                _final_cell(engine, matrix, variant.id, tags.final, entries[1], final),
                _both([_smoked(e) for e in entries]),
                _both([_snapshot(e) for e in entries]),
                ledger.reproduced.get(variant.id, NOT_RUN),
                ledger.drifted.get(variant.id, "-"),
            )
        )
    lines = _columns(rows)
    if not ledger.docker.ready:
        lines.append(f"not run: {ledger.docker.detail}")
    lines += ["", "time per step:"]
    width = max(len(step.title) for step in t.steps)
    lines += [
        f"  {n:>2}. {step.title:<{width}}  {clock_text(step.seconds or 0.0):>7}"
        for n, step in enumerate(t.steps, 1)
    ]
    mark = "under" if t.elapsed < MARK else "OVER"
    lines.append(f"total: {clock_text(t.elapsed)} ({mark} the {MARK / 60:.0f}-minute mark)")
    return lines


def _final_cell(
    engine: ContainerEngine | None,
    matrix: ImageMatrix,
    variant_id: str,
    final_tag: str,
    rc2: VariantEntry,
    final: Manifest | None,
) -> str:
    """Whether the final's image is rc2's: by the digests in the registry (the final's
    manifest records them as read back) where rc2 was published, else by image id here."""
    if rc2.build is None:
        return NOT_RUN
    rc2_id = rc2.build.image_id
    if rc2.publish is not None:
        theirs = final.entry(variant_id).publish if final else None
        same = theirs is not None and theirs.digest == rc2.publish.digest
        return "= rc2 (registry)" if same else "not promoted"
    final_id = engine.image_id(_final_refs(matrix, variant_id, final_tag)[0]) if engine else None
    return "= rc2" if final_id == rc2_id else "not promoted"


def _built(entry: VariantEntry) -> str:
    return entry.build.image_id[7:19] if entry.build else NOT_RUN


def _smoked(entry: VariantEntry) -> str:
    smoke = entry.smoke
    return ("passed" if smoke.passed else "FAILED") if smoke else NOT_RUN


def _snapshot(entry: VariantEntry) -> str:
    snap = entry.snapshot
    if not snap:
        return NOT_RUN
    if snap.status == "omitted":
        rule = re.search(r"rule (`[^`]*`)", snap.reason)
        return f"omitted: rule {rule[1]}" if rule else "omitted"
    return snap.status


def _both(cells: Sequence[str]) -> str:
    """rc1's and rc2's result: one word when they agree."""
    return cells[0] if len(set(cells)) == 1 else " / ".join(cells)


def _columns(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    ]

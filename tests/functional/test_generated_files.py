"""Nothing of theirs is overwritten: every file ``release`` generates in a repository says in
a header what wrote it and the sha256 of the rest, and the next write reads it first.

A file without that header (a project's own ``.buildkite/pipeline.yml``, here
llm-compressor's, or its own image workflow) or one changed by hand since is refused (exit
3), naming the file and ``--force``, with the repository exactly as it was and no file of
the set written; ``--force`` replaces it; a file the tool wrote and nobody changed is
written again freely, byte for byte the same for the same input. For ``ci`` (both formats,
the noxfile too), ``bake`` and ``init --out`` here; ``report`` in ``tests/functional/test_rc_page.py``;
the changelog's first creation at the end."""

from __future__ import annotations

import hashlib
import html.parser
import json
import subprocess
import tomllib
from pathlib import Path

import invoke.vendor.yaml as yaml
import pytest

from release import __version__
from release.adapters.generated_files import Generated, write_generated
from release.commands.files import NOXFILE
from release.core.generated import Spelling, Standing, WrittenBy, stamped, standing
from release.errors import RefusedError
from release.flows.context import ReleaseContext
from release.flows.tagging import tag
from release.flows.task_journal import TaskJournals
from release.sample import SampleEngine
from tests.conftest import repo_state, run_cli

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LLM_COMPRESSOR = FIXTURES / "llm-compressor-pipeline.yml"  # its own, written by hand
HAND_WRITTEN = FIXTURES / "hand-written-images.yml"
PIN = "release @ git+https://git.example.com/org/release@0123456789abcdef0123456789abcdef01234567"
REGISTRY = 'registry = "registry.example.com/org/release"\n'
BY = WrittenBy("1.2.3", ("release", "ci", "--format", "buildkite"))
YAML_BODY = 'steps:\n  - label: "build(cu130)"\n'
BAKE_BODY = '{\n  "group": {\n    "default": {\n      "targets": []\n    }\n  }\n}\n'
HTML_BODY = "<!DOCTYPE html>\n<html><body><p>page</p></body></html>\n"
BODIES = {Spelling.HASH: YAML_BODY, Spelling.BAKE_JSON: BAKE_BODY, Spelling.HTML: HTML_BODY}
EDITS = {Spelling.HASH: ("cu130", "cu131"), Spelling.BAKE_JSON: ("targets", "target"),
         Spelling.HTML: ("page", "p4ge")}  # fmt: skip


# -- the header: pure ------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", list(Spelling))
def test_a_stamped_file_reads_as_ours_and_each_change_is_seen(spelling: Spelling) -> None:
    body = BODIES[spelling]
    text = stamped(body, spelling, BY)
    assert text == stamped(body, spelling, BY)  # the same input, the same bytes
    assert standing(text, spelling) is Standing.OURS
    assert "Written by release 1.2.3: release ci --format buildkite" in text
    assert hashlib.sha256(body.encode()).hexdigest() in text  # the digest of the body
    # the file less the header's lines is the body as rendered
    header = set(text.splitlines()) - set(body.splitlines())
    assert (
        "".join(line for line in text.splitlines(True) if line.rstrip("\n") not in header) == body
    )
    word, other = EDITS[spelling]
    assert word in body and word not in text.replace(body[len(spelling.first) :], "")
    edited = text.replace(word, other)  # a change in the body
    assert standing(edited, spelling) is Standing.EDITED
    assert standing(text + "\n", spelling) is Standing.EDITED  # a line added at the end
    assert standing(body, spelling) is Standing.FOREIGN  # no header at all
    digest = hashlib.sha256(body.encode()).hexdigest()
    damaged = text.replace(digest, digest[:-1] + ("0" if digest[-1] != "0" else "1"))
    assert standing(damaged, spelling) is Standing.EDITED  # a digest that says another body
    moved = text.replace("Written by release", "Written by someone")
    assert standing(moved, spelling) is Standing.FOREIGN


def test_each_header_is_a_comment_its_format_reads_past() -> None:
    assert yaml.safe_load(stamped(YAML_BODY, Spelling.HASH, BY)) == yaml.safe_load(YAML_BODY)
    baked = json.loads(stamped(BAKE_BODY, Spelling.BAKE_JSON, BY))
    assert baked.pop("variable")["RELEASE_WRITTEN_BY"]["default"].startswith("Written by")
    assert baked == json.loads(BAKE_BODY)  # bake's documented variable block, read by no target
    page = stamped(HTML_BODY, Spelling.HTML, BY)
    assert page.startswith("<!DOCTYPE html>\n<!-- Written by release 1.2.3")


class _Parts(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.comments: list[str] = []
        self.tags: list[str] = []

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.tags.append(tag)


@pytest.mark.parametrize("line", ["\n", "\r", "\u2028", "\x85"])
def test_no_command_line_can_end_the_header_or_become_code(line: str) -> None:
    """What the header carries comes from the command line (a tag, a version, a registry):
    whatever it holds, the header stays a comment (or bake's literal string)."""
    evil = f"x{line}evil: true{line}--><script>alert(1)</script><!-- ${{env.X}} %{{ if }}"
    by = WrittenBy("1.2.3", ("release", "report", evil))
    text = stamped(YAML_BODY, Spelling.HASH, by)
    assert yaml.safe_load(text) == yaml.safe_load(YAML_BODY)
    assert all(row.startswith("#") for row in text.splitlines()[:3])
    assert standing(text, Spelling.HASH) is Standing.OURS
    page = stamped(HTML_BODY, Spelling.HTML, by)
    parts = _Parts()
    parts.feed(page)
    assert len(parts.comments) == 1 and "script" not in parts.tags
    assert standing(page, Spelling.HTML) is Standing.OURS
    baked = stamped(BAKE_BODY, Spelling.BAKE_JSON, by)
    said = json.loads(baked)["variable"]["RELEASE_WRITTEN_BY"]["default"]
    assert "$${env.X}" in said and "%%{ if }" in said  # bake reads them as text
    assert (
        "${env.X}" not in said.replace("$${", "")
        and standing(baked, Spelling.BAKE_JSON) is Standing.OURS
    )


def test_a_write_refused_for_one_file_writes_none_and_names_each(tmp_path: Path) -> None:
    ours = tmp_path / "promote.yml"
    ours.write_text(stamped(YAML_BODY, Spelling.HASH, BY), encoding="utf-8")
    ours.write_text(ours.read_text(encoding="utf-8") + "# a note by hand\n", encoding="utf-8")
    theirs = tmp_path / "images.yml"
    theirs.write_bytes(HAND_WRITTEN.read_bytes())
    new = tmp_path / "new.yml"
    files = [Generated(p, YAML_BODY, Spelling.HASH, BY) for p in (new, theirs, ours)]
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(RefusedError) as refused:
        write_generated(files, force=False, command="release ci", root=tmp_path)
    said = refused.value.one_line()
    assert refused.value.exit_code == 3 and "--force" in said
    assert "images.yml (not written by release)" in said
    assert "promote.yml (changed since release wrote it)" in said
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # new.yml not made
    written = write_generated(files, force=True, command="release ci", root=tmp_path)
    assert [(w.before, w.forced) for w in written] == [
        (Standing.NEW, False), (Standing.FOREIGN, True), (Standing.EDITED, True)
    ]  # fmt: skip
    assert all(standing(p.read_text(), Spelling.HASH) is Standing.OURS for p in (new, theirs, ours))
    again = write_generated(files, force=False, command="release ci", root=tmp_path)
    assert [w.changed for w in again] == [False, False, False]


def test_a_file_that_appears_while_the_set_is_written_is_kept_and_the_set_undone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checked absent, then made by someone before the tool's turn: the exclusive write
    leaves it, and the files the tool wrote before it are put back as they were."""
    import release.adapters.generated_files as module

    first, second = tmp_path / "images.yml", tmp_path / "promote.yml"
    first.write_text(stamped("old: 1\n", Spelling.HASH, BY), encoding="utf-8")
    old = first.read_bytes()
    real = module.atomic_write

    def racing(path: Path, text: str | bytes, **kw: object) -> None:
        if path == second:
            second.write_text("theirs: 1\n", encoding="utf-8")
        real(path, text, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(module, "atomic_write", racing)
    files = [Generated(p, YAML_BODY, Spelling.HASH, BY) for p in (first, second)]
    with pytest.raises(RefusedError, match="appeared while release wrote"):
        write_generated(files, force=False, command="release ci")
    assert first.read_bytes() == old and second.read_text() == "theirs: 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["images.yml", "promote.yml"]


# -- release ci ------------------------------------------------------------------------------


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _engine(tmp_path: Path, *, registry: bool = False) -> Path:
    """A committed checkout with the sample engine's configuration (a release registry:
    GitHub gets promote.yml too) and the noxfile the jobs run."""
    root = tmp_path / "engine"
    root.mkdir()
    text = (ROOT / "release" / "sample" / "engine" / "pyproject.toml").read_text()
    if registry:
        text = text.replace(
            'name = "example/tinyengine"\n', f'name = "example/tinyengine"\n{REGISTRY}'
        )
    (root / "pyproject.toml").write_text(f'{text}[tool.release.ci]\ninstall = "{PIN}"\n')
    (root / "noxfile.py").write_text(NOXFILE)
    (root / "docker").mkdir()
    (root / "docker" / "Dockerfile").write_text("FROM scratch\n")
    _git(root, "init", "--quiet", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "--quiet", "-m", "engine")
    return root


def _committed(root: Path, rel: str, data: bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    _git(root, "add", rel)
    _git(root, "commit", "--quiet", "-m", f"our own {rel}")
    return path


def test_ci_refuses_llm_compressors_own_buildkite_pipeline(tmp_path: Path) -> None:
    root = _engine(tmp_path)
    theirs = _committed(root, ".buildkite/pipeline.yml", LLM_COMPRESSOR.read_bytes())
    before = repo_state(root)
    refused = run_cli(root, "ci", "--format", "buildkite")
    assert refused.code == 3, refused.output
    assert ".buildkite/pipeline.yml (not written by release)" in refused.stderr
    assert "--force" in refused.stderr and "nothing was written" in refused.stderr
    assert theirs.read_bytes() == LLM_COMPRESSOR.read_bytes()
    assert repo_state(root) == before
    forced = run_cli(root, "ci", "--format", "buildkite", "--force")
    assert forced.code == 0, forced.output
    assert f"replaced {theirs} with --force: it was not written by release" in forced.stdout
    written = theirs.read_bytes()
    assert written.startswith(f"# Written by release {__version__}: release ci".encode())
    assert standing(written.decode(), Spelling.HASH) is Standing.OURS
    assert "llm-compressor" not in written.decode()


def test_ci_rewrites_its_own_pipeline_freely_and_refuses_it_edited(tmp_path: Path) -> None:
    root = _engine(tmp_path)
    made = run_cli(root, "ci", "--format", "buildkite")
    assert made.code == 0, made.output
    path = root / ".buildkite" / "pipeline.yml"
    first = path.read_bytes()
    again = run_cli(root, "ci", "--format", "buildkite")  # nobody changed it: made again
    assert again.code == 0 and "replaced" not in again.stdout, again.output
    assert path.read_bytes() == first  # the same input, the same bytes
    pyproject = root / "pyproject.toml"  # the config changes: written again, without --force
    pyproject.write_text(pyproject.read_text() + "timeouts = { build = 200 }\n")
    changed = run_cli(root, "ci", "--format", "buildkite")
    assert changed.code == 0, changed.output
    assert path.read_bytes() != first and b"timeout_in_minutes: 200" in path.read_bytes()
    path.write_text(path.read_text().replace("timeout_in_minutes: 200", "timeout_in_minutes: 199"))
    _git(root, "add", ".")
    _git(root, "commit", "--quiet", "-m", "a shorter build, by hand")
    before = repo_state(root)
    refused = run_cli(root, "ci", "--format", "buildkite")
    assert refused.code == 3, refused.output
    assert ".buildkite/pipeline.yml (changed since release wrote it)" in refused.stderr
    assert "--force" in refused.stderr
    assert repo_state(root) == before
    forced = run_cli(root, "ci", "--format", "buildkite", "--force")
    assert forced.code == 0 and "it was changed since release wrote it" in forced.stdout
    assert b"timeout_in_minutes: 199" not in path.read_bytes()


def test_ci_github_refuses_a_hand_written_workflow_and_writes_neither_file(tmp_path: Path) -> None:
    root = _engine(tmp_path, registry=True)
    theirs = _committed(root, ".github/workflows/images.yml", HAND_WRITTEN.read_bytes())
    before = repo_state(root)
    refused = run_cli(root, "ci", "--format", "github")
    assert refused.code == 3, refused.output
    assert ".github/workflows/images.yml (not written by release)" in refused.stderr
    assert "--force" in refused.stderr
    assert not (root / ".github" / "workflows" / "promote.yml").exists()  # none of the set
    assert theirs.read_bytes() == HAND_WRITTEN.read_bytes() and repo_state(root) == before
    forced = run_cli(root, "ci", "--format", "github", "--force")
    assert forced.code == 0, forced.output
    for name in ("images.yml", "promote.yml"):
        text = (root / ".github" / "workflows" / name).read_text()
        assert standing(text, Spelling.HASH) is Standing.OURS
        assert (
            text.splitlines()[0]
            == f"# Written by release {__version__}: release ci --format github"
        )
    promote = root / ".github" / "workflows" / "promote.yml"  # one of the set edited by hand
    promote.write_text(promote.read_text().replace("promote", "promote-final", 1))
    before = repo_state(root)
    refused = run_cli(root, "ci", "--format", "github")
    assert refused.code == 3 and "promote.yml (changed since release wrote it)" in refused.stderr
    assert "images.yml" not in refused.stderr.split("does not replace", 1)[1]  # only what is kept
    assert repo_state(root) == before


def test_ci_checks_the_noxfile_it_writes_with_the_pipelines(tmp_path: Path) -> None:
    root = _engine(tmp_path)
    (root / "noxfile.py").unlink()
    _git(root, "commit", "--quiet", "-am", "no noxfile")
    _committed(root, ".buildkite/pipeline.yml", LLM_COMPRESSOR.read_bytes())
    before = repo_state(root)
    refused = run_cli(root, "ci", "--format", "buildkite", "--write-noxfile")
    assert refused.code == 3 and "--force" in refused.stderr, refused.output
    assert not (root / "noxfile.py").exists() and repo_state(root) == before
    (root / ".buildkite" / "pipeline.yml").unlink()
    made = run_cli(root, "ci", "--format", "buildkite", "--write-noxfile")
    assert made.code == 0, made.output
    noxfile = (root / "noxfile.py").read_text()
    assert noxfile.startswith(f"# Written by release {__version__}: release ci --format buildkite")
    assert "--write-noxfile\n" in noxfile and noxfile.endswith(NOXFILE)
    assert standing(noxfile, Spelling.HASH) is Standing.OURS


# -- release bake ----------------------------------------------------------------------------


def test_bake_refuses_a_bake_file_of_its_own_and_rewrites_its_own(tmp_path: Path) -> None:
    root = _engine(tmp_path)
    theirs = b'{\n  "target": {\n    "default": {"dockerfile": "docker/Dockerfile"}\n  }\n}\n'
    path = _committed(root, "docker-bake.json", theirs)
    _git(root, "tag", "-a", "v0.1.0rc1", "-m", "rc1")
    before = repo_state(root)
    refused = run_cli(root, "bake")
    assert refused.code == 3, refused.output
    assert "docker-bake.json (not written by release)" in refused.stderr
    assert "--force" in refused.stderr
    assert path.read_bytes() == theirs and repo_state(root) == before
    forced = run_cli(root, "bake", "--force")
    assert forced.code == 0 and "replaced" in forced.stdout, forced.output
    written = path.read_text()
    document = json.loads(written)
    assert set(document) == {"variable", "group", "target"}
    said = document["variable"]["RELEASE_WRITTEN_BY"]["default"]
    assert said.startswith(f"Written by release {__version__}: release bake.")
    assert standing(written, Spelling.BAKE_JSON) is Standing.OURS
    # outside the tree (the tree stays clean, so the same commit is baked again)
    out = tmp_path / "baked" / "docker-bake.json"
    out.parent.mkdir()
    _git(root, "checkout", "--quiet", "--", "docker-bake.json")
    first = run_cli(root, "bake", "--out", str(out))
    assert first.code == 0, first.output
    made = out.read_bytes()
    again = run_cli(root, "bake", "--out", str(out))
    assert again.code == 0 and "replaced" not in again.stdout, again.output
    assert out.read_bytes() == made  # the same input, the same bytes
    out.write_text(made.decode().replace('"cu130"', '"cu131"'))
    edited = out.read_bytes()
    before = repo_state(root)
    refused = run_cli(root, "bake", "--out", str(out))
    assert refused.code == 3 and "changed since release wrote it" in refused.stderr
    assert out.read_bytes() == edited and repo_state(root) == before


# -- release init --out ----------------------------------------------------------------------


def test_init_out_refuses_a_file_of_its_own_unless_forced(tmp_path: Path) -> None:
    root = _engine(tmp_path)
    theirs = root / "tried.toml"
    theirs.write_text('[tool.release]\nmain-branch = "trunk"  # mine\n')
    before = repo_state(root)
    refused = run_cli(root, "init", "--out", "tried.toml")
    assert refused.code == 3 and "tried.toml (not written by release)" in refused.stderr
    assert "--force" in refused.stderr and repo_state(root) == before
    dry = run_cli(root, "init", "--out", "tried.toml", "--dry-run")
    assert dry.code == 3 and repo_state(root) == before  # a dry run says so too
    forced = run_cli(root, "init", "--out", "tried.toml", "--force")
    assert forced.code == 0 and "replaced" in forced.stdout, forced.output
    text = theirs.read_text()
    assert text.startswith(f"# Written by release {__version__}: release init --out tried.toml\n")
    assert standing(text, Spelling.HASH) is Standing.OURS and "# mine" not in text
    assert tomllib.loads(text)["tool"]["release"]  # a table --config reads
    misused = run_cli(root, "init", "--force")
    assert misused.code == 2 and "--force is for --out FILE" in misused.stderr


# -- the changelog's first creation ----------------------------------------------------------


def test_the_changelogs_first_creation_never_replaces_a_file_that_appears(
    cut_engine: SampleEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The changelog carries no header: once made it is the maintainers', edited in place
    section by section. What ``tag`` must not do is create it over a file: one that
    appears after the run looked (here: the moment its journal is written) is kept, and
    the run is refused and rolled back."""
    root = cut_engine.root
    assert not (root / "CHANGELOG.md").exists()
    before = repo_state(root)
    theirs = b"# Changelog\n\nOur own, started while release tag ran.\n"
    real = TaskJournals.write

    def meanwhile(self: TaskJournals, journal: object) -> None:
        real(self, journal)  # type: ignore[arg-type]
        (root / "CHANGELOG.md").write_bytes(theirs)

    monkeypatch.setattr(TaskJournals, "write", meanwhile)
    said: list[str] = []
    with pytest.raises(RefusedError) as refused:
        tag(ReleaseContext(root), offline=True, say=said.append)
    assert refused.value.exit_code == 3
    assert "CHANGELOG.md is there now" in refused.value.message
    assert "never replaced" in refused.value.message
    assert (root / "CHANGELOG.md").read_bytes() == theirs
    after = repo_state(root)
    worktree = after["worktree"]
    assert isinstance(worktree, dict)
    assert worktree.pop("CHANGELOG.md") == hashlib.sha256(theirs).hexdigest()
    assert after == before  # no tag, the branch where it was, the journal cleared
    monkeypatch.undo()
    (root / "CHANGELOG.md").unlink()
    tag(ReleaseContext(root), offline=True, say=said.append)  # nothing there: created
    assert (root / "CHANGELOG.md").read_text().startswith("# Changelog")
    assert "v0.1.0rc1" in cut_engine.repo.out("tag", "--list")


def test_a_changelog_draft_is_never_replaced_by_the_first_creation(
    cut_engine: SampleEngine,
) -> None:
    root = cut_engine.root
    draft = b"# Changelog\n\n- my notes, not committed yet\n"
    (root / "CHANGELOG.md").write_bytes(draft)
    before = repo_state(root)
    refused = run_cli(root, "tag", "--offline")
    assert refused.code == 3 and "CHANGELOG.md is not committed" in refused.stderr
    assert (root / "CHANGELOG.md").read_bytes() == draft and repo_state(root) == before

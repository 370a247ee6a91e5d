"""What ``release images build`` refuses and how its images say where they come from.

Pure: a remote's URL as the repository's web URL, base image references and digests, the
labels, and an input digest with nothing of the clone or machine in it. With real git
repositories: what makes a work tree dirty (tracked changes, and untracked files docker
would send), and versions in real shallow clones (``git clone --depth N file://...``).
Through the CLI and nox, against a real engine but building nothing: each refusal, each
flag, and the repository byte for byte as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from release.adapters.engine import ContainerEngine
from release.adapters.git import GitRepo
from release.adapters.image_info import ImageInfo
from release.core.accelerator import Accelerator
from release.core.matrix import Variant
from release.core.project_meta import project_meta
from release.core.references import qualified_reference, repository_url
from release.core.versions import image_tag_for, parse_version
from release.flows.context import ReleaseContext
from release.images.inputs import SOURCE_LABEL, input_digest
from release.images.labels import labels_for
from release.images.source import BuildSource, given_version, listing, read_source, with_local
from release.images.standin import BaseImage, registry_digest
from release.sample import SampleEngine
from tests.conftest import repo_state, run_cli, run_nox
from tests.docker_support import unique_name
from tests.engine_support import GUARDED_PYPROJECT

SHA = "0123456789abcdef0123456789abcdef01234567"
REFUSED = 3

# -- pure: URLs, references, digests, labels ----------------------------------------------


@pytest.mark.parametrize(
    ("remote", "url"),
    [
        ("git@github.com:org/repo.git", "https://github.com/org/repo"),
        ("ssh://git@github.com/org/repo.git", "https://github.com/org/repo"),
        ("ssh://git@GitHub.com:2222/org/repo.git/", "https://github.com/org/repo"),
        ("git://github.com/org/repo", "https://github.com/org/repo"),
        ("https://github.com/org/repo.git", "https://github.com/org/repo"),
        ("https://user:token@github.com/org/repo.git", "https://github.com/org/repo"),
        ("http://git.internal:8080/team/engine/", "http://git.internal:8080/team/engine"),
        ("gitlab.example.com:group/sub/repo.git", "https://gitlab.example.com/group/sub/repo"),
        ("/srv/git/engine.git", None),
        ("../engine", None),
        ("./a:b", None),
        ("file:///srv/git/engine.git", None),
        ("C:/repos/engine", None),
        ("ext::ssh -i key host path", None),
        ("https://github.com", None),
        ("", None),
    ],
)
def test_repository_url_from_a_remote(remote: str, url: str | None) -> None:
    assert repository_url(remote) == url


@pytest.mark.parametrize(
    ("ref", "qualified"),
    [
        ("nvidia/cuda:12.9.1-base-ubuntu22.04", "docker.io/nvidia/cuda:12.9.1-base-ubuntu22.04"),
        ("ubuntu", "docker.io/library/ubuntu:latest"),
        ("docker.io/ubuntu:24.04", "docker.io/library/ubuntu:24.04"),
        ("index.docker.io/library/ubuntu:24.04", "docker.io/library/ubuntu:24.04"),
        ("localhost:5000/engine:1", "localhost:5000/engine:1"),
        ("nvcr.io/nvidia/cuda@sha256:" + "a" * 64, "nvcr.io/nvidia/cuda@sha256:" + "a" * 64),
    ],
)
def test_base_name_is_the_fully_qualified_reference(ref: str, qualified: str) -> None:
    assert qualified_reference(ref) == qualified


def test_registry_digest_prefers_the_base_s_own_repository() -> None:
    ref = "nvidia/cuda:12.9.1-base-ubuntu22.04"
    mirror, own = "sha256:" + "1" * 64, "sha256:" + "2" * 64
    both = ImageInfo.of(
        {"Id": "x", "RepoDigests": [f"mirror.example.com/cuda@{mirror}", f"nvidia/cuda@{own}"]}
    )
    assert registry_digest(ref, both) == own
    mirrored = ImageInfo("x", repo_digests=(f"mirror.example.com/cuda@{mirror}",))
    assert registry_digest(ref, mirrored) == mirror
    assert registry_digest(ref, ImageInfo.of({"RepoDigests": None})) is None  # a stand-in
    assert registry_digest(ref, ImageInfo.of({})) is None


def test_base_identity_is_its_digest_else_its_image_id() -> None:
    image_id = "sha256:" + "9" * 64
    assert BaseImage("x", image_id, True, "present").identity == image_id
    digest = "sha256:" + "d" * 64
    assert BaseImage("x", image_id, False, "present", digest).identity == digest


def _context(root: Path) -> Path:
    (root / "docker").mkdir(parents=True)
    (root / "docker" / "Dockerfile").write_text("FROM scratch\nCOPY app.py /\n")
    (root / "app.py").write_text("print('hi')\n")
    return root


def test_input_digest_has_nothing_of_the_clone(tmp_path: Path) -> None:
    """Same sources, another origin URL (or none): the same digest. The labels that
    describe the image and the base's identity still count."""
    context = _context(tmp_path)
    base = "sha256:" + "1" * 64
    labels = {"org.opencontainers.image.revision": SHA, "org.release.variant": "cu129"}

    def digest(extra: dict[str, str], identity: str = base) -> str:
        dockerfile = context / "docker" / "Dockerfile"
        return input_digest(context, dockerfile, {}, identity, {**labels, **extra}, None)

    plain = digest({})
    assert digest({SOURCE_LABEL: "https://github.com/org/engine"}) == plain
    assert digest({SOURCE_LABEL: "https://github.com/fork/engine"}) == plain
    assert digest({"org.release.dirty": "true"}) != plain
    assert digest({}, identity="sha256:" + "2" * 64) != plain


def _source(**fields: object) -> BuildSource:
    values: dict[str, object] = {
        "root": Path("/src"),
        "revision": SHA,
        "epoch": 1_764_000_000,
        "version": "0.31.0rc1",
        "tagged": True,
        "url": "https://github.com/org/engine",
    }
    values.update(fields)
    return BuildSource(**values)  # type: ignore[arg-type]


BASE_REF = "nvidia/cuda:12.9.1-base-ubuntu22.04"
VARIANT = Variant("cu129", Accelerator("cuda", "12.9.1"), BASE_REF)


def test_labels_of_a_clean_build_on_a_registry_base() -> None:
    digest = "sha256:" + "b" * 64
    base = BaseImage(BASE_REF, "sha256:" + "9" * 64, False, "pulled", digest)
    assert labels_for(VARIANT, _source(), base) == {
        "org.opencontainers.image.version": "0.31.0rc1",
        "org.opencontainers.image.revision": SHA,
        "org.opencontainers.image.created": "2025-11-24T16:00:00Z",
        "org.opencontainers.image.source": "https://github.com/org/engine",
        "org.opencontainers.image.base.name": "docker.io/" + BASE_REF,
        "org.opencontainers.image.base.digest": digest,
        "org.release.variant": "cu129",
        "org.release.cuda": "12.9.1",
        "org.release.managed": "true",
    }


def test_labels_of_a_dirty_uncounted_build_on_a_standin() -> None:
    source = _source(
        version="0.0.0.dev0+shallow.dirty",
        tagged=False,
        url="",
        dirty=("app.py",),
        shallow=True,
        uncounted=True,
    )
    labels = labels_for(VARIANT, source, BaseImage(BASE_REF, "sha256:" + "9" * 64, True, "present"))
    assert labels["org.opencontainers.image.version"] == "0.0.0.dev0+shallow.dirty"
    assert labels["org.opencontainers.image.revision"] == SHA + "-dirty"
    assert labels["org.release.dirty"] == "true"
    assert labels["org.release.shallow"] == "true"
    # a stand-in says so: nothing can pull it as NVIDIA's image
    assert (
        labels["org.opencontainers.image.base.name"] == "local stand-in for docker.io/" + BASE_REF
    )
    assert "org.opencontainers.image.base.digest" not in labels  # no registry digest here
    assert SOURCE_LABEL not in labels
    assert "org.opencontainers.image.ref.name" not in labels  # no release tag it is


def test_the_project_table_and_the_tag_label_the_image() -> None:
    """title, description, licenses, url and vendor from [project]; ref.name the tag."""
    meta = project_meta(
        {
            "project": {
                "name": "tinyengine",
                "description": "A tiny inference engine",
                "license": "Apache-2.0",
                "authors": [{"name": "The Tiny Team", "email": "team@example.org"}],
                "urls": {"Source": "https://github.com/org/engine",
                         "homepage": "https://tiny.example.org"},
            }
        }
    )  # fmt: skip
    base = BaseImage(BASE_REF, "sha256:" + "9" * 64, False, "pulled", "sha256:" + "b" * 64)
    labels = labels_for(VARIANT, _source(project=meta, tag="v0.31.0rc1"), base)
    assert {k: v for k, v in labels.items() if k.startswith("org.opencontainers.image.")} == {
        "org.opencontainers.image.title": "tinyengine",
        "org.opencontainers.image.description": "A tiny inference engine",
        "org.opencontainers.image.licenses": "Apache-2.0",
        "org.opencontainers.image.url": "https://tiny.example.org",  # Homepage first
        "org.opencontainers.image.vendor": "The Tiny Team",
        "org.opencontainers.image.ref.name": "v0.31.0rc1",
        "org.opencontainers.image.version": "0.31.0rc1",
        "org.opencontainers.image.revision": SHA,
        "org.opencontainers.image.created": "2025-11-24T16:00:00Z",
        "org.opencontainers.image.source": "https://github.com/org/engine",
        "org.opencontainers.image.base.name": "docker.io/" + BASE_REF,
        "org.opencontainers.image.base.digest": "sha256:" + "b" * 64,
    }


@pytest.mark.parametrize(
    ("project", "given", "skipped"),
    [
        ({"name": "e", "license": {"text": "MIT"}}, {"title": "e", "licenses": "MIT"}, ()),
        ({"name": "e", "license": {"file": "LICENSE"}}, {"title": "e"}, ()),
        ({"name": "e", "maintainers": [{"name": "Ops"}]}, {"title": "e", "vendor": "Ops"}, ()),
        ({"name": "e", "description": "two\nlines"}, {"title": "e"}, ("description",)),
        ({"name": "e", "description": "\x1b]0;owned\x07"}, {"title": "e"}, ("description",)),
        ({"name": "e", "description": "x" * 513}, {"title": "e"}, ("description",)),
        ({"name": "e", "urls": {"Homepage": "javascript:alert(1)"}}, {"title": "e"}, ("url",)),
        ({"name": "e", "urls": {"Documentation": "https://d.example"}},
         {"title": "e", "url": "https://d.example"}, ()),
        ({"name": ["not", "text"], "license": 3}, {}, ("title", "licenses")),
        ({}, {}, ()),
    ],
)  # fmt: skip
def test_what_of_the_project_table_becomes_a_label(
    project: dict[str, object], given: dict[str, str], skipped: tuple[str, ...]
) -> None:
    meta = project_meta({"project": project})
    assert meta.labels() == {f"org.opencontainers.image.{k}": v for k, v in given.items()}
    assert meta.skipped == skipped


def test_a_shallow_clone_whose_version_is_counted_carries_no_shallow_label() -> None:
    """The same tag built in a shallow and in a whole clone: the same labels."""
    base = BaseImage(BASE_REF, "sha256:" + "9" * 64, True, "present")
    assert labels_for(VARIANT, _source(shallow=True), base) == labels_for(VARIANT, _source(), base)


def test_versions_with_a_local_part_and_their_image_tags() -> None:
    assert with_local("0.31.0rc1") == "0.31.0rc1"
    assert with_local("0.31.0rc1", "dirty") == "0.31.0rc1+dirty"
    assert with_local("0.0.0.dev0", "shallow", "dirty") == "0.0.0.dev0+shallow.dirty"
    assert with_local("1.0+local", "dirty") == "1.0+local.dirty"
    assert image_tag_for("0.31.0rc1+dirty") == "v0.31.0rc1-dirty"
    assert _source(version="0.0.0.dev0+shallow.dirty").image_version == "v0.0.0.dev0-shallow.dirty"
    assert parse_version("0.31.0rc1").image_tag() == "v0.31.0rc1"
    assert listing(["a", "b", "c"]) == "a, b, c"
    assert listing(["a", "b", "c", "d", "e"]) == "a, b, c and 2 more"


# -- real repositories: what is dirty, what a shallow clone can count ---------------------


def write(root: Path, rel: str, text: str = "x\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def guarded_repo(root: Path, *, context: str = ".", commits: int = 1) -> GitRepo:
    """An engine whose build context (no ``.git`` in its ``.dockerignore``, so the
    release's own state is in it) leaves out ``docs`` but ``docs/keep.md``, and caches;
    git ignores logs and caches. ``commits`` commits on main, the first tagged v0.1.0."""
    write(root, "pyproject.toml", GUARDED_PYPROJECT.format(context=context))
    write(root, f"{context}/docker/Dockerfile", "FROM scratch\n")
    write(root, f"{context}/app.py", "print(1)\n")
    write(root, f"{context}/.dockerignore", "docs\n!docs/keep.md\n**/__pycache__\n")
    write(root, ".gitignore", "*.log\n__pycache__/\n")
    repo = GitRepo.init(root)
    assert repo is not None
    repo.run("add", "--all")
    repo.run("commit", "--quiet", "-m", "Engine")
    repo.run("tag", "v0.1.0")
    for n in range(2, commits + 1):
        write(root, f"{context}/app.py", f"print({n})\n")
        repo.run("commit", "--quiet", "-am", f"Change {n}")
    return repo


def staged_new_file(root: Path) -> None:
    write(root, "new.py")
    GitRepo(root).run("add", "new.py")


def renamed(root: Path) -> None:
    GitRepo(root).run("mv", "app.py", "main.py")


@pytest.mark.parametrize(
    ("change", "dirty"),
    [
        pytest.param(lambda root: None, [], id="clean"),
        pytest.param(lambda root: write(root, "app.py", "print(2)\n"), ["app.py"], id="modified"),
        pytest.param(staged_new_file, ["new.py"], id="staged"),
        pytest.param(renamed, ["app.py", "main.py"], id="renamed"),
        pytest.param(lambda root: write(root, "scratch.txt"), ["scratch.txt"], id="untracked"),
        pytest.param(lambda root: write(root, "docs/notes.md"), [], id="dockerignored"),
        pytest.param(lambda root: write(root, "docs/keep.md"), ["docs/keep.md"], id="negated"),
        pytest.param(lambda root: write(root, "build.log"), ["build.log"], id="gitignored-sent"),
        pytest.param(lambda root: write(root, "pkg/__pycache__/m.pyc"), [], id="ignored-by-both"),
        pytest.param(
            lambda root: write(root, ".git/release/logs/build-cu129.log"), [], id="release-state"
        ),
    ],
)
def test_what_makes_a_work_tree_dirty(
    tmp_path: Path, change: Callable[[Path], None], dirty: list[str]
) -> None:
    repo = guarded_repo(tmp_path)
    change(tmp_path)
    refused = read_source(ReleaseContext(tmp_path))
    allowed = read_source(ReleaseContext(tmp_path), allow_dirty=True)
    assert allowed.dirty == tuple(dirty)
    assert refused.dirty == () and refused.version == "0.1.0"  # without the flag: the commit's
    if dirty:
        assert refused.refusal == (
            f"the work tree differs from HEAD ({', '.join(dirty)}): commit or remove the "
            "changes, or pass --allow-dirty (to build it as 0.1.0+dirty)"
        )
        assert allowed.version == "0.1.0+dirty" and allowed.refusal == ""
        assert allowed.revision_label == repo.head() + "-dirty"
    else:
        assert refused.refusal == "" and allowed.version == "0.1.0"
        assert allowed.revision_label == repo.head()


def test_a_context_in_a_subfolder(tmp_path: Path) -> None:
    """Untracked files outside the build context do not go into the image; a change to a
    tracked file anywhere still means the work tree is not the commit."""
    guarded_repo(tmp_path, context="engine")
    write(tmp_path, "outside.txt")
    write(tmp_path, "engine/inside.txt")
    assert read_source(ReleaseContext(tmp_path), allow_dirty=True).dirty == ("engine/inside.txt",)
    write(tmp_path, "pyproject.toml", GUARDED_PYPROJECT.format(context="engine") + "\n")
    found = read_source(ReleaseContext(tmp_path), allow_dirty=True).dirty
    assert found == ("pyproject.toml", "engine/inside.txt")


def test_a_refusal_names_a_few_paths(tmp_path: Path) -> None:
    guarded_repo(tmp_path)
    for name in ("a", "b", "c", "d", "e"):
        write(tmp_path, f"{name}.txt")
    refusal = read_source(ReleaseContext(tmp_path)).refusal
    assert "(a.txt, b.txt, c.txt and 2 more)" in refusal and "\n" not in refusal


def clone(src: Path, dest: Path, *options: str) -> Path:
    GitRepo(src).run("clone", "--quiet", *options, f"file://{src}", str(dest))
    return dest


@pytest.mark.parametrize(
    ("depth", "version", "uncounted"),
    [
        pytest.param((), "0.1.0rc2.dev2", False, id="whole"),
        pytest.param(("--depth", "3"), "0.1.0rc2.dev2", False, id="tag-at-the-boundary"),
        pytest.param(("--depth", "2"), "0.0.0.dev0+shallow", True, id="tag-cut-off"),
        pytest.param(("--depth", "1"), "0.0.0.dev0+shallow", True, id="depth-1"),
    ],
)
def test_versions_in_shallow_clones(
    tmp_path: Path, depth: tuple[str, ...], version: str, uncounted: bool
) -> None:
    """main: c0, c1 (v0.1.0rc1), c2, c3. The dev version is counted where every commit since
    the tag has its parents, and says +shallow where it cannot be."""
    src = tmp_path / "src"
    repo = guarded_repo(src, commits=4)
    repo.run("tag", "-d", "v0.1.0")
    repo.run("tag", "v0.1.0rc1", "HEAD~2")
    work = clone(src, tmp_path / "clone", *depth)
    allowed = read_source(ReleaseContext(work), allow_shallow=True)
    assert (allowed.version, allowed.uncounted, allowed.tagged) == (version, uncounted, False)
    assert allowed.shallow == bool(depth) and allowed.refusal == ""
    refused = read_source(ReleaseContext(work))
    if depth:
        assert refused.refusal == (
            "this is a shallow clone, whose tags and history the version is read from may be "
            "cut short: fetch them (git fetch --unshallow --tags), or pass --allow-shallow "
            f"(to build it as {version})"
        )
    else:
        assert refused.refusal == ""
    assert refused.version == version  # the flag decides whether to build, not what


def test_a_tagged_head_in_a_shallow_clone_builds_as_its_tag(tmp_path: Path) -> None:
    src = tmp_path / "src"
    repo = guarded_repo(src, commits=3)
    repo.run("tag", "v0.1.1rc1")
    work = clone(src, tmp_path / "clone", "--depth", "1")
    source = read_source(ReleaseContext(work), allow_shallow=True)
    assert (source.version, source.tagged, source.uncounted) == ("0.1.1rc1", True, False)
    assert "--allow-shallow" in read_source(ReleaseContext(work)).refusal
    explicit = read_source(ReleaseContext(work), given_version("0.1.1rc2"), allow_shallow=True)
    assert (explicit.version, explicit.uncounted) == ("0.1.1rc2", False)
    write(work, "app.py", "print(0)\n")
    both = read_source(ReleaseContext(work), allow_shallow=True, allow_dirty=True)
    assert both.version == "0.1.1rc1+dirty"


# -- through the CLI and nox: the flags, and nothing changed by a refusal -------------------

NOXFILE = "from release.cli.nox_sessions import image_sessions\n\nimage_sessions()\n"


@pytest.fixture
def shallow_dirty(engine: SampleEngine, tmp_path: Path) -> Path:
    """A ``--depth 1`` clone of the sample engine (untagged main) with a tracked file
    changed (its image name, so nothing of it exists) and an untracked noxfile in the
    build context."""
    work = clone(engine.root, tmp_path / "shallow", "--depth", "1")
    pyproject = work / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text.replace('"example/tinyengine"', f'"{unique_name()}"'))
    write(work, "noxfile.py", NOXFILE)
    return work


SHALLOW = "this is a shallow clone"
DIRTY = "the work tree differs from HEAD (pyproject.toml, noxfile.py)"


@pytest.mark.images
def test_refusals_and_their_flags_change_nothing(
    docker: ContainerEngine, shallow_dirty: Path
) -> None:
    """Each flag lifts its own refusal and no other, on every task and nox session; every
    refusal is one line, exits 3 and leaves the repository byte for byte as it was."""
    work = shallow_dirty
    before = repo_state(work)
    both = run_cli(work, "images.build")
    assert both.code == REFUSED and both.stderr.count("\n") == 1, both.output
    assert SHALLOW in both.stderr and "git fetch --unshallow --tags" in both.stderr
    assert DIRTY in both.stderr and "--allow-dirty" in both.stderr
    assert "(to build it as 0.0.0.dev0+shallow.dirty)" in both.stderr
    cases = [
        (("images.build", "--allow-shallow"), DIRTY, SHALLOW),
        (("images.build", "--allow-dirty"), SHALLOW, DIRTY),
        (("images.smoke", "--variant", "cu129", "--allow-dirty"), SHALLOW, DIRTY),
        (("images.snapshot", "--allow-shallow"), DIRTY, SHALLOW),
    ]
    for args, says, lifted in cases:
        result = run_cli(work, *args)
        assert result.code == REFUSED and result.stderr.count("\n") == 1, (args, result.output)
        assert says in result.stderr and lifted not in result.stderr, (args, result.stderr)
        if args[0] != "images.build":  # nothing to smoke or snapshot: it would build first
            assert "must be built first, but " in result.stderr
    for session, flag, says, lifted in [
        ("build(cu129)", "--allow-shallow", DIRTY, SHALLOW),
        ("smoke(cu129)", "--allow-dirty", SHALLOW, DIRTY),
        ("snapshot(cu130)", "--allow-shallow", DIRTY, SHALLOW),
    ]:
        result = run_nox(work, "-s", session, "--", flag)
        assert result.returncode != 0 and says in result.stderr, result.stderr
        assert lifted not in result.stderr and f"Session {session} aborted: " in result.stderr
    assert repo_state(work) == before


def test_the_source_reads_the_tag_and_the_project_and_says_what_it_left_out(
    tmp_path: Path,
) -> None:
    """Tagged v0.1.0 at HEAD: ref.name is that tag; a moved-on HEAD has none. A
    description over two lines gives no label, and the build says so once."""
    repo = guarded_repo(tmp_path)
    source = read_source(ReleaseContext(tmp_path))
    assert source.tag == "v0.1.0" and source.project.title == "guarded"
    assert not any("OCI label" in n for n in source.notices)
    text = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    write(tmp_path, "pyproject.toml", text.replace(
        'version = "0.0.0"\n', 'version = "0.0.0"\ndescription = """one\ntwo"""\n', 1
    ))  # fmt: skip
    repo.run("commit", "--quiet", "-am", "A description on two lines")
    moved = read_source(ReleaseContext(tmp_path))
    assert moved.tag == "" and moved.version.startswith("0.1.1.dev1")
    assert moved.project.description == "" and moved.project.skipped == ("description",)
    assert (
        "no OCI label for [project] description: not one line of printable text "
        "(or not a web address)"
    ) in moved.notices
    by_hand = read_source(ReleaseContext(tmp_path), given_version("0.2.0rc1"))
    assert (by_hand.tag, by_hand.head_tag) == ("v0.2.0rc1", "")  # no such tag here
    ad_hoc = read_source(ReleaseContext(tmp_path), given_version("1.0.dev7"))
    assert (ad_hoc.tag, ad_hoc.head_tag) == ("", "")  # ad hoc: no release's


def test_the_source_says_which_release_tag_is_on_its_commit(tmp_path: Path) -> None:
    """What the manifest's parts name as the build's tag, found once as the source is read:
    the tag at HEAD (read from the tags, or given by hand in any spelling, an rc0 too),
    none for a version no tag at HEAD carries, none for a build of uncommitted changes."""
    repo = guarded_repo(tmp_path)
    ctx = ReleaseContext(tmp_path)
    assert read_source(ctx).head_tag == "v0.1.0"
    assert read_source(ctx, given_version("v0.1.0")).head_tag == "v0.1.0"
    assert read_source(ctx, given_version("0.1.1rc1")).head_tag == ""
    repo.run("tag", "v0.1.1-rc.0")  # another spelling of 0.1.1rc0, on the same commit
    rc0 = read_source(ReleaseContext(tmp_path), given_version("0.1.1rc0"))
    assert (rc0.version, rc0.tag, rc0.head_tag) == ("0.1.1rc0", "v0.1.1rc0", "v0.1.1-rc.0")
    write(tmp_path, "app.py", "print(2)\n")
    dirty = read_source(ReleaseContext(tmp_path), allow_dirty=True)
    assert (dirty.version, dirty.head_tag) == ("0.1.1rc0+dirty", "")
    kept = read_source(ReleaseContext(tmp_path))  # refused to build, still the commit's
    assert (kept.version, kept.head_tag) == ("0.1.1rc0", "v0.1.1-rc.0")


@pytest.mark.parametrize(
    ("branch", "tags", "version"),
    [
        pytest.param("releases/v0.32.0", (), "0.32.0.dev3", id="fresh-branch-no-tags"),
        pytest.param("releases/v0.32.0", ("v0.1.0",), "0.32.0.dev2", id="fresh-after-older"),
        pytest.param("releases/v0.1.0", ("v0.1.0",), "0.1.0.post1.dev2", id="after-final-post"),
        pytest.param(
            "releases/v0.1.0", ("v0.1.0", "v0.0.9.1"), "0.1.0.1.dev2", id="after-final-four-part"
        ),
        pytest.param("releases/v0.1.0", ("v0.1.0", "v0.0.9"), "0.1.1.dev2", id="after-final-patch"),
        pytest.param("main", ("v0.1.0",), "0.1.1.dev2", id="main-next-patch"),
    ],
)
def test_an_untagged_build_takes_its_branch_version(
    tmp_path: Path, branch: str, tags: tuple[str, ...], version: str
) -> None:
    """A fresh ``releases/v0.32.0`` builds as ``0.32.0.devN``, not ``0.0.0.devN`` (nor as
    the patch after the last tag behind it); after its final, as the style its tags ship
    fixes in; main, as the next patch."""
    repo = guarded_repo(tmp_path, commits=3)
    repo.run("tag", "-d", "v0.1.0")
    for name in tags:
        repo.run("tag", name, "HEAD~2")
    if branch != "main":
        repo.run("switch", "--quiet", "-c", branch)
    source = read_source(ReleaseContext(tmp_path))
    assert (source.version, source.tagged) == (version, False)

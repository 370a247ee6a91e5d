"""release check: one item per thing checked; each check is made to report a problem."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from release.adapters.git import GitRepo
from release.commands.check import CheckOutcome, CheckRequest, check
from release.commands.outcome import Run
from release.core.doctor import Health, git_version_item
from release.errors import EngineError
from release.flows import doctor
from release.sample import make_engine_repo
from tests.conftest import repo_state, run_cli

AUTHOR = ("Release Maintainer", "maintainer@example.com")
NOXFILE = "from release.cli.nox_sessions import image_sessions\n\nimage_sessions()\n"


def repo_at(path: Path, *, commit: bool = True) -> GitRepo:
    path.mkdir(parents=True, exist_ok=True)
    repo = GitRepo.init(path)
    assert repo is not None
    for key, value in (("user.name", "A"), ("user.email", "a@example.com"),
                       ("commit.gpgsign", "false")):  # fmt: skip
        repo.run("config", key, value)
    if commit:
        repo.run("commit", "--quiet", "--allow-empty", "-m", "one")
    return repo


def run_check(path: Path) -> CheckOutcome:
    return check(CheckRequest(), Run(path, lambda _: None))


def status(outcome: CheckOutcome, name: str) -> tuple[Health, str]:
    (item,) = [i for i in outcome.items if i.name == name]
    return item.status, item.detail


@pytest.fixture
def engine_with_login(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    made = make_engine_repo(tmp_path, first="[Core] The engine (#1)", author=AUTHOR)
    (made.root / "noxfile.py").write_text(NOXFILE)
    home = tmp_path / "home"
    (home / ".docker").mkdir(parents=True)
    (home / ".docker" / "config.json").write_text(
        json.dumps({"auths": {"https://index.docker.io/v1/": {"auth": "dTpw"}}})
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("DOCKER_CONFIG", raising=False)
    return made.repo


def test_a_fresh_repository_without_commits(tmp_path: Path) -> None:
    repo_at(tmp_path, commit=False)
    outcome = run_check(tmp_path)
    assert status(outcome, "repository")[0] is Health.OK
    assert status(outcome, "configuration") == (
        Health.OK, "no pyproject.toml: the defaults (release init writes one)",
    )  # fmt: skip
    assert status(outcome, "noxfile.py") == (Health.NOT_CHECKED, "no [tool.release.images]")
    lines = list(outcome.text())
    assert len(lines) == len(outcome.items) + 1
    assert all(
        line.split("  ")[0].strip() in ("ok", "problem", "not checked") for line in lines[:-1]
    )
    document = outcome.document()
    assert isinstance(document["items"], list) and len(document["items"]) == len(outcome.items)
    assert document["ok"] is (outcome.exit_code == 0)


def test_the_sample_engine_checks_out(engine_with_login: GitRepo) -> None:
    outcome = run_check(engine_with_login.root)
    for name in ("configuration", "schema", "history", "git state", "noxfile.py",
                 "snapshot privileges", "registry login docker.io"):  # fmt: skip
        assert status(outcome, name)[0] is Health.OK, status(outcome, name)
    criu = status(outcome, "CRIU")
    assert criu[0] is Health.NOT_CHECKED and "cu130" in criu[1]
    assert all(i.status is not Health.PROBLEM or i.name == "Docker Engine" for i in outcome.items)


def test_a_pytorch_style_repository(tmp_path: Path) -> None:
    repo = repo_at(tmp_path)
    repo.run("branch", "release/2.5")
    repo.run("tag", "v2.5.0-rc1")
    (tmp_path / "pyproject.toml").write_text('[tool.release]\nbranch = "release/{major}.{minor}"\n')
    outcome = run_check(tmp_path)
    assert status(outcome, "configuration") == (Health.OK, "[tool.release] loads")
    assert status(outcome, "schema")[0] is Health.OK


def test_a_configuration_that_fails_to_load_is_a_problem(tmp_path: Path) -> None:
    repo_at(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.release]\nmain_branch = "main"\n')
    outcome = run_check(tmp_path)
    assert status(outcome, "configuration") == (
        Health.PROBLEM,
        "[tool.release] unknown key 'main_branch'; did you mean 'main-branch'?; fix it there",
    )
    assert outcome.exit_code == 1


def test_a_table_the_schema_refuses_is_a_problem(tmp_path: Path) -> None:
    repo_at(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.release]\nfirst-rc = 2\n")
    outcome = run_check(tmp_path)
    assert status(outcome, "schema")[0] is Health.PROBLEM
    assert status(outcome, "schema")[1].startswith("[tool.release] first-rc: 2 is not one of")


def test_a_misspelt_table_is_a_problem(tmp_path: Path) -> None:
    repo_at(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.releases]\ntag = "v{version}"\n')
    outcome = run_check(tmp_path)
    assert status(outcome, "table names") == (
        Health.PROBLEM,
        "[tool.releases] in pyproject.toml is not read; did you mean [tool.release]? (rename it)",
    )
    assert outcome.exit_code == 1


@pytest.mark.parametrize(
    ("answer", "expected"),
    [("git version 2.30.9", Health.PROBLEM), (None, Health.PROBLEM),
     ("git version 2.31.0", Health.OK), ("git version 2.47.1.windows.1", Health.OK)],
)  # fmt: skip
def test_an_old_or_missing_git_is_a_problem(answer: str | None, expected: Health) -> None:
    assert git_version_item(answer).status is expected


def test_not_a_repository_is_a_problem(tmp_path: Path) -> None:
    outcome = run_check(tmp_path)
    assert status(outcome, "repository")[0] is Health.PROBLEM
    assert status(outcome, "history") == (Health.NOT_CHECKED, "no repository")


def test_a_shallow_clone_is_a_problem(tmp_path: Path) -> None:
    source = repo_at(tmp_path / "source")
    source.run("commit", "--quiet", "--allow-empty", "-m", "two")
    clone = tmp_path / "clone"
    source.run("clone", "--quiet", "--depth", "1", f"file://{source.root}", str(clone))
    assert status(run_check(clone), "history")[0] is Health.PROBLEM


def test_a_merge_in_progress_is_a_problem(tmp_path: Path) -> None:
    repo = repo_at(tmp_path)
    (tmp_path / "f").write_text("base\n")
    repo.run("add", "f")
    repo.run("commit", "--quiet", "-m", "base")
    repo.run("switch", "--quiet", "-c", "other")
    (tmp_path / "f").write_text("other\n")
    repo.run("commit", "--quiet", "-am", "other")
    repo.run("switch", "--quiet", "main")
    (tmp_path / "f").write_text("main\n")
    repo.run("commit", "--quiet", "-am", "main")
    repo.run("merge", "other", check=False)
    found = status(run_check(tmp_path), "git state")
    assert found == (
        Health.PROBLEM, "git is in the middle of a merge; git commit to finish it, or git merge --abort",
    )  # fmt: skip


def test_no_docker_cli_that_builds_is_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def none(env: object = None) -> tuple[str, str, str]:
        raise EngineError("no docker CLI found; install one")

    monkeypatch.setattr(doctor, "choose_cli", none)
    repo_at(tmp_path)
    outcome = run_check(tmp_path)
    assert status(outcome, "docker CLI") == (Health.PROBLEM, "no docker CLI found; install one")
    assert status(outcome, "Docker Engine")[0] is Health.NOT_CHECKED


def test_an_engine_that_does_not_answer_is_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("docker") is None and not Path("/usr/bin/docker").exists():
        pytest.skip("no docker CLI on this machine")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/nothing.sock")
    repo_at(tmp_path / "repo")
    found = status(run_check(tmp_path / "repo"), "Docker Engine")
    assert found[0] is Health.PROBLEM and "no Docker Engine is reachable" in found[1]


def test_a_noxfile_missing_or_without_the_image_sessions_is_a_problem(
    engine_with_login: GitRepo,
) -> None:
    (engine_with_login.root / "noxfile.py").write_text("import nox\n")
    assert status(run_check(engine_with_login.root), "noxfile.py")[0] is Health.PROBLEM
    (engine_with_login.root / "noxfile.py").unlink()
    found = status(run_check(engine_with_login.root), "noxfile.py")
    assert found[0] is Health.PROBLEM and found[1].startswith("none; the image sessions need")


@pytest.mark.parametrize(
    "options",
    ['["--cap-add", "SYS_PTRACE", "--security-opt", "seccomp=unconfined"]',
     '["--cap-add", "SYS_ADMIN", "--cap-add", "SYS_PTRACE"]', "[]"],
)  # fmt: skip
def test_snapshot_privileges_criu_lacks_are_a_problem(
    engine_with_login: GitRepo, options: str
) -> None:
    pyproject = engine_with_login.root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    start = text.index("run-options = [")
    end = text.index("]\n", start) + 2
    pyproject.write_text(text[:start] + f"run-options = {options}\n" + text[end:])
    found = status(run_check(engine_with_login.root), "snapshot privileges")
    assert found[0] is Health.PROBLEM and found[1].startswith("CRIU needs ")


LOGINS = pytest.mark.parametrize(
    "config",
    [None, {}, {"auths": {"ghcr.io": {"auth": "dTpw"}}}, {"auths": {"docker.io": {}}}],
    ids=["no file", "empty", "another registry", "an entry without an auth"],
)


def with_logins(config: object) -> None:
    path = Path.home() / ".docker" / "config.json"
    if config is None:
        path.unlink()
    else:
        path.write_text(json.dumps(config))


@LOGINS
def test_a_registry_base_images_come_from_needs_no_login(
    engine_with_login: GitRepo, config: object
) -> None:
    """Public bases pull without a login: a missing one is a note, and the check passes."""
    with_logins(config)
    outcome = run_check(engine_with_login.root)
    found = status(outcome, "registry login docker.io")
    assert found[0] is Health.NOTE, found
    assert (
        "none is needed to pull public base images (nvidia/cuda:12.8.1-base-ubuntu22.04" in found[1]
    )
    assert found[1].endswith("needs docker login docker.io (release pushes nothing there)")
    assert all(i.status is not Health.PROBLEM or i.name == "Docker Engine" for i in outcome.items)
    assert "1 note(s)" in list(outcome.text())[-1]


@LOGINS
def test_a_registry_release_pushes_to_without_a_login_is_a_problem(
    engine_with_login: GitRepo, config: object
) -> None:
    pyproject = engine_with_login.root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(
        text.replace(
            'version-arg = "ENGINE_VERSION"\n',
            'version-arg = "ENGINE_VERSION"\nregistry = "docker.io/example"\n',
        )
    )
    with_logins(config)
    outcome = run_check(engine_with_login.root)
    found = status(outcome, "registry login docker.io")
    assert found[0] is Health.PROBLEM
    assert found[1].endswith("; release pushes images there: docker login docker.io")
    assert outcome.exit_code == 1


def test_a_credential_helper_is_not_checked(engine_with_login: GitRepo) -> None:
    path = Path.home() / ".docker" / "config.json"
    path.write_text(json.dumps({"credHelpers": {"docker.io": "pass"}}))
    found = status(run_check(engine_with_login.root), "registry login docker.io")
    assert found == (Health.NOT_CHECKED, "docker-credential-pass keeps it; not asked")


def test_a_registry_on_this_machine_is_not_checked(engine_with_login: GitRepo) -> None:
    pyproject = engine_with_login.root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(
        text.replace(
            'version-arg = "ENGINE_VERSION"\n',
            'version-arg = "ENGINE_VERSION"\nci-registry = "127.0.0.1:5000/ci"\n',
        )
    )
    outcome = run_check(engine_with_login.root)
    assert status(outcome, "registry login 127.0.0.1:5000")[0] is Health.NOT_CHECKED
    assert status(outcome, "registry login docker.io")[0] is Health.OK


def test_a_release_registry_needs_skopeo_and_a_foreign_platform_emulation(
    engine_with_login: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    pyproject = engine_with_login.root / "pyproject.toml"
    text = pyproject.read_text()
    text = text.replace(
        'version-arg = "ENGINE_VERSION"',
        'version-arg = "ENGINE_VERSION"\nregistry = "registry.example.com/rel"',
    ).replace(
        'base-image = "nvidia/cuda:12.9.1-base-ubuntu22.04"',
        'base-image = "nvidia/cuda:12.9.1-base-ubuntu22.04"\nplatforms = ["linux/amd64", "linux/s390x"]',
    )
    pyproject.write_text(text)
    monkeypatch.setattr(
        doctor, "emulation_problem", lambda p: None if p == "linux/amd64" else "no handler"
    )
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None)
    outcome = run_check(engine_with_login.root)
    assert status(outcome, "skopeo")[0] is Health.PROBLEM
    assert "apt-get install skopeo" in status(outcome, "skopeo")[1]
    assert status(outcome, "platform linux/amd64")[0] is Health.OK
    assert status(outcome, "platform linux/s390x") == (
        Health.NOT_CHECKED,
        "not emulated here: no handler; build it on a linux/s390x runner",
    )
    login = status(outcome, "registry login registry.example.com")
    assert login[0] is Health.PROBLEM and "docker login registry.example.com" in login[1]
    assert outcome.exit_code == 1


@pytest.mark.parametrize("other", ["v0.1.0rc1", "v0.1.0-rc.1", "v0.1.0-rc1", "v0.1.0-RC.1"])
def test_check_tag_fails_when_its_version_is_tagged_on_another_commit(
    tmp_path: Path, other: str
) -> None:
    repo = repo_at(tmp_path)
    first = repo.head()
    repo.run("tag", "-a", other, "-m", "rc1")
    (tmp_path / "f").write_text("other code\n")
    repo.run("add", "f")
    repo.run("commit", "--quiet", "-m", "two")
    mine = "v0.1.0rc1" if other == "v0.1.0-rc1" else "v0.1.0-rc1"
    repo.run("tag", "-a", mine, "-m", "rc1 again")
    before = repo_state(tmp_path)
    said = run_cli(tmp_path, "check", "--tag", mine, "--job", "build")
    assert said.code == 1, said.output
    (line,) = [row for row in said.stdout.splitlines() if row.startswith("problem")]
    assert f"{other} names 0.1.0rc1 too, on commit {first[:12]}" in line
    assert repo_state(tmp_path) == before
    # the same version spelt twice on one commit is one release
    repo.run("tag", "--force", other, "HEAD")
    again = run_cli(tmp_path, "check", "--tag", mine, "--job", "build")
    assert again.code == 0 and "release builds it as 0.1.0rc1" in again.stdout, again.output


def tagged(path: Path, *tags: str, config: str = "") -> GitRepo:
    repo = repo_at(path)
    for name in tags:
        repo.run("tag", name)
    if config:
        (path / "pyproject.toml").write_text(f"[tool.release]\n{config}\n")
    return repo


def test_a_tag_template_that_reads_none_of_the_release_tags_is_a_problem(tmp_path: Path) -> None:
    """llm-compressor tags 0.12.0 and 0.12.0.1, without a v: the default v{version} reads
    none of them, so rc numbers and notes would start from nothing."""
    tagged(tmp_path, "0.11.0", "0.12.0", "0.12.0.1", "latest", "ciflow/xpu/4046")
    before = repo_state(tmp_path)
    said = run_cli(tmp_path, "check")
    assert said.code == 1, said.output
    (line,) = [row for row in said.stdout.splitlines() if "tag template" in row]
    assert line == (
        'problem      tag template: tag = "v{version}" reads none of the 3 release tags here '
        '(0.11.0, 0.12.0, 0.12.0.1); tag = "{version}" would read 3 of them: set it in '
        "[tool.release]"
    )
    assert repo_state(tmp_path) == before
    (tmp_path / "pyproject.toml").write_text('[tool.release]\ntag = "{version}"\n')
    found = status(run_check(tmp_path), "tag template")
    assert found == (
        Health.OK, 'tag = "{version}" reads 3 of the 3 release tags here'
    )  # fmt: skip


@pytest.mark.parametrize(
    ("tags", "config", "expected"),
    [
        ((), "", (Health.OK, 'tag = "v{version}"; no release tags here yet')),
        (("latest", "ciflow/xpu/4046", "nightly"), "", (Health.OK,
         'tag = "v{version}"; no release tags here yet')),
        (("v0.1", "v0.18.0-rc1", "v0.18.0"), 'rc-spelling = "-rc{n}"', (Health.OK,
         'tag = "v{version}" reads 2 of the 3 release tags here (not: v0.1)')),
        (("v0.1.0rc1", "engine-0.2.0"), 'tag = "release-{version}"', (Health.PROBLEM,
         'tag = "release-{version}" reads none of the 2 release tags here (engine-0.2.0, '
         'v0.1.0rc1); tag = "engine-{version}" would read 1 of them: set it in [tool.release]')),
        (("0.10.0.1", "0.10.0.2"), "", (Health.PROBLEM,
         'tag = "v{version}" reads none of the 2 release tags here (0.10.0.1, 0.10.0.2); '
         'tag = "{version}" would read 2 of them: set it in [tool.release]')),
        (("v0.10.0.0", "v0.10"), "", (Health.PROBLEM,
         'tag = "v{version}" reads none of the 2 release tags here (v0.10, v0.10.0.0); no '
         "PREFIX{version} template reads them (release reads X.Y.Z, X.Y.ZrcN, X.Y.Z.postN, "
         "X.Y.Z.N)")),
    ],
    ids=["no tags", "no release tags", "most read", "another prefix", "four-part", "none readable"],
)  # fmt: skip
def test_the_tag_template_against_the_tags_here(
    tmp_path: Path, tags: tuple[str, ...], config: str, expected: tuple[Health, str]
) -> None:
    tagged(tmp_path, *tags, config=config)
    assert status(run_check(tmp_path), "tag template") == expected

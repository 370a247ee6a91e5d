"""``release check``'s items, read from the world: the configuration, whether its tag
template reads the repository's tags, git, the docker CLI and the engine, the snapshot
runtime's privileges, an engine repository's ``noxfile.py``, the registry logins. Each item is ``ok`` only when it was checked; a check that cannot
run here says ``not checked`` and why (:mod:`release.core.doctor`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from release.adapters.config_file import CONFIG_ENV, CONFIG_FILE, outside_file, read_config
from release.adapters.emulation import emulation_problem
from release.adapters.engine import ContainerEngine
from release.adapters.engine_cli import choose_cli
from release.adapters.files import read_tree_text
from release.adapters.git import GitRepo
from release.adapters.host_tools import Login, docker_config_path, git_version, registry_login
from release.core.config import Config, parse_pyproject, release_table
from release.core.config_schema import schema_problems
from release.core.doctor import (
    Item,
    RegistryUse,
    git_version_item,
    not_checked,
    note,
    ok,
    problem,
    registry_uses,
    snapshot_privileges,
    tag_template_item,
)
from release.core.terminal_text import escaped
from release.errors import EngineError, ReleaseError

__all__ = ["NOXFILE_CALL", "check_items"]

NOXFILE_CALL = "image_sessions"  # release.cli.nox_sessions.image_sessions


def check_items(root: Path, env: Mapping[str, str] | None = None) -> list[Item]:
    env = os.environ if env is None else env
    items = [git_version_item(git_version())]
    repo: GitRepo | None = None
    try:
        repo = GitRepo(root)
        items.append(ok("repository", f"a git work tree at {escaped(str(repo.root))}"))
    except ReleaseError as err:
        items.append(problem("repository", escaped(err.one_line())))
    where = repo.root if repo is not None else root
    config, config_items = _config(where)
    items += config_items
    if repo is not None and config is not None:
        tags = [r.removeprefix("refs/tags/") for r in repo.refs() if r.startswith("refs/tags/")]
        items.append(tag_template_item(config.tag, tags))
    items += _git_state(repo)
    items += _docker(env)
    items += _images(where, config, env)
    return items


def _config(root: Path) -> tuple[Config | None, list[Item]]:
    config: Config | None = None
    given = outside_file()
    if given is not None:  # the user's own file, in place of pyproject.toml's table
        try:
            config, _ = read_config(root)
        except ReleaseError as err:
            return None, [problem("configuration", f"{escaped(err.one_line())}; fix it there")]
        return config, [
            ok(
                "configuration",
                f"{escaped(str(given))} ({CONFIG_ENV}) loads; {CONFIG_FILE} is not read",
            )
        ]
    try:
        config, notices = read_config(root)
        loaded = ok("configuration", "[tool.release] loads")
    except ReleaseError as err:
        notices = ()
        loaded = problem("configuration", f"{escaped(err.one_line())}; fix it there")
    try:
        found = read_tree_text(root, CONFIG_FILE, CONFIG_FILE)
        table = release_table(parse_pyproject(found.text)) if found is not None else None
    except ReleaseError:
        return None, [loaded]  # said already: the file cannot be read, or is not TOML
    if table is None:
        return config, [
            ok("configuration", f"no {CONFIG_FILE}: the defaults (release init writes one)")
        ]
    if not table and config is not None:
        loaded = ok("configuration", "no [tool.release]: the defaults apply")
    problems = schema_problems(table) if isinstance(table, Mapping) else ["not a table"]
    items = [
        loaded,
        problem("schema", f"{escaped(problems[0])} (release schema prints it)")
        if problems
        else ok("schema", "[tool.release] validates against release schema"),
    ]
    items += [problem("table names", f"{notice} (rename it)") for notice in notices]
    return config, items


def _git_state(repo: GitRepo | None) -> list[Item]:
    if repo is None:
        return [not_checked("history", "no repository"), not_checked("git state", "no repository")]
    items = [
        problem(
            "history",
            "a shallow clone: notes and rc numbers would read a history cut short; "
            "git fetch --unshallow --tags",
        )
        if repo.history.is_shallow()
        else ok("history", "complete (not a shallow clone)")
    ]
    state = repo.worktree.in_progress()
    items.append(
        problem("git state", f"git is in the middle of {state[0]}; {state[1]}")
        if state is not None
        else ok("git state", "no merge, rebase or cherry-pick in progress")
    )
    return items


def _docker(env: Mapping[str, str]) -> list[Item]:
    try:
        cli, builder, description = choose_cli(env)
    except EngineError as err:
        return [
            problem("docker CLI", escaped(err.one_line())),
            not_checked("Docker Engine", "no docker CLI that builds with BuildKit"),
        ]
    items = [ok("docker CLI", escaped(description))]
    try:
        version = ContainerEngine(cli, builder=builder, description=description).ping()
    except EngineError as err:
        return [*items, problem("Docker Engine", escaped(err.one_line()))]
    return [*items, ok("Docker Engine", f"Docker Engine {escaped(version)} answers")]


def _images(root: Path, config: Config | None, env: Mapping[str, str]) -> list[Item]:
    matrix = config.matrix if config is not None else None
    if matrix is None:
        why = "no [tool.release.images]" if config is not None else "the configuration fails"
        return [not_checked(name, why) for name in ("noxfile.py", "snapshot", "registry login")]
    items = [_noxfile(root)]
    privileges = snapshot_privileges(matrix)
    if privileges is None:
        items.append(not_checked("snapshot", "no snapshot rule with a runtime"))
    else:
        ids = ", ".join(matrix.snapshot_ids()) or "none"
        items.append(privileges)
        items.append(
            not_checked(
                "CRIU",
                f"CRIU runs inside the snapshot variants' images ({ids}), not on this host; "
                f'nox -s "snapshot(ID)" runs its round trip (snapshot-runtime check says why '
                "a dump fails)",
            )
        )
    items += [_login(use, env) for use in registry_uses(matrix)]
    if matrix.registry:
        found = shutil.which("skopeo")
        items.append(
            ok("skopeo", f"{escaped(found)} reads and copies in the release registry")
            if found
            else problem(
                "skopeo",
                "not installed: images.publish and promote need it (apt-get install skopeo)",
            )
        )
    for platform in sorted({v.platform for v in matrix.variants if v.platform}):
        problem_ = emulation_problem(platform)
        name = f"platform {platform}"
        items.append(
            ok(name, "runs here (natively, or emulated through binfmt_misc)")
            if problem_ is None
            else not_checked(
                name, f"not emulated here: {problem_}; build it on a {platform} runner"
            )
        )
    return items


def _noxfile(root: Path) -> Item:
    try:
        found = read_tree_text(root, "noxfile.py", "noxfile.py")
    except ReleaseError as err:
        return problem("noxfile.py", escaped(err.one_line()))
    fix = (
        "the image sessions need one that says: from release.cli.nox_sessions import "
        "image_sessions; image_sessions()"
    )
    if found is None:
        return problem("noxfile.py", f"none; {fix}")
    if NOXFILE_CALL not in found.text:
        return problem("noxfile.py", f"it does not call {NOXFILE_CALL}; {fix}")
    return ok("noxfile.py", f"calls {NOXFILE_CALL} (nox -s build, smoke, snapshot)")


def _login(use: RegistryUse, env: Mapping[str, str]) -> Item:
    host = use.host
    name = f"registry login {escaped(host)}"
    if host.split(":")[0] in ("localhost", "127.0.0.1", "[::1]"):
        return not_checked(name, "a registry on this machine; whether it asks a login is its own")
    try:
        login, helper = registry_login(host, env)
    except ReleaseError as err:
        return problem(name, escaped(err.one_line()))
    path = escaped(str(docker_config_path(env)))
    if login is Login.AUTH:
        return ok(name, f"{path} has an auth for it")
    if login is Login.HELPER:
        return not_checked(name, f"docker-credential-{escaped(helper)} keeps it; not asked")
    where = f"{path} has no login for it" if login is Login.NONE else f"there is no {path}"
    if not use.pushed:
        bases = ", ".join(escaped(b) for b in use.bases[:2])
        return note(
            name,
            f"{where}; none is needed to pull public base images ({bases}); a private one "
            f"needs docker login {escaped(host)} (release pushes nothing there)",
        )
    return problem(name, f"{where}; release pushes images there: docker login {escaped(host)}")

"""What ``release check`` asks of this machine beyond git's repository and the engine:
git's own version, and the registry logins docker keeps in its ``config.json``."""

from __future__ import annotations

import base64
import contextlib
import enum
import os
from collections.abc import Mapping
from pathlib import Path

from release.adapters import process
from release.adapters.files import read_text
from release.adapters.known_secrets import remember
from release.core.json_text import parse_json
from release.errors import GitError, UsageError

__all__ = ["Login", "docker_config_path", "git_version", "registry_login"]

_SECRET_KEYS = ("auth", "identitytoken", "registrytoken", "password")
_DOCKER_HUB = (
    "docker.io",
    "index.docker.io",
    "https://index.docker.io/v1/",
    "registry-1.docker.io",
)


def git_version() -> str | None:
    """``git version``'s answer, or None when git does not run."""
    try:
        result = process.run(["git", "version"], error=GitError, timeout=20)
    except GitError:
        return None
    return result.stdout.strip() if result.ok else None


class Login(enum.Enum):
    AUTH = "auth"  # an auth (or identity token) for the registry in config.json
    HELPER = "helper"  # a credential helper keeps it; not asked
    NONE = "none"
    NO_FILE = "no file"


def docker_config_path(env: Mapping[str, str]) -> Path:
    base = env.get("DOCKER_CONFIG") or os.path.join(env.get("HOME") or "~", ".docker")
    return Path(os.path.expanduser(base)) / "config.json"


def registry_login(host: str, env: Mapping[str, str]) -> tuple[Login, str]:
    """How docker would log in to ``host``, and the helper's name where one keeps it."""
    path = docker_config_path(env)
    found = read_text(path, "docker's config")
    if found is None:
        return Login.NO_FILE, ""
    try:
        data = parse_json(found.text)
    except ValueError:
        raise UsageError(f"docker's config {path} is not JSON") from None
    if not isinstance(data, dict):
        raise UsageError(f"docker's config {path} is not a JSON object")
    remember(_logins(_table(data, "auths")))
    names = _DOCKER_HUB if host in _DOCKER_HUB else (host, f"https://{host}", f"http://{host}")
    helpers = _table(data, "credHelpers")
    for name in names:
        helper = helpers.get(name)
        if isinstance(helper, str):
            return Login.HELPER, helper
    auths = _table(data, "auths")
    for name in names:
        entry = auths.get(name)
        if isinstance(entry, dict) and (entry.get("auth") or entry.get("identitytoken")):
            return Login.AUTH, ""
        if isinstance(entry, dict) and isinstance(data.get("credsStore"), str):
            return Login.HELPER, data["credsStore"]
    return Login.NONE, ""


def _logins(auths: dict[str, object]) -> list[str]:
    """The secrets docker's login file holds (each ``auth``, the password in it, a token),
    read here and so kept out of whatever this run shows from now on."""
    found = []
    for entry in auths.values():
        entry = entry if isinstance(entry, dict) else {}
        found += [v for k, v in entry.items() if k in _SECRET_KEYS and isinstance(v, str)]
        auth = entry.get("auth")
        with contextlib.suppress(ValueError):  # not base64, or not text: nothing more in it
            found.append(base64.b64decode(auth if isinstance(auth, str) else "").decode())
            found.append(found[-1].partition(":")[2])
    return found


def _table(data: dict[str, object], key: str) -> dict[str, object]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}

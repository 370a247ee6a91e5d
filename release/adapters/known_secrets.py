"""The one redaction of what git, docker and skopeo said, before a terminal or a log gets
it: :func:`shown`, the pure rules of :mod:`release.core.redaction` with the secrets this
run knows.

Known: the values of :data:`~release.core.redaction.SECRET_ENV` in the environment (the
registry password CI hands to ``docker login``, with the ``user:password`` pair in the
base64 form a Basic header and docker's login file carry) and the credentials read from
docker's login file when it was read (:func:`remember`).

Where it is used: the process adapter (:mod:`.process`, which starts every process) puts a
tool's error output, every failure line and an echoed command through :func:`shown`, and
a log the tool wrote through :func:`redact_file`; what a tool wrote to its output stays as
it came, since it is read as data (a manifest's bytes are hashed). On the way out, the
console's lines, the nox sessions' log, a ``--json`` document (:func:`shown_document`) and
a build log's tail shown while it is written go through it again: whatever a line quotes
from a tool's output, it reaches no terminal or log with a secret in it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

from release.core.redaction import SECRET_ENV, redacted

__all__ = ["known", "redact_file", "remember", "shown", "shown_document"]

_USER_ENV = "RELEASE_REGISTRY_USER"  # the pipelines' REGISTRY_USER
_PASSWORD_ENV = SECRET_ENV[0]
_remembered: frozenset[str] = frozenset()  # replaced whole, so a reader needs no lock
_lock = threading.Lock()


def remember(values: Iterable[str]) -> None:
    """Secrets read in this run (a login's auth and password), redacted from now on."""
    global _remembered
    with _lock:
        _remembered = _remembered.union(v for v in values if v)


def _pair(env: Mapping[str, str]) -> list[str]:
    user, password = env.get(_USER_ENV), env.get(_PASSWORD_ENV)
    if not (user and password):
        return []
    import base64

    return [base64.b64encode(f"{user}:{password}".encode()).decode("ascii")]


def known(env: Mapping[str, str] | None = None) -> frozenset[str]:
    """Every secret value this run knows of (``env``: the environment, by default)."""
    env = os.environ if env is None else env
    found = [value for name in SECRET_ENV if (value := env.get(name))]
    return _remembered.union(found, _pair(env))


def shown(text: str) -> str:
    """``text`` as a terminal or a log may get it: every secret known or recognised
    replaced by ``***``."""
    return redacted(text, known()) if text else text


def shown_document(value: object) -> object:
    """A JSON document (``--json``) with every string in it :func:`shown`: the secrets
    known are read once for the whole document, which may hold thousands of strings."""
    secrets = known()

    def clean(item: object) -> object:
        if isinstance(item, str):
            return redacted(item, secrets)
        if isinstance(item, Mapping):
            return {key: clean(inner) for key, inner in item.items()}
        if isinstance(item, (list, tuple)):
            return [clean(inner) for inner in item]
        return item

    return clean(value)


def redact_file(path: Path) -> None:
    """A log a tool wrote straight into ``path``, with its secrets taken out (rewritten
    only where there was one to take out)."""
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return
    clean = shown(text)
    if clean != text:
        path.write_text(clean, encoding="utf-8", errors="surrogateescape")

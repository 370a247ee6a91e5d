"""A served engine as data: how to start it, the requests it must answer and how an answer
is judged, and the ``docker run`` options a configuration may give. Pure.

A ``serve`` smoke check and the snapshot round trip both start an image's server detached,
with its port published on 127.0.0.1 only, wait for the health path to answer 200, then
send requests. Each request says what its answer must be: a status, JSON fields (dotted
paths: ``choices.0.text``) and a regex on the body.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from math import inf

from release.core.json_text import parse_json
from release.errors import ConfigError

__all__ = [
    "Request",
    "Serving",
    "field_at",
    "judge",
    "parse_port",
    "parse_requests",
    "parse_run_options",
    "parse_serving",
    "parse_timeout",
    "refuse_unknown",
]

_METHODS = ("GET", "POST", "PUT", "DELETE", "HEAD")
_REQUEST_KEYS = ("path", "method", "body", "expect-status", "expect-json", "expect-output")


@dataclass(frozen=True)
class Request:
    """One HTTP request to the served engine and what its answer must be."""

    path: str
    method: str = "GET"
    body: object = None  # sent as JSON when not None (a TOML value: JSON's kinds)
    expect_status: int = 200
    expect_json: Mapping[str, object] = field(default_factory=dict)
    expect_output: str | None = None  # a regex the body must match

    @property
    def what(self) -> str:
        return f"{self.method} {self.path}"


@dataclass(frozen=True)
class Serving:
    """How an image serves: the command (empty: the image's own entrypoint and command),
    the port inside the container, the health path and how long start-up may take."""

    command: tuple[str, ...] = ()
    port: int = 8000
    health: str = "/health"
    startup_timeout: float = 60.0
    run_options: tuple[str, ...] = ()


_MISSING = object()


def field_at(document: object, dotted: str) -> object:
    """The value at ``a.b.0.c`` in a JSON document; a private marker when absent."""
    value = document
    for part in dotted.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def judge(request: Request, status: int, body: str) -> str | None:
    """Why the answer ``status``/``body`` is wrong for ``request``; None when it is right."""
    if status != request.expect_status:
        return f"{request.what}: status {status}, expected {request.expect_status}: {_short(body)}"
    if request.expect_json:
        try:
            document = parse_json(body)
        except ValueError:
            return f"{request.what}: the answer is not JSON: {_short(body)}"
        for path, expected in request.expect_json.items():
            found = field_at(document, path)
            if found is _MISSING:
                return f"{request.what}: no field {path} in {_short(body)}"
            if found != expected or isinstance(found, bool) != isinstance(expected, bool):
                return f"{request.what}: {path} is {found!r}, expected {expected!r}"
    if request.expect_output is not None and not re.search(request.expect_output, body):
        return (
            f"{request.what}: the answer does not match /{request.expect_output}/: {_short(body)}"
        )
    return None


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_port(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 65536:
        raise ConfigError(f"{where}: expected a port number (1-65535), got {value!r}")
    return value


def parse_serving(raw: Mapping[str, object], where: str, command: tuple[str, ...]) -> Serving:
    """The serving keys of a check or of the snapshot table (``port``, ``health``,
    ``startup-timeout``, ``run-options``), with the command already read."""
    return Serving(
        command=command,
        port=parse_port(raw.get("port", 8000), f"{where}.port"),
        health=_path(raw.get("health", "/health"), f"{where}.health"),
        startup_timeout=parse_timeout(raw.get("startup-timeout", 60.0), f"{where}.startup-timeout"),
        run_options=parse_run_options(raw.get("run-options"), f"{where}.run-options"),
    )


def _path(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.startswith("/") or any(c.isspace() for c in value):
        raise ConfigError(f'{where}: expected a path starting with "/", got {value!r}')
    return value


def refuse_unknown(table: Mapping[str, object], known: Sequence[str], where: str) -> None:
    """A configuration error naming the first key of ``table`` not in ``known``, with the
    closest known one when there is one."""
    for key in table:
        if key not in known:
            import difflib  # here: only a mistake needs a suggestion

            close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(known)}"
            raise ConfigError(f"{where}: unknown key {key!r}{hint}")


def _request(raw: object, where: str) -> Request:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected a table")
    refuse_unknown(raw, _REQUEST_KEYS, where)
    path = _path(raw.get("path"), f"{where}.path")
    body = raw.get("body")
    method = raw.get("method", "POST" if body is not None else "GET")
    if method not in _METHODS:
        raise ConfigError(f"{where}.method: expected one of {', '.join(_METHODS)}, got {method!r}")
    status = raw.get("expect-status", 200)
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise ConfigError(f"{where}.expect-status: expected an HTTP status, got {status!r}")
    expect_json = raw.get("expect-json", {})
    if not isinstance(expect_json, Mapping):
        raise ConfigError(f'{where}.expect-json: expected a table of "dotted.path" = value')
    regex = raw.get("expect-output")
    if regex is not None:
        if not isinstance(regex, str):
            raise ConfigError(f"{where}.expect-output: expected a regex string")
        try:
            re.compile(regex)
        except re.error as err:
            raise ConfigError(f"{where}.expect-output: bad regex {regex!r}: {err}") from None
    return Request(path, method, body, status, dict(expect_json), regex)


def parse_requests(raw: object, where: str, *, required: bool = False) -> tuple[Request, ...]:
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: expected a list of request tables")
    if required and not raw:
        raise ConfigError(f"{where}: expected at least one request")
    return tuple(_request(item, f"{where}[{index}]") for index, item in enumerate(raw))


def parse_timeout(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < inf:
        raise ConfigError(f"{where}: expected a positive number of seconds, got {value!r}")
    return float(value)


# docker run options a configuration may give, each with the form its value must have.
# What the tool itself decides (name, labels, detaching, the published port, the network,
# the entrypoint, removal) and host paths (volumes, mounts) are not among them: a check
# must mean the same on every machine.
_CAPABILITY = r"(?:ALL|(?:CAP_)?[A-Z][A-Z_]*)"
_VALUED = {
    "--cap-add": _CAPABILITY,
    "--cap-drop": _CAPABILITY,
    "--security-opt": r"(?:seccomp|apparmor|label)=\S+|no-new-privileges(?::(?:true|false))?",
    "--device": r"/dev/\S+",
    "--gpus": r"\S+",
    "--ulimit": r"[a-z]+=-?\d+(?::-?\d+)?",
    "--tmpfs": r"/\S*",
    "--shm-size": r"\d+[bkmg]?",
    "--ipc": r"private|shareable|none|host",
    "--env": r"[A-Za-z_][A-Za-z0-9_]*=.*",
    "--user": r"[A-Za-z0-9_.:-]+",
    "--sysctl": r"[a-z0-9_.]+=\S+",
    "--pids-limit": r"-?\d+",
    "--memory": r"\d+[bkmg]?",
    "--runtime": r"[A-Za-z0-9_.-]+",
}
_SHORT = {"-e": "--env", "-u": "--user", "-m": "--memory"}
_BARE = ("--init", "--read-only", "--privileged")
_OWNED = (
    "--rm", "-d", "--detach", "--name", "-p", "--publish", "-P", "--publish-all", "--network",
    "--net", "--entrypoint", "--label", "-l", "-v", "--volume", "--mount", "--volumes-from",
    "-i", "--interactive", "-t", "--tty", "--pull",
)  # fmt: skip


def parse_run_options(raw: object, where: str) -> tuple[str, ...]:
    """``docker run`` options as a list of strings (``"--cap-add", "SYS_ADMIN"`` or
    ``"--cap-add=SYS_ADMIN"``), checked one by one; returned as ``--flag=value`` strings."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
        raise ConfigError(f'{where}: expected a list of strings, e.g. ["--cap-add", "SYS_ADMIN"]')
    out: list[str] = []
    items = list(raw)
    while items:
        item = items.pop(0)
        flag, eq, value = item.partition("=")
        flag = _SHORT.get(flag, flag)
        if flag in _BARE and not eq:
            out.append(flag)
            continue
        if flag in _OWNED:
            raise ConfigError(
                f"{where}: {flag} is set by the tool itself (it names, labels, detaches and "
                "publishes the container; host paths would make a check depend on the machine)"
            )
        if flag not in _VALUED:
            raise ConfigError(
                f"{where}: {item!r} is not an option this list takes; known: "
                + ", ".join([*_VALUED, *_BARE])
            )
        if not eq:
            if not items:
                raise ConfigError(f"{where}: {flag} needs a value")
            value = items.pop(0)
        if not re.fullmatch(_VALUED[flag], value):
            raise ConfigError(f"{where}: {value!r} is not a value {flag} takes")
        out.append(f"{flag}={value}")
    return tuple(out)

"""Checks that serve: the ``serve`` smoke check and the snapshot round trip.

The configuration and the judging of answers are tested as data; the HTTP client against
a real server on loopback. With a Docker Engine: an engine of our own whose server
answers right, answers wrong, crashes at start or hangs, each a serve check, and Ctrl-C
or SIGTERM during one; the sample engine's real CRIU round trip, which passes with its
run options and fails without them, with a wrong expectation of the carried state, and
with CRIU 3.17.
"""

from __future__ import annotations

import dataclasses
import json
import re
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from release.adapters.config_file import load_config
from release.adapters.engine import ContainerEngine
from release.adapters.served import ServedContainer, ask, published_port
from release.core.matrix import parse_images
from release.core.serving import Request, judge, parse_requests, parse_run_options
from release.errors import ConfigError
from release.images.roundtrip import round_trip
from tests.conftest import CliResult
from tests.docker_support import containers, interrupt_when, managed_leftovers, purge
from tests.engine_support import (
    BASE_1291,
    NOTHING_LEFT,
    SERVER,
    Repo,
    check_lines,
    make_engine_repo,
    smoke_section,
)

images = pytest.mark.images
SAMPLE_ENGINE = Path(__file__).resolve().parents[2] / "release" / "sample" / "engine"

# -- configuration ----------------------------------------------------------------------------

VARIANT = {"id": "a", "cuda": "12.9.1", "base-image": BASE_1291}


def matrix_with(**tables: Any) -> Any:
    return parse_images({"name": "org/engine", "variants": [VARIANT], **tables})


def test_a_serve_check_as_configured() -> None:
    matrix = matrix_with(
        smoke={
            "checks": [
                {
                    "name": "serves",
                    "kind": "serve",
                    "command": ["engine", "serve"],
                    "port": 9000,
                    "startup-timeout": 5,
                    "run-options": ["--shm-size", "1g", "--cap-add=SYS_PTRACE"],
                    "requests": [
                        {"path": "/v1/completions", "body": {"prompt": "hi"}},
                        {"path": "/metrics", "expect-output": "^requests"},
                    ],
                }
            ]
        }
    )
    (check,) = matrix.smoke.checks
    assert check.kind == "serve" and check.command == ("engine", "serve")
    assert check.serving.port == 9000 and check.serving.startup_timeout == 5.0
    assert check.serving.run_options == ("--shm-size=1g", "--cap-add=SYS_PTRACE")
    post, get = check.requests
    assert (post.method, post.body, post.expect_status) == ("POST", {"prompt": "hi"}, 200)
    assert (get.method, get.body, get.expect_output) == ("GET", None, "^requests")


SERVE = {"name": "s", "kind": "serve", "requests": [{"path": "/health"}]}


@pytest.mark.parametrize(
    ("check", "message"),
    [
        ({**SERVE, "requests": []}, "checks[0].requests: expected at least one request"),
        ({**SERVE, "requests": [{"path": "health"}]}, 'path: expected a path starting with "/"'),
        ({**SERVE, "requests": [{"path": "/", "expect-status": 42}]}, "expected an HTTP status"),
        ({**SERVE, "requests": [{"path": "/", "expect-output": "("}]}, "bad regex '('"),
        ({**SERVE, "requests": [{"path": "/", "expect": 1}]}, "unknown key 'expect'"),
        ({**SERVE, "requests": [{"path": "/", "method": "FETCH"}]}, "expected one of GET"),
        ({**SERVE, "kind": "probe"}, "kind: expected one of command, serve, got 'probe'"),
        ({**SERVE, "expect-exit": 0}, "a serve check says what it expects per request"),
        ({**SERVE, "port": 70000}, "port: expected a port number (1-65535), got 70000"),
        ({"name": "c", "command": ["true"], "port": 8000}, 'only a kind = "serve" check takes it'),
    ],
)
def test_bad_serve_checks_are_refused_on_load(check: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        matrix_with(smoke={"checks": [check]})
    assert message in str(caught.value)
    assert str(caught.value).startswith("[tool.release.images] smoke.checks[0]")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["-p", "8000:8000"], "-p is set by the tool itself"),
        (["--network=host"], "--network is set by the tool itself"),
        (["--volume", "/:/host"], "--volume is set by the tool itself"),
        (["--cap-add"], "--cap-add needs a value"),
        (["--cap-add", "sys admin"], "'sys admin' is not a value --cap-add takes"),
        (["--security-opt", "seccomp"], "'seccomp' is not a value --security-opt takes"),
        (["--frobnicate"], "'--frobnicate' is not an option this list takes"),
        ("--cap-add SYS_ADMIN", "expected a list of strings"),
    ],
)
def test_run_options_are_validated(options: Any, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_run_options(options, "where")
    assert message in str(caught.value)


def test_run_options_in_either_spelling() -> None:
    given = ["--cap-add", "SYS_ADMIN", "--security-opt=seccomp=unconfined", "-e", "A=b", "--init"]
    assert parse_run_options(given, "w") == (
        "--cap-add=SYS_ADMIN",
        "--security-opt=seccomp=unconfined",
        "--env=A=b",
        "--init",
    )


def test_the_snapshot_table_names_its_round_trip() -> None:
    with pytest.raises(ConfigError) as caught:
        matrix_with(snapshot={"cuda": "!=12.*", "command": ["snapshot-runtime", "roundtrip"]})
    assert "snapshot.command: replaced by runtime" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        matrix_with(snapshot={"cuda": "!=12.*", "warm": [{"path": "/"}]})
    assert "snapshot.warm: needs runtime" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        matrix_with(snapshot={"cuda": "!=12.*", "runtime": ["rt"], "run-options": ["-v", "/x"]})
    assert "snapshot.run-options: -v is set by the tool itself" in str(caught.value)


def test_the_sample_configures_a_serve_check_and_a_real_round_trip() -> None:
    matrix = load_config(SAMPLE_ENGINE).matrix
    assert matrix is not None and matrix.snapshot is not None
    assert [c.kind for c in matrix.smoke.checks] == ["serve"]
    rule = matrix.snapshot
    assert rule.runtime == ("snapshot-runtime",)
    assert set(rule.serving.run_options) == {
        "--cap-add=SYS_ADMIN",
        "--cap-add=SYS_PTRACE",
        "--cap-add=NET_ADMIN",
        "--cap-add=SYS_TIME",
        "--security-opt=seccomp=unconfined",
        "--security-opt=apparmor=unconfined",
    }
    # the carried state is what the warm requests leave: one completion each
    health = next(r for r in rule.carried if r.path == "/health")
    assert health.expect_json["requests"] == len(rule.warm) > 0


# -- judging answers ---------------------------------------------------------------------------

COMPLETION = Request(
    "/v1/completions",
    "POST",
    {"prompt": "a b"},
    expect_json={"choices.0.text": "b a", "usage.total_tokens": 4},
)
ANSWER = json.dumps({"choices": [{"text": "b a"}], "usage": {"total_tokens": 4}})


@pytest.mark.parametrize(
    ("request_", "status", "body", "why"),
    [
        (COMPLETION, 200, ANSWER, None),
        (COMPLETION, 500, "boom", "POST /v1/completions: status 500, expected 200: boom"),
        (COMPLETION, 200, "<html>", "POST /v1/completions: the answer is not JSON: <html>"),
        (
            COMPLETION,
            200,
            ANSWER.replace("b a", "a b"),
            "POST /v1/completions: choices.0.text is 'a b', expected 'b a'",
        ),
        (COMPLETION, 200, '{"choices": []}', "POST /v1/completions: no field choices.0.text in"),
        (Request("/h", expect_json={"warm": True}), 200, '{"warm": 1}', "warm is 1, expected True"),
        (Request("/h", expect_json={"n": 1}), 200, '{"n": true}', "n is True, expected 1"),
        (Request("/m", expect_output="^ok$"), 200, "ok", None),
        (Request("/m", expect_output="^ok$"), 200, "not ok", "does not match /^ok$/: not ok"),
        (Request("/gone", expect_status=404), 404, "", None),
    ],
)
def test_judge(request_: Request, status: int, body: str, why: str | None) -> None:
    said = judge(request_, status, body)
    if why is None:
        assert said is None
    else:
        assert said is not None and why in said


@pytest.fixture
def server_port() -> Iterator[int]:
    """The sample engine's server on a free port of 127.0.0.1."""
    sys.path.insert(0, str(SAMPLE_ENGINE))
    try:
        from tinyengine.server import make_server
    finally:
        sys.path.remove(str(SAMPLE_ENGINE))
    server = make_server("127.0.0.1", 0)
    # shutdown() waits for the loop's next poll: a short one ends the test sooner
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_ask_on_loopback(server_port: int) -> None:
    body = {"prompt": "one two three", "max_tokens": 2}
    answer = ask(server_port, "/v1/completions", method="POST", body=body, timeout=5)
    assert answer.status == 200
    request = parse_requests(
        [{"path": "/v1/completions", "expect-json": {"choices.0.text": "three two"}}], "w"
    )[0]
    assert judge(request, answer.status, answer.body) is None
    missing = ask(server_port, "/nowhere", timeout=5)
    assert missing.status == 404 and "no route /nowhere" in missing.body
    health = json.loads(ask(server_port, "/health", timeout=5).body)
    assert health == {"status": "ok", "warm": True, "requests": 1}


def test_ask_a_closed_port_says_so(server_port: int) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    answer = ask(closed, "/health", timeout=2)
    assert answer.status == 0 and "refused" in answer.error.lower()


# -- serve checks in an image --------------------------------------------------------------------


SERVING_DOCKERFILE = """\
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG NONCE=0
COPY serve.py /srv/serve.py
RUN echo "nonce ${NONCE}" > /nonce
"""


def serve_check(mode: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": f"serves ({mode})",
        "kind": "serve",
        "command": ["python3", "/srv/serve.py", mode],
        "startup-timeout": 20,
        "requests": [
            {"path": "/v1/completions", "body": {"prompt": "one two three"},
             "expect-json": {"choices.0.text": "three two"}},
        ],
        **extra,
    }  # fmt: skip


def serving_repo(root: Path, home: Path, checks: list[dict[str, Any]]) -> Repo:
    return make_engine_repo(
        root,
        home,
        variants=[{"id": "a", "cuda": "12.9.1", "base-image": BASE_1291}],
        checks=checks,
        default="a",
        files={"docker/Dockerfile": SERVING_DOCKERFILE, "serve.py": SERVER},
    )


@pytest.fixture(scope="module")
def serving(
    docker: ContainerEngine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Repo, CliResult]]:
    """An engine with four serve checks: right, wrong answer, crash at start, hang; smoked once."""
    repo = serving_repo(
        tmp_path_factory.mktemp("serving") / "engine",
        tmp_path_factory.mktemp("home"),
        [
            serve_check("ok"),
            serve_check("wrong"),
            serve_check("crash"),
            serve_check("hang", **{"startup-timeout": 3}),
        ],
    )
    try:
        built = repo.release("images.build")
        assert built.code == 0, built.output
        yield repo, repo.release("images.smoke")
    finally:
        purge(docker, repo.name, repo.head)


def log_lines(output: str, check: str) -> list[str]:
    """The log lines shown under one check's result."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if f" {check} (" in line)
    shown = []
    for line in lines[start + 1 :]:
        if not line.startswith("            "):
            break
        shown.append(line.strip())
    return shown


@images
def test_a_serving_image_passes(serving: tuple[Repo, CliResult]) -> None:
    _, result = serving
    assert "serves (ok)" in check_lines(result.stdout, "passed")
    assert log_lines(result.stdout, "serves (ok)") == []


@images
def test_a_wrong_answer_fails_showing_the_log(serving: tuple[Repo, CliResult]) -> None:
    _, result = serving
    assert result.code == 1, result.output
    assert re.search(
        r"^  failed +serves \(wrong\) \(.*\) - POST /v1/completions: "
        r"choices\.0\.text is 'two three', expected 'three two'$",
        result.stdout,
        re.MULTILINE,
    ), result.stdout
    shown = log_lines(result.stdout, "serves (wrong)")
    assert shown[0] == "its last log lines:"
    assert "| loading weights for wrong" in shown
    assert any('"POST /v1/completions HTTP/1.1" 200' in line for line in shown)


@images
def test_a_crash_at_start_fails_showing_the_log(serving: tuple[Repo, CliResult]) -> None:
    _, result = serving
    assert re.search(
        r"^  failed +serves \(crash\) \(.*\) - the container stopped \(exit code 3\) "
        r"before /health answered$",
        result.stdout,
        re.MULTILINE,
    ), result.stdout
    shown = log_lines(result.stdout, "serves (crash)")
    assert "| CUDA error: out of memory" in shown and "| loading weights for crash" in shown


@images
def test_a_container_stopped_before_its_port_is_read_is_a_stop_not_a_missing_port(
    serving: tuple[Repo, CliResult], docker: ContainerEngine
) -> None:
    """A server that dies at once can be gone before ``docker port`` is asked: a stopped
    container publishes nothing, and the check must say it stopped, with its exit code."""
    repo, _ = serving
    name, identity = docker.new_container()
    try:
        docker.run(
            ["run", "--detach", *identity, "--publish", "127.0.0.1::8000", "--pull", "never",
             f"{repo.name}:v0.1.0", "python3", "-c", "import sys; sys.exit(3)"],
            timeout=120,
        )  # fmt: skip
        docker.run(["wait", name], timeout=120)
        port = published_port(docker, name, 8000)
        answer, why = ServedContainer(docker, name, port).wait_healthy(
            "/health", deadline=time.monotonic() + 5
        )
    finally:
        docker.remove_container(name)
    assert port == 0
    assert answer is None and why == "the container stopped (exit code 3) before /health answered"


@images
def test_a_hang_times_out_showing_the_log(serving: tuple[Repo, CliResult]) -> None:
    _, result = serving
    match = re.search(
        r"^  timed out serves \(hang\) \((\d+\.\d)s\) - not healthy in time \(last: .+\)$",
        result.stdout,
        re.MULTILINE,
    )
    assert match and 2.5 <= float(match[1]) < 15, result.stdout
    assert "| loading weights for hang" in log_lines(result.stdout, "serves (hang)")
    section = smoke_section(result.stdout, "a")
    assert section.endswith("smoke(a): FAILED: 4 passed, 2 failed, 1 timed out, 1 not run")


@images
def test_serve_checks_leave_no_container(
    serving: tuple[Repo, CliResult], docker: ContainerEngine
) -> None:
    repo, _ = serving
    record = json.loads((repo.state / "smoke" / "0.1.0" / "a.json").read_text())
    checks = {c["name"]: c for c in record["checks"]}
    assert checks["serves (crash)"]["status"] == "failed"
    assert "CUDA error: out of memory" in checks["serves (crash)"]["log"]
    assert containers(docker, f"ancestor={repo.name}:v0.1.0") == []
    assert managed_leftovers(docker, repo.head) == NOTHING_LEFT


STOPS = [
    pytest.param(signal.SIGINT, True, 130, id="ctrl-c"),
    pytest.param(signal.SIGTERM, False, 143, id="sigterm"),
]


@pytest.fixture(scope="module")
def waiting(docker: ContainerEngine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Repo]:
    """An engine whose serve check waits minutes for a server that never comes up."""
    repo = serving_repo(
        tmp_path_factory.mktemp("waiting") / "engine",
        tmp_path_factory.mktemp("home"),
        [serve_check("hang", **{"startup-timeout": 300, "timeout": 300})],
    )
    try:
        built = repo.release("images.build")
        assert built.code == 0, built.output
        yield repo
    finally:
        purge(docker, repo.name, repo.head)


@images
@pytest.mark.parametrize(("sig", "group", "code"), STOPS)
def test_stopped_during_a_serve_check_leaves_no_container(
    waiting: Repo, docker: ContainerEngine, sig: int, group: bool, code: int
) -> None:
    tag = f"{waiting.name}:v0.1.0"

    def serving_now(_output: str) -> bool:
        running = docker.run(
            ["ps", "--no-trunc", "--format", "{{.Command}}", "--filter", f"ancestor={tag}"]
        ).stdout
        return "/srv/serve.py hang" in running

    stopped = interrupt_when(
        [sys.executable, "-m", "release", "images.smoke"],
        waiting.root,
        waiting.env,
        serving_now,
        sig=sig,
        group=group,
    )
    assert stopped.code == code, stopped.output
    assert stopped.seconds < 30  # not the 300 s the check would wait
    assert containers(docker, f"ancestor={tag}") == []
    assert managed_leftovers(docker, waiting.head) == NOTHING_LEFT


# -- the snapshot round trip ------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_cu130(
    docker: ContainerEngine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Repo, CliResult]]:
    """The sample engine's cu130 image (with CRIU 4.2), built, and its snapshot session run."""
    from tests.engine_support import sample_repo

    repo = sample_repo(tmp_path_factory)
    try:
        built = repo.release("images.build", "--variant", "cu130", timeout=900)
        assert built.code == 0, built.output
        yield repo, repo.release("images.snapshot")
    finally:
        purge(docker, repo.name, repo.head)


def sample_rule(repo: Repo) -> Any:
    matrix = load_config(repo.root).matrix
    assert matrix is not None and matrix.snapshot is not None
    return matrix.snapshot


def trip(docker: ContainerEngine, image: str, rule: Any) -> Any:
    return round_trip(
        docker,
        image,
        rule,
        default_command=["python3", "-m", "tinyengine.server"],
        labels={"org.release.snapshot": "test"},
    )


@images
def test_the_round_trip_carries_the_state_into_a_fresh_container(
    sample_cu130: tuple[Repo, CliResult], docker: ContainerEngine
) -> None:
    repo, result = sample_cu130
    assert result.code == 0, result.output
    assert re.search(
        r"checkpoint/restore round trip: passed - restored into a fresh container and "
        r"answered; 2 check\(s\) of the carried state passed; cold start \d+ ms, dump \d+ ms, "
        r"restore \d+ ms, first answer \d+ ms$",
        result.stdout,
        re.MULTILINE,
    ), result.stdout
    record = json.loads((repo.state / "snapshots" / "0.1.0rc1" / "cu130.json").read_text())
    runtime = record["snapshot_runtime"]
    assert runtime["passed"] is True and runtime["runtime"] == ["snapshot-runtime"]
    assert "--cap-add=SYS_ADMIN" in runtime["run_options"]
    figures = runtime["figures"]
    assert set(figures) == {"cold_start_s", "dump_s", "restore_s", "first_answer_s"}
    assert all(0 < value < 60 for value in figures.values())
    assert record["state"]["snapshot_runtime"]["criu"] == "Version: 4.2.1"
    part = repo.state / "manifest" / "0.1.0rc1" / "cu130.snapshot.json"
    assert json.loads(part.read_text())["data"]["record"]["snapshot_runtime"]["figures"] == figures
    assert managed_leftovers(docker, repo.head) == NOTHING_LEFT


@images
def test_the_round_trip_fails_without_its_run_options(
    sample_cu130: tuple[Repo, CliResult], docker: ContainerEngine
) -> None:
    repo, _ = sample_cu130
    rule = sample_rule(repo)
    bare = dataclasses.replace(rule, serving=dataclasses.replace(rule.serving, run_options=()))
    result = trip(docker, f"{repo.name}:v0.1.0rc1", bare)
    assert not result.passed
    assert result.reason.startswith("the checkpoint failed: snapshot-runtime: criu dump failed")
    assert any("criu check:" in line and "CAP_SYS_ADMIN" in line for line in result.log)
    assert "dump_s" not in result.figures and "cold_start_s" in result.figures
    assert managed_leftovers(docker, repo.head) == NOTHING_LEFT


@images
def test_the_round_trip_fails_when_the_state_is_not_what_was_carried(
    sample_cu130: tuple[Repo, CliResult], docker: ContainerEngine
) -> None:
    repo, _ = sample_cu130
    rule = sample_rule(repo)
    expects_more = parse_requests(
        [{"path": "/health", "expect-json": {"requests": len(rule.warm) + 5}}], "w"
    )
    result = trip(docker, f"{repo.name}:v0.1.0rc1", dataclasses.replace(rule, carried=expects_more))
    assert not result.passed
    assert (
        result.reason == f"GET /health: requests is {len(rule.warm)}, expected {len(rule.warm) + 5}"
    )
    assert set(result.figures) == {"cold_start_s", "dump_s", "restore_s", "first_answer_s"}


@images
def test_the_round_trip_fails_with_criu_3_17(
    sample_cu130: tuple[Repo, CliResult], docker: ContainerEngine, tmp_path: Path
) -> None:
    repo, _ = sample_cu130
    iid = tmp_path / "iid"
    built = docker.build(
        context=repo.root,
        dockerfile=repo.root / "docker" / "Dockerfile",
        build_args={
            "BASE_IMAGE": "nvidia/cuda:13.0.1-base-ubuntu24.04",
            "CUDA_VERSION": "13.0.1",
            "INSTALL_SNAPSHOT_RUNTIME": "1",
            "CRIU_SUITE": "bookworm",
        },
        labels={"org.release.managed": "true"},
        iidfile=iid,
        platform=None,
        log=tmp_path / "build.log",
        timeout=600,
    )
    assert built.ok, (tmp_path / "build.log").read_text()[-2000:]
    image = iid.read_text().strip()
    try:
        version = docker.run(["run", "--rm", "--entrypoint", "criu", image, "--version"]).stdout
        assert "Version: 3.17" in version
        result = trip(docker, image, sample_rule(repo))
        assert not result.passed, result
        assert result.reason.startswith("the checkpoint failed: snapshot-runtime: criu dump failed")
        assert any(line.startswith("criu check:") for line in result.log)
    finally:
        docker.remove_image(image)


def test_the_manual_s_image_configuration_is_valid() -> None:
    """The manual's [tool.release.images] example (serve check, round trip), on its page
    about images, loads as shown."""
    import tomllib

    page = SAMPLE_ENGINE.parents[2] / "docs" / "explanation" / "images.md"
    block = re.search(
        r"```toml\n(\[tool\.release\.images\]\n.*?)```", page.read_text(encoding="utf-8"), re.DOTALL
    )
    assert block is not None
    table = tomllib.loads(block[1])["tool"]["release"]["images"]
    table["default-variant"] = table["variants"][0]["id"]  # the example shows one variant
    matrix = parse_images(table)
    assert matrix is not None and matrix.snapshot is not None
    serve = next(c for c in matrix.smoke.checks if c.kind == "serve")
    assert serve.gpu and serve.requests[-1].method == "POST"
    assert matrix.snapshot.runtime and matrix.snapshot.warm and matrix.snapshot.carried


@images
def test_every_check_of_the_sample_s_smoke_can_fail(
    sample_cu130: tuple[Repo, CliResult], docker: ContainerEngine, tmp_path: Path
) -> None:
    """The sample's own checks, made for another version, revision, variant and entrypoint
    than the cu130 image has: each one fails (the GPU check is not run without a GPU)."""
    from release.images.serve_check import run_serve_check
    from release.images.smoke import run_check
    from release.images.smoke_checks import CheckStatus, smoke_checks
    from release.images.source import BuildSource

    repo, _ = sample_cu130
    matrix = load_config(repo.root).matrix
    assert matrix is not None
    image = docker.image_id(f"{repo.name}:v0.1.0rc1")
    assert image is not None
    wrong = BuildSource(repo.root, "0" * 40, 1_764_000_000, "9.9.9", True)
    serve = matrix.smoke.checks[0]
    assert serve.kind == "serve" and serve.serving is not None
    wrong_answer = dataclasses.replace(
        serve,
        requests=parse_requests(
            [
                {
                    "path": "/v1/completions",
                    "body": {"prompt": "a b"},
                    "expect-json": {"choices.0.text": "a b"},
                }
            ],
            "w",
        ),
    )
    matrix = dataclasses.replace(
        matrix, smoke=dataclasses.replace(matrix.smoke, checks=(wrong_answer,))
    )
    checks = smoke_checks(
        matrix, matrix.variant("cu129"), wrong, ("python3", "-m", "tinyengine.not_a_module")
    )
    results = {}
    for check in checks:
        if check.gpu:
            continue
        if check.serve is not None:
            results[check.name] = run_serve_check(docker, image, check.serve)
        else:
            results[check.name] = run_check(docker, image, check, tmp_path)
    assert list(results) == [
        "tinyengine imports and reports 9.9.9",
        "CUDA_VERSION is 12.9.1",
        "/usr/local/cuda/version.json says 12.9.1",
        "labels: version, revision, variant, CUDA",
        "entrypoint answers --help",
        "serves a completion",
    ]
    assert {name: r.status for name, r in results.items()} == dict.fromkeys(
        results, CheckStatus.FAILED
    ), {name: r.detail for name, r in results.items()}
    assert containers(docker, f"ancestor={image}") == []

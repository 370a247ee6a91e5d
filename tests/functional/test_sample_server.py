"""The sample engine serves: its toy OpenAI-shaped server answers /health, /v1/models and
/v1/completions on loopback, deterministically, and counts what it served (the state a
snapshot should carry). Also as the story's history leaves it, with ``--port`` (#59004)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from release.sample.story import BEFORE_CUT

SERVER = Path(__file__).resolve().parents[2] / "release/sample/engine/tinyengine/server.py"


def load(text: str, tmp_path: Path) -> ModuleType:
    path = tmp_path / "server.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("tinyengine_server_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def call(base: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


@pytest.fixture
def server_url(tmp_path: Path) -> Iterator[str]:
    module = load(SERVER.read_text(encoding="utf-8"), tmp_path)
    server = module.make_server("127.0.0.1", 0)
    # shutdown() waits for the loop's next poll: a short one ends the test sooner
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_it_answers_health_models_and_completions_and_counts_them(server_url: str) -> None:
    assert call(server_url, "/health") == (200, {"status": "ok", "warm": False, "requests": 0})
    status, models = call(server_url, "/v1/models")
    assert status == 200 and [m["id"] for m in models["data"]] == ["tinyengine/toy-1"]
    prompt = {"model": "tinyengine/toy-1", "prompt": "one two three four", "max_tokens": 3}
    status, done = call(server_url, "/v1/completions", prompt)
    assert status == 200
    assert done["choices"][0]["text"] == "four three two"
    assert done["choices"][0]["finish_reason"] == "length"
    assert done["usage"] == {"prompt_tokens": 4, "completion_tokens": 3, "total_tokens": 7}
    assert call(server_url, "/v1/completions", prompt)[1]["choices"] == done["choices"]  # the same
    assert call(server_url, "/health")[1] == {"status": "ok", "warm": True, "requests": 2}


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"max_tokens": 3}, 400, "bad request"),
        ({"prompt": 7}, 400, "bad request"),
        ({"prompt": "a b", "model": "other"}, 404, "no model 'other'"),
    ],
)
def test_a_bad_request_gets_an_error_and_is_not_counted(
    server_url: str, body: dict[str, Any], status: int, says: str
) -> None:
    got, answer = call(server_url, "/v1/completions", body)
    assert got == status and says in answer["error"]["message"]
    assert call(server_url, "/nowhere")[0] == 404
    assert call(server_url, "/health")[1]["requests"] == 0


def test_the_storys_server_takes_a_port_and_serves_on_it(tmp_path: Path) -> None:
    """#59004 puts --port in; the server then binds where it is told (0: a free port)."""
    text = SERVER.read_text(encoding="utf-8")
    port_change = next(c for c in BEFORE_CUT if "--port" in c.subject)
    edit = port_change.files["tinyengine/server.py"]
    assert callable(edit)
    edited = edit(text)
    assert edited != text
    (tmp_path / "tinyengine").mkdir()
    (tmp_path / "tinyengine" / "__init__.py").write_text("")
    (tmp_path / "tinyengine" / "server.py").write_text(edited, encoding="utf-8")
    argv = [sys.executable, "-m", "tinyengine.server", "--host", "127.0.0.1", "--port", "0"]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # printed once bound
        assert line.startswith("tinyengine serving tinyengine/toy-1 on http://127.0.0.1:")
        base = line.split(" on ")[1].strip()
        assert call(base, "/health")[0] == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)

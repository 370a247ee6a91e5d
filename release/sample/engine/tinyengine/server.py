"""A toy OpenAI-shaped server (standard library only): ``/health``, ``/v1/models`` and
``/v1/completions``.

The model is deterministic: a completion is the prompt's words in reverse order, cut at
``max_tokens`` words. The server counts the completions it has served and is *warm* once
it has served one: state a snapshot of the process should carry across a restore.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "tinyengine/toy-1"


class Engine:
    """The served model and the state a snapshot carries."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests = 0
        self.warm = False

    def complete(self, prompt, max_tokens):
        words = prompt.split()[::-1]
        text = " ".join(words[:max_tokens])
        with self.lock:
            self.requests += 1
            self.warm = True
            served = self.requests
        return {
            "id": f"cmpl-{served}",
            "object": "text_completion",
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "text": text,
                    "finish_reason": "length" if len(words) > max_tokens else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": len(words),
                "completion_tokens": min(len(words), max_tokens),
                "total_tokens": len(words) + min(len(words), max_tokens),
            },
        }

    def health(self):
        with self.lock:
            return {"status": "ok", "warm": self.warm, "requests": self.requests}


def _handler(engine):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format, *args):  # one line per request, on stderr
            sys.stderr.write("tinyengine: " + (format % args) + "\n")

        def _send(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status, message):
            self._send(status, {"error": {"message": message, "code": status}})

        def do_GET(self):
            if self.path == "/health":
                self._send(200, engine.health())
            elif self.path == "/v1/models":
                model = {"id": MODEL, "object": "model", "owned_by": "tinyengine"}
                self._send(200, {"object": "list", "data": [model]})
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self):
            if self.path != "/v1/completions":
                return self._error(404, f"no route {self.path}")
            try:
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                prompt = request["prompt"]
                max_tokens = int(request.get("max_tokens", 16))
                if not isinstance(prompt, str) or max_tokens < 0:
                    raise ValueError("prompt must be a string, max_tokens >= 0")
            except (KeyError, ValueError, TypeError) as err:
                return self._error(400, f"bad request: {err}")
            if request.get("model", MODEL) != MODEL:
                return self._error(404, f"no model {request['model']!r} (serving {MODEL})")
            self._send(200, engine.complete(prompt, max_tokens))

    return Handler


def make_server(host, port, engine=None):
    """The server bound to ``host:port`` (port 0: any free one), not yet serving."""
    return ThreadingHTTPServer((host, port), _handler(engine or Engine()))


def main(argv=None):
    port = 8000
    args = sys.argv[1:] if argv is None else argv
    if "--help" in args or "-h" in args:
        print("usage: python -m tinyengine.server [--host HOST] [--port PORT] [--help]")
        return 0
    host = args[args.index("--host") + 1] if "--host" in args[:-1] else "0.0.0.0"
    server = make_server(host, port)
    print(f"tinyengine serving {MODEL} on http://{host}:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

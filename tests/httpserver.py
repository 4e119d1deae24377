"""A real HTTP server on loopback that answers from a script: replies, delays, broken bodies."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep test output clean
        pass

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        server: ScriptedServer = self.server.owner
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw
        server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
        action = server.actions.pop(0) if server.actions else server.default
        self._act(action, body)

    do_GET = do_POST

    def _act(self, action, body=None):
        if callable(action):
            action = action(self.path, body)
        kind = action[0]
        if kind == "sleep":
            time.sleep(action[1])
            return self._act(action[2], body) if len(action) > 2 else None
        if kind == "dribble":  # headers, then one byte every `interval` seconds, `count` times
            _kind, interval, count = action
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(count))
            self.end_headers()
            try:
                for _ in range(count):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(interval)
            except OSError:  # the client gave up
                pass
            self.close_connection = True
            return None
        if kind == "reset":  # promise a long body, send a little, then drop the connection
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "5000")
            self.end_headers()
            self.wfile.write(b'{"choices": [')
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return None
        status, payload, headers = action[1], action[2], (action[3] if len(action) > 3 else {})
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        return None


class ScriptedServer:
    """Start with `with ScriptedServer() as s:`; queue replies in `s.actions`; read `s.requests`."""

    def __init__(self):
        self.actions: list = []
        self.default = ("reply", 500, {"error": "no scripted reply"})
        self.requests: list[dict] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def dead_port_url() -> str:
    """A loopback URL where nothing listens: connections are refused."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"

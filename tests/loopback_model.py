"""Tiny real HTTP servers on 127.0.0.1 for tests that talk to an OpenAI-shaped model."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def start(handler) -> tuple[ThreadingHTTPServer, str]:
    """Serve `handler` on a free loopback port in a daemon thread; (the server, its /v1 base URL)."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/v1"


def servers(make, serve):
    """A fixture body: yields start(*args) -> (state, url), where state = make(*args) and serve(state)
    gives (server, url); every server started is shut down afterwards."""
    running = []

    def begin(*args):
        state = make(*args)
        httpd, url = serve(state)
        running.append(httpd)
        return state, url

    yield begin
    for httpd in running:
        httpd.shutdown()
        httpd.server_close()


class StreamHandler(BaseHTTPRequestHandler):
    """A quiet request handler that answers with a chunked server-sent-event stream, as the
    OpenAI-shaped API streams a completion: `begin_stream()`, then one `_chunk(payload)` per event."""

    def log_message(self, *a) -> None:  # quiet
        pass

    def begin_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, payload: dict | str) -> None:
        data = f"data: {payload if isinstance(payload, str) else json.dumps(payload)}\n\n".encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

"""A JSON endpoint on a free local port, in a thread of the test's process: what the
tests of a served model (a `/rerank` endpoint, a chat-completions endpoint) talk to
over real HTTP."""

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# A handler's answer to one request's JSON body: its status and its body (bytes as
# they are; anything else as JSON).
Answer = Callable[[dict[str, Any]], tuple[int, Any]]


@contextmanager
def json_server(answer: Answer) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A server on a free local port, answering with `answer`; yields its
    base URL and the bodies it was sent."""
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length))
            received.append({"path": self.path, **body})
            status, payload = answer(body)
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (a test of its deadline)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join()

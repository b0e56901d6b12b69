"""What the scripted provider servers (tests/openai_server.py, tests/anthropic_server.py) share:
an HTTP server on a free 127.0.0.1 port, a queue of scripted replies answered in order, a log of
every request (and of the refused ones' reasons), and a stop on `close()`, on leaving the `with`
block, or by itself after `lifetime` seconds. Each server brings its own request handler."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

RequestT = TypeVar("RequestT")
ReplyT = TypeVar("ReplyT")


@dataclass
class ScriptedServer(Generic[RequestT, ReplyT]):
    """The server's lifetime, script and request log; subclasses supply `handler()`."""

    lifetime: float = 300.0
    requests: list[RequestT] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    _script: deque[ReplyT] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _closing: threading.Event = field(default_factory=threading.Event)
    _server: ThreadingHTTPServer | None = None
    _timer: threading.Timer = field(init=False)

    def __post_init__(self) -> None:
        server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        server.daemon_threads = True
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self._timer = threading.Timer(self.lifetime, self.close)
        self._timer.daemon = True
        self._timer.start()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """The request handler class, answering for this server."""
        raise NotImplementedError

    @property
    def address(self) -> str:
        """http://127.0.0.1:<port>, where the server listens."""
        assert self._server is not None, "the server is closed"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def script(self, *replies: ReplyT) -> None:
        """Queue replies, answered in order."""
        with self._lock:
            self._script.extend(replies)

    @property
    def unanswered(self) -> list[ReplyT]:
        """Scripted replies not asked for yet."""
        with self._lock:
            return list(self._script)

    def take(self, request: RequestT) -> ReplyT | None:
        """Log the request and hand out the next scripted reply (None with the script used up)."""
        with self._lock:
            self.requests.append(request)
            return self._script.popleft() if self._script else None

    def refuse(self, request: RequestT, why: str) -> None:
        """Log a request that is refused, and why."""
        with self._lock:
            self.requests.append(request)
            self.refused.append(why)

    def close(self) -> None:
        """Stop listening and release any hanging request."""
        self._closing.set()
        self._timer.cancel()
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class JSONHandler(BaseHTTPRequestHandler):
    """A quiet handler that reads JSON request bodies and answers JSON."""

    def log_message(self, format: str, *args: Any) -> None:
        return

    def read_json(self) -> dict[str, Any]:
        """The request's JSON body ({} when it has none)."""
        size = int(self.headers.get("Content-Length") or 0)
        body: dict[str, Any] = json.loads(self.rfile.read(size) or b"{}")
        return body

    def send_json(
        self, status: int, payload: dict[str, Any], headers: Mapping[str, str] | None = None
    ) -> None:
        """Answer with this status and JSON payload, and these extra headers."""
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def start_events(self) -> None:
        """Begin a server-sent event stream."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()

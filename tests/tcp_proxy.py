"""A loopback TCP proxy in front of the test database, which a test can stop, hang and restart.

`stop()` is a stopped server: the listening port closes and every open connection is cut.
`hang()` is a server that accepts connections and never answers (a stuck host). `start()`
forwards again on the same port.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType
from typing import Self
from urllib.parse import urlsplit, urlunsplit


class TcpProxy:
    """Forwards 127.0.0.1:<port> to the host and port of `url`; `proxied_url` points here."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.target = (parts.hostname or "127.0.0.1", parts.port or 5432)
        self._url = parts
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._forward = True
        self.port = 0
        self.start()

    @property
    def proxied_url(self) -> str:
        """The database URL, through this proxy."""
        user = self._url.netloc.rsplit("@", 1)[0] + "@" if "@" in self._url.netloc else ""
        return urlunsplit(self._url._replace(netloc=f"{user}127.0.0.1:{self.port}"))

    def start(self) -> None:
        """Listen (on the same port as before) and forward every connection."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._forward = True
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        """Close the port and cut every open connection, as a stopped server does."""
        if self._listener is not None:
            _close(self._listener)
            self._listener = None
        self._cut()

    def hang(self) -> None:
        """Cut open connections; accept new ones but never answer them."""
        self._forward = False
        self._cut()

    def close(self) -> None:
        """Stop for good."""
        self.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _cut(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            _close(sock)

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.add(sock)

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            self._track(client)
            if not self._forward:
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                _close(client)
                continue
            upstream.settimeout(None)
            self._track(upstream)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(source, sink), daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    _close(source)
    _close(sink)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()

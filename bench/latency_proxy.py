"""A TCP proxy that delays every reply of a server by a fixed time: a database in another zone.

    with LatencyProxy("127.0.0.1", 5432, delay_s=0.025) as proxy:
        url = proxy.url("postgresql://user@127.0.0.1:5432/db")   # the same URL, via the proxy

What the client sends goes through at once; every chunk the server sends is delivered
`delay_s` after it arrived, in order, so replies a client waits for one after another cost the
delay each, and replies to requests sent together (a pipeline, two threads) cost it once.
"""

from __future__ import annotations

import asyncio
import threading
import time
from types import TracebackType
from urllib.parse import urlsplit, urlunsplit

CHUNK = 1 << 16


class LatencyProxy:
    """The proxy, serving on an ephemeral local port from a thread of its own."""

    def __init__(self, host: str, port: int, delay_s: float) -> None:
        self.host, self.port, self.delay_s = host, port, delay_s
        self.loop = asyncio.new_event_loop()
        self.listen_port = 0
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="latency-proxy", daemon=True)

    def url(self, url: str) -> str:
        """`url` with its host and port replaced by the proxy's."""
        parts = urlsplit(url)
        user = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
        netloc = f"{user}127.0.0.1:{self.listen_port}"
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))

    def __enter__(self) -> LatencyProxy:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        asyncio.run_coroutine_threadsafe(self._shutdown(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()

    async def _shutdown(self) -> None:
        self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self._server = self.loop.run_until_complete(
            asyncio.start_server(self._client, "127.0.0.1", 0)
        )
        self.listen_port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self.loop.run_forever()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.port)
            await asyncio.gather(
                self._pipe(reader, up_writer, 0.0),
                self._pipe(up_reader, writer, self.delay_s),
                return_exceptions=True,
            )
        except asyncio.CancelledError:  # the proxy is closing
            writer.close()

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay_s: float
    ) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, data = await queue.get()
                if not data:
                    break
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()
            writer.close()

        sender = asyncio.ensure_future(deliver())
        try:
            while data := await reader.read(CHUNK):
                queue.put_nowait((time.monotonic() + delay_s, data))
            queue.put_nowait((0.0, b""))
            await sender
        finally:
            sender.cancel()

"""Open a LangGraph store and checkpointer from one URL: memory://, sqlite:///, postgresql://."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import AsyncExitStack, ExitStack
from types import TracebackType
from typing import Any

from langgraph.store.base import IndexConfig

from memory_plugin.backends.base import Backend, Opened
from memory_plugin.backends.index import normalize_index
from memory_plugin.backends.memory import open_memory
from memory_plugin.backends.postgres import aopen_postgres, open_postgres
from memory_plugin.backends.sqlite import aopen_sqlite, open_sqlite
from memory_plugin.backends.timeout import store_timeout
from memory_plugin.backends.url import DEFAULT_URL, BackendURL, parse_url, redact
from memory_plugin.settings.schema import MemorySettings

__all__ = [
    "DEFAULT_URL",
    "AsyncConnection",
    "Backend",
    "BackendURL",
    "aconnect",
    "connect",
    "parse_url",
    "redact",
]


def connect(
    url: str | None = None,
    *,
    index: IndexConfig | dict[str, Any] | None = None,
    settings: MemorySettings | None = None,
) -> Backend:
    """Open a store and a checkpointer for `url` (default: $MEMORY_URL, else ./.memory/memory.db).

    `index` is LangGraph's IndexConfig (`embed`, `dims`, optional `fields`); where the backend
    cannot do vector search the store runs keyword-only and logs that once. A PostgreSQL
    server that is down costs a caller at most `store_timeout_seconds` (from
    $MEMORY_STORE_TIMEOUT_SECONDS, else `settings`, else 5 s).
    """
    parsed = parse_url(url)
    config = normalize_index(index)
    timeout = store_timeout(settings)
    stack = ExitStack()
    try:
        opened = _open(parsed, config, stack, timeout)
    except BaseException:
        stack.close()
        raise
    return Backend(
        parsed.kind, parsed.display, opened.store, opened.checkpointer, opened.vector_search, stack
    )


def aconnect(
    url: str | None = None,
    *,
    index: IndexConfig | dict[str, Any] | None = None,
    settings: MemorySettings | None = None,
) -> AsyncConnection:
    """Async twin of connect: `async with aconnect(url) as backend` (or `await aconnect(url)`).

    The store and checkpointer are async-native; `async with` closes them, an awaited backend
    is closed by `aclose()`.
    """
    return AsyncConnection(url, index, settings)


class AsyncConnection:
    """What `aconnect` returns: await it for a Backend, or use it as an async context manager."""

    def __init__(
        self,
        url: str | None,
        index: IndexConfig | dict[str, Any] | None,
        settings: MemorySettings | None,
    ) -> None:
        self._args = (url, index, settings)
        self._backend: Backend | None = None

    def __await__(self) -> Generator[Any, None, Backend]:
        return _aopen(*self._args).__await__()

    async def __aenter__(self) -> Backend:
        self._backend = await _aopen(*self._args)
        return self._backend

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._backend is not None:
            backend, self._backend = self._backend, None
            await backend.aclose()


async def _aopen(
    url: str | None, index: IndexConfig | dict[str, Any] | None, settings: MemorySettings | None
) -> Backend:
    parsed = parse_url(url)
    config = normalize_index(index)
    timeout = store_timeout(settings)
    stack = AsyncExitStack()
    try:
        if parsed.kind == "sqlite":
            opened = await aopen_sqlite(parsed.target, config, stack)
        elif parsed.kind == "postgres":
            opened = await aopen_postgres(parsed.target, parsed.display, config, stack, timeout)
        else:
            opened = open_memory(config)
    except BaseException:
        await stack.aclose()
        raise
    return Backend(
        parsed.kind, parsed.display, opened.store, opened.checkpointer, opened.vector_search, stack
    )


def _open(
    parsed: BackendURL, config: dict[str, Any] | None, stack: ExitStack, timeout: float
) -> Opened:
    if parsed.kind == "sqlite":
        return open_sqlite(parsed.target, config, stack)
    if parsed.kind == "postgres":
        return open_postgres(parsed.target, parsed.display, config, stack, timeout)
    return open_memory(config)

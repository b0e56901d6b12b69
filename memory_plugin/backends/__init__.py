"""Open a LangGraph store and checkpointer from one URL: memory://, sqlite:///, postgresql://."""

from __future__ import annotations

from contextlib import AsyncExitStack, ExitStack
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

__all__ = ["DEFAULT_URL", "Backend", "BackendURL", "aconnect", "connect", "parse_url", "redact"]


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


async def aconnect(
    url: str | None = None,
    *,
    index: IndexConfig | dict[str, Any] | None = None,
    settings: MemorySettings | None = None,
) -> Backend:
    """Async twin of connect: async-native store and checkpointer, closed by `aclose()`."""
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

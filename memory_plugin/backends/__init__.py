"""Open a LangGraph store and checkpointer from one URL: memory://, sqlite:///, postgresql://.

The backends take their store timeout as a number of seconds; `memory_plugin.connect` and
`aconnect` (memory_plugin.connection) resolve it from the environment and the settings and
call `open_backend` / `aopen_backend`.
"""

from __future__ import annotations

from contextlib import AsyncExitStack, ExitStack
from typing import Any

from memory_plugin.backends.base import Backend, Opened
from memory_plugin.backends.index import normalize_index
from memory_plugin.backends.memory import open_memory
from memory_plugin.backends.postgres import aopen_postgres, open_postgres
from memory_plugin.backends.sqlite import aopen_sqlite, open_sqlite
from memory_plugin.backends.url import DEFAULT_URL, BackendURL, parse_url, redact

__all__ = [
    "DEFAULT_URL",
    "Backend",
    "BackendURL",
    "aopen_backend",
    "normalize_index",
    "open_backend",
    "parse_url",
    "redact",
]


def open_backend(
    parsed: BackendURL, config: dict[str, Any] | None, *, store_timeout: float
) -> Backend:
    """Open the store and checkpointer of a parsed URL, with a normalized index config; a
    PostgreSQL server that is down costs a caller at most `store_timeout` seconds."""
    stack = ExitStack()
    try:
        opened = _open(parsed, config, stack, store_timeout)
    except BaseException:
        stack.close()
        raise
    return Backend(
        parsed.kind, parsed.display, opened.store, opened.checkpointer, opened.vector_search, stack
    )


async def aopen_backend(
    parsed: BackendURL, config: dict[str, Any] | None, *, store_timeout: float
) -> Backend:
    """Async twin of open_backend: the store and checkpointer are async-native."""
    stack = AsyncExitStack()
    try:
        if parsed.kind == "sqlite":
            opened = await aopen_sqlite(parsed.target, config, stack)
        elif parsed.kind == "postgres":
            opened = await aopen_postgres(
                parsed.target, parsed.display, config, stack, store_timeout
            )
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

"""`connect` and `aconnect`: a backend opened from a URL, with the settings' store timeout.

This module sits above both memory_plugin.settings, which resolves the store timeout
(`MEMORY_STORE_TIMEOUT_SECONDS`, else the settings given, else the default), and
memory_plugin.backends, which opens the store with that number of seconds.
"""

from __future__ import annotations

from collections.abc import Generator
from types import TracebackType
from typing import Any

from langgraph.store.base import IndexConfig

from memory_plugin.backends import (
    Backend,
    aopen_backend,
    normalize_index,
    open_backend,
    parse_url,
)
from memory_plugin.background import wait_at_exit
from memory_plugin.settings.schema import MemorySettings
from memory_plugin.settings.timeout import exit_wait, store_timeout

__all__ = ["AsyncConnection", "aconnect", "connect"]


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
    $MEMORY_STORE_TIMEOUT_SECONDS, else `settings`, else 5 s). Background memory work still
    running at exit (a profile update) is waited for, closed backend or not, at most
    `exit_wait_seconds` (from $MEMORY_EXIT_WAIT_SECONDS, else the `settings` given here, else
    30 s).
    """
    parsed = parse_url(url)
    config = normalize_index(index)
    _set_exit_wait(settings)
    return open_backend(parsed, config, store_timeout=store_timeout(settings))


def aconnect(
    url: str | None = None,
    *,
    index: IndexConfig | dict[str, Any] | None = None,
    settings: MemorySettings | None = None,
) -> AsyncConnection:
    """Async twin of connect: `async with aconnect(url) as backend` (or `await aconnect(url)`).

    The store and checkpointer are async-native; `async with` closes them, an awaited backend
    is closed by `aclose()`. One never closed does not hold the process at exit, and its
    background memory work finishes first (see connect).
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
    _set_exit_wait(settings)
    return await aopen_backend(parsed, config, store_timeout=store_timeout(settings))


def _set_exit_wait(settings: MemorySettings | None) -> None:
    if settings is not None:
        wait_at_exit(exit_wait(settings))

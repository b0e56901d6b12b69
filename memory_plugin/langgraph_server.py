"""memory_plugin's store and checkpointer for LangGraph Server, from $MEMORY_URL.

langgraph.json names them with `"store": {"path": "memory_plugin.langgraph_server.store"}`
and `"checkpointer": {"path": "memory_plugin.langgraph_server.checkpointer"}`; the server
then keeps memory and thread checkpoints in memory_plugin's backend (for PostgreSQL:
LangGraph's PostgresStore and PostgresSaver, whose conditional writes and note positions are
checked in SQL, so several server workers can share one database). Both come from one
connection pool per event loop, opened on first use and closed when both are released. The
store's semantic index is memory_plugin's default (local embeddings, else the offline
placeholder) unless $MEMORY_SERVER_INDEX names `package.module:name` of an IndexConfig.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore

from memory_plugin.backends import Backend
from memory_plugin.connection import aconnect

INDEX_ENV = "MEMORY_SERVER_INDEX"


@dataclass
class _Shared:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    backend: Backend | None = None
    users: int = 0


_shared: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Shared] = weakref.WeakKeyDictionary()


def server_index() -> dict[str, Any]:
    """The store index: the IndexConfig $MEMORY_SERVER_INDEX names, else the default one."""
    spec = os.environ.get(INDEX_ENV)
    if not spec:
        from memory_plugin.offline.local_embeddings import default_index

        return default_index()
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ValueError(f"{INDEX_ENV} must be package.module:name, got {spec!r}")
    return dict(getattr(importlib.import_module(module), name))


@asynccontextmanager
async def _backend() -> AsyncIterator[Backend]:
    shared = _shared.setdefault(asyncio.get_running_loop(), _Shared())
    async with shared.lock:
        if shared.backend is None:
            shared.backend = await aconnect(index=server_index())
        shared.users += 1
        backend = shared.backend
    try:
        yield backend
    finally:
        async with shared.lock:
            shared.users -= 1
            if shared.users == 0 and shared.backend is not None:
                opened, shared.backend = shared.backend, None
                await opened.aclose()


@asynccontextmanager
async def store() -> AsyncIterator[BaseStore]:
    """The server's store: memory_plugin's backend at $MEMORY_URL."""
    async with _backend() as backend:
        yield backend.store


@asynccontextmanager
async def checkpointer() -> AsyncIterator[BaseCheckpointSaver[str]]:
    """The server's checkpointer, on the store's connection pool."""
    async with _backend() as backend:
        yield backend.checkpointer

"""In-memory backend: InMemoryStore and InMemorySaver, for tests and throwaway runs."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from memory_plugin.backends.base import Opened
from memory_plugin.serde import CachingSerializer


def open_memory(index: dict[str, Any] | None) -> Opened:
    """Open an in-memory store and checkpointer (sync and async alike)."""
    store = InMemoryStore(index=index)  # type: ignore[arg-type]
    return Opened(store, InMemorySaver(serde=CachingSerializer()), index is not None)

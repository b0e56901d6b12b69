"""In-memory backend: InMemoryStore and InMemorySaver, for tests and throwaway runs."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from memory_plugin.backends.base import Opened


def open_memory(index: dict[str, Any] | None) -> Opened:
    """Open an in-memory store and checkpointer (sync and async alike)."""
    return Opened(InMemoryStore(index=index), InMemorySaver(), index is not None)  # type: ignore[arg-type]

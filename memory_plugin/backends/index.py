"""Semantic index configuration passed through to the LangGraph store of each backend."""

from __future__ import annotations

import logging
from typing import Any

from langgraph.store.base import IndexConfig

from memory_plugin.errors import BackendError

logger = logging.getLogger("memory_plugin.backends")
_logged: set[str] = set()


def log_once(message: str, level: int = logging.WARNING) -> None:
    """Log a backend degradation (or, at INFO, a fact an operator wants once) per process."""
    if message not in _logged:
        _logged.add(message)
        logger.log(level, message)


def normalize_index(index: IndexConfig | dict[str, Any] | None) -> dict[str, Any] | None:
    """Check an index config and give it both `fields` and SqliteStore's `text_fields`."""
    if index is None:
        return None
    if not isinstance(index, dict):
        raise BackendError("index must be a dict with 'embed' and 'dims'")
    dims = index.get("dims")
    if not isinstance(dims, int) or isinstance(dims, bool) or dims <= 0:
        raise BackendError(f"index 'dims' must be a positive int, got {dims!r}")
    if index.get("embed") is None:
        raise BackendError("index needs 'embed': LangChain Embeddings or an embedding function")
    config = dict(index)
    fields = config.get("fields") or config.get("text_fields") or ["$"]
    config["fields"] = list(fields)
    config["text_fields"] = list(fields)
    return config

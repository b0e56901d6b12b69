"""memory_plugin.langgraph_server, the store and checkpointer langgraph.postgres.json names:
opened from $MEMORY_URL on one backend shared by both, closed when both are released, with
the index $MEMORY_SERVER_INDEX names (a malformed name is refused with an error naming it)."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.base import empty_checkpoint

from memory_plugin.connection import connect
from memory_plugin.langgraph_server import INDEX_ENV, checkpointer, server_index, store

INDEX = {"dims": 8, "embed": lambda texts: [[1.0] * 8 for _ in texts], "fields": ["text"]}
CONFIG = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}


@pytest.mark.slow
async def test_store_and_checkpointer_share_one_backend_at_memory_url(
    backend_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_URL", backend_url)
    async with store() as opened_store, checkpointer() as saver:
        async with store() as again:
            assert again is opened_store
        await opened_store.aput(("memory_plugin", "personal", "ann", "notes"), "n1", {"text": "hi"})
        await saver.aput(CONFIG, empty_checkpoint(), {}, {})
        item = await opened_store.aget(("memory_plugin", "personal", "ann", "notes"), "n1")
        assert item is not None and item.value == {"text": "hi"}
        assert await saver.aget_tuple(CONFIG) is not None
    if backend_url == "memory://":
        return
    with connect(backend_url) as backend:
        item = backend.store.get(("memory_plugin", "personal", "ann", "notes"), "n1")
        assert item is not None and item.value == {"text": "hi"}
        assert backend.checkpointer.get_tuple(CONFIG) is not None


@pytest.mark.slow
async def test_a_released_backend_is_closed_and_reopened(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_URL", "memory://")
    async with store() as first:
        await first.aput(("demo",), "k", {"text": "gone after close"})
    async with store() as second:
        assert second is not first
        assert await second.aget(("demo",), "k") is None


def test_the_index_comes_from_memory_server_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(INDEX_ENV, f"{__name__}:INDEX")
    assert server_index()["dims"] == 8
    monkeypatch.setenv(INDEX_ENV, "no-colon-here")
    with pytest.raises(ValueError, match=INDEX_ENV):
        server_index()
    monkeypatch.delenv(INDEX_ENV)
    assert server_index()["dims"] == 384

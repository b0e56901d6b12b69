"""The package as users meet it: top-level exports, `__version__`, aconnect (the built wheel,
py.typed included: tests/test_wheel.py)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest
from langgraph.store.base import BaseStore

import memory_plugin
from memory_plugin import Backend, aconnect

TAUGHT = [
    "create_memory_graph",
    "MemoryMiddleware",
    "connect",
    "aconnect",
    "MemoryContext",
    "MemorySettings",
    "LayeredSettings",
    "ScopedMemory",
    "ProfileMemory",
    "ContextManager",
    "MemoryState",
    "MemoryEvent",
    "OfflineModel",
    "MemoryPluginError",
    "ScopeError",
    "InvalidIdError",
    "BackendError",
    "BackendUnavailableError",
    "SettingsError",
    "LockedSettingError",
    "MemoryWriteError",
    "ConflictError",
    "__version__",
]


@pytest.mark.parametrize("name", TAUGHT)
def test_top_level_exports_what_the_readme_teaches(name: str) -> None:
    assert name in memory_plugin.__all__
    assert getattr(memory_plugin, name) is not None


def test_exports_are_the_real_objects() -> None:
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.language_models import BaseChatModel

    from memory_plugin.errors import MemoryPluginError

    assert issubclass(memory_plugin.MemoryMiddleware, AgentMiddleware)
    assert issubclass(memory_plugin.OfflineModel, BaseChatModel)
    for error in ("ScopeError", "SettingsError", "BackendError", "ConflictError"):
        assert issubclass(getattr(memory_plugin, error), MemoryPluginError)


def test_version_comes_from_the_package_metadata() -> None:
    assert memory_plugin.__version__ == importlib.metadata.version("memory-plugin")


async def _roundtrip(store: BaseStore) -> str:
    await store.aput(("package",), "k", {"text": "kept"})
    item = await store.aget(("package",), "k")
    assert item is not None
    return str(item.value["text"])


async def test_async_with_aconnect_needs_no_await(backend_url: str) -> None:
    async with aconnect(backend_url) as backend:
        assert isinstance(backend, Backend)
        assert await _roundtrip(backend.store) == "kept"
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        assert await backend.checkpointer.aget_tuple(config) is None


async def test_await_aconnect_still_works(backend_url: str) -> None:
    backend = await aconnect(backend_url)
    try:
        assert await _roundtrip(backend.store) == "kept"
    finally:
        await backend.aclose()
    async with await aconnect(backend_url) as reopened:
        assert isinstance(reopened, Backend)


async def test_async_with_aconnect_closes_on_error(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    connection = aconnect(url)
    with pytest.raises(RuntimeError, match="boom"):
        async with connection as backend:
            await _roundtrip(backend.store)
            raise RuntimeError("boom")
    async with aconnect(url) as again:
        assert await _roundtrip(again.store) == "kept"


async def test_aconnect_bad_url_raises_on_enter() -> None:
    from memory_plugin import BackendError

    with pytest.raises(BackendError, match="scheme"):
        async with aconnect("mysql://db/memory"):
            pass

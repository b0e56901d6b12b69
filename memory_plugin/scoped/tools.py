"""scoped_memory_tools: the model's memory tools (memory_plugin.scoped.toolkit) over a scoped
memory, by default one per store built from a model and options."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolRuntime

from memory_plugin.scope.identity import Membership
from memory_plugin.scoped.api import ScopedMemory
from memory_plugin.scoped.toolkit import given, memory_tools
from memory_plugin.tooling import runtime_store


def scoped_memory_tools(
    service: ScopedMemory | None = None,
    membership: Membership | None = None,
    *,
    model: BaseChatModel | None = None,
    **options: Any,
) -> list[BaseTool]:
    """The tools over the thread's scope, resolved with `membership`. They use `service` (a
    graph's configured ScopedMemory), else one ScopedMemory per store built from `model` (which
    compresses an over-long document) and `options`."""

    if service is not None:
        return memory_tools(given(service), membership)
    by_store: dict[int, ScopedMemory] = {}

    def memory(runtime: ToolRuntime[Any, Any]) -> ScopedMemory:
        store = runtime_store(runtime)
        found = by_store.get(id(store))
        if found is None or found.store is not store:
            options.setdefault("membership", membership)
            found = by_store[id(store)] = ScopedMemory(store, model=model, **options)
        return found

    return memory_tools(memory, membership)

"""The registry of memory kinds: every kind is constructed one way and switched by its row,
and the graph and the console, both built from the registry, share one settings source, so
they enforce the same limits, on every backend."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.memory import InMemoryStore

from memory_plugin import Backend, MemoryContext, create_memory_graph
from memory_plugin.base import MemoryService, Parts
from memory_plugin.bounded import BoundedMemory
from memory_plugin.kinds import KINDS, build_kinds
from memory_plugin.models.maintenance import MaintenanceModel
from memory_plugin.offline.demo import DemoModel
from memory_plugin.prebuilt.services import build_services
from memory_plugin.server import create_app
from memory_plugin.settings import MemorySettings, SettingsCache

TOKENS = {"ann-token": {"identity": "ann", "agent_id": "helper"}}
ANN_HEADERS = {"Authorization": "Bearer ann-token"}
ANN = MemoryContext(user_id="ann", agent_id="helper")
LIMITED = MemorySettings(bounded_memory=True, bounded_memory_chars=500)
ENTRY = "Ann's deploy checklist: " + "x" * 576


def _add(content: str) -> AIMessage:
    args = {"action": "add", "target": "memory", "content": content}
    return AIMessage("", tool_calls=[{"name": "memory", "args": args, "id": "m1"}])


def test_console_and_graph_refuse_the_same_over_long_entry_with_one_message(
    backend: Backend,
) -> None:
    assert len(ENTRY) == 600
    model = DemoModel(script=[_add(ENTRY), "It is too long to keep."])
    app = create_app(
        backend.store,
        tokens=TOKENS,
        settings=LIMITED,
        checkpointer=backend.checkpointer,
        model=model,
    )
    console = app.state.console
    graph = console.graph()
    config: Any = {"configurable": {"thread_id": "kinds"}}
    out = graph.invoke({"messages": [HumanMessage("keep this")]}, config, context=ANN)
    tool_error = out["messages"][-2]
    assert tool_error.status == "error"

    client = TestClient(app)
    body = {"action": "add", "target": "memory", "content": ENTRY}
    refused = client.post("/api/entries/bounded", headers=ANN_HEADERS, json=body)
    assert refused.status_code == 400
    detail = refused.json()["detail"]
    assert "would exceed limit" in detail and "500" in detail
    assert tool_error.content == f"Memory not changed: {detail}"
    assert BoundedMemory(backend.store).read(ANN)["memory"].entries == []


def test_the_console_graph_reads_the_consoles_settings_source(backend: Backend) -> None:
    app = create_app(backend.store, tokens=TOKENS, settings=LIMITED, model=DemoModel())
    console = app.state.console
    graph = console.graph()
    tool_node = graph.nodes["tools"].bound
    assert "memory" in tool_node.tools_by_name
    assert all(service.source is console.cache for service in console.kinds.values())


def test_every_kind_is_built_one_way_over_one_settings_source() -> None:
    store, cache = InMemoryStore(), SettingsCache(MemorySettings())
    maintenance = MaintenanceModel(DemoModel())
    built = build_kinds(Parts(store, cache, maintenance, model=DemoModel()), cache.base, every=True)
    assert list(built) == [kind.name for kind in KINDS]
    for switch, service in built.items():
        assert isinstance(service, MemoryService), switch
        assert service.source is cache, switch
        assert service.maintenance is maintenance, switch


@pytest.mark.parametrize(
    "kind", [kind for kind in KINDS if kind.tools is not MemoryService.tools], ids=str
)
def test_a_kind_switched_off_in_code_has_no_service_unless_always_and_no_tools(
    kind: Any,
) -> None:
    off = MemorySettings(**{kind.name: False})
    services = build_services(DemoModel(), off, store=InMemoryStore(), environ={})
    assert kind not in services.owners.values()
    assert (kind.name in services.services) is kind.always
    on = build_services(
        DemoModel(), MemorySettings(**{kind.name: True}), store=InMemoryStore(), environ={}
    )
    names = [name for name, owner in on.owners.items() if owner is kind]
    assert names and all(tool.name in names for tool in on.tools if tool.name in names)


def test_code_defaults_given_as_any_settings_source_reach_the_kind() -> None:
    store = InMemoryStore()
    cache = SettingsCache(LIMITED)
    by_cache = BoundedMemory(store, settings=cache)
    by_values = BoundedMemory(store, settings=LIMITED)
    by_defaults = BoundedMemory(store, defaults=LIMITED)
    by_layers = BoundedMemory(store, settings=cache.for_store(store))
    for memory in (by_cache, by_values, by_defaults, by_layers):
        assert memory.settings.get(ANN).values.bounded_memory_chars == 500
    assert create_memory_graph(DemoModel(), store=store, settings=cache) is not None

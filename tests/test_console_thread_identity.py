"""A thread belongs to exactly one person (issue 34, point 1): `ann` of org o2 neither lists,
summarizes, finds in a forget preview, nor deletes (by a forget or by deleting her user) a
thread of `ann` of org o1, on every backend; o1's ann still has hers."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from langchain_core.messages import HumanMessage

from memory_plugin import (
    Backend,
    MemoryContext,
    MemorySettings,
    OfflineModel,
    create_memory_graph,
)
from memory_plugin.scope.identity import OWNER_METADATA_KEY
from memory_plugin.scoped import ScopedMemory
from memory_plugin.server import create_app

pytestmark = pytest.mark.slow

SETTINGS = MemorySettings(compaction_manual=True)
TOKENS: dict[str, dict[str, Any]] = {
    "o1-ann": {"identity": "ann", "org_id": "o1"},
    "o2-ann": {"identity": "ann", "org_id": "o2"},
    "o2-root": {"identity": "root", "org_id": "o2", "admin": ["platform"]},
}
O1_ANN = {"Authorization": "Bearer o1-ann"}
O2_ANN = {"Authorization": "Bearer o2-ann"}
O2_ROOT = {"Authorization": "Bearer o2-root"}
THREAD = "o1-ann-biscuit"
O2_ANN_CTX = MemoryContext(user_id="ann", org_id="o2")


def turn(backend: Backend, thread: str, org: str, text: str) -> None:
    """One turn of `org`'s ann on `thread`, run as LangGraph Server's recipe runs it (the owner
    in the run's metadata) with her context."""
    graph = create_memory_graph(
        OfflineModel(), store=backend.store, checkpointer=backend.checkpointer, settings=SETTINGS
    )
    config: Any = {"configurable": {"thread_id": thread}, "metadata": {OWNER_METADATA_KEY: "ann"}}
    context = {"user_id": "ann", "org_id": org}
    graph.invoke({"messages": [HumanMessage(text)]}, config, context=context)


def exists(backend: Backend, thread: str) -> bool:
    return backend.checkpointer.get_tuple({"configurable": {"thread_id": thread}}) is not None


def client_over(backend: Backend) -> TestClient:
    turn(backend, THREAD, "o1", "Biscuit chewed my slippers today")
    turn(backend, "o2-ann-tea", "o2", "I drink tea without sugar")
    ScopedMemory(backend.store).remember(O2_ANN_CTX, "Biscuit is a dog I walk")
    app = create_app(
        backend.store, tokens=TOKENS, checkpointer=backend.checkpointer, settings=SETTINGS
    )
    return TestClient(app)


def listed(client: TestClient, headers: dict[str, str]) -> list[str]:
    answer = client.get("/api/threads", headers=headers)
    assert answer.status_code == 200, answer.text
    return [thread["thread_id"] for thread in answer.json()["threads"]]


def test_another_orgs_ann_never_reaches_anns_threads(backend: Backend) -> None:
    client = client_over(backend)
    assert listed(client, O1_ANN) == [THREAD]
    assert listed(client, O2_ANN) == ["o2-ann-tea"]
    summarized = client.post(f"/api/threads/{THREAD}/summarize", headers=O2_ANN)
    assert (summarized.status_code, summarized.json()) == (404, {"detail": "not found"})

    found = client.post("/api/forget/preview", json={"text": "Biscuit"}, headers=O2_ANN).json()
    assert found["threads"] == []
    body = {"delete_threads": True}
    applied = client.post(f"/api/forget/{found['preview_id']}/apply", json=body, headers=O2_ANN)
    assert applied.status_code == 200 and applied.json()["threads_deleted"] == []
    assert exists(backend, THREAD)

    erased = client.delete("/api/users/ann?threads=true", headers=O2_ROOT)
    assert erased.status_code == 200, erased.text
    assert exists(backend, THREAD) and not exists(backend, "o2-ann-tea")
    assert listed(client, O1_ANN) == [THREAD]
    mine = client.post("/api/forget/preview", json={"text": "Biscuit"}, headers=O1_ANN).json()
    assert mine["threads"] == [THREAD]


async def test_threads_run_with_ainvoke_stay_their_orgs(abackend: Backend) -> None:
    graph = create_memory_graph(
        OfflineModel(), store=abackend.store, checkpointer=abackend.checkpointer, settings=SETTINGS
    )
    for thread, org in ((THREAD, "o1"), ("o2-ann-tea", "o2")):
        config: Any = {"configurable": {"thread_id": thread}}
        context = {"user_id": "ann", "org_id": org}
        said = {"messages": [HumanMessage("Biscuit says hi")]}
        await graph.ainvoke(said, config, context=context)
    app = create_app(
        abackend.store, tokens=TOKENS, checkpointer=abackend.checkpointer, settings=SETTINGS
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://console") as client:
        for headers, thread in ((O1_ANN, THREAD), (O2_ANN, "o2-ann-tea")):
            page = (await client.get("/api/threads", headers=headers)).json()
            assert [found["thread_id"] for found in page["threads"]] == [thread]
        taken = await client.post(f"/api/threads/{THREAD}/summarize", headers=O2_ANN)
        assert taken.status_code == 404
        found = await client.post("/api/forget/preview", json={"text": "Biscuit"}, headers=O2_ANN)
        assert found.json()["threads"] == ["o2-ann-tea"]

"""Shared and read-only agent entries belong to the agent: a user who stores a private entry
under their key and then deletes or forgets it removes exactly their own entry, on every path
(REST and the page's request, memory_forget under invoke and ainvoke, the Python API)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from memory_plugin import Backend, MemoryContext
from memory_plugin.agent import AgentMemory
from memory_plugin.errors import MemoryWriteError
from tests.console_seed import ANN, MALLORY, Seeded
from tests.test_agent_entries import ON, aturn, call, graph_of, turn

ANN_CTX = MemoryContext(user_id="ann", agent_id="helper")
BOB_CTX = MemoryContext(user_id="bob", agent_id="helper")
ENTRIES = "/api/entries/agent"


def agent_entries(client: TestClient, headers: dict[str, str]) -> dict[str, str]:
    """The entries a caller sees: key to visibility."""
    answer = client.get(ENTRIES, headers=headers)
    assert answer.status_code == 200
    return {entry["key"]: entry["visibility"] for entry in answer.json()["entries"]}


def test_a_users_delete_never_removes_the_agents_shared_entry(
    seeded: tuple[TestClient, Seeded],
) -> None:
    client, _ = seeded
    mine = {"content": "I prefer American English", "visibility": "private"}
    assert client.put(f"{ENTRIES}/house-style", headers=MALLORY, json=mine).status_code == 200
    assert agent_entries(client, MALLORY)["house-style"] == "private"
    deleted = client.delete(f"{ENTRIES}/house-style", headers=MALLORY)
    assert deleted.status_code == 200
    assert agent_entries(client, MALLORY)["house-style"] == "shared"
    assert agent_entries(client, ANN)["house-style"] == "shared"
    again = client.delete(f"{ENTRIES}/house-style", headers=MALLORY)
    assert again.status_code == 403 and "platform admin" in again.json()["detail"]
    aimed = client.delete(f"{ENTRIES}/house-style?visibility=shared", headers=MALLORY)
    assert aimed.status_code == 403
    assert agent_entries(client, ANN)["house-style"] == "shared"


def test_a_platform_admin_deletes_exactly_the_entry_named(
    seeded: tuple[TestClient, Seeded],
) -> None:
    client, _ = seeded
    mine = {"content": "Ann's own style: terse", "visibility": "private"}
    assert client.put(f"{ENTRIES}/house-style", headers=ANN, json=mine).status_code == 200
    shared = client.delete(f"{ENTRIES}/house-style?visibility=shared", headers=ANN)
    assert shared.status_code == 200
    assert agent_entries(client, ANN)["house-style"] == "private"
    assert "house-style" not in agent_entries(client, MALLORY)
    missing = client.delete(f"{ENTRIES}/house-style?visibility=read_only", headers=ANN)
    assert missing.status_code == 400 and "no read_only entry" in missing.json()["detail"]
    bad = client.delete(f"{ENTRIES}/house-style?visibility=public", headers=ANN)
    assert bad.status_code == 422
    assert agent_entries(client, ANN)["house-style"] == "private"


def shadowed(backend: Backend, visibility: str) -> AgentMemory:
    """The agent's entry `policy` (`visibility`) and ann's private entry under the same key."""
    memory = AgentMemory(backend.store, defaults=ON)
    memory.store_entry(ANN_CTX, "policy", "Refunds need a receipt", visibility=visibility)
    memory.store_entry(ANN_CTX, "policy", "Ann keeps her receipts in a drawer")
    return memory


def policy(memory: AgentMemory, ctx: MemoryContext) -> list[tuple[str, str]]:
    """What `ctx` sees under the key `policy`: (visibility, content)."""
    return [(e.visibility, e.content) for e in memory.entries(ctx) if e.key == "policy"]


@pytest.mark.slow
@pytest.mark.parametrize("visibility", ["shared", "read_only"])
def test_memory_forget_removes_only_the_callers_own_entry(
    backend: Backend, visibility: str
) -> None:
    memory = shadowed(backend, visibility)
    _, graph = graph_of(backend, call("memory_forget", 1, key="policy"), "Done.")
    (reply,) = turn(graph, "t")
    assert reply.status == "success"
    assert policy(memory, ANN_CTX) == [(visibility, "Refunds need a receipt")]
    assert policy(memory, BOB_CTX) == [(visibility, "Refunds need a receipt")]


async def test_memory_forget_never_reaches_a_read_only_entry_under_ainvoke(
    abackend: Backend,
) -> None:
    memory = AgentMemory(abackend.store, defaults=ON)
    await memory.astore_entry(ANN_CTX, "policy", "Refunds need a receipt", visibility="read_only")
    await memory.astore_entry(ANN_CTX, "policy", "Ann keeps her receipts in a drawer")
    _, graph = graph_of(
        abackend,
        call("memory_forget", 1, key="policy"),
        call("memory_forget", 2, key="policy"),
        "Done.",
    )
    first, second = await aturn(graph, "t")
    assert (first.status, second.status) == ("success", "error")
    assert "read-only" in str(second.content)
    seen = [(e.visibility, e.content) for e in await memory.aentries(BOB_CTX)]
    assert seen == [("read_only", "Refunds need a receipt")]


def test_the_python_api_forgets_one_entry_at_a_time(backend: Backend) -> None:
    memory = shadowed(backend, "shared")
    assert memory.forget(ANN_CTX, "policy") == "private"
    assert policy(memory, BOB_CTX) == [("shared", "Refunds need a receipt")]
    memory.store_entry(ANN_CTX, "policy", "Ann keeps her receipts in a drawer")
    assert memory.forget(ANN_CTX, "policy", visibility="shared") == "shared"
    assert policy(memory, ANN_CTX) == [("private", "Ann keeps her receipts in a drawer")]
    assert policy(memory, BOB_CTX) == []
    with pytest.raises(MemoryWriteError, match="no shared entry 'policy'"):
        memory.forget(ANN_CTX, "policy", visibility="shared")
    bad: Any = "public"
    with pytest.raises(MemoryWriteError, match="visibility must be one of"):
        memory.forget(ANN_CTX, "policy", visibility=bad)
    assert policy(memory, ANN_CTX) == [("private", "Ann keeps her receipts in a drawer")]


async def test_the_async_python_api_forgets_one_entry_at_a_time(abackend: Backend) -> None:
    memory = AgentMemory(abackend.store, defaults=ON)
    await memory.astore_entry(ANN_CTX, "policy", "Refunds need a receipt", visibility="read_only")
    await memory.astore_entry(ANN_CTX, "policy", "Ann keeps her receipts in a drawer")
    assert await memory.aforget(ANN_CTX, "policy") == "private"
    seen = [(e.visibility, e.content) for e in await memory.aentries(BOB_CTX)]
    assert seen == [("read_only", "Refunds need a receipt")]

"""Forget everywhere through the console's REST API on every backend: POST a preview of where
the caller's memory holds a text, then apply it by its id (all of it, or some places); only
the caller's own memory, shared agent entries listed but changed only by a platform admin;
an empty text, another user's preview and an applied one are refused."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from langchain_core.messages import HumanMessage

from memory_plugin import Backend, MemoryContext, OfflineModel, create_memory_graph
from memory_plugin.agent import AgentMemory
from memory_plugin.bounded import BoundedMemory
from memory_plugin.profile.memory import ProfileMemory
from memory_plugin.scope.identity import OWNER_METADATA_KEY
from memory_plugin.scoped import ScopedMemory
from memory_plugin.server import create_app
from memory_plugin.settings import MemorySettings

SETTINGS = MemorySettings(agent_memory=True, bounded_memory=True)
TOKENS: dict[str, dict[str, Any]] = {
    "ann-token": {"identity": "ann", "org_id": "o1", "workspaces": ["acme"], "agent_id": "helper"},
    "bob-token": {"identity": "bob", "org_id": "o1", "workspaces": ["acme"], "agent_id": "helper"},
    "root-token": {"identity": "root", "org_id": "o1", "agent_id": "helper", "admin": ["platform"]},
}
ANN = {"Authorization": "Bearer ann-token"}
BOB = {"Authorization": "Bearer bob-token"}
ROOT = {"Authorization": "Bearer root-token"}
ANN_CTX = MemoryContext(user_id="ann", org_id="o1")
ANN_TEAM = MemoryContext(
    user_id="ann", org_id="o1", workspace_id="acme", thread_visibility="shared"
)
HELPER = MemoryContext(user_id="ann", org_id="o1", agent_id="helper")
BOB_CTX = MemoryContext(user_id="bob", org_id="o1")


def client_over(backend: Backend) -> TestClient:
    store = backend.store
    scoped = ScopedMemory(store, settings=SETTINGS)
    scoped.remember(ANN_CTX, "My dog is called Rex")
    scoped.remember(ANN_CTX, "The offsite is in Lisbon")
    scoped.write_document(ANN_CTX, "# Memory\n- Dog: Rex.\n- Tea, no sugar.")
    scoped.remember(ANN_TEAM, "Rex visits the office")
    scoped.remember(BOB_CTX, "Bob's cat is Rex")
    BoundedMemory(store, settings=SETTINGS).apply(HELPER, "add", "user", "Owns Rex the dog")
    agent = AgentMemory(store, settings=SETTINGS)
    agent.store_entry(HELPER, "dog", "Ann's dog is Rex")
    agent.store_entry(HELPER, "pets", "Dogs like Rex need walks", visibility="shared")
    app = create_app(store, tokens=TOKENS, checkpointer=backend.checkpointer, settings=SETTINGS)
    return TestClient(app)


def test_preview_then_apply_forgets_the_callers_memory_only(backend: Backend) -> None:
    client = client_over(backend)
    answer = client.post("/api/forget/preview", json={"text": "rex"}, headers=ANN)
    assert answer.status_code == 200, answer.text
    preview = answer.json()
    places = {(p["kind"], p["where"], p["editable"]) for p in preview["places"]}
    assert places == {
        ("note", "personal", True),
        ("document", "personal", True),
        ("history", "personal", True),
        ("note", "team", True),
        ("bounded_memory", "bounded_memory", True),
        ("agent_memory", "agent_private", True),
        ("agent_memory", "agent_shared", False),
    }
    note = next(p for p in preview["places"] if p["where"] == "personal" and p["kind"] == "note")
    assert note["provenance"]["actor"] == "ann" and note["label"].startswith("personal memory")
    shared = next(p for p in preview["places"] if p["where"] == "agent_shared")
    assert "actor" not in (shared["provenance"] or {})
    assert "platform admin" in shared["reason"]

    refused = client.post(
        f"/api/forget/{preview['preview_id']}/apply", json={"places": [shared["id"]]}, headers=ANN
    )
    assert refused.status_code == 400 and "platform admin" in refused.json()["detail"]
    theirs = client.post(f"/api/forget/{preview['preview_id']}/apply", headers=BOB)
    assert theirs.status_code == 404

    applied = client.post(f"/api/forget/{preview['preview_id']}/apply", headers=ANN)
    assert applied.status_code == 200, applied.text
    assert applied.json()["removed"] == 6
    assert all(o["done"] for o in applied.json()["outcomes"])
    again = client.post(f"/api/forget/{preview['preview_id']}/apply", headers=ANN)
    assert again.status_code == 404

    store = backend.store
    scoped = ScopedMemory(store, settings=SETTINGS)
    assert [n.body for n in scoped.list_notes(ANN_CTX)] == ["The offsite is in Lisbon"]
    assert scoped.list_notes(ANN_TEAM) == []
    assert [n.body for n in scoped.list_notes(BOB_CTX)] == ["Bob's cat is Rex"]
    document = scoped.read_document(ANN_CTX)
    assert document is not None and document.text == "# Memory\n- Tea, no sugar."
    assert document.provenance is not None and document.provenance.source == "forget"
    assert BoundedMemory(store, settings=SETTINGS).read(HELPER)["user"].entries == []
    keys = [e.key for e in AgentMemory(store, settings=SETTINGS).entries(HELPER)]
    assert keys == ["pets"]
    after = client.post("/api/forget/preview", json={"text": "Rex"}, headers=ANN).json()
    assert [p["where"] for p in after["places"]] == ["agent_shared"]


def test_a_subset_of_places_and_an_admin_forgetting_a_shared_entry(backend: Backend) -> None:
    client = client_over(backend)
    preview = client.post("/api/forget/preview", json={"text": "Rex"}, headers=ANN).json()
    note = next(p for p in preview["places"] if p["kind"] == "note" and p["where"] == "personal")
    applied = client.post(
        f"/api/forget/{preview['preview_id']}/apply", json={"places": [note["id"]]}, headers=ANN
    ).json()
    assert [(o["id"], o["detail"]) for o in applied["outcomes"]] == [(note["id"], "note deleted")]
    left = client.post("/api/forget/preview", json={"text": "Rex"}, headers=ANN).json()
    assert len(left["places"]) == len(preview["places"]) - 1

    admin = client.post("/api/forget/preview", json={"text": "Rex"}, headers=ROOT).json()
    assert [(p["where"], p["editable"]) for p in admin["places"]] == [("agent_shared", True)]
    done = client.post(f"/api/forget/{admin['preview_id']}/apply", headers=ROOT).json()
    assert done["removed"] == 1
    assert [e.key for e in AgentMemory(backend.store).entries(HELPER)] == ["dog"]
    assert ProfileMemory(backend.store).read(ANN_CTX) is None


def test_an_empty_text_or_a_bad_request_is_refused_and_changes_nothing(backend: Backend) -> None:
    client = client_over(backend)
    for text in ("", "   "):
        answer = client.post("/api/forget/preview", json={"text": text}, headers=ANN)
        assert answer.status_code == 400
        assert answer.json() == {
            "detail": "the text to forget is empty; name the fact or the word to forget"
        }
    assert client.post("/api/forget/preview", json={}, headers=ANN).status_code == 422
    assert client.post("/api/forget/preview", json={"text": "Rex"}).status_code == 401
    assert client.post("/api/forget/nope/apply", headers=ANN).status_code == 404
    preview = client.post("/api/forget/preview", json={"text": "Rex"}, headers=ANN).json()
    unknown = client.post(
        f"/api/forget/{preview['preview_id']}/apply", json={"places": ["nope"]}, headers=ANN
    )
    assert unknown.status_code == 400 and "no such place" in unknown.json()["detail"]
    assert len(ScopedMemory(backend.store).list_notes(ANN_CTX)) == 2


def _turn(backend: Backend, thread: str, text: str, user: str) -> None:
    graph = create_memory_graph(
        OfflineModel(), store=backend.store, checkpointer=backend.checkpointer, settings=SETTINGS
    )
    config: Any = {"configurable": {"thread_id": thread}, "metadata": {OWNER_METADATA_KEY: user}}
    context = {"user_id": user, "org_id": "o1"}
    graph.invoke({"messages": [HumanMessage(text)]}, config, context=context)


def test_the_callers_threads_that_mention_the_text_are_listed_and_deleted_only_when_asked(
    backend: Backend,
) -> None:
    client = client_over(backend)
    _turn(backend, "ann-biscuit", "Biscuit chewed my slippers today", "ann")
    _turn(backend, "ann-tea", "I drink tea without sugar", "ann")
    _turn(backend, "bob-biscuit", "Biscuit is my cat's name", "bob")
    kept = client.post("/api/forget/preview", json={"text": "Biscuit"}, headers=ANN).json()
    assert kept["threads"] == ["ann-biscuit"]
    applied = client.post(f"/api/forget/{kept['preview_id']}/apply", headers=ANN, json={})
    assert applied.json()["threads_deleted"] == []
    config: Any = {"configurable": {"thread_id": "ann-biscuit"}}
    assert backend.checkpointer.get_tuple(config) is not None

    asked = client.post("/api/forget/preview", json={"text": "Biscuit"}, headers=ANN).json()
    assert asked["threads"] == ["ann-biscuit"]
    body = {"delete_threads": True}
    deleted = client.post(f"/api/forget/{asked['preview_id']}/apply", headers=ANN, json=body)
    assert deleted.json()["threads_deleted"] == ["ann-biscuit"]
    assert backend.checkpointer.get_tuple(config) is None
    for other in ("ann-tea", "bob-biscuit"):
        assert backend.checkpointer.get_tuple({"configurable": {"thread_id": other}}) is not None
    again = client.post("/api/forget/preview", json={"text": "Biscuit"}, headers=ANN).json()
    assert again["threads"] == []

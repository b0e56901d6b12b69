"""The console says up front when a memory feature is off for the caller (the answer the page
reads before it shows a form), and the answer agrees with what a write then meets, on all
three backends: agent memory (agent_memory) for agent entries, scoped memory
(scoped_memory) for the document and search."""

from __future__ import annotations

from fastapi.testclient import TestClient

from memory_plugin import Backend
from memory_plugin.server import create_app
from memory_plugin.server.switches import AGENT_MEMORY_OFF, SCOPED_MEMORY_OFF

TOKENS = {"ann-token": {"identity": "ann", "agent_id": "helper", "admin": ["platform"]}}
ANN = {"Authorization": "Bearer ann-token"}
ON = {"enabled": True, "disabled_reason": None}


def test_agent_entries_say_agent_memory_is_off_before_any_write(backend: Backend) -> None:
    client = TestClient(create_app(backend.store, tokens=TOKENS))
    listed = client.get("/api/entries/agent", headers=ANN).json()
    assert listed["switch"] == {"enabled": False, "disabled_reason": AGENT_MEMORY_OFF}
    refused = client.put("/api/entries/agent/stack", headers=ANN, json={"content": "Uses uv"})
    assert refused.status_code == 400 and "agent_memory" in refused.json()["detail"]
    on = client.put("/api/settings/user", headers=ANN, json={"set": {"agent_memory": True}})
    assert on.status_code == 200
    assert client.get("/api/entries/agent", headers=ANN).json()["switch"] == ON
    stored = client.put("/api/entries/agent/stack", headers=ANN, json={"content": "Uses uv"})
    assert stored.status_code == 200
    client.put("/api/settings/platform", headers=ANN, json={"set": {"agent_memory": False}})
    client.delete("/api/settings/user", headers=ANN)
    after = client.get("/api/entries/agent", headers=ANN).json()
    assert after["switch"]["enabled"] is False
    assert [entry["key"] for entry in after["entries"]] == ["stack"]
    assert client.delete("/api/entries/agent/stack", headers=ANN).status_code == 400


def test_the_document_says_scoped_memory_is_off_before_a_save(backend: Backend) -> None:
    client = TestClient(create_app(backend.store, tokens=TOKENS))
    assert client.get("/api/personal/document", headers=ANN).json()["switch"] == ON
    client.put("/api/settings/user", headers=ANN, json={"set": {"scoped_memory": False}})
    answer = client.get("/api/personal/document", headers=ANN).json()
    assert answer["switch"] == {"enabled": False, "disabled_reason": SCOPED_MEMORY_OFF}
    body = {"text": "# Ann\n\n- Likes tea", "expected_version": None}
    saved = client.put("/api/personal/document", headers=ANN, json=body)
    assert saved.status_code == 400 and "scoped_memory" in saved.json()["detail"]
    search = client.get("/api/personal/notes/search?q=tea", headers=ANN)
    assert search.status_code == 400 and "scoped_memory" in search.json()["detail"]

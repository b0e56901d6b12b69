"""The console when the store fails underneath it, on all three backends: every route answers
503 with one clear message (never a 500, never the request echoed), a write attempted meanwhile
changes nothing, and the console answers again as soon as the store is back."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from memory_plugin import Backend, MemoryContext, MemorySettings
from memory_plugin.scoped import ScopedMemory
from memory_plugin.server import create_app
from memory_plugin.server.access import UNAVAILABLE
from tests.faults import FaultyStore

pytestmark = pytest.mark.slow

TOKENS = {"ann-token": {"identity": "ann", "workspaces": ["acme"], "admin": ["platform"]}}
ANN = {"Authorization": "Bearer ann-token"}
SECRET = "Ann's locker code word is heron"
READS = [
    "/api/personal/document",
    "/api/personal/document/history",
    "/api/personal/notes",
    "/api/personal/notes/search?q=locker",
    "/api/team/acme/notes",
    "/api/profile",
    "/api/entries/bounded",
    "/api/entries/agent",
    "/api/settings",
    "/api/jobs/consolidation",
    "/api/workspaces",
]
WRITES: list[tuple[str, str, Any]] = [
    ("PUT", "/api/personal/document", {"text": f"- {SECRET}", "expected_version": None}),
    ("PUT", "/api/team/acme/document", {"text": f"- {SECRET}", "expected_version": None}),
    ("POST", "/api/entries/bounded", {"action": "add", "target": "memory", "content": SECRET}),
    ("PUT", "/api/entries/agent/locker", {"content": SECRET}),
    ("PUT", "/api/settings/user", {"set": {"recall_default_k": 5}}),
    ("DELETE", "/api/profile", None),
]


@pytest.fixture
def console(backend: Backend) -> tuple[TestClient, FaultyStore]:
    store = FaultyStore(backend.store)
    ScopedMemory(store).remember(MemoryContext(user_id="ann"), "Ann keeps bees")
    app = create_app(store, tokens=TOKENS, settings=MemorySettings(agent_memory=True))
    return TestClient(app, raise_server_exceptions=False), store


@pytest.mark.parametrize("fault", ["down", "read_only", "full"])
def test_a_failing_store_answers_503_and_changes_nothing(
    console: tuple[TestClient, FaultyStore], fault: Any
) -> None:
    client, store = console
    before = [client.get(path, headers=ANN).json() for path in READS]
    store.set(fault)
    reads = [client.get(path, headers=ANN) for path in READS] if fault == "down" else []
    writes = [client.request(m, path, headers=ANN, json=body) for m, path, body in WRITES]
    for answer in [*reads, *writes]:
        assert answer.status_code == 503, (answer.request.url, answer.text)
        assert answer.json() == {"detail": UNAVAILABLE}
        assert SECRET not in answer.text
    store.set(None)
    assert [client.get(path, headers=ANN).json() for path in READS] == before
    saved = client.put(
        "/api/personal/document", headers=ANN, json={"text": "- bees", "expected_version": None}
    )
    assert saved.status_code == 200 and saved.json()["document"]["version"] == 1

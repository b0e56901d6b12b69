"""A pending forget belongs to exactly one person (issue 34, point 1): two orgs each have a user
`ann` (same workspace and agent names too); the preview one takes is hers alone, whichever
backend holds the memory, and one's previews never push out the other's."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from memory_plugin import Backend, MemoryContext
from memory_plugin.agent import AgentMemory
from memory_plugin.bounded import BoundedMemory
from memory_plugin.scoped import ScopedMemory
from memory_plugin.server import create_app
from memory_plugin.server.forget import MAX_PREVIEWS
from memory_plugin.settings import MemorySettings

pytestmark = pytest.mark.slow

SETTINGS = MemorySettings(agent_memory=True, bounded_memory=True)
ANN = {"identity": "ann", "workspaces": ["acme"], "agent_id": "helper"}
TOKENS: dict[str, dict[str, Any]] = {
    "o1-ann": {**ANN, "org_id": "o1"},
    "o2-ann": {**ANN, "org_id": "o2"},
}
O1_ANN = {"Authorization": "Bearer o1-ann"}
O2_ANN = {"Authorization": "Bearer o2-ann"}


def contexts(org: str) -> tuple[MemoryContext, MemoryContext, MemoryContext]:
    """Ann's personal, team and agent contexts in `org`."""
    return (
        MemoryContext(user_id="ann", org_id=org),
        MemoryContext(user_id="ann", org_id=org, workspace_id="acme", thread_visibility="shared"),
        MemoryContext(user_id="ann", org_id=org, agent_id="helper"),
    )


def seed(backend: Backend, org: str) -> None:
    """Rex in every kind of `org`'s ann's memory."""
    personal, team, helper = contexts(org)
    scoped = ScopedMemory(backend.store, settings=SETTINGS)
    scoped.remember(personal, f"My dog is called Rex ({org})")
    scoped.write_document(personal, f"# Memory\n- Dog: Rex ({org}).\n- Tea, no sugar.")
    scoped.remember(team, f"Rex visits the {org} office")
    BoundedMemory(backend.store, settings=SETTINGS).apply(helper, "add", "user", f"Owns Rex {org}")
    AgentMemory(backend.store, settings=SETTINGS).store_entry(helper, "dog", f"Rex ({org})")


def rex_anywhere(backend: Backend, org: str) -> list[str]:
    """Every text of `org`'s ann's memory that still names Rex."""
    personal, team, helper = contexts(org)
    scoped = ScopedMemory(backend.store, settings=SETTINGS)
    document = scoped.read_document(personal)
    texts = [
        *(note.body for note in scoped.list_notes(personal)),
        *(note.body for note in scoped.list_notes(team)),
        document.text if document is not None else "",
        *BoundedMemory(backend.store, settings=SETTINGS).read(helper)["user"].entries,
        *(entry.content for entry in AgentMemory(backend.store, settings=SETTINGS).entries(helper)),
    ]
    return sorted(text for text in texts if "Rex" in text)


def client_over(backend: Backend) -> TestClient:
    seed(backend, "o1")
    seed(backend, "o2")
    app = create_app(backend.store, tokens=TOKENS, settings=SETTINGS)
    return TestClient(app)


def preview(client: TestClient, headers: dict[str, str]) -> dict[str, Any]:
    answer = client.post("/api/forget/preview", json={"text": "Rex"}, headers=headers)
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def test_another_orgs_ann_cannot_apply_anns_preview(backend: Backend) -> None:
    client = client_over(backend)
    before = rex_anywhere(backend, "o1")
    assert len(before) == 5
    theirs = preview(client, O1_ANN)
    assert len(theirs["places"]) == 6  # the five texts, and the document's former version
    assert all("o2" not in place["text"] for place in theirs["places"])

    taken = client.post(f"/api/forget/{theirs['preview_id']}/apply", headers=O2_ANN, json={})
    assert (taken.status_code, taken.json()) == (404, {"detail": "not found"})
    assert rex_anywhere(backend, "o1") == before

    own = client.post(f"/api/forget/{theirs['preview_id']}/apply", headers=O1_ANN, json={})
    assert own.status_code == 200 and own.json()["removed"] == 6
    assert rex_anywhere(backend, "o1") == []
    assert len(rex_anywhere(backend, "o2")) == 5


def test_one_persons_previews_never_push_out_anothers(backend: Backend) -> None:
    client = client_over(backend)
    kept = preview(client, O1_ANN)
    for _ in range(MAX_PREVIEWS):
        preview(client, O2_ANN)
    applied = client.post(f"/api/forget/{kept['preview_id']}/apply", headers=O1_ANN, json={})
    assert applied.status_code == 200, applied.text
    assert rex_anywhere(backend, "o1") == []

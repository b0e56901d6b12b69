"""Which workspaces the console offers, on all three backends: a token from a token table is
a member of exactly its `workspaces`; with `workspaces_from_store` (the development token of
`memory-plugin serve`) also of every workspace where the store holds its user's personal
memory, and then of those workspaces' team memory."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from memory_plugin import Backend, MemoryContext
from memory_plugin.scoped import ScopedMemory
from memory_plugin.server import create_app

TOKENS = {
    "ann-token": {"identity": "ann", "workspaces": ["acme"]},
    "org-token": {"identity": "ann", "org_id": "o1"},
}
ANN = {"Authorization": "Bearer ann-token"}
ANN_IN_O1 = {"Authorization": "Bearer org-token"}
NOT_FOUND = {"detail": "not found"}


def seed(backend: Backend) -> None:
    """Ann's notes in her chat's default workspace and in globex, team notes of globex and
    of initech (where ann has no personal memory), bob's notes in bobspace, and ann's notes
    under organisation o1."""
    scoped = ScopedMemory(backend.store)
    for ctx, text in (
        (MemoryContext(user_id="ann", workspace_id="personal"), "Ann's dog is called Rex"),
        (MemoryContext(user_id="ann", workspace_id="globex"), "Ann reviews globex invoices"),
        (
            MemoryContext(user_id="ann", workspace_id="globex", thread_visibility="shared"),
            "Globex ships on Fridays",
        ),
        (
            MemoryContext(user_id="ann", workspace_id="initech", thread_visibility="shared"),
            "Initech uses TPS reports",
        ),
        (MemoryContext(user_id="bob", workspace_id="bobspace"), "Bob's own note"),
        (MemoryContext(user_id="ann", org_id="o1", workspace_id="o1-lab"), "Ann's o1 note"),
    ):
        scoped.remember(ctx, text)


def client_for(backend: Backend, *, from_store: bool) -> TestClient:
    app = create_app(backend.store, tokens=TOKENS, workspaces_from_store=from_store)
    return TestClient(app)


def notes(client: TestClient, path: str, headers: dict[str, str]) -> Any:
    answer = client.get(path, headers=headers)
    if answer.status_code != 200:
        return answer.json()
    return [note["text"] for day in answer.json()["days"] for note in day["notes"]]


def test_the_development_token_is_offered_every_workspace_with_its_memory(
    backend: Backend,
) -> None:
    seed(backend)
    client = client_for(backend, from_store=True)
    me = client.get("/api/me", headers=ANN).json()
    assert me["workspaces"] == ["acme", "globex", "personal"]
    assert [(s["kind"], s["workspace"]) for s in me["scopes"]] == [
        ("personal", "acme"),
        ("personal", "globex"),
        ("personal", "personal"),
        ("personal", None),
        ("team", "acme"),
        ("team", "globex"),
        ("team", "personal"),
    ]
    personal = "/api/personal/notes?workspace=personal"
    assert notes(client, personal, ANN) == ["Ann's dog is called Rex"]
    assert notes(client, "/api/team/globex/notes", ANN) == ["Globex ships on Fridays"]
    assert notes(client, "/api/team/initech/notes", ANN) == NOT_FOUND
    assert notes(client, "/api/personal/notes?workspace=bobspace", ANN) == NOT_FOUND
    in_o1 = client.get("/api/me", headers=ANN_IN_O1).json()
    assert in_o1["workspaces"] == ["o1-lab"]
    assert notes(client, "/api/personal/notes?workspace=o1-lab", ANN_IN_O1) == ["Ann's o1 note"]


def test_a_token_from_a_table_never_gains_a_workspace(backend: Backend) -> None:
    seed(backend)
    client = client_for(backend, from_store=False)
    me = client.get("/api/me", headers=ANN).json()
    assert me["workspaces"] == ["acme"]
    assert [s["workspace"] for s in me["scopes"]] == ["acme", None, "acme"]
    assert notes(client, "/api/personal/notes?workspace=personal", ANN) == NOT_FOUND
    assert notes(client, "/api/team/globex/notes", ANN) == NOT_FOUND
    assert client.get("/api/me", headers=ANN_IN_O1).json()["workspaces"] == []

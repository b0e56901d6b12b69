"""Which workspaces the console offers, on all three backends: a token from a token table is
a member of exactly its `workspaces`; with `workspaces_from_store` (the development token of
`memory-plugin serve`) also of every workspace where the store holds its user's personal
memory, and then of those workspaces' team memory."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest
from fastapi.testclient import TestClient

from memory_plugin import Backend, MemoryContext
from memory_plugin.cli import main
from memory_plugin.scoped import ScopedMemory
from memory_plugin.server import create_app

TOKENS = {
    "ann-token": {"identity": "ann", "workspaces": ["acme"]},
    "org-token": {"identity": "ann", "org_id": "o1"},
}
ANN = {"Authorization": "Bearer ann-token"}
ANN_IN_O1 = {"Authorization": "Bearer org-token"}
NOT_FOUND = {"detail": "not found"}
TOLD = "remember that the release freeze starts on Friday\n/quit\n"
FREEZE = "The release freeze starts on Friday."


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


def chat(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> str:
    """`memory-plugin chat --user ann --workspace acme --shared` over `backend` on the offline
    model, told to remember the release freeze; what it printed."""
    from memory_plugin.offline import chat as chatbot

    real = chatbot.chat
    out = io.StringIO()
    monkeypatch.setattr(chatbot, "connect", lambda url, **_: contextlib.nullcontext(backend))
    monkeypatch.setattr(chatbot, "chat", lambda args: real(args, io.StringIO(TOLD), out))
    monkeypatch.delenv("MEMORY_MODEL", raising=False)
    assert main(["chat", "--user", "ann", "--workspace", "acme", "--shared"]) == 0
    return out.getvalue()


def serve(
    backend: Backend, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[TestClient, dict[str, str]]:
    """The app `memory-plugin serve --user ann` would listen with, over `backend`, and the
    development token it prints."""
    import uvicorn

    from memory_plugin import server

    real = server.create_app
    served: list[Any] = []

    def create_app(*, url: str | None, **options: Any) -> Any:
        return real(backend.store, checkpointer=backend.checkpointer, **options)

    monkeypatch.setattr(server, "create_app", create_app)
    monkeypatch.setattr(uvicorn, "run", lambda app, **_: served.append(app))
    monkeypatch.delenv("MEMORY_AUTH_TOKENS", raising=False)
    capsys.readouterr()
    assert main(["serve", "--user", "ann"]) == 0
    (token,) = [
        line.removeprefix("Development token: ")
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("Development token: ")
    ]
    return TestClient(served[0]), {"Authorization": f"Bearer {token}"}


@pytest.mark.slow
def test_team_memory_told_in_a_shared_chat_is_the_consoles_under_its_workspace(
    backend: Backend, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "Noted: the release freeze starts on Friday." in chat(backend, monkeypatch)
    client, ann = serve(backend, monkeypatch, capsys)
    me = client.get("/api/me", headers=ann).json()
    assert "acme" in me["workspaces"]
    assert ("team", "acme") in [(s["kind"], s["workspace"]) for s in me["scopes"]]
    listed = client.get("/api/workspaces", headers=ann).json()["workspaces"]
    assert {"workspace": "acme", "personal": False, "team": True} in listed
    assert notes(client, "/api/team/acme/notes", ann) == [FREEZE]
    assert notes(client, "/api/personal/notes?workspace=acme", ann) == []
    threads = client.get("/api/threads", headers=ann).json()["threads"]
    assert [thread["thread_id"] for thread in threads] == ["team:acme:main"]


@pytest.mark.slow
def test_a_non_member_neither_lists_nor_opens_a_workspaces_team_memory(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A token from a table: ann owns the chat thread in acme, but her token names no
    workspace, so acme stays out of her reach; bob's names acme."""
    chat(backend, monkeypatch)
    tokens = {"ann": {"identity": "ann"}, "bob": {"identity": "bob", "workspaces": ["acme"]}}
    client = TestClient(create_app(backend.store, tokens=tokens, checkpointer=backend.checkpointer))
    ann, bob = ({"Authorization": f"Bearer {who}"} for who in ("ann", "bob"))
    assert client.get("/api/me", headers=ann).json()["workspaces"] == []
    assert client.get("/api/workspaces", headers=ann).json() == {"workspaces": []}
    assert notes(client, "/api/team/acme/notes", ann) == NOT_FOUND
    assert client.get("/api/team/acme/document", headers=ann).json() == NOT_FOUND
    assert client.get("/api/workspaces", headers=bob).json() == {
        "workspaces": [{"workspace": "acme", "personal": False, "team": True}]
    }
    assert notes(client, "/api/team/acme/notes", bob) == [FREEZE]

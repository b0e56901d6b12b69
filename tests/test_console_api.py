"""The console's REST API, every route's success path, on all three backends: ann's memory
seeded as her agent writes it and through the API, read back through the API with what it
says (provenance included); the async client over an async backend."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from fastapi.testclient import TestClient
from langchain_core.messages import HumanMessage

import memory_plugin
from memory_plugin import Backend, OfflineModel, create_memory_graph
from memory_plugin.scoped import ScopedMemory
from memory_plugin.server import create_app
from memory_plugin.server.settings import WEB_SEARCH_BLOCKS
from tests.conftest import url_for
from tests.console_seed import (
    ANN,
    ANN_CTX,
    ANN_THREAD,
    MALLORY,
    SECRETS,
    SETTINGS,
    TOKENS,
    Seeded,
)
from tests.fakes import MergingModel


def get(client: TestClient, path: str) -> Any:
    answer = client.get(path, headers=ANN)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_me_lists_the_callers_scopes(seeded: tuple[TestClient, Seeded]) -> None:
    client, _ = seeded
    me = get(client, "/api/me")
    assert (me["user_id"], me["org_id"], me["agent_id"]) == ("ann", "o1", "helper")
    assert me["workspaces"] == ["acme"]
    assert me["scopes"] == [
        {
            "kind": "personal",
            "workspace": "acme",
            "label": "MEMORY.md",
            "path": "/api/personal?workspace=acme",
        },
        {"kind": "personal", "workspace": None, "label": "MEMORY.md", "path": "/api/personal"},
        {"kind": "team", "workspace": "acme", "label": "TEAM_MEMORY.md", "path": "/api/team/acme"},
    ]


def test_document_read_replace_history_and_restore(seeded: tuple[TestClient, Seeded]) -> None:
    client, _ = seeded
    first = get(client, "/api/personal/document")
    assert first["limits"] == {"soft": 18_000, "hard": 25_000}
    document = first["document"]
    assert SECRETS["document"] in document["text"]
    assert document["chars"] == len(document["text"])
    runs = get(client, "/api/jobs/consolidation")["runs"]
    folded = next(run for run in runs if run["folded"])
    assert document["provenance"] == {
        "source": "job",
        "at": document["updated_at"],
        "job": "consolidation",
        "job_run": folded["id"],
        "actor": "ann",
    }
    assert SECRETS["old_note"] in document["text"]
    (first_version,) = [
        v for v in get(client, "/api/personal/document/history")["versions"] if v["version"] == 1
    ]
    assert first_version["provenance"]["source"] == "api"
    assert first_version["provenance"]["actor"] == "ann"
    new = {"text": "# Ann\n\n- Ann now rides a bicycle", "expected_version": document["version"]}
    saved = client.put("/api/personal/document", headers=ANN, json=new)
    assert saved.status_code == 200
    assert saved.json()["document"]["version"] == document["version"] + 1
    assert saved.json()["compressed"] is False and saved.json()["warnings"] == []
    stale = client.put("/api/personal/document", headers=ANN, json={**new, "text": "# Lost"})
    assert stale.status_code == 409
    assert "changed since it was read" in stale.json()["detail"]
    history = get(client, "/api/personal/document/history")["versions"]
    assert [v["version"] for v in history[:2]] == [document["version"] + 1, document["version"]]
    restored = client.post(
        "/api/personal/document/restore", headers=ANN, json={"version": document["version"]}
    )
    assert restored.status_code == 200
    assert restored.json()["document"]["text"] == document["text"]
    assert get(client, "/api/personal/document")["document"]["text"] == document["text"]
    team = get(client, "/api/team/acme/document")["document"]
    assert SECRETS["team_document"] in team["text"]


@pytest.mark.slow
def test_notes_by_day_with_paging_and_one_note(seeded: tuple[TestClient, Seeded]) -> None:
    client, keys = seeded
    first = get(client, "/api/personal/notes?days=2")
    assert len(first["days"]) == 2
    newest = first["days"][0]["notes"][0]
    assert newest["key"] == keys.note_key
    assert SECRETS["note"] in newest["text"] and not newest["text"].startswith("- ")
    assert newest["provenance"]["actor"] == "ann"
    assert [d["day"] for d in first["days"]] == sorted(
        (d["day"] for d in first["days"]), reverse=True
    )
    seen = [d["day"] for d in first["days"]]
    older = first["older"]
    while older is not None:
        page = get(client, f"/api/personal/notes?days=2&before={older}")
        seen += [d["day"] for d in page["days"]]
        older = page["older"]
    assert len(seen) == 5 and len(set(seen)) == 5
    assert seen == sorted(seen, reverse=True)
    one = get(client, f"/api/personal/notes/{quote(keys.old_note_key)}")
    assert SECRETS["old_note"] in one["text"]
    team = get(client, "/api/team/acme/notes")["days"][0]["notes"][0]
    assert team["key"] == keys.team_note_key and SECRETS["team_note"] in team["text"]


def test_search_and_delete_a_note(seeded: tuple[TestClient, Seeded]) -> None:
    client, keys = seeded
    hits = get(client, "/api/personal/notes/search?q=locker%20code%20word&k=3")["hits"]
    assert hits and hits[0]["note"]["key"] == keys.note_key
    assert isinstance(hits[0]["score"], float)
    deleted = client.delete(f"/api/personal/notes/{quote(keys.note_key)}", headers=ANN)
    assert deleted.json() == {"deleted": keys.note_key}
    assert client.get(f"/api/personal/notes/{quote(keys.note_key)}", headers=ANN).status_code == 404
    again = client.delete(f"/api/personal/notes/{quote(keys.note_key)}", headers=ANN)
    assert again.status_code == 404
    hits = get(client, "/api/personal/notes/search?q=locker%20code%20word")["hits"]
    assert keys.note_key not in {hit["note"]["key"] for hit in hits}


def test_profile_read_and_opt_out(seeded: tuple[TestClient, Seeded]) -> None:
    client, _ = seeded
    profile = get(client, "/api/profile")
    assert (profile["enabled"], profile["reason"], profile["blocked_by_web_search"]) == (
        True,
        "enabled",
        False,
    )
    assert SECRETS["profile"] in profile["profile"]["markdown"]
    assert profile["profile"]["turn_count"] >= 1
    added = [op for change in profile["changes"] for op in change["operations"]]
    assert any(op["op"] == "ADD" and SECRETS["profile"] in op["after"] for op in added)
    assert profile["changes"][-1]["provenance"]["source"] == "code"
    assert profile["changes"][0]["provenance"]["thread_id"] == ANN_THREAD
    deleted = client.delete("/api/profile", headers=ANN)
    assert deleted.json() == {
        "deleted": True,
        "message": "Context memory is off for your account; your memory profile was "
        "permanently deleted.",
    }
    after = get(client, "/api/profile")
    assert (after["enabled"], after["profile"], after["changes"]) == (False, None, [])
    assert get(client, "/api/settings")["effective"]["profile_user"] is False


def test_bounded_entries_list_and_write(seeded: tuple[TestClient, Seeded]) -> None:
    client, _ = seeded
    bounded = get(client, "/api/entries/bounded")
    assert bounded["agent_id"] == "helper"
    (entry,) = bounded["user"]["entries"]
    assert entry["index"] == 0 and SECRETS["bounded"] in entry["text"]
    assert entry["provenance"]["source"] == "api"
    assert bounded["memory"] == {
        "entries": [],
        "used": 0,
        "limit": 2200,
        "usage": "0% — 0/2,200 chars",
    }
    replace = {
        "action": "replace",
        "target": "user",
        "old_text": "pet",
        "content": "Ann has no pet",
    }
    written = client.post("/api/entries/bounded", headers=ANN, json=replace)
    assert written.status_code == 200 and written.json()["message"].startswith("Replaced")
    assert [e["text"] for e in written.json()["user"]["entries"]] == ["Ann has no pet"]
    assert client.get("/memory", headers=ANN).json()["user"]["entries"] == ["Ann has no pet"]


def test_agent_entries_create_edit_delete(seeded: tuple[TestClient, Seeded]) -> None:
    client, _ = seeded
    listed = get(client, "/api/entries/agent")
    assert listed["agent_id"] == "helper"
    by_key = {entry["key"]: entry for entry in listed["entries"]}
    assert by_key["ann-secret"]["visibility"] == "private" and by_key["ann-secret"]["editable"]
    assert by_key["house-style"]["visibility"] == "shared"
    assert by_key["house-style"]["editable"] is True
    assert by_key["ann-secret"]["provenance"]["actor"] == "ann"
    edited = client.put(
        "/api/entries/agent/ann-secret",
        headers=ANN,
        json={"content": "Ann rotated the deploy key", "category": "ops", "importance": 0.9},
    )
    assert edited.status_code == 200
    assert (edited.json()["content"], edited.json()["category"], edited.json()["importance"]) == (
        "Ann rotated the deploy key",
        "ops",
        0.9,
    )
    assert client.delete("/api/entries/agent/ann-secret", headers=ANN).json() == {
        "deleted": "ann-secret"
    }
    keys = {entry["key"] for entry in get(client, "/api/entries/agent")["entries"]}
    assert keys == {"house-style"}


@pytest.mark.slow
def test_settings_layers_side_by_side_lock_and_platform_default(
    seeded: tuple[TestClient, Seeded],
) -> None:
    client, _ = seeded
    settings = get(client, "/api/settings?space=s1")
    assert settings["effective"]["note_max_chars"] == SECRETS["user_setting"]
    assert settings["layers"]["user"]["values"] == {"note_max_chars": SECRETS["user_setting"]}
    assert settings["layers"]["space"]["values"] == {"web_search": True}
    assert set(settings["layers"]) == {"platform", "org", "space", "user"}
    assert settings["profile_switch"] == {"enabled": False, "disabled_reason": WEB_SEARCH_BLOCKS}
    field = next(f for f in settings["fields"] if f["name"] == "note_max_chars")
    assert field["default"] == 2000 and "user" in field["layers"] and field["minimum"] is not None
    assert get(client, "/api/settings")["profile_switch"]["enabled"] is True
    locked = client.put(
        "/api/settings/platform",
        headers=ANN,
        json={"set": {"recall_max_k": 12}, "lock": ["recall_max_k"]},
    )
    assert locked.status_code == 200 and "recall_max_k" in locked.json()["locked"]
    refused = client.put("/api/settings/user", headers=ANN, json={"set": {"recall_max_k": 15}})
    assert refused.status_code == 403 and "recall_max_k" in refused.json()["detail"]
    cleared = client.delete("/api/settings/user", headers=ANN)
    assert cleared.status_code == 200
    assert cleared.json()["layers"]["user"]["values"] == {}
    assert cleared.json()["effective"]["note_max_chars"] == 2000
    assert cleared.json()["effective"]["recall_max_k"] == 12


def test_summarize_now_on_the_callers_thread(seeded: tuple[TestClient, Seeded]) -> None:
    client, _ = seeded
    answer = client.post(f"/api/threads/{ANN_THREAD}/summarize", headers=ANN)
    assert answer.status_code == 200, answer.text
    assert answer.json()["kind"] == "manual"
    assert answer.json()["status"] in {"compacted", "nothing_to_compact"}


def test_consolidation_runs_and_run_now(seeded: tuple[TestClient, Seeded]) -> None:
    client, _ = seeded
    runs = get(client, "/api/jobs/consolidation?limit=5")["runs"]
    assert [run["trigger"] for run in runs] == ["manual", "manual"]
    assert {run["scopes"][0]["kind"] for run in runs if run["scopes"]} <= {"personal", "team"}
    assert all(run["by"] == "ann" and run["status"] == "succeeded" for run in runs)
    assert len(get(client, "/api/jobs/consolidation?limit=1")["runs"]) == 1


@pytest.mark.slow
async def test_async_client_over_an_async_backend(abackend: Backend) -> None:
    app = create_app(
        abackend.store, tokens=TOKENS, checkpointer=abackend.checkpointer, settings=SETTINGS
    )
    graph = create_memory_graph(
        OfflineModel(), store=abackend.store, checkpointer=abackend.checkpointer, settings=SETTINGS
    )
    config: Any = {"configurable": {"thread_id": "async-thread"}, "metadata": {"owner": "ann"}}
    await graph.ainvoke({"messages": [HumanMessage("Hello there")]}, config, context=ANN_CTX)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://console") as client:
        body = {"text": "# Team\n\n- Async release", "expected_version": None}
        saved = await client.put("/api/team/acme/document", headers=ANN, json=body)
        assert saved.status_code == 200 and saved.json()["document"]["version"] == 1
        read = await client.get("/api/team/acme/document", headers=ANN)
        assert read.json()["document"]["text"] == body["text"]
        notes = await client.get("/api/personal/notes", headers=ANN)
        assert notes.json() == {"days": [], "older": None}
        entry = await client.put("/api/entries/agent/k", headers=ANN, json={"content": "Use uv"})
        assert entry.status_code == 200
        summary = await client.post("/api/threads/async-thread/summarize", headers=ANN)
        assert summary.status_code == 200 and summary.json()["kind"] == "manual"
        run = await client.post("/api/team/acme/consolidate", headers=ANN)
        assert run.status_code == 200 and run.json()["trigger"] == "manual"
        runs = (await client.get("/api/jobs/consolidation", headers=ANN)).json()["runs"]
        assert [r["id"] for r in runs] == [run.json()["id"]]


def test_the_model_comes_from_the_environment(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_MAINTENANCE_MODEL", "tests.fakes:merging_model")
    ScopedMemory(backend.store).import_notes(ANN_CTX, [(date(2026, 1, 5), "Ann likes kites")])
    app = create_app(backend.store, tokens=TOKENS, settings=SETTINGS)
    run = TestClient(app).post("/api/personal/consolidate", headers=ANN).json()
    assert (run["status"], run["folded"]) == ("succeeded", 1)
    document = TestClient(app).get("/api/personal/document", headers=ANN).json()["document"]
    assert document["text"] == "- Ann likes kites"
    assert isinstance(app.state.console.model, MergingModel)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_an_app_opened_from_a_url_summarizes_threads_saved_there(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """(memory:// keeps nothing once closed: only the durable backends.)"""
    backend_url = url_for(kind, request, tmp_path)
    with memory_plugin.connect(backend_url) as backend:
        graph = create_memory_graph(
            OfflineModel(),
            store=backend.store,
            checkpointer=backend.checkpointer,
            settings=SETTINGS,
        )
        config: Any = {"configurable": {"thread_id": "saved"}, "metadata": {"owner": "ann"}}
        graph.invoke({"messages": [HumanMessage("Hello there")]}, config, context=ANN_CTX)
    with TestClient(create_app(url=backend_url, tokens=TOKENS, settings=SETTINGS)) as client:
        answer = client.post("/api/threads/saved/summarize", headers=ANN)
        assert answer.status_code == 200, answer.text
        assert answer.json()["kind"] == "manual"
        mallory = client.post("/api/threads/saved/summarize", headers=MALLORY)
        assert mallory.json() == {"detail": "not found"}

"""Deleting a user (issue 26 part 3) on all three backends: with a marker string in every kind
of ann's memory (tests/console_seed.py), delete-user removes every item of it and her settings
layer (with threads: her threads' journals too), reports counts per kind; afterwards her
export is empty and no search or scan of the store finds her text; team memory stays. Only a
platform admin may; a user with no memory is a clear error that changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from langchain_core.messages import HumanMessage

from memory_plugin import AgentMemory, Backend, OfflineModel, connect, create_memory_graph
from memory_plugin.cli import main
from memory_plugin.plans import run
from memory_plugin.privacy.archive import export_plan
from memory_plugin.privacy.erase import erase_plan
from memory_plugin.privacy.inventory import Owner, UnknownUserError
from memory_plugin.scope.namespaces import ROOT
from memory_plugin.scoped import ScopedMemory
from memory_plugin.server import create_app
from tests.console_seed import ANN, ANN_CTX, ANN_TEAM, BOB, SECRETS, SETTINGS, TOKENS, Seeded

ANN_OWNER = Owner("ann", "o1")
MINE = ("document", "note", "old_note", "entry", "bounded", "profile")
TEAM = ("team_document", "team_note")


def stored_text(store: Any) -> str:
    """Every value in the store, as one text."""
    items = store.search((ROOT,), limit=100_000)
    return "\n".join(json.dumps(item.value, ensure_ascii=False) for item in items)


def assert_gone(backend: Backend) -> None:
    store = backend.store
    assert run(store, export_plan(ANN_OWNER)).items == ()
    text = stored_text(store)
    for name in MINE:
        assert SECRETS[name] not in text, name
        assert ScopedMemory(store).recall(ANN_CTX, SECRETS[name]) == [], name
        for item in store.search((ROOT,), query=SECRETS[name], limit=50):
            assert SECRETS[name] not in json.dumps(item.value), name
    agent = AgentMemory(store, defaults=SETTINGS)
    ctx = ANN_CTX.__class__(user_id="ann", org_id="o1", agent_id="helper")
    hits = agent.recall(ctx, SECRETS["entry"])
    assert all(SECRETS["entry"] not in hit.entry.content for hit in hits)
    assert '"note_max_chars": 4321' not in text
    for name in TEAM:
        assert SECRETS[name] in text, name  # the workspace's memory is not ann's alone


def test_rest_delete_user_removes_every_kind_and_reports_counts(
    seeded: tuple[TestClient, Seeded], backend: Backend
) -> None:
    client, _ = seeded
    exported = json.loads(run(backend.store, export_plan(ANN_OWNER)).dumps())
    answer = client.delete("/api/users/ann?threads=true", headers=ANN)
    assert answer.status_code == 200, answer.text
    report = answer.json()
    assert report["deleted"] == exported["counts"]
    assert all(report["deleted"][kind] >= 1 for kind in report["deleted"])
    assert report["threads"] == 1
    assert_gone(backend)
    assert SECRETS["thread"] not in stored_text(backend.store)  # the journal went too
    assert ScopedMemory(backend.store).list_notes(ANN_TEAM) != []
    again = client.delete("/api/users/ann", headers=ANN)
    assert again.status_code == 400
    assert again.json()["detail"] == (
        "user 'ann' of org 'o1' has no memory in this store; nothing deleted"
    )


def test_without_threads_the_journals_stay(
    seeded: tuple[TestClient, Seeded], backend: Backend
) -> None:
    client, _ = seeded
    answer = client.delete("/api/users/ann", headers=ANN)
    assert answer.status_code == 200, answer.text
    assert answer.json()["threads"] is None
    assert_gone(backend)
    assert SECRETS["thread"] in stored_text(backend.store)


def test_only_a_platform_admin_deletes_a_user(
    seeded: tuple[TestClient, Seeded], backend: Backend
) -> None:
    client, _ = seeded
    before = stored_text(backend.store)
    answer = client.delete("/api/users/ann", headers=BOB)
    assert answer.status_code == 403
    assert answer.json()["detail"] == "only a platform admin may delete a user"
    assert client.delete("/api/users/ann").status_code == 401
    assert stored_text(backend.store) == before


def test_deleting_a_user_with_no_memory_changes_nothing(backend: Backend) -> None:
    ScopedMemory(backend.store).remember(ANN_CTX, "Ann keeps a marker Zebra1234")
    before = stored_text(backend.store)
    with pytest.raises(UnknownUserError, match="user 'nobody' has no memory in this store"):
        run(backend.store, erase_plan(Owner("nobody")))
    with pytest.raises(UnknownUserError):
        run(backend.store, erase_plan(Owner("ann")))  # ann's memory is org o1's
    assert stored_text(backend.store) == before


def test_a_deleted_user_starts_again_at_the_first_note_of_the_day(backend: Backend) -> None:
    scoped = ScopedMemory(backend.store)
    first = scoped.remember(ANN_CTX, "Ann likes kayaks")
    scoped.remember(ANN_CTX, "Ann likes canoes")
    run(backend.store, erase_plan(ANN_OWNER))
    again = scoped.remember(ANN_CTX, "Ann likes rafts")
    assert again.key == first.key
    assert [note.body for note in scoped.list_notes(ANN_CTX)] == ["Ann likes rafts"]


def test_cli_delete_user(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    with connect(url) as opened:
        ScopedMemory(opened.store).remember(ANN_CTX, "Ann's locker code word is Wombat8812")
    assert main(["delete-user", "nobody", "--url", url]) == 2
    assert "user 'nobody' has no memory in this store; nothing deleted" in capsys.readouterr().err
    assert main(["delete-user", "ann", "--org", "o1", "--threads", "--url", url]) == 0
    out = capsys.readouterr().out
    assert out == (
        "Deleted user 'ann' of org 'o1': 1 scoped_memory, 0 profile, 0 agent_memory, "
        "0 bounded_memory, "
        "0 settings items; 0 threads with their journals and summaries.\n"
    )
    assert main(["export", "--user", "ann", "--org", "o1", "--url", url]) == 2
    with connect(url) as opened:
        assert "Wombat8812" not in stored_text(opened.store)


async def test_async_backend_export_import_and_delete(abackend: Backend) -> None:
    app = create_app(
        abackend.store, tokens=TOKENS, checkpointer=abackend.checkpointer, settings=SETTINGS
    )
    graph = create_memory_graph(
        OfflineModel(), store=abackend.store, checkpointer=abackend.checkpointer, settings=SETTINGS
    )
    config: Any = {"configurable": {"thread_id": "async-thread"}, "metadata": {"owner": "ann"}}
    await graph.ainvoke(
        {"messages": [HumanMessage("My cat is Gecko1187")]}, config, context=ANN_CTX
    )
    scoped = ScopedMemory(abackend.store)
    first = await scoped.aremember(ANN_CTX, "Ann's locker code word is Wombat8812")
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://console") as client:
        exported = await client.get("/api/export", headers=ANN)
        assert exported.status_code == 200 and "Wombat8812" in exported.text
        deleted = await client.delete("/api/users/ann?threads=true", headers=ANN)
        assert deleted.status_code == 200, deleted.text
        assert deleted.json()["threads"] == 1
        assert deleted.json()["deleted"]["scoped_memory"] >= 1
        assert (await scoped.alist_notes(ANN_CTX)) == []
        assert (await abackend.store.asearch(("memory_plugin", "thread"))) == []
        imported = await client.post("/api/import", headers=ANN, content=exported.text)
        assert imported.status_code == 200, imported.text
        again = await client.get("/api/export", headers=ANN)
        assert again.text == exported.text
        assert (await client.delete("/api/users/ann", headers=ANN)).status_code == 200
        restart = await scoped.aremember(ANN_CTX, "Ann likes rafts")
        assert restart.key == first.key.split("#")[0] + "#000001"
        merged = await client.post("/api/import?merge=true", headers=ANN, content=exported.text)
        assert merged.status_code == 200, merged.text
        assert merged.json()["appended"] != []
    bodies = [note.body for note in await scoped.alist_notes(ANN_CTX)]
    assert len(bodies) == len(set(bodies))
    assert {"Ann likes rafts", "Ann's locker code word is Wombat8812"} <= set(bodies)

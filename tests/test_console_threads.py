"""The console's threads: a user's threads listed from the checkpointer (their owner, newest
first, paged) and Summarize now on each, on all three backends, for threads the chatbot made
(its real code path), threads run with invoke and ainvoke, and threads nobody owns."""

from __future__ import annotations

import io
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
    plans,
)
from memory_plugin.context_management.owners import release_plan
from memory_plugin.offline.chat import Chat, thread_id
from memory_plugin.scope.identity import OWNER_METADATA_KEY
from memory_plugin.server import create_app
from memory_plugin.server.switches import SUMMARIZE_OFF

SETTINGS = MemorySettings(compaction_manual=True)
TOKENS = {
    "ann-token": {"identity": "ann"},
    "mallory-token": {"identity": "mallory"},
    "bob-token": {"identity": "bob"},
    "seven-token": {"identity": "7"},
}
ANN = {"Authorization": "Bearer ann-token"}
MALLORY = {"Authorization": "Bearer mallory-token"}
BOB = {"Authorization": "Bearer bob-token"}
NOT_FOUND = {"detail": "not found"}


def graph_of(backend: Backend) -> Any:
    return create_memory_graph(
        OfflineModel(), store=backend.store, checkpointer=backend.checkpointer, settings=SETTINGS
    )


def run(backend: Backend, thread: str, text: str, owner: Any, user: str = "ann") -> None:
    """One turn of `user` on `thread`, its runs recording `owner` (none: as before owners)."""
    config: Any = {"configurable": {"thread_id": thread}}
    if owner is not None:
        config["metadata"] = {OWNER_METADATA_KEY: owner}
    graph_of(backend).invoke({"messages": [HumanMessage(text)]}, config, context={"user_id": user})


def console(backend: Backend, settings: MemorySettings = SETTINGS) -> TestClient:
    app = create_app(
        backend.store, tokens=TOKENS, checkpointer=backend.checkpointer, settings=settings
    )
    return TestClient(app)


def listed(client: TestClient, headers: dict[str, str], **query: Any) -> dict[str, Any]:
    answer = client.get("/api/threads", headers=headers, params=query)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


@pytest.mark.slow
def test_a_chat_thread_is_listed_and_summarized_for_its_owner_only(backend: Backend) -> None:
    ctx = MemoryContext(user_id="ann", workspace_id="personal")
    chat = Chat(backend, OfflineModel(), ctx, thread_id(ctx, "main"), io.StringIO())
    chat.send("Remember that my dog is called Rex.")
    chat.send("What is my dog called?")
    run(backend, "from-before-owners", "Hello from an old thread", owner=None)
    plans.run(backend.store, release_plan("from-before-owners"))  # as run before owners
    run(backend, "mallory-thread", "Hello, I am Mallory", owner="mallory", user="mallory")
    client = console(backend)
    page = listed(client, ANN)
    assert [t["thread_id"] for t in page["threads"]] == ["user:personal:ann:main"]
    (thread,) = page["threads"]
    assert thread["last_message"] == "What is my dog called?"
    assert thread["updated_at"].startswith("20")
    assert (page["older"], page["summarize"]) == (None, {"enabled": True, "disabled_reason": None})
    path = "/api/threads/user%3Apersonal%3Aann%3Amain/summarize"
    answer = client.post(path, headers=ANN)
    assert answer.status_code == 200, answer.text
    assert answer.json()["kind"] == "manual" and answer.json()["message"]
    assert [t["thread_id"] for t in listed(client, ANN)["threads"]] == ["user:personal:ann:main"]
    assert client.post(path, headers=MALLORY).json() == NOT_FOUND
    assert client.post("/api/threads/from-before-owners/summarize", headers=ANN).json() == (
        NOT_FOUND
    )
    assert [t["thread_id"] for t in listed(client, MALLORY)["threads"]] == ["mallory-thread"]
    assert listed(client, BOB)["threads"] == []


def test_threads_come_newest_first_a_page_at_a_time(backend: Backend) -> None:
    for n in range(5):
        run(backend, f"ann-{n}", f"Message number {n}", owner="ann")
    run(backend, "ann-1", "Back to the second thread", owner="ann")
    client = console(backend)
    seen: list[str] = []
    before = None
    while True:
        page = listed(client, ANN, limit=2, **({"before": before} if before else {}))
        assert len(page["threads"]) <= 2
        seen += [t["thread_id"] for t in page["threads"]]
        before = page["older"]
        if before is None:
            break
    assert seen == ["ann-1", "ann-4", "ann-3", "ann-2", "ann-0"]
    first = listed(client, ANN, limit=1)["threads"][0]
    assert first["last_message"] == "Back to the second thread"


@pytest.mark.slow
def test_the_owner_is_the_newest_one_a_checkpoint_records(backend: Backend) -> None:
    """A fork (update_state, as the chatbot takes back a failed turn) records no owner and
    keeps the thread its owner's; a later run recording another owner makes it theirs, and
    one recording an owner that is no user id (7, not "7") makes it nobody's."""
    run(backend, "forked", "Remember that the fork keeps its owner.", owner="ann")
    graph = graph_of(backend)
    config: Any = {"configurable": {"thread_id": "forked"}}
    first = list(graph.get_state_history(config))[-2].config
    graph.update_state(first, None, as_node="__copy__")
    assert OWNER_METADATA_KEY not in graph.get_state(config).metadata
    run(backend, "handed-over", "Hello", owner="ann")
    run(backend, "handed-over", "Hello again", owner="bob", user="bob")
    run(backend, "numbered", "Hello", owner="ann")
    run(backend, "numbered", "Hello again", owner=7)
    client = console(backend)
    assert listed(client, {"Authorization": "Bearer seven-token"})["threads"] == []
    assert [t["thread_id"] for t in listed(client, ANN)["threads"]] == ["forked"]
    assert client.post("/api/threads/forked/summarize", headers=ANN).status_code == 200
    assert [t["thread_id"] for t in listed(client, BOB)["threads"]] == ["handed-over"]
    assert client.post("/api/threads/handed-over/summarize", headers=ANN).json() == NOT_FOUND
    assert client.post("/api/threads/handed-over/summarize", headers=BOB).status_code == 200


def test_the_page_says_up_front_when_summarize_now_is_off(backend: Backend) -> None:
    run(backend, "ann-thread", "Hello", owner="ann")
    page = listed(console(backend, MemorySettings()), ANN)
    assert [t["thread_id"] for t in page["threads"]] == ["ann-thread"]
    assert page["summarize"] == {"enabled": False, "disabled_reason": SUMMARIZE_OFF}


@pytest.mark.parametrize("query", [{"limit": 0}, {"limit": 101}, {"before": "x" * 65}])
def test_a_bad_page_is_refused(backend: Backend, query: dict[str, Any]) -> None:
    answer = console(backend).get("/api/threads", headers=ANN, params=query)
    assert answer.status_code == 422


async def test_threads_run_with_ainvoke_over_an_async_backend(abackend: Backend) -> None:
    graph = graph_of(abackend)
    for thread, owner in (("first", "ann"), ("theirs", "mallory"), ("second", "ann")):
        config: Any = {"configurable": {"thread_id": thread}, "metadata": {"owner": owner}}
        await graph.ainvoke(
            {"messages": [HumanMessage(f"Hello from {thread}")]}, config, context={"user_id": owner}
        )
    app = create_app(
        abackend.store, tokens=TOKENS, checkpointer=abackend.checkpointer, settings=SETTINGS
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://console") as client:
        page = (await client.get("/api/threads?limit=1", headers=ANN)).json()
        assert [t["thread_id"] for t in page["threads"]] == ["second"]
        rest = await client.get(f"/api/threads?limit=1&before={page['older']}", headers=ANN)
        assert [t["thread_id"] for t in rest.json()["threads"]] == ["first"]
        assert rest.json()["older"] is None
        summary = await client.post("/api/threads/first/summarize", headers=ANN)
        assert summary.status_code == 200 and summary.json()["kind"] == "manual"
        theirs = await client.post("/api/threads/theirs/summarize", headers=ANN)
        assert theirs.json() == NOT_FOUND

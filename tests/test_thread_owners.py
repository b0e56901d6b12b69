"""Issue 34, point 3: whose a thread is comes from the run's context, through every door.

A conversation run as Ann with nothing but `context={"user_id": "ann"}` (the README's
`graph.invoke`, a `create_agent` agent with MemoryMiddleware, under invoke and ainvoke, the
chatbot) is Ann's: deleting her with its threads finds and deletes it, and leaves Bob's thread
alone; Bob running Ann's thread never makes it his. On all three backends; the commands
(`delete-user --threads`, `forget --threads`) on the two that a URL reopens.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage

from memory_plugin import Backend, MemoryContext, OfflineModel, connect, create_memory_graph
from memory_plugin.cli import main
from memory_plugin.context_management.journal import delete_thread
from memory_plugin.context_management.owners import RECORDS, aowned_thread_ids, thread_owner
from memory_plugin.offline.chat import Chat, thread_id
from memory_plugin.prebuilt.middleware import MemoryMiddleware
from memory_plugin.privacy.erase import aerase_user, erase_user
from memory_plugin.privacy.inventory import Owner
from memory_plugin.profile.memory import await_profiles, wait_for_profiles
from memory_plugin.scope.identity import UserKey
from memory_plugin.scoped import ScopedMemory
from memory_plugin.server import create_app
from memory_plugin.settings import MemorySettings
from tests.conftest import url_for

ANN, BOB = {"user_id": "ann"}, {"user_id": "bob"}
SETTINGS = MemorySettings(compaction_manual=True)
TOKENS = {
    "ann-token": {"identity": "ann", "admin": ["platform"]},
    "bob-token": {"identity": "bob"},
}
ANN_TOKEN = {"Authorization": "Bearer ann-token"}
BOB_TOKEN = {"Authorization": "Bearer bob-token"}


def graph_of(backend: Backend) -> Any:
    """The README's graph: no owner passed anywhere but the run's context."""
    return create_memory_graph(
        OfflineModel(), store=backend.store, checkpointer=backend.checkpointer, settings=SETTINGS
    )


def agent_of(backend: Backend) -> Any:
    """A create_agent agent with the memory middleware."""
    model = OfflineModel()
    return create_agent(
        model,
        tools=[],
        middleware=[MemoryMiddleware(model, settings=SETTINGS)],
        checkpointer=backend.checkpointer,
        store=backend.store,
        context_schema=MemoryContext,
    )


def turn(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


def on(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def talk(graph: Any) -> None:
    """Ann's thread and Bob's, then Bob on Ann's thread."""
    graph.invoke(turn("My dog is called Rex."), on("ann-thread"), context=ANN)
    graph.invoke(turn("My cat is called Tom."), on("bob-thread"), context=BOB)
    graph.invoke(turn("This is my thread now."), on("ann-thread"), context=BOB)
    assert wait_for_profiles()


async def atalk(graph: Any) -> None:
    """talk under ainvoke."""
    await graph.ainvoke(turn("My dog is called Rex."), on("ann-thread"), context=ANN)
    await graph.ainvoke(turn("My cat is called Tom."), on("bob-thread"), context=BOB)
    await graph.ainvoke(turn("This is my thread now."), on("ann-thread"), context=BOB)
    await await_profiles()


async def owned(backend: Backend, user: str) -> list[str]:
    return await aowned_thread_ids(backend.checkpointer, backend.store, UserKey(None, user))


def exists(backend: Backend, thread: str) -> bool:
    return backend.checkpointer.get_tuple(on(thread)) is not None


async def aexists(backend: Backend, thread: str) -> bool:
    return await backend.checkpointer.aget_tuple(on(thread)) is not None


@pytest.mark.slow
@pytest.mark.parametrize("door", [graph_of, agent_of], ids=["graph", "middleware"])
def test_deleting_a_user_finds_the_threads_they_ran(backend: Backend, door: Any) -> None:
    talk(door(backend))
    erased = erase_user(backend.store, Owner("bob"), checkpointer=backend.checkpointer)
    assert erased.threads == 1
    assert not exists(backend, "bob-thread") and exists(backend, "ann-thread")
    erased = erase_user(backend.store, Owner("ann"), checkpointer=backend.checkpointer)
    assert erased.threads == 1
    assert not exists(backend, "ann-thread")


@pytest.mark.slow
@pytest.mark.parametrize("door", [graph_of, agent_of], ids=["graph", "middleware"])
async def test_deleting_a_user_finds_the_threads_they_ran_async(
    abackend: Backend, door: Any
) -> None:
    await atalk(door(abackend))
    assert (await owned(abackend, "ann"), await owned(abackend, "bob")) == (
        ["ann-thread"],
        ["bob-thread"],
    )
    erased = await aerase_user(abackend.store, Owner("ann"), checkpointer=abackend.checkpointer)
    assert erased.threads == 1
    assert not await aexists(abackend, "ann-thread") and await aexists(abackend, "bob-thread")
    assert await owned(abackend, "bob") == ["bob-thread"]


@pytest.mark.slow
async def test_a_deleted_thread_id_is_free_for_its_next_user(backend: Backend) -> None:
    graph = graph_of(backend)
    graph.invoke(turn("Hello"), on("reused"), context=ANN)
    delete_thread(backend.checkpointer, backend.store, "reused")
    assert await owned(backend, "ann") == []
    graph.invoke(turn("Hello"), on("reused"), context=BOB)
    assert (await owned(backend, "ann"), await owned(backend, "bob")) == ([], ["reused"])
    assert await thread_owner(backend.checkpointer, backend.store, "reused") == UserKey(None, "bob")


@pytest.mark.slow
def test_deleting_a_user_with_threads_leaves_no_record_naming_them(backend: Backend) -> None:
    ScopedMemory(backend.store).remember(MemoryContext(user_id="ann"), "Ann likes tea")
    graph = graph_of(backend)
    graph.invoke(turn("Hello"), on("deleted-elsewhere"), context=ANN)
    graph.invoke(turn("Hello"), on("bobs"), context=BOB)
    backend.checkpointer.delete_thread("deleted-elsewhere")  # as LangGraph Server's API does
    assert backend.store.search(RECORDS, filter={"owner": "ann"}) != []
    erase_user(backend.store, Owner("ann"), checkpointer=backend.checkpointer)
    assert [item.value for item in backend.store.search(RECORDS)] == [{"owner": "bob"}]


@pytest.mark.slow
def test_a_chat_thread_is_deleted_with_its_user(backend: Backend) -> None:
    threads = []
    for user in ("ann", "bob"):
        ctx = MemoryContext(user_id=user)
        threads.append(thread_id(ctx, "main"))
        Chat(backend, OfflineModel(), ctx, threads[-1], io.StringIO()).send("Hi")
    assert wait_for_profiles()
    erased = erase_user(backend.store, Owner("ann"), checkpointer=backend.checkpointer)
    assert erased.threads == 1
    assert not exists(backend, threads[0]) and exists(backend, threads[1])


@pytest.mark.slow
async def test_the_console_lists_summarizes_and_deletes_a_graph_thread(
    abackend: Backend,
) -> None:
    await atalk(graph_of(abackend))
    app = create_app(
        abackend.store, tokens=TOKENS, checkpointer=abackend.checkpointer, settings=SETTINGS
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://console") as client:
        page = (await client.get("/api/threads", headers=ANN_TOKEN)).json()
        assert [t["thread_id"] for t in page["threads"]] == ["ann-thread"]
        mine = await client.post("/api/threads/ann-thread/summarize", headers=ANN_TOKEN)
        assert mine.status_code == 200 and mine.json()["kind"] == "manual"
        theirs = await client.post("/api/threads/ann-thread/summarize", headers=BOB_TOKEN)
        assert theirs.status_code == 404
        deleted = await client.delete("/api/users/ann?threads=true", headers=ANN_TOKEN)
        assert deleted.status_code == 200, deleted.text
        assert deleted.json()["threads"] == 1
    assert not await aexists(abackend, "ann-thread") and await aexists(abackend, "bob-thread")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_the_commands_delete_the_threads_of_the_readme_graph(
    kind: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = url_for(kind, request, tmp_path)
    with connect(url) as backend:
        talk(graph_of(backend))
    capsys.readouterr()
    assert main(["forget", "--user", "ann", "Rex", "--threads", "--yes", "--url", url]) == 0
    assert "Deleted 1 thread(s): ann-thread\n" in capsys.readouterr().out
    with connect(url) as backend:
        assert not exists(backend, "ann-thread") and exists(backend, "bob-thread")
    assert main(["delete-user", "bob", "--threads", "--url", url]) == 0
    assert "; 1 threads with their journals and summaries." in capsys.readouterr().out
    with connect(url) as backend:
        assert not exists(backend, "bob-thread")

"""Memory is read once per session and trusted until something changes it: an idle turn
checks the versions of what it read instead of reading it again, and any write, from this
graph, another door or another process, reaches the next model call."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.config import get_store
from langgraph.store.base import GetOp, Op, PutOp, SearchOp

from memory_plugin import Backend, MemoryContext, connect, create_memory_graph
from memory_plugin.backends.versions import Reads, ReadVersions
from memory_plugin.offline.demo import DemoModel
from memory_plugin.plans import run
from memory_plugin.profile.memory import await_profiles, wait_for_profiles
from memory_plugin.scoped import ScopedMemory

ANN = MemoryContext(user_id="ann")
PROMPT = "You are Ann's assistant."
NOTES = ("memory_plugin", "personal", "ann", "notes")


class Reading:
    """Counts the memory reads (gets and searches outside thread journals) of a store."""

    def __init__(self, store: Any) -> None:
        self.reads = 0
        batch, abatch = store.batch, store.abatch

        def counted(ops: Iterable[Op]) -> list[Any]:
            ops = list(ops)
            self.count(ops)
            return batch(ops)

        async def acounted(ops: Iterable[Op]) -> list[Any]:
            ops = list(ops)
            self.count(ops)
            return await abatch(ops)

        store.batch, store.abatch = counted, acounted

    def count(self, ops: list[Op]) -> None:
        for op in ops:
            namespace = op.namespace if isinstance(op, GetOp) else None
            if isinstance(op, SearchOp):
                namespace = op.namespace_prefix
            if namespace is not None and namespace[:2] != ("memory_plugin", "thread"):
                self.reads += 1


def recorded_graph(backend: Backend, seen: list[str], script: list[Any] | None = None) -> Any:
    """The prebuilt graph answering `script` (else "ok" each time); every agent model input,
    joined, goes to `seen`."""

    class Recording(DemoModel):
        def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
            if PROMPT in str(messages[0].content):
                seen.append("\n".join(str(m.content) for m in messages))
            return super()._generate(messages, *args, **kwargs)

    return create_memory_graph(
        Recording(script=script or ["ok"], repeat=script is None),
        store=backend.store,
        checkpointer=backend.checkpointer,
        system_prompt=PROMPT,
    )


def turn(graph: Any, text: str, thread: str = "t") -> list[Any]:
    """A turn, and the background work it started (which runs once its run ended)."""
    out = graph.invoke(
        {"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}}, context=ANN
    )
    assert wait_for_profiles()
    return list(out["messages"])


def test_an_idle_turn_reads_no_memory_and_a_write_elsewhere_reaches_the_next_turn(
    backend: Backend,
) -> None:
    seen: list[str] = []
    graph = recorded_graph(backend, seen)
    for text in ("one", "two"):
        turn(graph, text)
    reading = Reading(backend.store)
    turn(graph, "three")
    assert reading.reads == 0  # the versions are unchanged: nothing read again
    ScopedMemory(backend.store).remember(ANN, "The offsite moved to Lisbon")
    turn(graph, "four")
    assert reading.reads > 0  # a note was written since: read again
    assert "offsite moved to Lisbon" in seen[-1]


def test_a_removal_by_another_door_leaves_the_next_model_call(backend: Backend) -> None:
    memory = ScopedMemory(backend.store)
    memory.remember(ANN, "Ann's locker code is 4512")
    seen: list[str] = []
    graph = recorded_graph(backend, seen)
    for text in ("one", "two", "three"):
        turn(graph, text)
    assert "locker code is 4512" in seen[-1]
    (note,) = memory.list_notes(ANN)
    memory.delete_note(ANN, note.key)
    turn(graph, "four")
    assert "locker code is 4512" not in seen[-1]


@pytest.mark.parametrize("write", ["put", "delete"])
def test_every_write_under_a_namespace_changes_its_version(backend: Backend, write: str) -> None:
    store = backend.store
    store.put(NOTES, "a", {"text": "first"})
    reads = Reads(prefixes=(NOTES[:3],))
    before = run(store, iter_plan(ReadVersions(reads)))
    assert before is not None
    if write == "put":
        store.put(NOTES, "a", {"text": "second"})
    else:
        store.delete(NOTES, "a")
    after = run(store, iter_plan(ReadVersions(reads)))
    assert after is not None and after != before
    other = Reads(exact=(("memory_plugin", "personal", "bob", "notes"),))
    assert run(store, iter_plan(ReadVersions(other))) == []


def test_a_thread_journal_is_never_vouched_for(backend: Backend) -> None:
    journal = Reads(prefixes=(("memory_plugin", "thread", "t"),))
    assert run(backend.store, iter_plan(ReadVersions(journal))) is None


def iter_plan(request: Any) -> Any:
    """A plan of one request."""
    return (yield request)


def test_a_store_without_versions_is_read_every_turn() -> None:
    from langgraph.store.memory import InMemoryStore

    store = InMemoryStore()
    store.batch([PutOp(NOTES, "a", {"text": "x"})])
    assert run(store, iter_plan(ReadVersions(Reads(prefixes=(NOTES,))))) is None


def test_a_namespace_emptied_keeps_no_version_and_gets_a_new_one_when_written_again(
    backend: Backend,
) -> None:
    store = backend.store
    reads = Reads(exact=(NOTES,))
    store.put(NOTES, "a", {"text": "first"})
    (first,) = run(store, iter_plan(ReadVersions(reads)))
    store.delete(NOTES, "a")
    assert run(store, iter_plan(ReadVersions(reads))) == []  # nothing of ann's notes left
    store.put(NOTES, "a", {"text": "first"})
    (again,) = run(store, iter_plan(ReadVersions(reads)))
    assert again[1] > first[1]


def test_a_note_the_turn_wrote_is_read_once_and_told_next_turn(backend: Backend) -> None:
    seen: list[str] = []
    remember = AIMessage(
        "", tool_calls=[{"name": "remember", "args": {"text": "Parking is on level 3"}, "id": "r1"}]
    )
    graph = recorded_graph(backend, seen, ["ok", "ok", remember, "Noted.", "ok"])
    for text in ("one", "two"):
        turn(graph, text)
    reading = Reading(backend.store)
    turn(graph, "remember where I parked")
    assert reading.reads > 0  # the recheck after the tool step read the new note
    reading.reads = 0
    turn(graph, "four")
    assert reading.reads == 0  # that read is what the next turn compares with
    assert "Parking is on level 3" in seen[-1]


class VersionReads:
    """Counts the version checks (ReadVersions round trips) made, sync and async."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reads = 0
        run_versions, arun_versions = ReadVersions.run, ReadVersions.arun

        def counted(request: ReadVersions, store: Any) -> Any:
            self.reads += 1
            return run_versions(request, store)

        async def acounted(request: ReadVersions, store: Any) -> Any:
            self.reads += 1
            return await arun_versions(request, store)

        monkeypatch.setattr(ReadVersions, "run", counted)
        monkeypatch.setattr(ReadVersions, "arun", acounted)


def calling(name: str, args: dict[str, Any] | None = None) -> AIMessage:
    """A model reply calling the tool `name`."""
    return AIMessage("", tool_calls=[{"name": name, "args": args or {}, "id": f"{name}-1"}])


def tool_graph(backend: Backend, seen: list[str], tool: Any, script: list[Any]) -> Any:
    """recorded_graph with a user's `tool`."""

    class Recording(DemoModel):
        def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
            if PROMPT in str(messages[0].content):
                seen.append("\n".join(str(m.content) for m in messages))
            return super()._generate(messages, *args, **kwargs)

    return create_memory_graph(
        Recording(script=script),
        [tool],
        store=backend.store,
        checkpointer=backend.checkpointer,
        system_prompt=PROMPT,
    )


def weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


def test_a_tool_step_that_writes_nothing_checks_the_versions_once(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    script = ["ok", "ok", calling("weather", {"city": "Oslo"}), "Sunny."]
    graph = tool_graph(backend, seen, weather, script)
    for text in ("one", "two"):
        turn(graph, text)
    versions = VersionReads(monkeypatch)
    turn(graph, "weather in Oslo?")
    assert versions.reads == 1  # the turn's first check; the recheck trusts it
    assert "Sunny in Oslo" in seen[-1]


async def test_an_async_tool_step_that_writes_nothing_checks_the_versions_once(
    abackend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    script = ["ok", "ok", calling("weather", {"city": "Oslo"}), "Sunny."]
    graph = tool_graph(abackend, seen, weather, script)
    config = {"configurable": {"thread_id": "t"}}
    for text in ("one", "two"):
        await graph.ainvoke({"messages": [HumanMessage(text)]}, config, context=ANN)
        await await_profiles()
    versions = VersionReads(monkeypatch)
    await graph.ainvoke({"messages": [HumanMessage("weather?")]}, config, context=ANN)
    assert versions.reads == 1
    assert "Sunny in Oslo" in seen[-1]


def test_a_note_the_remember_tool_wrote_is_checked_at_the_same_turns_next_call(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    remember = calling("remember", {"text": "Parking is on level 3"})
    graph = recorded_graph(backend, seen, ["ok", "ok", remember, "Noted.", "ok"])
    for text in ("one", "two"):
        turn(graph, text)
    versions = VersionReads(monkeypatch)
    turn(graph, "remember where I parked")
    assert versions.reads == 2  # the tool wrote: the recheck reads the versions again
    turn(graph, "four")
    assert "Parking is on level 3" in seen[-1]


def test_a_users_tool_writing_with_the_runs_store_reaches_the_next_call(
    backend: Backend,
) -> None:
    memory = ScopedMemory(backend.store)
    memory.remember(ANN, "Ann's locker code is 4512")
    (note,) = memory.list_notes(ANN)

    def forget_locker() -> str:
        """Forget the locker code (a user's tool writing with the run's store)."""
        ScopedMemory(get_store()).delete_note(ANN, note.key)
        return "done"

    seen: list[str] = []
    graph = tool_graph(backend, seen, forget_locker, ["ok", "ok", calling("forget_locker"), "ok"])
    for text in ("one", "two"):
        turn(graph, text)
    assert "locker code is 4512" in seen[-1]
    turn(graph, "forget my locker code")
    assert "locker code is 4512" not in seen[-1]  # the same turn's next model call


@pytest.fixture(params=["sqlite", "postgres"])
def durable_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh URL of a backend that another door or process can open too."""
    from tests.conftest import url_for

    return url_for(request.param, request, tmp_path)


@pytest.fixture
def durable(durable_url: str) -> Iterator[Backend]:
    """A store and checkpointer opened with connect on that URL."""
    with connect(durable_url) as opened:
        yield opened


def test_a_removal_through_another_door_of_this_process_leaves_the_next_call(
    durable: Backend, durable_url: str
) -> None:
    backend, backend_url = durable, durable_url
    ScopedMemory(backend.store).remember(ANN, "Ann's locker code is 4512")
    with connect(backend_url) as other:
        door = ScopedMemory(other.store)
        (note,) = door.list_notes(ANN)

        def forget_locker() -> str:
            """Forget the locker code through another door."""
            door.delete_note(ANN, note.key)
            return "done"

        seen: list[str] = []
        script = ["ok", "ok", calling("forget_locker"), "ok"]
        graph = tool_graph(backend, seen, forget_locker, script)
        for text in ("one", "two"):
            turn(graph, text)
        assert "locker code is 4512" in seen[-1]
        turn(graph, "forget my locker code")
        assert "locker code is 4512" not in seen[-1]  # the same turn's next model call


def delete_behind(backend_url: str, key: str) -> None:
    """Delete an item as another process would: a connection of its own, not our store."""
    if backend_url.startswith("sqlite"):
        # In a process of its own: a second SQLite library in this process would share the
        # file's POSIX locks with ours, and closing it drops them (a malformed database).
        path = backend_url.removeprefix("sqlite:///")
        code = "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); "
        code += "db.execute('DELETE FROM store WHERE key = ?', (sys.argv[2],)); db.commit()"
        subprocess.run([sys.executable, "-c", code, path, key], check=True, timeout=60)
    else:
        with psycopg.connect(backend_url.split("?")[0], autocommit=True) as conn:
            conn.execute("DELETE FROM store WHERE key = %s", (key,))


@pytest.mark.slow
def test_a_removal_by_another_process_during_the_tool_step_leaves_the_next_turn(
    durable: Backend, durable_url: str
) -> None:
    backend, backend_url = durable, durable_url
    memory = ScopedMemory(backend.store)
    memory.remember(ANN, "Ann's locker code is 4512")
    (note,) = memory.list_notes(ANN)

    def forget_locker() -> str:
        """Forget the locker code from another process."""
        delete_behind(backend_url, note.key)
        return "done"

    seen: list[str] = []
    script = ["ok", "ok", calling("forget_locker"), "ok", "ok"]
    graph = tool_graph(backend, seen, forget_locker, script)
    for text in ("one", "two", "forget my locker code"):
        turn(graph, text)
    assert memory.list_notes(ANN) == []
    turn(graph, "four")
    assert "locker code is 4512" not in seen[-1]  # the next turn's first check reads

"""Best effort means best effort (issue 9, point 7) for backends and the whole turn.

A PostgreSQL server that stops costs a turn no wait (every store call fails at once, none
waits out the store timeout), and the turn after it is back uses memory again; a store that
is down, slow, read-only or full never stops the answer of a create_memory_graph turn, under
invoke and ainvoke, on every backend, and nothing stored before is lost.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from memory_plugin import Backend, MemoryContext, aconnect, connect, create_memory_graph
from memory_plugin.errors import SettingsError
from memory_plugin.offline.demo import DemoModel
from memory_plugin.profile.memory import ProfileMemory
from memory_plugin.scoped import ScopedMemory
from memory_plugin.settings import MemorySettings
from tests.faults import FAULTS, Fault, FaultyStore
from tests.tcp_proxy import TcpProxy

WAITED = "no free connection"
"""What a store call says when it waited out the store timeout."""
REFUSED = "cannot be reached; try again shortly"
"""What it says when it failed at once, the server being down."""


def call(name: str, **args: Any) -> AIMessage:
    """A model turn that calls one memory tool."""
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": uuid.uuid4().hex}])


def _context() -> MemoryContext:
    return MemoryContext(user_id=f"ann-{uuid.uuid4().hex[:8]}", workspace_id="acme")


def _turn(text: str, thread: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return {"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}}


def _answer(result: dict[str, Any]) -> str:
    return str(result["messages"][-1].content)


SEED = [
    call("remember", text="The release freeze starts Friday"),
    call("update_memory", content="# Ann\n- Leads the release team"),
    "Noted.",
]
SEED_TEXT = "My name is Ann. I prefer short answers. Remember the freeze."


def _memory_of(store: Any, ctx: MemoryContext) -> tuple[list[str], str | None, dict[str, Any]]:
    notes = [note.body for note in ScopedMemory(store).list_notes(ctx)]
    document = ScopedMemory(store).read_document(ctx)
    profile = ProfileMemory(store).read(ctx)
    return notes, document.text if document else None, profile.sections if profile else {}


def _kept(before: tuple[list[str], str | None, dict[str, Any]], store: Any, ctx: Any) -> None:
    notes, document, sections = _memory_of(store, ctx)
    assert set(before[0]) <= set(notes)
    assert document == before[1]
    for section, bullets in before[2].items():
        assert set(bullets) <= set(sections.get(section, ())), section


# --------------------------------------------------------------------------- a stopped server


@pytest.mark.slow
def test_a_stopped_postgres_costs_a_turn_seconds_and_the_next_turn_works(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    ctx = _context()
    script = [*SEED, call("recall", query="freeze"), "Still here.", "Welcome back."]
    with TcpProxy(postgres_url) as proxy, connect(proxy.proxied_url) as backend:
        graph = create_memory_graph(
            DemoModel(script=script), store=backend.store, checkpointer=InMemorySaver()
        )
        assert _answer(graph.invoke(*_turn(SEED_TEXT, "t1"), context=ctx)) == "Noted."
        before = _memory_of(backend.store, ctx)
        assert before[0] == ["The release freeze starts Friday"]

        proxy.stop()
        with caplog.at_level(logging.WARNING):
            result = graph.invoke(*_turn("What is frozen?", "t1"), context=ctx)
        assert _answer(result) == "Still here."
        assert REFUSED in caplog.text and WAITED not in caplog.text

        proxy.start()
        assert _answer(graph.invoke(*_turn("I'm back.", "t2"), context=ctx)) == "Welcome back."
        _kept(before, backend.store, ctx)


@pytest.mark.slow
async def test_a_stopped_postgres_costs_an_async_turn_seconds_and_the_next_turn_works(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    ctx = _context()
    script = [*SEED, call("recall", query="freeze"), "Still here.", "Welcome back."]
    with TcpProxy(postgres_url) as proxy:
        async with await aconnect(proxy.proxied_url) as backend:
            graph = create_memory_graph(
                DemoModel(script=script), store=backend.store, checkpointer=InMemorySaver()
            )
            seeded = await graph.ainvoke(*_turn(SEED_TEXT, "t1"), context=ctx)
            assert _answer(seeded) == "Noted."
            notes = await ScopedMemory(backend.store).alist_notes(ctx)
            assert [n.body for n in notes] == ["The release freeze starts Friday"]

            proxy.stop()
            with caplog.at_level(logging.WARNING):
                result = await graph.ainvoke(*_turn("What is frozen?", "t1"), context=ctx)
            assert _answer(result) == "Still here."
            assert REFUSED in caplog.text and WAITED not in caplog.text

            proxy.start()
            back = await graph.ainvoke(*_turn("I'm back.", "t2"), context=ctx)
            assert _answer(back) == "Welcome back."
            notes = await ScopedMemory(backend.store).alist_notes(ctx)
            assert [n.body for n in notes] == ["The release freeze starts Friday"]


@pytest.mark.slow
@pytest.mark.parametrize("source", ["settings", "environment"])
def test_the_store_timeout_bounds_a_hung_postgres(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    options: dict[str, Any] = {}
    if source == "settings":
        options["settings"] = MemorySettings(store_timeout_seconds=1)
    else:
        monkeypatch.setenv("MEMORY_STORE_TIMEOUT_SECONDS", "1")
    with TcpProxy(postgres_url) as proxy, connect(proxy.proxied_url, **options) as backend:
        backend.store.put(("probe",), "k", {"v": 1})
        pool = backend.store.conn  # type: ignore[attr-defined]
        assert (pool.timeout, pool.kwargs["connect_timeout"]) == (1.0, 1)
        proxy.hang()
        for _ in range(3):
            with pytest.raises(psycopg.OperationalError) as raised:
                backend.store.get(("probe",), "k")
            assert WAITED not in str(raised.value) or "within 1 s" in str(raised.value)
        proxy.stop()
        proxy.start()
        item = backend.store.get(("probe",), "k")
        assert item is not None and item.value == {"v": 1}


@pytest.mark.parametrize("value", ["0", "soon", "nan"])
def test_a_bad_store_timeout_in_the_environment_fails_at_connect(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("MEMORY_STORE_TIMEOUT_SECONDS", value)
    with pytest.raises(SettingsError, match="MEMORY_STORE_TIMEOUT_SECONDS"):
        connect("memory://")


# --------------------------------------------------------------------------- faults, every backend


def _faulty_graph(store: FaultyStore, checkpointer: Any) -> Any:
    script = [*SEED, call("recall", query="freeze"), "Still here.", "All good."]
    return create_memory_graph(DemoModel(script=script), store=store, checkpointer=checkpointer)


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULTS)
def test_a_turn_answers_whatever_the_store_does(backend: Backend, fault: Fault) -> None:
    ctx = _context()
    store = FaultyStore(backend.store, slow_seconds=0.1)
    graph = _faulty_graph(store, backend.checkpointer)
    assert _answer(graph.invoke(*_turn(SEED_TEXT, "t1"), context=ctx)) == "Noted."
    before = _memory_of(backend.store, ctx)
    assert before[0] and before[1]

    store.set(fault)
    assert _answer(graph.invoke(*_turn("What is frozen?", "t1"), context=ctx)) == "Still here."
    store.set(None)
    _kept(before, backend.store, ctx)
    assert _answer(graph.invoke(*_turn("And now?", "t1"), context=ctx)) == "All good."
    _kept(before, backend.store, ctx)


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULTS)
async def test_an_async_turn_answers_whatever_the_store_does(
    abackend: Backend, fault: Fault
) -> None:
    ctx = _context()
    store = FaultyStore(abackend.store, slow_seconds=0.1)
    graph = _faulty_graph(store, abackend.checkpointer)
    assert _answer(await graph.ainvoke(*_turn(SEED_TEXT, "t1"), context=ctx)) == "Noted."
    notes = [n.body for n in await ScopedMemory(abackend.store).alist_notes(ctx)]
    document = await ScopedMemory(abackend.store).aread_document(ctx)
    assert notes and document is not None

    store.set(fault)
    result = await graph.ainvoke(*_turn("What is frozen?", "t1"), context=ctx)
    assert _answer(result) == "Still here."
    store.set(None)
    assert _answer(await graph.ainvoke(*_turn("And now?", "t1"), context=ctx)) == "All good."
    after = [n.body for n in await ScopedMemory(abackend.store).alist_notes(ctx)]
    assert set(notes) <= set(after)
    kept = await ScopedMemory(abackend.store).aread_document(ctx)
    assert kept is not None and kept.text == document.text

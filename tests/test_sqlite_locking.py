"""The store and the checkpointer of one SQLite file never lock each other out: concurrent
turns writing large threads under CPU contention all finish, and no memory work in them
fails with "database is locked".

On two connections each waiting in SQLite's busy handler (a sleep-and-retry loop, no queue),
the side writing back to back kept the other out past any busy timeout (three harnesses saw
turns fail with 50k-400k token threads). Here the busy timeout is cut to 50 ms, so that a
connection kept out fails within the test instead of after 5 s: the store and the
checkpointer of one backend must never need it.

They take turns under one lock, so the SQLite savers list checkpoints a page at a time: a
caller that uses the store between two listed checkpoints goes on (on every backend).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import random
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.graph.state import CompiledStateGraph

from memory_plugin import OfflineModel, aconnect, connect, create_memory_graph
from memory_plugin.backends import sqlite
from memory_plugin.profile.memory import wait_for_profiles

THREADS = 4
TURNS = 2
WORDS = 12_000
"""Words in each user message: a thread reaches about 60k tokens."""
VOCABULARY = ("river", "stone", "cloud", "lantern", "harbor", "meadow", "violin", "copper")


def _burn(stop: Any) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


@pytest.fixture
def cpu_contention() -> Iterator[None]:
    """A process keeping a core busy while the test runs."""
    stop = multiprocessing.get_context("spawn").Event()
    burner = multiprocessing.get_context("spawn").Process(target=_burn, args=(stop,), daemon=True)
    burner.start()
    yield
    stop.set()
    burner.join(timeout=10)


@pytest.fixture
def short_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite connections that wait at most 50 ms for a lock another connection holds."""
    connect_sqlite = sqlite._connect

    def impatient(module: Any, path: str, cache_kib: int = 0, **kwargs: Any) -> Any:
        return connect_sqlite(module, path, cache_kib, timeout=0.05, **kwargs)

    monkeypatch.setattr(sqlite, "_connect", impatient)


def _message(thread: int, turn: int) -> HumanMessage:
    pick = random.Random(thread * 100 + turn).choice
    words = " ".join(f"{pick(VOCABULARY)}{n % 997}" for n in range(WORDS))
    return HumanMessage(f"I live in town{thread} and read book{turn}. {words}")


def _graph(backend: Any) -> CompiledStateGraph[Any, Any, Any, Any]:
    return create_memory_graph(
        OfflineModel(), store=backend.store, checkpointer=backend.checkpointer
    )


def _args(thread: int, turn: int) -> tuple[dict[str, Any], Any, dict[str, Any]]:
    config: Any = {"configurable": {"thread_id": f"big-{thread}"}}
    return {"messages": [_message(thread, turn)]}, config, {"user_id": f"user{thread}"}


def _locked(caplog: pytest.LogCaptureFixture) -> list[str]:
    found = [r.getMessage() + repr(r.exc_info and r.exc_info[1]) for r in caplog.records]
    return [text for text in found if "locked" in text]


def _last_said(values: dict[str, Any]) -> Any:
    return [m.content for m in values["messages"] if m.type == "human"][-1]


@pytest.mark.slow
@pytest.mark.usefixtures("short_busy_timeout", "cpu_contention")
def test_concurrent_large_thread_turns_never_lock_each_other_out(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    failures: list[BaseException] = []
    with connect(f"sqlite:///{tmp_path / 'memory.db'}") as backend:
        graph = _graph(backend)

        def turns(thread: int) -> None:
            for turn in range(TURNS):
                state, config, context = _args(thread, turn)
                try:
                    graph.invoke(state, config, context=context)
                except Exception as exc:
                    failures.append(exc)

        workers = [threading.Thread(target=turns, args=(n,)) for n in range(THREADS)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert wait_for_profiles()
        assert failures == []
        assert _locked(caplog) == []
        for thread in range(THREADS):
            saved = graph.get_state(_args(thread, TURNS - 1)[1]).values
            assert _last_said(saved) == _message(thread, TURNS - 1).content


@pytest.mark.slow
@pytest.mark.usefixtures("short_busy_timeout", "cpu_contention")
async def test_concurrent_large_thread_turns_never_lock_each_other_out_async(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with aconnect(f"sqlite:///{tmp_path / 'memory.db'}") as backend:
        graph = _graph(backend)

        async def turns(thread: int) -> None:
            for turn in range(TURNS):
                state, config, context = _args(thread, turn)
                await graph.ainvoke(state, config, context=context)

        results = await asyncio.gather(*(turns(n) for n in range(THREADS)), return_exceptions=True)
        assert [r for r in results if r is not None] == []
        assert _locked(caplog) == []
        for thread in range(THREADS):
            saved = (await graph.aget_state(_args(thread, TURNS - 1)[1])).values
            assert _last_said(saved) == _message(thread, TURNS - 1).content


USER = {"user_id": "historian"}
HISTORY: Any = {"configurable": {"thread_id": "history"}}
SHORT_TURNS = 16
"""Turns of three checkpoints each: more than the SQLite savers' page of 32."""


@pytest.mark.slow
def test_a_caller_listing_checkpoints_can_use_the_store_between_them(
    backend: Any,
) -> None:
    graph = _graph(backend)
    for turn in range(SHORT_TURNS):
        graph.invoke({"messages": [HumanMessage(f"turn {turn}")]}, HISTORY, context=USER)
    ids = []
    for saved in backend.checkpointer.list(HISTORY):
        ids.append(saved.config["configurable"]["checkpoint_id"])
        backend.store.put(("seen",), ids[-1], {"n": len(ids)})
    assert len(ids) > 40 and ids == sorted(ids, reverse=True)
    assert len(backend.store.search(("seen",), limit=100)) == len(ids)
    listed = backend.checkpointer.list(HISTORY, before={"configurable": {"checkpoint_id": ids[2]}})
    assert [saved.config["configurable"]["checkpoint_id"] for saved in listed] == ids[3:]
    limited = backend.checkpointer.list(HISTORY, limit=35)
    assert [saved.config["configurable"]["checkpoint_id"] for saved in limited] == ids[:35]


@pytest.mark.slow
async def test_a_caller_listing_checkpoints_can_use_the_store_between_them_async(
    abackend: Any,
) -> None:
    graph = _graph(abackend)
    for turn in range(SHORT_TURNS):
        await graph.ainvoke({"messages": [HumanMessage(f"turn {turn}")]}, HISTORY, context=USER)
    ids = []
    async for saved in abackend.checkpointer.alist(HISTORY):
        ids.append(saved.config["configurable"]["checkpoint_id"])
        await abackend.store.aput(("seen",), ids[-1], {"n": len(ids)})
    assert len(ids) > 40 and ids == sorted(ids, reverse=True)
    assert len(await abackend.store.asearch(("seen",), limit=100)) == len(ids)
    before = {"configurable": {"checkpoint_id": ids[2]}}
    listed = [s async for s in abackend.checkpointer.alist(HISTORY, before=before)]
    assert [saved.config["configurable"]["checkpoint_id"] for saved in listed] == ids[3:]
    limited = [s async for s in abackend.checkpointer.alist(HISTORY, limit=35)]
    assert [saved.config["configurable"]["checkpoint_id"] for saved in limited] == ids[:35]

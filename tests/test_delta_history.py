"""Our PostgreSQL saver reads a checkpoint's DeltaChannel history in one round trip, and it is
exactly the history LangGraph's PostgresSaver returns: at every checkpoint of a thread with
snapshots, a fan-out, a subgraph with checkpoints of its own (checkpoint_ns), forks and an
update_state, for a delta channel, a plain one and one the graph never had; sync and async."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import psycopg
import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import END, START, StateGraph

from bench.pgtables import empty_postgres
from memory_plugin import aconnect, connect
from memory_plugin.backends.postgres_savers import (
    ExitWritesAsyncPostgresSaver,
    ExitWritesPostgresSaver,
)
from memory_plugin.context_management.state import add_messages_batch

CHANNELS = ["messages", "turn", "absent"]


class State(TypedDict):
    messages: Annotated[list[AnyMessage], DeltaChannel(add_messages_batch, snapshot_frequency=3)]
    turn: int


def _said(name: str) -> Any:
    def node(state: State) -> dict[str, Any]:
        turn = state["turn"]
        return {"messages": [AIMessage(f"{name} {turn}", id=f"{name}{turn}")]}

    return node


def _graph(saver: Any) -> Any:
    sub = StateGraph(State)
    sub.add_node("inner", _said("inner"))
    sub.add_edge(START, "inner")
    sub.add_edge("inner", END)
    graph = StateGraph(State)
    graph.add_node("first", _said("first"))
    graph.add_node("left", _said("left"))
    graph.add_node("right", _said("right"))
    graph.add_node("sub", sub.compile(checkpointer=True))
    graph.add_edge(START, "first")
    graph.add_edge("first", "left")
    graph.add_edge("first", "right")
    graph.add_edge(["left", "right"], "sub")
    graph.add_edge("sub", END)
    return graph.compile(checkpointer=saver)


def _turn(turn: int) -> dict[str, Any]:
    return {"messages": [HumanMessage(f"user {turn}", id=f"user{turn}")], "turn": turn}


def _configs(url: str) -> list[RunnableConfig]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints"
            " ORDER BY thread_id, checkpoint_ns, checkpoint_id"
        ).fetchall()
    return [
        {"configurable": {"thread_id": t, "checkpoint_ns": ns, "checkpoint_id": c}}
        for t, ns, c in rows
    ]


def _build(graph: Any) -> None:
    for durability in ("exit", "async"):
        thread: RunnableConfig = {"configurable": {"thread_id": durability}}
        for turn in range(7):
            graph.invoke(_turn(turn), thread, durability=durability)
        history = list(graph.get_state_history(thread))
        fork = history[len(history) // 2].config
        graph.invoke(_turn(10), fork, durability=durability)
        graph.update_state(fork, {"messages": [AIMessage("edited", id="edited")]})
        graph.invoke(_turn(11), thread, durability=durability)


def _plain(value: Any) -> Any:
    return [(m.type, m.id, m.content) for m in value] if isinstance(value, list) else value


def _same(ours: Any, theirs: Any) -> None:
    assert {ch: _plain(h.get("seed")) for ch, h in ours.items()} == {
        ch: _plain(h.get("seed")) for ch, h in theirs.items()
    }
    assert {ch: [(w[0], w[1], _plain(w[2])) for w in h["writes"]] for ch, h in ours.items()} == {
        ch: [(w[0], w[1], _plain(w[2])) for w in h["writes"]] for ch, h in theirs.items()
    }


@pytest.fixture
def postgres_backend(postgres_url: str) -> Iterator[Any]:
    empty_postgres(postgres_url)
    with connect(postgres_url) as backend:
        yield backend


def test_the_history_is_langgraphs_at_every_checkpoint(
    postgres_backend: Any, postgres_url: str
) -> None:
    saver = postgres_backend.checkpointer
    assert isinstance(saver, ExitWritesPostgresSaver)
    _build(_graph(saver))
    configs = _configs(postgres_url)
    assert {c["configurable"]["checkpoint_ns"] != "" for c in configs} == {True, False}
    seeded = 0
    for config in configs:
        ours = saver.get_delta_channel_history(config=config, channels=CHANNELS)
        theirs = PostgresSaver.get_delta_channel_history(saver, config=config, channels=CHANNELS)
        _same(ours, theirs)
        seeded += "seed" in ours["messages"] and bool(ours["messages"]["writes"])
    assert seeded > 0
    missing = {"configurable": {"thread_id": "exit", "checkpoint_ns": "", "checkpoint_id": "x"}}
    _same(
        saver.get_delta_channel_history(config=missing, channels=CHANNELS),
        PostgresSaver.get_delta_channel_history(saver, config=missing, channels=CHANNELS),
    )


async def test_the_history_is_langgraphs_at_every_checkpoint_async(postgres_url: str) -> None:
    empty_postgres(postgres_url)
    async with await aconnect(postgres_url) as backend:
        saver = backend.checkpointer
        assert isinstance(saver, ExitWritesAsyncPostgresSaver)
        graph = _graph(saver)
        thread: RunnableConfig = {"configurable": {"thread_id": "a"}}
        for turn in range(5):
            await graph.ainvoke(_turn(turn), thread, durability="exit")
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            rows = conn.execute("SELECT checkpoint_ns, checkpoint_id FROM checkpoints").fetchall()
        assert rows
        for ns, checkpoint_id in rows:
            config: RunnableConfig = {
                "configurable": {
                    "thread_id": "a",
                    "checkpoint_ns": ns,
                    "checkpoint_id": checkpoint_id,
                }
            }
            _same(
                await saver.aget_delta_channel_history(config=config, channels=CHANNELS),
                await AsyncPostgresSaver.aget_delta_channel_history(
                    saver, config=config, channels=CHANNELS
                ),
            )

"""Our savers read a checkpoint's DeltaChannel history in one round trip (PostgreSQL) or one
statement (SQLite), and it is exactly the history LangGraph's own saver returns: at every
checkpoint of a thread with snapshots, a fan-out, a subgraph with checkpoints of its own
(checkpoint_ns), forks and an update_state, for a delta channel alone and beside a plain one
and one the graph never had; sync and async."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Annotated, Any, TypedDict

import psycopg
import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph

from bench.pgtables import empty_postgres
from memory_plugin import aconnect, connect
from memory_plugin.backends.postgres_savers import (
    ExitWritesAsyncPostgresSaver,
    ExitWritesPostgresSaver,
)
from memory_plugin.backends.sqlite_savers import (
    SharedLibraryAsyncSqliteSaver,
    SharedLibrarySqliteSaver,
)
from memory_plugin.context_management.state import add_messages_batch
from tests.conftest import url_for

CHANNEL_SETS = [["messages"], ["messages", "turn", "absent"]]


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


def _configs(kind: str, url: str, tmp_path: Path) -> list[RunnableConfig]:
    sql = (
        "SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints"
        " ORDER BY thread_id, checkpoint_ns, checkpoint_id"
    )
    if kind == "sqlite":
        with closing(sqlite3.connect(tmp_path / "memory.db")) as lite:
            rows = lite.execute(sql).fetchall()
    else:
        with psycopg.connect(url, autocommit=True) as conn:
            rows = conn.execute(sql).fetchall()
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


LANGGRAPHS: dict[type, Any] = {
    ExitWritesPostgresSaver: PostgresSaver,
    SharedLibrarySqliteSaver: SqliteSaver,
    ExitWritesAsyncPostgresSaver: AsyncPostgresSaver,
    SharedLibraryAsyncSqliteSaver: AsyncSqliteSaver,
}


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_the_history_is_langgraphs_at_every_checkpoint(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = url_for(kind, request, tmp_path)
    with connect(url) as backend:
        saver = backend.checkpointer
        langgraphs = LANGGRAPHS[type(saver)]
        _build(_graph(saver))
        configs = _configs(kind, url, tmp_path)
        assert {c["configurable"]["checkpoint_ns"] != "" for c in configs} == {True, False}
        seeded = 0
        for config in configs:
            for channels in CHANNEL_SETS:
                ours = saver.get_delta_channel_history(config=config, channels=channels)
                _same(
                    ours,
                    langgraphs.get_delta_channel_history(saver, config=config, channels=channels),
                )
                seeded += "seed" in ours["messages"] and bool(ours["messages"]["writes"])
        assert seeded > 0
        conf = {"thread_id": "exit", "checkpoint_ns": "", "checkpoint_id": "x"}
        missing: RunnableConfig = {"configurable": conf}
        for channels in CHANNEL_SETS:
            _same(
                saver.get_delta_channel_history(config=missing, channels=channels),
                langgraphs.get_delta_channel_history(saver, config=missing, channels=channels),
            )


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_the_history_is_langgraphs_at_every_checkpoint_async(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = url_for(kind, request, tmp_path)
    async with await aconnect(url) as backend:
        saver = backend.checkpointer
        langgraphs = LANGGRAPHS[type(saver)]
        graph = _graph(saver)
        thread: RunnableConfig = {"configurable": {"thread_id": "exit"}}
        for turn in range(5):
            await graph.ainvoke(_turn(turn), thread, durability="exit")
        configs = _configs(kind, url, tmp_path)
        assert configs
        for config in configs:
            for channels in CHANNEL_SETS:
                _same(
                    await saver.aget_delta_channel_history(config=config, channels=channels),
                    await langgraphs.aget_delta_channel_history(
                        saver, config=config, channels=channels
                    ),
                )


def _away(url: str, away: bool) -> None:
    """Take PostgreSQL's checkpoint tables out of reach (and back): a read now fails."""
    names = ("checkpoints", "checkpoint_writes", "checkpoint_blobs")
    with psycopg.connect(url, autocommit=True) as conn:
        for name in names:
            old, new = (name, f"{name}_away") if away else (f"{name}_away", name)
            conn.execute(f"ALTER TABLE {old} RENAME TO {new}")


def test_the_history_read_after_get_tuple_needs_no_round_trip_of_its_own(
    postgres_backend: Any, postgres_url: str
) -> None:
    saver = postgres_backend.checkpointer
    _build(_graph(saver))
    latest = [{"configurable": {"thread_id": t, "checkpoint_ns": ""}} for t in ("exit", "async")]
    configs = [*latest, *_configs("postgres", postgres_url, Path())]
    replayed = 0
    for config in configs:
        saved = saver.get_tuple(config)
        assert saved is not None
        checkpoint = saved.checkpoint
        if (
            "messages" not in checkpoint["channel_versions"]
            or "messages" in checkpoint["channel_values"]
        ):
            continue  # never written, or stored there: LangGraph reads no history
        replayed += 1
        _away(postgres_url, True)
        try:
            ours = saver.get_delta_channel_history(config=saved.config, channels=["messages"])
        finally:
            _away(postgres_url, False)
        theirs = PostgresSaver.get_delta_channel_history(
            saver, config=saved.config, channels=["messages"]
        )
        _same(ours, theirs)
    assert replayed >= 5

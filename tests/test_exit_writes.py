"""Under durability="exit", our savers store a run's DeltaChannel writes with its final
checkpoint: the thread restores what LangGraph's own saver restores, on every backend, sync
and async, through fan-outs, subgraphs and interrupts; SQLite stores them in the checkpoint's
one transaction; a checkpoint that fails to store keeps none of the turn; a run's held writes
never land on another run's checkpoint."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Annotated, Any, TypedDict

import psycopg
import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from memory_plugin import aconnect, connect
from memory_plugin.backends import exit_writes
from memory_plugin.backends.exit_writes import HELD_LIMIT, ExitWrites, is_exit_delta_id
from memory_plugin.context_management.state import add_messages_batch
from tests.conftest import url_for

Durability = Any


class State(TypedDict):
    messages: Annotated[list[AnyMessage], DeltaChannel(add_messages_batch)]
    turn: int


def _said(name: str) -> Any:
    def node(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage(f"{name} {state['turn']}", id=f"{name}{state['turn']}")]}

    return node


def _subgraph(own_checkpoints: bool) -> Any:
    sub = StateGraph(State)
    sub.add_node("inner", _said("inner"))
    sub.add_edge(START, "inner")
    sub.add_edge("inner", END)
    return sub.compile(checkpointer=True if own_checkpoints else None)


def _graph(saver: BaseCheckpointSaver[Any], asks: bool = False) -> Any:
    """A turn: a node, a fan-out of two, a subgraph (with checkpoints of its own when the turn
    asks), and (asks) a question to the user."""
    graph = StateGraph(State)
    graph.add_node("first", _said("first"))
    graph.add_node("left", _said("left"))
    graph.add_node("right", _said("right"))
    graph.add_node("sub", _subgraph(asks))

    def ask(state: State) -> dict[str, Any]:
        answer = interrupt("which?")
        return {"messages": [HumanMessage(str(answer), id=f"answer{state['turn']}")]}

    graph.add_node("ask", ask)
    graph.add_edge(START, "first")
    graph.add_edge("first", "left")
    graph.add_edge("first", "right")
    graph.add_edge(["left", "right"], "sub")
    graph.add_edge("sub", "ask" if asks else END)
    graph.add_edge("ask", END)
    return graph.compile(checkpointer=saver)


def _turn(turn: int) -> dict[str, Any]:
    return {"messages": [HumanMessage(f"user {turn}", id=f"user{turn}")], "turn": turn}


def _restored(graph: Any, thread: str) -> list[tuple[str, str, str]]:
    state = graph.get_state({"configurable": {"thread_id": thread}})
    return [(m.type, m.id, m.content) for m in state.values.get("messages", [])]


async def _arestored(graph: Any, thread: str) -> list[tuple[str, str, str]]:
    state = await graph.aget_state({"configurable": {"thread_id": thread}})
    return [(m.type, m.id, m.content) for m in state.values.get("messages", [])]


def _run(graph: Any, thread: str, durability: Durability, asks: bool) -> None:
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    for turn in range(4):
        graph.invoke(_turn(turn), config, durability=durability)
        if asks:
            graph.invoke(Command(resume=f"answer {turn}"), config, durability=durability)


async def _arun(graph: Any, thread: str, durability: Durability, asks: bool) -> None:
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    for turn in range(4):
        await graph.ainvoke(_turn(turn), config, durability=durability)
        if asks:
            await graph.ainvoke(Command(resume=f"answer {turn}"), config, durability=durability)


@pytest.mark.parametrize("asks", [False, True], ids=["plain", "interrupted"])
@pytest.mark.parametrize("durability", ["exit", "async"])
def test_a_thread_restores_what_langgraphs_saver_restores(
    backend: Any, durability: Durability, asks: bool
) -> None:
    ours, reference = _graph(backend.checkpointer, asks), _graph(InMemorySaver(), asks)
    _run(ours, "t", durability, asks)
    _run(reference, "t", durability, asks)
    restored = _restored(ours, "t")
    assert restored == _restored(reference, "t")
    assert ("ai", "inner3", "inner 3") in restored
    assert len(getattr(backend.checkpointer, "exit_writes", ())) == 0


@pytest.mark.parametrize("asks", [False, True], ids=["plain", "interrupted"])
@pytest.mark.parametrize("durability", ["exit", "async"])
async def test_a_thread_restores_what_langgraphs_saver_restores_async(
    abackend: Any, durability: Durability, asks: bool
) -> None:
    ours, reference = _graph(abackend.checkpointer, asks), _graph(InMemorySaver(), asks)
    await _arun(ours, "t", durability, asks)
    await _arun(reference, "t", durability, asks)
    restored = await _arestored(ours, "t")
    assert restored == await _arestored(reference, "t")
    assert ("ai", "right3", "right 3") in restored
    assert len(getattr(abackend.checkpointer, "exit_writes", ())) == 0


class Traced:
    """The statements a SQLite connection runs, PRAGMAs left out."""

    def __init__(self, conn: Any) -> None:
        self.sql: list[str] = []
        conn.set_trace_callback(self.sql.append)

    def heads(self) -> list[str]:
        heads = [" ".join(s.split()).split(" (")[0] for s in self.sql]
        return [h for h in heads if not h.startswith("PRAGMA")]


def test_an_exit_turn_reads_in_three_statements_and_writes_in_one_transaction(
    tmp_path: Path,
) -> None:
    with connect(f"sqlite:///{tmp_path / 'memory.db'}") as backend:
        graph = _graph(backend.checkpointer)
        graph.invoke(_turn(0), {"configurable": {"thread_id": "t"}}, durability="exit")
        saver: Any = backend.checkpointer
        traced = Traced(saver.conn)
        graph.invoke(_turn(1), {"configurable": {"thread_id": "t"}}, durability="exit")
        heads = traced.heads()
        expected = [  # the thread's checkpoint, its writes, its history; the subgraph's read
            "SELECT thread_id, checkpoint_id",
            "SELECT task_id, channel, type,",
            "WITH RECURSIVE ancestors",
            "SELECT thread_id, checkpoint_id",
            "BEGIN IMMEDIATE",
            "INSERT OR IGNORE INTO writes",
            "INSERT OR REPLACE INTO checkpoints",
            "COMMIT",
        ]
        assert len(heads) == len(expected), "\n".join(h[:70] for h in heads)
        assert all(h.startswith(e) for h, e in zip(heads, expected, strict=True)), heads


def _refuse_checkpoints_sqlite(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON checkpoints"
            " BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )


def _refuse_checkpoints_postgres(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE OR REPLACE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN RAISE EXCEPTION 'refused'; END $$"
        )
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON checkpoints"
            " FOR EACH ROW EXECUTE FUNCTION refuse()"
        )


def _write_rows(backend: Any) -> int:
    saver = backend.checkpointer
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    return sum(len(saved.pending_writes or ()) for saved in saver.list(config))


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_checkpoint_that_fails_to_store_keeps_none_of_the_turn(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = url_for(kind, request, tmp_path)
    with connect(url) as backend:
        graph = _graph(backend.checkpointer)
        graph.invoke(_turn(0), {"configurable": {"thread_id": "t"}}, durability="exit")
        before, rows = _restored(graph, "t"), _write_rows(backend)
        if kind == "sqlite":
            _refuse_checkpoints_sqlite(tmp_path / "memory.db")
        else:
            _refuse_checkpoints_postgres(url)
        try:
            with pytest.raises(Exception, match="refused"):
                graph.invoke(_turn(1), {"configurable": {"thread_id": "t"}}, durability="exit")
        finally:
            if kind == "postgres":
                with psycopg.connect(url, autocommit=True) as conn:
                    conn.execute("DROP TRIGGER refuse ON checkpoints")
        assert _restored(graph, "t") == before
        assert _write_rows(backend) == rows
        held: Any = backend.checkpointer
        assert len(held.exit_writes) == 0


class Run:
    """A stand-in for the Runtime LangGraph puts in a run's config."""


def _config(run: Run | None, checkpoint_id: str | None, durability: str = "exit") -> Any:
    conf: dict[str, Any] = {"thread_id": "t", "checkpoint_ns": ""}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    if run is not None:
        conf["__pregel_runtime"] = run
        conf["__pregel_durability"] = durability
    return {"configurable": conf}


EXIT_ID = "ffffffff-0000-0003-8d1b-6b390a74cee5"
EXIT_PATH = "~~0000000003~__pregel_pull, b"


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_held_writes_land_only_on_their_own_runs_checkpoint(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with await aconnect(url_for(kind, request, tmp_path)) as backend:
        saver: Any = backend.checkpointer
        anchor = await saver.aput(_config(None, None), {**empty_checkpoint(), "id": "1"}, {}, {})
        stale, live = Run(), Run()
        write = [("messages", [AIMessage("lost", id="lost")])]
        await saver.aput_writes(_config(stale, "1"), write, EXIT_ID, EXIT_PATH)
        await saver.aput_writes(_config(live, "1"), [("messages", [])], EXIT_ID, EXIT_PATH)
        assert len(saver.exit_writes) == 2
        await saver.aput(_config(live, "1"), {**empty_checkpoint(), "id": "2"}, {}, {})
        stored = await saver.aget_tuple(anchor)
        assert [(w[0], w[1]) for w in stored.pending_writes] == [(EXIT_ID, "messages")]
        assert "lost" not in repr(stored.pending_writes)
        assert len(saver.exit_writes) == 1
        await saver.aput_writes(_config(live, "2", "async"), write, EXIT_ID, EXIT_PATH)
        assert len(saver.exit_writes) == 1


def test_past_the_limit_writes_are_stored_at_once_and_no_held_write_is_dropped() -> None:
    held: ExitWrites[int] = ExitWrites()
    runs = [Run() for _ in range(HELD_LIMIT + 5)]
    kept = [held.hold(_config(run, f"c{n}"), EXIT_ID, EXIT_PATH, n) for n, run in enumerate(runs)]
    assert kept == [True] * HELD_LIMIT + [False] * 5  # the saver stores these five at once
    assert len(held) == HELD_LIMIT
    assert held.take(_config(runs[0], "c0"), "next") == [0]
    assert held.take(_config(runs[-1], f"c{len(runs) - 1}"), "next") == []


def test_writes_whose_put_never_comes_are_let_go_once_stale(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    held: ExitWrites[int] = ExitWrites()
    now = [1000.0]
    monkeypatch.setattr("memory_plugin.backends.exit_writes.time.monotonic", lambda: now[0])
    failed, later = Run(), Run()
    assert held.hold(_config(failed, "c0"), EXIT_ID, EXIT_PATH, 0)
    now[0] += exit_writes.STALE_AFTER + 1
    assert held.hold(_config(later, "c1"), EXIT_ID, EXIT_PATH, 1)
    assert len(held) == 1
    assert held.take(_config(later, "c1"), "next") == [1]


@pytest.mark.parametrize(
    ("task_id", "path", "held"),
    [
        ("00000004-af35-904e-9987-f86abe453929", "~__pregel_pull, __start__", True),
        ("00000007-0000-0000-0000-000000000000", "", True),
        ("ffffffff-0000-0006-810d-21c66758945a", "~~0000000006~__pregel_pull, b", True),
        ("ffffffff-0000-0006-810d-21c66758945a", "~~0000000007~__pregel_pull, b", False),
        ("00000000-0000-0000-0000-000000000000", "", False),
        ("91234567-af35-904e-9987-f86abe453929", "~__pregel_pull, a", False),
        ("1f1f1947-0946-6a28-bffe-5b56debab79d", "~__pregel_pull, a", False),
    ],
)
def test_only_langgraphs_exit_write_ids_are_held(task_id: str, path: str, held: bool) -> None:
    assert is_exit_delta_id(task_id, path) is held

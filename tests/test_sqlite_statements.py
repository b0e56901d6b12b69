"""On SQLite, every write of a turn is one statement: a checkpoint, a task's writes and a
store write that is one statement run without the BEGIN and COMMIT around them, and keep what
LangGraph's own savers keep; what takes more statements stays one transaction, all or
nothing."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

from memory_plugin import aconnect, connect
from memory_plugin.backends.sqlite_savers import ROWS_PER_STATEMENT

CONFIG: RunnableConfig = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}
WRITES = [
    ("messages", [HumanMessage("hello", id="h1")]),
    ("messages", [AIMessage("hi there", id="a1")]),
    ("memory_context", {"journal_seq": 3}),
]


class Traced:
    """The statements a connection runs (SQLite reports a statement again for each trigger it
    fires; the write-ahead log's purge after a removal is left out)."""

    def __init__(self, conn: Any) -> None:
        self.sql: list[str] = []
        conn.set_trace_callback(self.sql.append)

    def take(self) -> list[str]:
        taken, self.sql[:] = list(self.sql), []
        heads = [" ".join(s.split()).split(" (")[0] for s in taken]
        kept = [h for h in heads if not h.startswith("PRAGMA")]
        return [h for i, h in enumerate(kept) if i == 0 or kept[i - 1] != h]


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[Any]:
    with connect(f"sqlite:///{tmp_path / 'memory.db'}") as opened:
        yield opened


def _saved(saver: Any) -> Any:
    return saver.put(CONFIG, {**empty_checkpoint(), "id": "c1"}, {"step": 1}, {})


def _pending(saver: Any) -> list[tuple[str, str, Any]]:
    found = saver.get_tuple(CONFIG)
    return sorted((w[0], w[1], repr(w[2])) for w in found.pending_writes)


def test_a_checkpoint_and_a_tasks_writes_are_one_statement_each(backend: Any) -> None:
    saver = backend.checkpointer
    traced = Traced(saver.conn)
    config = _saved(saver)
    saver.put_writes(config, WRITES, "task-1")
    assert traced.take() == ["INSERT OR REPLACE INTO checkpoints", "INSERT OR IGNORE INTO writes"]


def test_the_writes_kept_are_langgraphs(backend: Any, tmp_path: Path) -> None:
    ours = backend.checkpointer
    theirs = SqliteSaver(sqlite3.connect(tmp_path / "theirs.db", check_same_thread=False))
    theirs.setup()
    for saver in (ours, theirs):
        config = _saved(saver)
        saver.put_writes(config, WRITES, "task-1", "path-1")
        saver.put_writes(config, [("__error__", "boom")], "task-2")
        saver.put_writes(config, [("__error__", "boom again")], "task-2")  # special: replaced
    assert _pending(ours) == _pending(theirs)
    assert ("task-2", "__error__", "'boom again'") in _pending(ours)


def _abort_at(conn: Any, idx: int) -> None:
    conn.execute(
        "CREATE TEMP TRIGGER abort_write BEFORE INSERT ON writes "
        f"WHEN NEW.idx = {idx} BEGIN SELECT RAISE(ABORT, 'disk full'); END"
    )


def test_writes_too_many_for_one_statement_are_all_or_nothing(backend: Any) -> None:
    saver = backend.checkpointer
    config = _saved(saver)
    many = [("messages", [HumanMessage(f"m{i}", id=f"m{i}")]) for i in range(250)]
    traced = Traced(saver.conn)
    saver.put_writes(config, many, "task-1")
    assert traced.take() == ["BEGIN IMMEDIATE", "INSERT OR IGNORE INTO writes", "COMMIT"]
    assert len(_pending(saver)) == 250 > ROWS_PER_STATEMENT

    _abort_at(saver.conn, 200)
    with pytest.raises(Exception, match="disk full"):
        saver.put_writes(config, many, "task-2")
    assert {w[0] for w in _pending(saver)} == {"task-1"}


def test_a_failed_single_statement_write_keeps_nothing(backend: Any) -> None:
    saver = backend.checkpointer
    config = _saved(saver)
    _abort_at(saver.conn, 2)
    with pytest.raises(Exception, match="disk full"):
        saver.put_writes(config, WRITES, "task-1")
    assert _pending(saver) == []


def test_a_store_write_of_one_statement_runs_alone_and_is_read_back(backend: Any) -> None:
    store = backend.store
    traced = Traced(store.conn)
    store.put(("notes", "ann"), "n1", {"text": "likes tea"})
    store.put(("notes", "ann"), "n1", None)
    assert traced.take() == [
        "INSERT OR REPLACE INTO store",
        "DELETE FROM store WHERE prefix = 'notes.ann' AND key IN",
    ]
    assert store.get(("notes", "ann"), "n1") is None
    store.put(("notes", "ann"), "n2", {"text": "likes coffee"})
    assert store.get(("notes", "ann"), "n2").value == {"text": "likes coffee"}


def test_a_store_batch_of_several_statements_is_one_transaction(backend: Any) -> None:
    from langgraph.store.base import PutOp

    store = backend.store
    store.put(("notes", "ann"), "old", {"text": "old"})
    traced = Traced(store.conn)
    store.batch([PutOp(("notes", "ann"), "old", None), PutOp(("notes", "ann"), "new", {"t": 1})])
    statements = traced.take()
    assert statements[0] == "BEGIN IMMEDIATE" and statements[-1] == "COMMIT"
    assert store.get(("notes", "ann"), "old") is None
    assert store.get(("notes", "ann"), "new") is not None


def test_deleting_a_thread_removes_its_checkpoints_and_writes(backend: Any) -> None:
    saver = backend.checkpointer
    config = _saved(saver)
    saver.put_writes(config, WRITES, "task-1")
    saver.delete_thread("t1")
    assert saver.get_tuple(CONFIG) is None
    rows = saver.conn.execute("SELECT count(*) FROM writes WHERE thread_id = 't1'").fetchone()
    assert rows == (0,)


async def test_the_async_saver_and_store_write_one_statement_each(tmp_path: Path) -> None:
    async with aconnect(f"sqlite:///{tmp_path / 'memory.db'}") as opened:
        saver, store = opened.checkpointer, opened.store
        sql: list[str] = []
        await saver.conn.set_trace_callback(sql.append)
        config = await saver.aput(CONFIG, {**empty_checkpoint(), "id": "c1"}, {"step": 1}, {})
        await saver.aput_writes(config, WRITES, "task-1")
        assert [s.split(" (")[0] for s in sql] == [
            "INSERT OR REPLACE INTO checkpoints",
            "INSERT OR IGNORE INTO writes",
        ]
        found = await saver.aget_tuple(CONFIG)
        assert [w[1] for w in found.pending_writes] == ["messages", "messages", "memory_context"]
        await store.aput(("notes", "ann"), "n1", {"text": "likes tea"})
        assert (await store.aget(("notes", "ann"), "n1")).value == {"text": "likes tea"}
        await saver.adelete_thread("t1")
        assert await saver.aget_tuple(CONFIG) is None

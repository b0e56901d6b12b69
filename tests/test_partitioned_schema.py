"""docs/partitioned.sql: the plugin on hash-partitioned PostgreSQL tables (docs/large-stores.md),
sync and async: notes, search, deletion, the nightly job and threads work as on plain tables,
scopes spread over the partitions and a scope's lookup reads one partition."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage

from memory_plugin import MemoryContext, aconnect, connect, create_memory_graph
from memory_plugin.scope import thread_scope
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.consolidation import consolidate
from memory_plugin.scoped.notes import NOTES
from tests.embeddings import INDEX
from tests.fakes import merging_model
from tests.scoped_helpers import Clock

DOCS = Path(__file__).parent.parent / "docs"
SCHEMA = DOCS / "partitioned.sql"
FLAT = {**INDEX, "ann_index_config": {"kind": "flat"}}
USERS = [MemoryContext(user_id=f"user{n}", workspace_id="acme") for n in range(12)]


@pytest.fixture
def partitioned_url(scratch_postgres_url: str) -> str:
    """A fresh database holding docs/partitioned.sql's schema."""
    with psycopg.connect(scratch_postgres_url, autocommit=True) as conn:
        conn.execute(SCHEMA.read_text())  # type: ignore[call-overload]
    return scratch_postgres_url


@pytest.mark.slow
def test_memory_works_on_partitioned_tables(partitioned_url: str) -> None:
    clock = Clock()
    with connect(partitioned_url, index=FLAT) as backend:
        assert backend.vector_search
        memory = ScopedMemory(backend.store, clock=clock)
        clock.advance(days=-10)
        for n, ctx in enumerate(USERS):
            memory.write_document(ctx, f"# User {n}")
            memory.remember(ctx, f"Keeps bees number {n} on the roof")
            memory.remember(ctx, f"Sells honey at market {n}")
        clock.advance(days=10)
        gone = memory.remember(USERS[0], "Keeps a spare hive key under the mat")
        hits = memory.recall(USERS[3], "bees")
        assert [h.note.body for h in hits][:1] == ["Keeps bees number 3 on the roof"]
        assert all("number 3" in h.note.body or "market 3" in h.note.body for h in hits)
        memory.delete_note(USERS[0], gone.key)
        assert "hive" not in " ".join(h.note.body for h in memory.recall(USERS[0], "hive key"))
        report = consolidate(backend.store, merging_model(), now=clock())
        assert sorted(r.status for r in report.scopes) == ["consolidated"] * len(USERS)
        assert all(n.consolidated for n in memory.list_notes(USERS[5]))
        document = memory.read_document(USERS[5])
        assert document is not None and "Sells honey at market 5" in document.text
        assert next(h.note.body for h in memory.recall(USERS[5], "honey")) == (
            "Sells honey at market 5"
        )
    prefix = ".".join(thread_scope(USERS[5]).child(NOTES))
    with psycopg.connect(partitioned_url) as conn:
        spread = conn.execute("SELECT count(DISTINCT tableoid) FROM store").fetchone()
        assert spread is not None and spread[0] > 4
        plan = conn.execute(
            "EXPLAIN SELECT key FROM memory_note_terms WHERE prefix = %s AND lexeme = 'honey'",
            (prefix,),
        ).fetchall()
        scanned = [row[0] for row in plan if "memory_note_terms_p" in row[0]]
        assert len(scanned) == 1


class Agent(GenericFakeChatModel):
    """A scripted chat model that accepts the memory tools (stands in for a real LLM)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Agent:
        return self


async def test_a_graph_turn_on_partitioned_tables(partitioned_url: str) -> None:
    model = Agent(messages=iter([AIMessage("Noted: you keep bees.")] * 4))
    async with await aconnect(partitioned_url, index=FLAT) as backend:
        memory = ScopedMemory(backend.store)
        await memory.aremember(USERS[1], "Keeps bees on the roof")
        graph = create_memory_graph(model, store=backend.store, checkpointer=backend.checkpointer)
        config = {"configurable": {"thread_id": "partitioned-1"}}
        await graph.ainvoke(
            {"messages": [HumanMessage("What do I keep?")]}, config, context=USERS[1]
        )
        state = await graph.aget_state(config)
        assert state.values["messages"][-1].content == "Noted: you keep bees."
        loaded = " ".join(block["text"] for block in state.values["memory_blocks"])
        assert "Keeps bees on the roof" in loaded
        hits = await memory.arecall(USERS[1], "bees")
        assert [h.note.body for h in hits] == ["Keeps bees on the roof"]


def test_the_sql_blocks_of_the_large_stores_page_run_on_the_partitioned_schema(
    partitioned_url: str,
) -> None:
    blocks = re.findall(
        r"^```sql\n(.*?)^```\n", (DOCS / "large-stores.md").read_text(), re.M | re.S
    )
    assert blocks
    with psycopg.connect(partitioned_url, autocommit=True) as conn:
        for block in blocks:
            conn.execute(block)
        options = conn.execute(
            "SELECT count(*) FROM pg_class WHERE relname LIKE 'store\\_p%%' "
            "AND reloptions @> ARRAY['autovacuum_vacuum_scale_factor=0.01', 'fillfactor=90']"
        ).fetchone()
    assert options == (32,)

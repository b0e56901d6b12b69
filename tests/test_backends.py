"""connect / aconnect: the same store and checkpointer behaviour on every backend."""

from __future__ import annotations

import logging
import subprocess
import uuid
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

from memory_plugin import (
    Backend,
    BackendError,
    BackendUnavailableError,
    MemoryContext,
    ScopedMemory,
    aconnect,
    connect,
)
from memory_plugin.backends import sqlite as sqlite_backend
from memory_plugin.backends.index import _logged
from memory_plugin.offline.embeddings import DIMS
from tests.conftest import child_pytest
from tests.embeddings import INDEX


def _echo_graph(backend: Backend):  # type: ignore[no-untyped-def]
    def reply(state: MessagesState) -> dict[str, list[AIMessage]]:
        return {"messages": [AIMessage(f"heard {len(state['messages'])}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    return builder.compile(checkpointer=backend.checkpointer, store=backend.store)


def test_store_roundtrip(backend: Backend) -> None:
    ns = ("memory_plugin", "t")
    backend.store.put(ns, "a", {"text": "alpha"})
    backend.store.put(ns, "b", {"text": "beta"})
    assert backend.store.get(ns, "a").value == {"text": "alpha"}  # type: ignore[union-attr]
    assert sorted(i.key for i in backend.store.search(ns)) == ["a", "b"]
    backend.store.delete(ns, "a")
    assert backend.store.get(ns, "a") is None


async def test_async_store_and_checkpointer(abackend: Backend) -> None:
    ns = ("memory_plugin", "t")
    await abackend.store.aput(ns, "a", {"text": "alpha"})
    assert (await abackend.store.aget(ns, "a")).value == {"text": "alpha"}  # type: ignore[union-attr]
    graph = _echo_graph(abackend)
    config = {"configurable": {"thread_id": "t1"}}
    await graph.ainvoke({"messages": [HumanMessage("one")]}, config)
    result = await graph.ainvoke({"messages": [HumanMessage("two")]}, config)
    assert [m.content for m in result["messages"]] == ["one", "heard 1", "two", "heard 3"]


def test_checkpointer_keeps_threads(backend: Backend) -> None:
    graph = _echo_graph(backend)
    config = {"configurable": {"thread_id": "t1"}}
    graph.invoke({"messages": [HumanMessage("one")]}, config)
    graph.invoke({"messages": [HumanMessage("two")]}, config)
    state = graph.get_state(config)
    assert [m.content for m in state.values["messages"]] == ["one", "heard 1", "two", "heard 3"]


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_durable_across_restart(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from tests.conftest import url_for

    url = url_for(kind, request, tmp_path)
    config = {"configurable": {"thread_id": "t1"}}
    with connect(url) as first:
        first.store.put(("memory_plugin", "t"), "k", {"text": "kept"})
        _echo_graph(first).invoke({"messages": [HumanMessage("hello")]}, config)
    with connect(url) as second:
        item = second.store.get(("memory_plugin", "t"), "k")
        assert item is not None and item.value == {"text": "kept"}
        state = _echo_graph(second).get_state(config)
        assert [m.content for m in state.values["messages"]] == ["hello", "heard 1"]


def test_semantic_index_is_passed_through(backend_url: str) -> None:
    with connect(backend_url, index=INDEX) as backend:
        assert backend.vector_search
        ns = ("memory_plugin", "docs")
        backend.store.put(ns, "cats", {"text": "cats purr and chase mice"})
        backend.store.put(ns, "tax", {"text": "quarterly tax filing deadline"})
        hits = backend.store.search(ns, query="when is the tax deadline", limit=2)
        assert hits[0].key == "tax"
        assert hits[0].score is not None and hits[0].score > (hits[1].score or 0)


async def test_semantic_index_async(backend_url: str) -> None:
    async with await aconnect(backend_url, index=INDEX) as backend:
        ns = ("memory_plugin", "docs")
        await backend.store.aput(ns, "cats", {"text": "cats purr and chase mice"})
        await backend.store.aput(ns, "tax", {"text": "quarterly tax filing deadline"})
        hits = await backend.store.asearch(ns, query="tax deadline", limit=2)
        assert hits[0].key == "tax"


@pytest.mark.parametrize("opener", ["sync", "async"])
async def test_sqlite_without_sqlite_vec_runs_keyword_only(
    opener: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(sqlite_backend, "loadable_sqlite", lambda: None)
    _logged.clear()
    url = f"sqlite:///{tmp_path / 'kw.db'}"
    with caplog.at_level(logging.WARNING, logger="memory_plugin.backends"):
        for _ in range(2):
            if opener == "sync":
                with connect(url, index=INDEX) as backend:
                    assert not backend.vector_search
                    backend.store.put(("memory_plugin", "n"), "k", {"text": "tax deadline"})
                    assert [i.key for i in backend.store.search(("memory_plugin", "n"))] == ["k"]
            else:
                async with await aconnect(url, index=INDEX) as backend:
                    assert not backend.vector_search
                    await backend.store.aput(("memory_plugin", "n"), "k", {"text": "tax"})
                    hits = await backend.store.asearch(("memory_plugin", "n"))
                    assert [i.key for i in hits] == ["k"]
    warnings = [r for r in caplog.records if "keyword-only" in r.getMessage()]
    assert len(warnings) == 1


def test_default_url_is_embedded_sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MEMORY_URL", raising=False)
    with connect() as backend:
        assert backend.kind == "sqlite"
        backend.store.put(("memory_plugin", "t"), "k", {"v": 1})
    assert (tmp_path / ".memory" / "memory.db").is_file()
    monkeypatch.setenv("MEMORY_URL", "memory://")
    with connect() as backend:
        assert backend.kind == "memory"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://localhost/db", "unknown backend URL scheme 'mysql'"),
        ("not a url", "malformed"),
        ("sqlite://relative.db", "sqlite:///relative/path.db"),
    ],
)
def test_bad_urls_are_named(url: str, message: str) -> None:
    with pytest.raises(BackendError, match=message):
        connect(url)


@pytest.mark.parametrize("opener", ["sync", "async"])
async def test_unreachable_postgres_is_a_clear_error(opener: str) -> None:
    url = "postgresql://app:s3cret@127.0.0.1:1/memory"
    with pytest.raises(BackendUnavailableError, match="cannot reach PostgreSQL") as info:
        if opener == "sync":
            connect(url)
        else:
            await aconnect(url)
    assert "s3cret" not in str(info.value)
    assert "127.0.0.1:1" in str(info.value)


@pytest.mark.parametrize(
    ("index", "message"),
    [
        ({"dims": 0, "embed": lambda t: t}, "dims"),
        ({"dims": 8}, "embed"),
        ("openai", "must be a dict"),
    ],
)
def test_bad_index_config_is_named(index: object, message: str) -> None:
    with pytest.raises(BackendError, match=message):
        connect("memory://", index=index)  # type: ignore[arg-type]


def test_close_of_async_backend_points_to_aclose(tmp_path: Path) -> None:
    import asyncio

    async def open_and_check() -> None:
        backend = await aconnect(f"sqlite:///{tmp_path / 'a.db'}")
        with pytest.raises(BackendError, match="aclose"):
            backend.close()
        await backend.aclose()

    asyncio.run(open_and_check())


def _run_postgres_test(ci: str) -> subprocess.CompletedProcess[str]:
    """Run one postgres test in a child pytest where no database can be had."""
    test = "tests/test_backends.py::test_store_roundtrip[postgres]"
    return child_pytest(test, ci, "sys.modules['pgserver'] = None")


@pytest.mark.slow
def test_missing_postgres_fails_in_ci_and_skips_elsewhere() -> None:
    in_ci = _run_postgres_test("true")
    assert in_ci.returncode != 0
    assert "PostgreSQL is required in CI" in in_ci.stdout
    local = _run_postgres_test("")
    assert local.returncode == 0
    assert "1 skipped" in local.stdout


@pytest.mark.parametrize("route", ["direct", "pgbouncer"])
def test_app_servers_starting_together_share_one_fresh_database(
    route: str, postgres_url: str, request: pytest.FixtureRequest
) -> None:
    from concurrent.futures import ThreadPoolExecutor
    from urllib.parse import urlsplit

    import psycopg

    from tests.conftest import through_pgbouncer

    name = "memory_plugin_fresh_start"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    url = urlsplit(postgres_url)._replace(path=f"/{name}").geturl()
    if route == "pgbouncer":
        url = through_pgbouncer(url, request)

    def start_server(n: int) -> str | None:
        with connect(url, index=INDEX) as server:
            server.store.put(("memory_plugin", "servers"), f"s{n}", {"text": f"server {n}"})
            item = server.store.get(("memory_plugin", "servers"), f"s{n}")
            return item.value["text"] if item else None

    with ThreadPoolExecutor(4) as pool:
        started = list(pool.map(start_server, range(4)))
    assert started == [f"server {n}" for n in range(4)]
    with connect(url) as reader:
        assert len(reader.store.search(("memory_plugin", "servers"))) == 4


@pytest.mark.parametrize("opener", ["sync", "async"])
async def test_postgres_with_vectors_of_another_size_runs_keyword_only(
    opener: str, postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with connect(postgres_url, index=INDEX) as backend:
        assert backend.vector_search
    other = {**INDEX, "dims": DIMS // 2}
    _logged.clear()
    ctx = MemoryContext(user_id=f"ann-{uuid.uuid4().hex}")
    with caplog.at_level(logging.WARNING, logger="memory_plugin.backends"):
        if opener == "sync":
            with connect(postgres_url, index=other) as backend:
                assert not backend.vector_search
                memory = ScopedMemory(backend.store)
                memory.remember(ctx, "The release freeze starts on Friday")
                hits = memory.recall(ctx, "release freeze")
        else:
            async with aconnect(postgres_url, index=other) as backend:
                assert not backend.vector_search
                memory = ScopedMemory(backend.store)
                await memory.aremember(ctx, "The release freeze starts on Friday")
                hits = await memory.arecall(ctx, "release freeze")
    assert [hit.note.body for hit in hits] == ["The release freeze starts on Friday"]
    sizes = f"{DIMS}-dimension vectors but the embedding gives {DIMS // 2}"
    warnings = [r.getMessage() for r in caplog.records if "keyword-only" in r.getMessage()]
    assert len(warnings) == 1 and sizes in warnings[0]


@pytest.mark.parametrize("index", [None, INDEX], ids=["keyword-only", "vector"])
async def test_store_and_checkpointer_share_one_sqlite_library(
    index: dict[str, object] | None, tmp_path: Path
) -> None:
    """Two SQLite libraries in one process release each other's file locks and corrupt the
    file ("database disk image is malformed"), so every connection uses the same one."""
    url = f"sqlite:///{tmp_path / 'one.db'}"
    with connect(url, index=index) as first, connect(url) as second:
        modules = {
            type(conn).__module__
            for conn in (first.store.conn, first.checkpointer.conn, second.store.conn)
        }
    async with aconnect(url, index=index) as backend:
        modules |= {
            type(backend.store.conn._conn).__module__,
            type(backend.checkpointer.conn._conn).__module__,
        }
    assert len(modules) == 1, modules

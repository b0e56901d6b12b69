"""Run-context scopes: who may read and write which memory."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from memory_plugin import (
    Backend,
    MemoryContext,
    ScopeError,
    current_context,
    personal_scope,
    readable_thread_scope,
    team_scope,
    thread_scope,
)
from memory_plugin.plans import arun, run


def test_private_thread_uses_personal_scope_shared_uses_team() -> None:
    private = MemoryContext(user_id="ann", workspace_id="w1")
    shared = MemoryContext(user_id="ann", workspace_id="w1", thread_visibility="shared")
    assert thread_scope(private) == personal_scope(private)
    assert thread_scope(shared) == team_scope(shared)
    assert thread_scope(private).namespace != thread_scope(shared).namespace


def test_write_without_user_is_refused_not_downgraded() -> None:
    ctx = MemoryContext(workspace_id="w1")
    with pytest.raises(ScopeError, match="needs user_id"):
        thread_scope(ctx)
    assert readable_thread_scope(ctx) is None


def test_shared_thread_without_workspace_is_refused() -> None:
    ctx = MemoryContext(user_id="ann", thread_visibility="shared")
    with pytest.raises(ScopeError, match="needs workspace_id"):
        thread_scope(ctx)
    assert readable_thread_scope(ctx) is None


def test_personal_memory_is_never_used_from_someone_elses_thread() -> None:
    ctx = MemoryContext(user_id="bob", thread_owner_id="ann")
    with pytest.raises(ScopeError, match="another user's thread"):
        thread_scope(ctx)
    with pytest.raises(ScopeError):
        readable_thread_scope(ctx)
    shared = MemoryContext(
        user_id="bob", workspace_id="w1", thread_owner_id="ann", thread_visibility="shared"
    )
    assert thread_scope(shared).kind == "team"


def test_bad_visibility_is_an_error() -> None:
    with pytest.raises(ScopeError, match="thread_visibility"):
        MemoryContext(user_id="ann", thread_visibility="public")  # type: ignore[arg-type]


def test_context_merges_configurable_and_auth_user() -> None:
    @dataclass
    class AppContext:
        workspace_id: str
        theme: str

    ctx = MemoryContext.from_run(
        AppContext(workspace_id="w1", theme="dark"),
        {
            "langgraph_auth_user_id": "ann",
            "langgraph_auth_user": {"identity": "ann", "org_id": "acme", "workspaces": ["w1"]},
            "thread_id": "t",
        },
    )
    assert (ctx.user_id, ctx.workspace_id, ctx.org_id) == ("ann", "w1", "acme")
    with pytest.raises(ScopeError, match="authenticated user"):
        MemoryContext.from_run({"user_id": "mallory"}, {"langgraph_auth_user_id": "ann"})


def test_workspaces_never_see_each_other(backend: Backend) -> None:
    a = MemoryContext(user_id="ann", workspace_id="A", thread_visibility="shared")
    b = MemoryContext(user_id="ann", workspace_id="B", thread_visibility="shared")
    backend.store.put(thread_scope(a).namespace, "doc", {"text": "A secret"})
    assert backend.store.get(thread_scope(b).namespace, "doc") is None
    assert backend.store.search(thread_scope(b).namespace) == []
    personal_b = personal_scope(MemoryContext(user_id="ann", workspace_id="B")).namespace
    assert backend.store.search(personal_b) == []


def test_reads_of_an_empty_scope_return_empty(backend: Backend) -> None:
    scope = thread_scope(MemoryContext(user_id="newcomer"))
    assert backend.store.search(scope.namespace) == []
    assert backend.store.get(scope.namespace, "doc") is None


class State(TypedDict, total=False):
    text: str
    seen: list[str]


def _graph(backend: Backend):  # type: ignore[no-untyped-def]
    """A real graph whose node writes to the scope of the run's context."""

    def write(state: State) -> State:
        ctx = current_context()
        ns = thread_scope(ctx).namespace
        from langgraph.config import get_store

        get_store().put(ns, "last", {"text": state["text"]})
        return {"seen": list(ns)}

    builder = StateGraph(State, context_schema=MemoryContext)
    builder.add_node("write", write)
    builder.add_edge(START, "write")
    builder.add_edge("write", END)
    return builder.compile(store=backend.store, checkpointer=backend.checkpointer)


def test_graph_node_scopes_from_context_invoke(backend: Backend) -> None:
    graph = _graph(backend)
    config = {"configurable": {"thread_id": "t1"}}
    graph.invoke({"text": "hello"}, config, context=MemoryContext(user_id="ann"))
    ns = personal_scope(MemoryContext(user_id="ann")).namespace
    item = backend.store.get(ns, "last")
    assert item is not None and item.value["text"] == "hello"
    server_config = {"configurable": {"thread_id": "t2", "langgraph_auth_user_id": "bob"}}
    graph.invoke({"text": "from server"}, server_config)
    bob = backend.store.get(personal_scope(MemoryContext(user_id="bob")).namespace, "last")
    assert bob is not None and bob.value["text"] == "from server"


async def test_graph_node_scopes_from_context_ainvoke(abackend: Backend) -> None:
    graph = _graph(abackend)
    ctx = {"user_id": "ann", "workspace_id": "w9", "thread_visibility": "shared"}
    await graph.ainvoke({"text": "team note"}, {"configurable": {"thread_id": "t1"}}, context=ctx)
    item = await abackend.store.aget(team_scope(MemoryContext(workspace_id="w9")).namespace, "last")
    assert item is not None and item.value["text"] == "team note"


async def test_graph_refuses_private_write_without_user(abackend: Backend) -> None:
    graph = _graph(abackend)
    with pytest.raises(ScopeError, match="needs user_id"):
        await graph.ainvoke({"text": "x"}, {"configurable": {"thread_id": "t"}}, context={})
    assert await abackend.store.asearch(("memory_plugin",)) == []


def test_plans_drive_sync_and_async_the_same(backend: Backend) -> None:
    from langgraph.store.base import GetOp, PutOp

    ns = ("memory_plugin", "plan-test")

    def plan():  # type: ignore[no-untyped-def]
        (missing,) = yield [GetOp(ns, "k")]
        yield [PutOp(ns, "k", {"n": 1 if missing is None else missing.value["n"] + 1})]
        (item,) = yield [GetOp(ns, "k")]
        return item.value["n"]

    import asyncio

    assert run(backend.store, plan()) == 1
    assert asyncio.run(arun(backend.store, plan())) == 2


def test_gather_merges_store_reads_and_returns_in_order(backend: Backend) -> None:
    from langgraph.store.base import GetOp, PutOp

    from memory_plugin.plans import gather

    ns = ("memory_plugin", "gather")
    backend.store.put(ns, "a", {"n": 1})
    backend.store.put(ns, "b", {"n": 2})

    def read(key: str):  # type: ignore[no-untyped-def]
        (item,) = yield [GetOp(ns, key)]
        (again,) = yield [GetOp(ns, key)]
        return (item.value["n"] if item else None, again is not None)

    def write():  # type: ignore[no-untyped-def]
        yield [PutOp(ns, "c", {"n": 3})]
        return "written"

    first = next(gather([read("a"), read("b"), read("missing"), write()]))
    assert isinstance(first, list) and len(first) == 4
    results = run(backend.store, gather([read("a"), read("b"), read("missing"), write()]))
    assert results == [(1, True), (2, True), (None, False), "written"]
    assert backend.store.get(ns, "c") is not None


def test_agent_scopes_are_shared_or_private_to_the_caller() -> None:
    from memory_plugin.scope import agent_scope

    ann = MemoryContext(user_id="ann", agent_id="helper")
    bob = MemoryContext(user_id="bob", agent_id="helper")
    assert agent_scope(ann, private=False) == agent_scope(bob, private=False)
    assert agent_scope(ann, private=True) != agent_scope(bob, private=True)
    with pytest.raises(ScopeError, match="needs agent_id"):
        agent_scope(MemoryContext(user_id="ann"), private=False)
    with pytest.raises(ScopeError, match="needs user_id"):
        agent_scope(MemoryContext(agent_id="helper"), private=True)

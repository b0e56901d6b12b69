"""The thread journal and its tools, on every backend, sync and async."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableLambda
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.base import PutOp, SearchOp

from memory_plugin import Backend
from memory_plugin.context_management.journal import (
    JOURNAL,
    TOOL_CALLS,
    JournalEntry,
    adelete_thread,
    append_plan,
    delete_thread,
    entry_key,
    kept_incarnations_plan,
    kept_namespace,
    search_plan,
    tail_plan,
    thread_namespace,
    tool_call_plan,
)
from memory_plugin.context_management.journal_tools import journal_tools
from memory_plugin.errors import InvalidIdError, MemoryWriteError
from memory_plugin.plans import arun, run
from tests.scoped_helpers import break_store

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def flight_chat() -> list[BaseMessage]:
    """A turn in which the assistant calls a tool and answers from its result."""
    return [
        SystemMessage("You are a travel agent", id="s1"),
        HumanMessage("Book a flight to Lisbon", id="h1"),
        AIMessage(
            "",
            id="a1",
            tool_calls=[{"name": "search_flights", "args": {"to": "LIS"}, "id": "call-1"}],
        ),
        ToolMessage("TP1234 departs 09:00", tool_call_id="call-1", name="search_flights", id="t1"),
        AIMessage([{"type": "text", "text": "Booked TP1234"}], id="a2"),
    ]


def journal(backend: Backend, thread: str, messages: list[BaseMessage], start: int = 0) -> int:
    return run(backend.store, append_plan(thread, messages, start, T0))


def search(backend: Backend, query: str, thread: str = "t1", **options: Any) -> list[JournalEntry]:
    filters = {"role": None, "after": None, "before": None, "limit": 10, **options}
    return run(backend.store, search_plan(thread, query, **filters))


def assert_read_back(entries: list[JournalEntry], messages: list[BaseMessage]) -> None:
    assert [e.seq for e in entries] == list(range(len(messages)))
    assert [e.message_id for e in entries] == [m.id for m in messages]
    assert [e.role for e in entries] == ["system", "human", "ai", "tool", "ai"]
    assert [e.text for e in entries][3:] == ["TP1234 departs 09:00", "Booked TP1234"]
    call = {"name": "search_flights", "args": {"to": "LIS"}, "id": "call-1"}
    assert entries[2].tool_calls == [call]
    assert (entries[3].tool_call_id, entries[3].name) == ("call-1", "search_flights")
    assert entries[0].created_at.startswith("2026-11-29T12:00:00")
    assert [e.to_message() for e in entries] == messages


def test_append_and_read_back(backend: Backend) -> None:
    messages = flight_chat()
    assert journal(backend, "t1", messages) == 5
    assert_read_back(run(backend.store, tail_plan("t1", 5, 20)), messages)


async def test_append_and_read_back_async(abackend: Backend) -> None:
    messages = flight_chat()
    assert await arun(abackend.store, append_plan("t1", messages, 0, T0)) == 5
    assert_read_back(await arun(abackend.store, tail_plan("t1", 5, 20)), messages)


def test_append_is_one_write_of_only_the_new_messages(backend: Backend) -> None:
    ns = (*thread_namespace("t1"), JOURNAL)
    journal(backend, "t1", [HumanMessage(f"message {n}") for n in range(100)])
    before = {i.key: i.updated_at for i in backend.store.search(ns, limit=500)}
    assert journal(backend, "t1", flight_chat()[:3], start=100) == 103
    after = {i.key: i.updated_at for i in backend.store.search(ns, limit=500)}
    assert len(before) == 100 and len(after) == 103
    assert {key: after[key] for key in before} == before
    plan = append_plan("t1", flight_chat()[:3], 103, T0)
    first = next(plan)
    assert isinstance(first, list) and all(isinstance(op, PutOp) for op in first)
    assert len(first) == 4
    with pytest.raises(StopIteration):
        plan.send([None] * 4)


def test_results_of_earlier_calls_are_written_in_one_batch_without_reads() -> None:
    results = [ToolMessage("ok", tool_call_id=f"c{n}", id=f"t{n}") for n in range(3)]
    plan = append_plan("t1", results, 7, T0)
    writes = next(plan)
    assert isinstance(writes, list) and [type(op) for op in writes] == [PutOp] * 6
    with pytest.raises(StopIteration) as done:
        plan.send([None] * 6)
    assert done.value.value == 10


def test_bad_thread_id_or_seq_is_refused(backend: Backend) -> None:
    with pytest.raises(InvalidIdError, match="thread_id must not be empty"):
        journal(backend, "", flight_chat())
    with pytest.raises(MemoryWriteError, match="start_seq must be at least 0"):
        journal(backend, "t1", flight_chat(), start=-1)
    assert backend.store.search(("memory_plugin",)) == []


def test_tail_returns_the_last_n_oldest_first(backend: Backend) -> None:
    journal(backend, "t1", [HumanMessage(f"m{n}") for n in range(5)])
    assert [e.text for e in run(backend.store, tail_plan("t1", 5, 2))] == ["m3", "m4"]
    assert [e.seq for e in run(backend.store, tail_plan("t1", 5, 50))] == [0, 1, 2, 3, 4]
    assert run(backend.store, tail_plan("t1", 5, 0)) == []
    assert run(backend.store, tail_plan("other", 5, 3)) == []


def test_tool_call_lookup_across_appends(backend: Backend) -> None:
    chat = flight_chat()
    next_seq = journal(backend, "t1", chat[:3])
    call, result = run(backend.store, tool_call_plan("t1", "call-1"))
    assert call is not None and call.seq == 2 and result is None
    journal(backend, "t1", chat[3:], start=next_seq)
    call, result = run(backend.store, tool_call_plan("t1", "call-1"))
    assert call is not None and call.seq == 2
    assert result is not None and (result.seq, result.text) == (3, "TP1234 departs 09:00")
    links = backend.store.search((*thread_namespace("t1"), TOOL_CALLS), limit=10)
    assert sorted((i.key, i.value["seq"]) for i in links) == [
        ("call:call-1", 2),
        ("result:call-1", 3),
    ]
    assert run(backend.store, tool_call_plan("t1", "call-9")) == (None, None)
    assert run(backend.store, tool_call_plan("t2", "call-1")) == (None, None)


async def test_tool_call_lookup_async(abackend: Backend) -> None:
    await arun(abackend.store, append_plan("t1", flight_chat(), 0, T0))
    call, result = await arun(abackend.store, tool_call_plan("t1", "call-1"))
    assert call is not None and result is not None and (call.seq, result.seq) == (2, 3)


def journal_days(backend: Backend) -> None:
    """Three days of one thread, and another thread that also mentions Lisbon."""
    days = [
        [HumanMessage("I want to visit Lisbon"), AIMessage("Lisbon is lovely in spring")],
        [HumanMessage("What about Porto?"), AIMessage("Porto has great wine")],
        [HumanMessage("Lisbon Lisbon Lisbon: book it"), AIMessage("Booked the Lisbon trip")],
    ]
    seq = 0
    for n, messages in enumerate(days):
        seq = run(backend.store, append_plan("t1", messages, seq, T0 + timedelta(days=n)))
    journal(backend, "t2", [HumanMessage("Lisbon hotel in Alfama")])


def test_search_ranks_by_keyword_and_stays_in_the_thread(backend: Backend) -> None:
    journal_days(backend)
    hits = search(backend, "lisbon")
    assert hits[0].text == "Lisbon Lisbon Lisbon: book it"
    assert {h.seq for h in hits} == {0, 1, 4, 5}
    assert all("Alfama" not in h.text for h in hits)
    assert search(backend, "porto wine")[0].text == "Porto has great wine"
    assert search(backend, "Madrid") == []


def test_search_filters_by_role_and_inclusive_utc_dates(backend: Backend) -> None:
    journal_days(backend)
    assert [h.seq for h in search(backend, "lisbon", role="ai")] == [5, 1]
    assert {h.seq for h in search(backend, "lisbon", role="user")} == {0, 4}
    day2 = date(2026, 11, 30)
    assert [h.seq for h in search(backend, " ", after=day2, before=day2)] == [3, 2]
    assert [h.seq for h in search(backend, "", after=day2)] == [5, 4, 3, 2]
    assert [h.seq for h in search(backend, "", role="human", before=day2)] == [2, 0]
    assert search(backend, "lisbon", after=date(2026, 12, 2)) == []


def test_search_limit_is_clamped(backend: Backend) -> None:
    journal(backend, "t1", [HumanMessage(f"note {n}") for n in range(60)])
    assert [h.seq for h in search(backend, "note", limit=0)] == [59]
    assert len(search(backend, "note", limit=500)) == 50
    assert [h.seq for h in search(backend, "", role="human", limit=3)] == [59, 58, 57]


@pytest.mark.parametrize("query", ["", "   ", "?!"])
def test_search_without_query_or_filter_is_refused(backend: Backend, query: str) -> None:
    journal_days(backend)
    with pytest.raises(MemoryWriteError, match="needs a query, or a role, after or before"):
        search(backend, query)


def test_search_with_after_later_than_before_is_refused(backend: Backend) -> None:
    with pytest.raises(MemoryWriteError, match="is later than before"):
        search(backend, "x", after=date(2026, 12, 1), before=date(2026, 11, 1))


def test_search_pages_through_long_threads(backend: Backend) -> None:
    messages = [HumanMessage(f"filler {n}") for n in range(1_005)]
    messages[3] = HumanMessage("the needle is here")
    journal(backend, "t1", messages)
    assert [h.seq for h in search(backend, "needle")] == [3]
    assert [h.seq for h in search(backend, "", role="human", limit=2)] == [1_004, 1_003]


async def test_search_async(abackend: Backend) -> None:
    await arun(abackend.store, append_plan("t1", flight_chat(), 0, T0))
    plan = search_plan("t1", "booked", role="ai", after=None, before=None, limit=5)
    assert [h.text for h in await arun(abackend.store, plan)] == ["Booked TP1234"]


def chat_graph(backend: Backend) -> Any:
    """A one-node chat graph that checkpoints its threads."""
    builder = StateGraph(MessagesState)
    builder.add_node("reply", lambda state: {"messages": [AIMessage("hello")]})
    builder.add_edge(START, "reply")
    return builder.compile(checkpointer=backend.checkpointer)


def thread_items(backend: Backend, thread: str) -> list[str]:
    ns = thread_namespace(thread)
    return sorted(f"{i.namespace[-1]}/{i.key}" for i in backend.store.search(ns, limit=100))


def kept_items(backend: Backend, thread: str, incarnation: int) -> list[str]:
    ns = kept_namespace(thread, incarnation)
    return sorted(f"{i.namespace[-1]}/{i.key}" for i in backend.store.search(ns, limit=100))


def test_delete_thread_keeps_the_journal_unless_asked(backend: Backend) -> None:
    graph = chat_graph(backend)
    for thread in ("t1", "t10"):
        graph.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": thread}})
        journal(backend, thread, flight_chat())
    other = thread_items(backend, "t10")
    backend.store.put((*thread_namespace("t1"), "summary"), "rolling", {"text": "Lisbon trip"})
    t1 = {"configurable": {"thread_id": "t1"}}
    kept = thread_items(backend, "t1")
    assert "summary/rolling" in kept and f"journal/{entry_key(4)}" in kept
    assert delete_thread(backend.checkpointer, backend.store, "t1") == 0
    assert backend.checkpointer.get_tuple(t1) is None
    assert graph.get_state(t1).values == {}
    assert thread_items(backend, "t1") == []
    assert kept_items(backend, "t1", 0) == kept
    delete_thread(backend.checkpointer, backend.store, "t1", keep_journal=False)
    assert thread_items(backend, "t1") == [] and kept_items(backend, "t1", 0) == []
    assert run(backend.store, kept_incarnations_plan("t1")) == []
    assert thread_items(backend, "t10") == other and len(other) > 5
    assert graph.get_state({"configurable": {"thread_id": "t10"}}).values["messages"]


async def test_adelete_thread(abackend: Backend) -> None:
    graph = chat_graph(abackend)
    t1 = {"configurable": {"thread_id": "t1"}}
    await graph.ainvoke({"messages": [HumanMessage("hi")]}, t1)
    await arun(abackend.store, append_plan("t1", flight_chat(), 0, T0))
    await abackend.store.aput((*thread_namespace("t1"), "summary"), "rolling", {"text": "trip"})
    before = await abackend.store.asearch(thread_namespace("t1"), limit=100)
    assert await adelete_thread(abackend.checkpointer, abackend.store, "t1") == 0
    assert await abackend.checkpointer.aget_tuple(t1) is None
    assert await abackend.store.asearch(thread_namespace("t1"), limit=100) == []
    after = await abackend.store.asearch(kept_namespace("t1", 0), limit=100)
    assert sorted(i.key for i in after) == sorted(i.key for i in before) and len(before) > 6
    await graph.ainvoke({"messages": [HumanMessage("again")]}, t1)
    await adelete_thread(abackend.checkpointer, abackend.store, "t1", keep_journal=False)
    assert await abackend.checkpointer.aget_tuple(t1) is None
    assert await abackend.store.asearch(thread_namespace("t1"), limit=100) == []
    assert await abackend.store.asearch(kept_namespace("t1", 0), limit=100) == []


def call(name: str, **args: Any) -> AIMessage:
    """A model turn that calls one tool."""
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])


def agent(backend: Backend, *script: AIMessage, checkpointed: bool = True) -> Any:
    """A real tool-calling graph with the journal tools, whose model follows a script."""
    llm = GenericFakeChatModel(messages=iter([*script, AIMessage("done")]))

    def respond(state: MessagesState) -> dict[str, list[Any]]:
        return {"messages": [llm.invoke(state["messages"])]}

    async def arespond(state: MessagesState) -> dict[str, list[Any]]:
        return {"messages": [await llm.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", RunnableLambda(respond, arespond))
    builder.add_node("tools", ToolNode(journal_tools()))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    checkpointer = backend.checkpointer if checkpointed else None
    return builder.compile(store=backend.store, checkpointer=checkpointer)


def replies(graph: Any, thread: str | None = "t1") -> list[ToolMessage]:
    config = {"configurable": {"thread_id": thread}} if thread else {}
    result = graph.invoke({"messages": [HumanMessage("hi")]}, config)
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


LONG_RESULT = "fare line " * 2_000


def journal_long_call(backend: Backend) -> None:
    """Thread t1 made a call with a long result; thread t2 talked about Alfama."""
    journal_days(backend)
    big_call = AIMessage(
        "",
        tool_calls=[{"name": "fares", "args": {"route": "LIS-OPO", "days": [1, 2]}, "id": "c-9"}],
    )
    journal(backend, "t1", [big_call, ToolMessage(LONG_RESULT, tool_call_id="c-9")], start=6)


def test_tool_schemas_take_no_thread() -> None:
    fields = [set(t.tool_call_schema.model_json_schema()["properties"]) for t in journal_tools()]
    assert fields == [{"query", "role", "after", "before", "limit"}, {"tool_call_id"}]


def test_search_tool_finds_this_thread_only(backend: Backend) -> None:
    journal_long_call(backend)
    graph = agent(
        backend,
        call("journal_message_search", query="Lisbon", role="human"),
        call("journal_message_search", query="fare"),
        call("journal_message_search", query="Alfama"),
    )
    (lisbon, fares, alfama) = replies(graph)
    assert lisbon.content.splitlines() == [
        "[seq 4] 2026-12-01 12:00 human: Lisbon Lisbon Lisbon: book it",
        "[seq 0] 2026-11-29 12:00 human: I want to visit Lisbon",
    ]
    assert fares.content.startswith("[seq 7] 2026-11-29 12:00 tool (c-9): fare line fare")
    assert fares.content.endswith("…") and len(fares.content) < 400
    assert alfama.content == "No messages in this thread's journal match 'Alfama'."
    (other,) = replies(agent(backend, call("journal_message_search", query="Alfama")), "t2")
    assert other.content == "[seq 0] 2026-11-29 12:00 human: Lisbon hotel in Alfama"


def test_view_tool_returns_the_full_call(backend: Backend) -> None:
    journal_long_call(backend)
    graph = agent(
        backend,
        call("journal_message_search", query="", role="ai", limit=1),
        call("journal_tool_call_view", tool_call_id="c-9"),
    )
    listed, viewed = replies(graph)
    assert listed.content == "[seq 6] 2026-11-29 12:00 ai: [called fares (c-9)]"
    assert viewed.content == (
        "Tool call c-9 to fares\nArguments:\n"
        '{\n  "days": [\n    1,\n    2\n  ],\n  "route": "LIS-OPO"\n}\n'
        f"Result:\n{LONG_RESULT}"
    )


async def test_tools_under_ainvoke(abackend: Backend) -> None:
    await arun(abackend.store, append_plan("t1", flight_chat(), 0, T0))
    graph = agent(
        abackend,
        call("journal_message_search", query="TP1234", role="tool"),
        call("journal_tool_call_view", tool_call_id="call-1"),
    )
    result = await graph.ainvoke(
        {"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "t1"}}
    )
    found, viewed = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert found.content == (
        "[seq 3] 2026-11-29 12:00 tool search_flights (call-1): TP1234 departs 09:00"
    )
    assert viewed.content.endswith('{\n  "to": "LIS"\n}\nResult:\nTP1234 departs 09:00')


def test_view_marks_a_failed_call_and_one_still_running(backend: Backend) -> None:
    calls = [{"name": "pay", "args": {}, "id": "c-1"}, {"name": "ship", "args": {}, "id": "c-2"}]
    failed = ToolMessage("card declined", tool_call_id="c-1", name="pay", status="error")
    journal(backend, "t1", [AIMessage("", tool_calls=calls), failed])
    graph = agent(
        backend,
        call("journal_tool_call_view", tool_call_id="c-1"),
        call("journal_tool_call_view", tool_call_id="c-2"),
    )
    paid, shipped = replies(graph)
    assert paid.content == "Tool call c-1 to pay\nArguments:\n{}\nResult (error):\ncard declined"
    assert shipped.content == "Tool call c-2 to ship\nArguments:\n{}\nResult: (none recorded)"


@pytest.mark.parametrize(
    ("tool_call", "message"),
    [
        (call("journal_message_search", query="x", after="2026/11/29"), "after must be a date"),
        (call("journal_message_search", query="x", before="2026-02-30"), "before must be a date"),
        (call("journal_message_search", query=""), "needs a query"),
        (call("journal_tool_call_view", tool_call_id="nope"), "no tool call nope in this thread"),
    ],
)
def test_bad_input_is_a_tool_error(backend: Backend, tool_call: AIMessage, message: str) -> None:
    journal(backend, "t1", flight_chat())
    (reply,) = replies(agent(backend, tool_call))
    assert reply.status == "error" and message in str(reply.content)


def test_another_threads_call_is_not_viewable(backend: Backend) -> None:
    journal(backend, "t2", flight_chat())
    (reply,) = replies(agent(backend, call("journal_tool_call_view", tool_call_id="call-1")))
    assert reply.status == "error"
    assert reply.content == "no tool call call-1 in this thread's journal"


def test_a_run_without_thread_is_a_tool_error(backend: Backend) -> None:
    graph = agent(backend, call("journal_message_search", query="x"), checkpointed=False)
    (reply,) = replies(graph, thread=None)
    assert reply.status == "error" and "the journal needs a thread" in reply.content


def test_store_failure_is_a_clear_tool_error(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal(backend, "t1", flight_chat())
    break_store(
        monkeypatch,
        backend.store,
        lambda ops: any(isinstance(op, SearchOp) for op in ops),
        RuntimeError("disk full"),
    )
    (reply,) = replies(agent(backend, call("journal_message_search", query="Lisbon")))
    assert reply.status == "error"
    assert reply.content == "Memory is unavailable right now (RuntimeError); nothing was changed."

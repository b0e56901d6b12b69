"""Issue 9, points 5 and 6: a reused thread id starts a new journal, and text or numbers a
backend cannot hold never break a thread, on every backend, sync and async."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.store.base import GetOp, PutOp, SearchOp

from memory_plugin import Backend, MemoryContext, create_memory_graph
from memory_plugin.backends.conditional import PutIfVersion
from memory_plugin.context_management.journal import (
    JournalEntry,
    adelete_thread,
    append_plan,
    delete_thread,
    entries_plan,
    kept_incarnations_plan,
    search_plan,
    tool_call_plan,
)
from memory_plugin.context_management.window import summary_plan
from memory_plugin.errors import MemoryWriteError
from memory_plugin.offline.demo import DemoModel
from memory_plugin.plans import Plan, arun, run
from memory_plugin.settings import MemorySettings
from memory_plugin.storable import storable, storable_text
from tests.fakes import CompactionModel
from tests.thread_helpers import build_graph, chat, fetch_turn

ANN = MemoryContext(user_id="ann", workspace_id="acme")
T1 = {"configurable": {"thread_id": "t1"}}
BIG = 2**70
T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@tool
def lookup(term: str) -> str:
    """Look a term up."""
    return f"{term}: the capital of Portugal"


@tool
def echo(text: str, big: int) -> str:
    """Echo the arguments back, with a NUL byte, as a misbehaving tool might."""
    return f"echoed\x00{text} {big}"


def call(name: str, call_id: str, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


def graph_for(backend: Backend, *script: Any) -> Any:
    model = DemoModel(script=list(script))
    return create_memory_graph(
        model, [lookup, echo], store=backend.store, checkpointer=backend.checkpointer
    )


def say(graph: Any, text: str) -> list[Any]:
    return graph.invoke({"messages": [HumanMessage(text)]}, T1, context=ANN)["messages"]  # type: ignore[no-any-return]


async def asay(graph: Any, text: str) -> list[Any]:
    out = await graph.ainvoke({"messages": [HumanMessage(text)]}, T1, context=ANN)
    return out["messages"]  # type: ignore[no-any-return]


def tool_replies(messages: list[Any]) -> dict[str, str]:
    return {m.tool_call_id: m.text for m in messages if isinstance(m, ToolMessage)}


def search(thread: str, query: str, incarnation: int | None = None) -> Plan[Any]:
    return search_plan(
        thread, query, role=None, after=None, before=None, limit=10, incarnation=incarnation
    )


OLD_THREAD = [
    call("lookup", "lookup-1", term="Lisbon"),
    "Lisbon is the capital of Portugal; the offsite is booked there.",
]
NEW_THREAD = [
    call("journal_message_search", "search-1", query="Lisbon offsite"),
    call("journal_tool_call_view", "view-1", tool_call_id="lookup-1"),
    "This thread has no earlier messages.",
]
OLD_TEXT = "We are planning the Lisbon offsite"


def assert_new_journal(messages: list[Any]) -> None:
    """The new thread found nothing of the deleted one."""
    replies = tool_replies(messages)
    assert replies["search-1"] == "No messages in this thread's journal match 'Lisbon offsite'."
    assert "no tool call lookup-1 in this thread's journal" in replies["view-1"]


def assert_kept(backend: Backend, incarnation: int) -> None:
    """The deleted thread's journal is intact as a kept incarnation."""
    kept = run(backend.store, entries_plan("t1", incarnation=incarnation))
    assert [e.text for e in kept][:1] == [OLD_TEXT]
    assert kept[-1].text == OLD_THREAD[-1]
    hits = run(backend.store, search("t1", "offsite", incarnation))
    assert sorted(h.seq for h in hits) == [0, len(kept) - 1]
    made, result = run(backend.store, tool_call_plan("t1", "lookup-1", incarnation=incarnation))
    assert made is not None and result is not None
    assert result.text == "Lisbon: the capital of Portugal"


def test_a_reused_thread_id_starts_a_new_journal(backend: Backend) -> None:
    graph = graph_for(backend, *OLD_THREAD, *NEW_THREAD, "Hi again.")
    say(graph, OLD_TEXT)
    assert delete_thread(backend.checkpointer, backend.store, "t1") == 0
    assert graph.get_state(T1).values == {}
    messages = say(graph, "What did we plan?")
    assert_new_journal(messages)
    live = run(backend.store, entries_plan("t1"))
    assert [e.text for e in live][:1] == ["What did we plan?"]
    assert_kept(backend, 0)
    assert delete_thread(backend.checkpointer, backend.store, "t1") == 1
    assert run(backend.store, kept_incarnations_plan("t1")) == [0, 1]
    assert_kept(backend, 0)
    say(graph, "And now?")
    assert [e.text for e in run(backend.store, entries_plan("t1"))][:1] == ["And now?"]
    assert run(backend.store, search("t1", "offsite")) == []


async def test_a_reused_thread_id_starts_a_new_journal_async(abackend: Backend) -> None:
    graph = graph_for(abackend, *OLD_THREAD, *NEW_THREAD)
    await asay(graph, OLD_TEXT)
    assert await adelete_thread(abackend.checkpointer, abackend.store, "t1") == 0
    assert_new_journal(await asay(graph, "What did we plan?"))
    kept = await arun(abackend.store, entries_plan("t1", incarnation=0))
    assert kept[0].text == OLD_TEXT and kept[-1].text == OLD_THREAD[-1]
    assert await arun(abackend.store, kept_incarnations_plan("t1")) == [0]


@pytest.mark.slow
def test_a_thread_deleted_without_delete_thread_also_starts_a_new_journal(
    backend: Backend,
) -> None:
    graph = graph_for(backend, *OLD_THREAD, *NEW_THREAD)
    say(graph, OLD_TEXT)
    backend.checkpointer.delete_thread("t1")
    assert_new_journal(say(graph, "What did we plan?"))
    assert_kept(backend, 0)
    assert run(backend.store, kept_incarnations_plan("t1")) == [0]


async def test_a_thread_deleted_without_delete_thread_starts_a_new_journal_async(
    abackend: Backend,
) -> None:
    graph = graph_for(abackend, *OLD_THREAD, *NEW_THREAD)
    await asay(graph, OLD_TEXT)
    await abackend.checkpointer.adelete_thread("t1")
    assert_new_journal(await asay(graph, "What did we plan?"))
    kept = await arun(abackend.store, entries_plan("t1", incarnation=0))
    assert kept[0].text == OLD_TEXT


def test_a_retried_first_append_is_the_same_journal(backend: Backend) -> None:
    messages = [HumanMessage(OLD_TEXT, id="h1"), AIMessage("Noted.", id="a1")]
    for _ in range(2):
        assert run(backend.store, append_plan("t1", messages, 0, T0)) == 2
    assert run(backend.store, kept_incarnations_plan("t1")) == []
    assert [e.text for e in run(backend.store, entries_plan("t1"))] == [OLD_TEXT, "Noted."]


def _deleted_summarized_thread(backend: Backend, thread: str, how: str) -> tuple[Any, str]:
    """A recent-window thread with a rolling summary, deleted (`delete_thread` or the
    checkpointer alone), then used again for one turn: the summary it had, and what the
    model was shown on the new thread."""
    script = [m for n in range(6) for m in fetch_turn(n)]
    model = chat([*script, AIMessage("Fresh start.")], window=None)
    window = {"thread_policy": "recent_window", "masking": False}
    graph, manager = build_graph(backend, model, summary_model=CompactionModel(), platform=window)
    config = {"configurable": {"thread_id": thread, "recent_window_messages": 4}}
    for n in range(6):
        graph.invoke({"messages": [HumanMessage(f"read page {n}")]}, config, context=ANN)
        manager.wait_for_background()
    old = run(backend.store, summary_plan(thread))
    assert old["text"].startswith("Summary")
    if how == "delete_thread":
        delete_thread(backend.checkpointer, backend.store, thread)
    else:
        backend.checkpointer.delete_thread(thread)
    graph.invoke({"messages": [HumanMessage("hello")]}, config, context=ANN)
    manager.wait_for_background()
    seen = "\n".join(str(m.content) for m in model.inputs[-1] if isinstance(m, SystemMessage))
    return old, seen


def test_a_reused_thread_id_starts_without_the_old_rolling_summary(backend: Backend) -> None:
    old, seen = _deleted_summarized_thread(backend, "w1", "delete_thread")
    assert "Summary" not in seen
    assert run(backend.store, summary_plan("w1"))["text"] == ""
    kept = backend.store.get(("memory_plugin", "kept_thread", "w1", "0", "summary"), "rolling")
    assert kept is not None and kept.value == old


def test_a_thread_deleted_by_the_checkpointer_starts_without_the_old_rolling_summary(
    backend: Backend,
) -> None:
    """LangGraph Server deletes threads through its checkpointer alone."""
    _, seen = _deleted_summarized_thread(backend, "w2", "checkpointer")
    assert "Summary" not in seen


def test_a_bad_incarnation_is_refused(backend: Backend) -> None:
    for bad in (-1, True, "0"):
        with pytest.raises(MemoryWriteError, match="incarnation must be a whole number"):
            run(backend.store, entries_plan("t1", incarnation=bad))  # type: ignore[arg-type]


def test_storable_replaces_what_no_backend_can_hold() -> None:
    assert storable_text("a\x00b") == "a\ufffdb"
    assert storable_text("lone \ud800 and \udfff") == "lone \ufffd and \ufffd"
    assert storable_text("pair \ud83d\ude00") == "pair \U0001f600"
    assert storable(2**63 - 1) == 2**63 - 1 and storable(-(2**63)) == -(2**63)
    assert storable(2**63) == "9223372036854775808" and storable(-(2**63) - 1) == str(-(2**63) - 1)
    assert storable(True) is True and storable(1.5) == 1.5 and storable(None) is None
    nested = {"k\x00": [("x\x00", BIG)], "n": {"deep": "\ud800"}}
    assert storable(nested) == {"k\ufffd": [("x\ufffd", str(BIG))], "n": {"deep": "\ufffd"}}
    assert storable({"n": 2**64 - 1, "m": 2**60}) == {"n": str(2**64 - 1), "m": 2**60}
    clean = {"text": "fine, even a literal \\u0000", "items": [1, 2**62, {"a": "b"}]}
    assert storable(clean) is clean
    message = AIMessage("hi\x00", tool_calls=[{"name": "t", "args": {"n": BIG}, "id": "c"}])
    fixed = storable(message)
    assert fixed.content == "hi\ufffd" and fixed.tool_calls[0]["args"] == {"n": str(BIG)}
    assert message.content == "hi\x00", "the original is not changed"


def unstorable_writes() -> Plan[list[Any]]:
    ns = ("memory_plugin", "test")
    value = {"text": "a\x00b \ud800", "args": {"big": BIG, "small": 7}}
    yield [PutOp(ns, "k", value, index=False)]
    yield PutIfVersion(ns, "cas", value, None)
    found = yield [GetOp(ns, "k"), GetOp(ns, "cas"), SearchOp(ns, filter={"text": "a\x00b \ud800"})]
    return [found[0].value, found[1].value, [item.key for item in found[2]]]


def test_every_store_write_is_normalised(backend: Backend) -> None:
    put, cas, matched = run(backend.store, unstorable_writes())
    assert put == {"text": "a\ufffdb \ufffd", "args": {"big": str(BIG), "small": 7}}
    assert cas["text"] == put["text"] and cas["args"] == put["args"]
    assert sorted(matched) == ["cas", "k"]


async def test_every_store_write_is_normalised_async(abackend: Backend) -> None:
    put, cas, matched = await arun(abackend.store, unstorable_writes())
    assert put["text"] == "a\ufffdb \ufffd" and put["args"]["big"] == str(BIG)
    assert cas["args"] == put["args"] and sorted(matched) == ["cas", "k"]


UNSTORABLE_TURNS = [
    "Noted.",
    call("echo", "echo-1", text="a\x00b", big=BIG),
    "Echoed.",
    call("journal_message_search", "search-1", query="Lisbon"),
    call("journal_tool_call_view", "view-1", tool_call_id="echo-1"),
    "Found it.",
]
TURN_TEXTS = ["Plan the Lisbon\x00trip \ud800 please", "Echo a\x00b for me", "Find Lisbon"]


def assert_thread_survived(messages: list[Any], journaled: list[JournalEntry]) -> None:
    assert messages[-1].text == "Found it."
    replies = tool_replies(messages)
    assert replies["echo-1"].startswith("echoed")
    assert "Plan the Lisbon\ufffdtrip \ufffd please" in replies["search-1"]
    view = replies["view-1"]
    assert '"text": "a\ufffdb"' in view and f'"big": "{BIG}"' in view
    assert f"echoed\ufffda\ufffdb {BIG}" in view and "\x00" not in view
    assert [e.role for e in journaled].count("human") == 3
    assert all("\x00" not in e.text for e in journaled)


def test_nul_surrogates_and_huge_ints_never_break_a_thread(backend: Backend) -> None:
    graph = graph_for(backend, *UNSTORABLE_TURNS)
    for text in TURN_TEXTS:
        messages = say(graph, text)
    assert_thread_survived(messages, run(backend.store, entries_plan("t1")))
    restored = graph.get_state(T1).values["messages"]
    assert [m.text for m in restored if isinstance(m, HumanMessage)][1] == "Echo a\x00b for me"


async def test_nul_surrogates_and_huge_ints_never_break_a_thread_async(abackend: Backend) -> None:
    graph = graph_for(abackend, *UNSTORABLE_TURNS)
    for text in TURN_TEXTS:
        messages = await asay(graph, text)
    assert_thread_survived(messages, await arun(abackend.store, entries_plan("t1")))
    assert len((await graph.aget_state(T1)).values["messages"]) >= 10


def test_a_message_of_one_nul_byte_is_answered(backend: Backend) -> None:
    graph = create_memory_graph(
        DemoModel(script=["Noted."]),
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=MemorySettings(profile=False),
    )
    assert say(graph, "\x00")[-1].text == "Noted."

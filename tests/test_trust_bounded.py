"""A lowered limit never locks the agent in: over the limit, every edit that uses no more than
now is allowed, a refused write lists the target's entries, and `read` shows entries added
earlier in the session that the frozen prompt does not; every backend, invoke and ainvoke."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from memory_plugin import Backend, LayeredSettings, MemoryContext, create_memory_graph
from memory_plugin.bounded import BoundedMemory
from memory_plugin.errors import MemoryWriteError
from memory_plugin.settings import MemorySettings
from tests.test_bounded_graph import SeeingModel

ANN = MemoryContext(user_id="ann")
ON = MemorySettings(bounded_memory=True)
ENTRIES = [
    "Ann is a site reliability engineer in Lisbon",
    "Ann prefers answers with the command first, then the explanation",
    "Ann is on call every second Monday and wants pages kept short",
    "Ann writes Go and Python and keeps her dotfiles in a public repository",
]
LISTING = "\n§\n".join(ENTRIES)


def lowered(backend: Backend) -> BoundedMemory:
    """Ann's user entries (248 characters), then an operator lowers the limit to 200."""
    memory = BoundedMemory(backend.store)
    for entry in ENTRIES:
        memory.apply(ANN, "add", "user", entry)
    LayeredSettings(backend.store).update("platform", ANN, set={"bounded_user_chars": 200})
    return memory


def test_over_a_lowered_limit_removing_and_shrinking_are_allowed(backend: Backend) -> None:
    memory = lowered(backend)
    before = memory.read(ANN)["user"]
    assert before.used > before.limit == 200
    shorter = "Ann: SRE, Lisbon"
    assert memory.apply(ANN, "replace", "user", shorter, old_text="reliability").startswith(
        "Replaced in user"
    )
    with pytest.raises(MemoryWriteError, match="would exceed limit") as refused:
        memory.apply(ANN, "replace", "user", "Ann " * 60, old_text="Lisbon")
    assert all(entry in str(refused.value) for entry in [shorter, *ENTRIES[1:]])
    assert memory.apply(ANN, "remove", "user", old_text="on call").startswith("Removed from user")
    assert memory.read(ANN)["user"].entries == [shorter, ENTRIES[1], ENTRIES[3]]
    assert memory.apply(ANN, "add", "user", "Ann likes tea").startswith("Added to user")


def test_a_write_refused_for_the_limit_lists_the_current_entries(backend: Backend) -> None:
    memory = lowered(backend)
    with pytest.raises(MemoryWriteError) as refused:
        memory.apply(ANN, "add", "user", "Ann likes tea")
    message = str(refused.value)
    assert "user would exceed limit" in message
    assert "Current user entries [124% — 248/200 chars]:\n" + LISTING in message


def test_read_lists_the_target_as_it_is_now(backend: Backend) -> None:
    memory = lowered(backend)
    answer = memory.apply(ANN, "read", "user")
    assert answer == "Current user entries [124% — 248/200 chars]:\n" + LISTING
    assert memory.apply(ANN, "read", "memory") == (
        "Current memory entries [0% — 0/2,200 chars]:\n(empty)"
    )


def call(n: int, action: str, **args: Any) -> AIMessage:
    """One `memory` tool call."""
    arguments = {"action": action, "target": "user", **args}
    return AIMessage("", tool_calls=[{"name": "memory", "args": arguments, "id": f"m{n}"}])


SCRIPT = [
    call(1, "add", content="Ann likes tea"),
    call(2, "remove", old_text="on call"),
    call(3, "replace", old_text="prefers answers", content="Command first"),
    call(4, "add", content="Ann likes green tea"),
    call(5, "read"),
    "Done.",
]


def check_tool_replies(messages: list[Any]) -> None:
    """The model shrank its way back under the limit and read what it had added."""
    replies = [m for m in messages if isinstance(m, ToolMessage)]
    assert [r.status for r in replies] == ["error", "success", "success", "success", "success"]
    assert "would exceed limit" in str(replies[0].content)
    assert ENTRIES[2] in str(replies[0].content)
    assert "Ann likes green tea" in str(replies[4].content)


def test_the_tool_is_never_locked_in_under_invoke(backend: Backend) -> None:
    memory = lowered(backend)
    graph = create_memory_graph(
        SeeingModel(script=SCRIPT),
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=ON,
    )
    config = {"configurable": {"thread_id": "t"}}
    out = graph.invoke({"messages": [HumanMessage("tidy up")]}, config, context=ANN)
    check_tool_replies(out["messages"])
    assert memory.read(ANN)["user"].entries == [
        ENTRIES[0],
        "Command first",
        ENTRIES[3],
        "Ann likes green tea",
    ]


async def test_the_tool_is_never_locked_in_under_ainvoke(abackend: Backend) -> None:
    memory = BoundedMemory(abackend.store)
    for entry in ENTRIES:
        await memory.aapply(ANN, "add", "user", entry)
    layers = LayeredSettings(abackend.store)
    await layers.aupdate("platform", ANN, set={"bounded_user_chars": 200})
    graph = create_memory_graph(
        SeeingModel(script=SCRIPT),
        store=abackend.store,
        checkpointer=abackend.checkpointer,
        settings=ON,
    )
    config = {"configurable": {"thread_id": "t"}}
    out = await graph.ainvoke({"messages": [HumanMessage("tidy up")]}, config, context=ANN)
    check_tool_replies(out["messages"])
    views = await memory.aread(ANN)
    assert views["user"].entries == [ENTRIES[0], "Command first", ENTRIES[3], "Ann likes green tea"]

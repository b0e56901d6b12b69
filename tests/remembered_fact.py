"""The conversation the provider protocol tests (tests/test_openai_protocol.py,
tests/test_anthropic_protocol.py) script on their servers: Ann tells a fact, the model calls
`remember` and answers, the profile is consolidated; in a new thread the model answers from
memory. And what the new thread's request must carry."""

from __future__ import annotations

from typing import Any, Protocol

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from memory_plugin import MemoryContext
from memory_plugin.profile.memory import ProfileMemory, await_profiles, wait_for_profiles
from memory_plugin.scoped import ScopedMemory
from tests.openai_server import call, text

Graph = CompiledStateGraph[Any, Any, Any, Any]

ANN = MemoryContext(user_id="ann", workspace_id="acme")
SYSTEM = "You are a helpful assistant with durable memory."
TOLD = "I'm Ann. Remember that the release freeze starts on Friday."
FACT = "The release freeze starts on Friday"
ANSWER = "Noted: the release freeze starts on Friday."
ASK = "When does the freeze start?"
RECALLED = "From memory: the freeze starts on Friday."
PROFILE = """# User Memory

## Identity
- Name is Ann.

## Communication Preferences
_(empty)_

## Work Context
- Release freeze starts on Friday.

## Skills & Expertise
_(empty)_

## Recent Topics
_(empty)_

## Open Questions / Follow-ups
_(empty)_"""
FIRST_TURN = [call("remember", text=FACT), text(ANSWER), text(PROFILE)]
SECOND_TURN = [text(RECALLED), text("NOOP")]


class Sent(Protocol):
    """A request a scripted server got: its system prompt and its messages."""

    @property
    def system(self) -> str: ...

    @property
    def messages(self) -> list[dict[str, Any]]: ...


def config(thread: str) -> RunnableConfig:
    """The run config of one thread."""
    return {"configurable": {"thread_id": thread}}


def check_second_turn(request: Sent, roles: list[str]) -> None:
    """The next thread's request carries the note and the profile in its system prompt, and
    only these roles' messages (the history stays in the first thread)."""
    assert "<recent_memory_notes>" in request.system and FACT in request.system
    assert "<user_memory>" in request.system and "- Name is Ann." in request.system
    assert [m["role"] for m in request.messages] == roles


def tell(graph: Graph, store: BaseStore) -> None:
    """Ann tells the fact in thread t1: the model's answer, the note kept, the profile made."""
    out = graph.invoke({"messages": [HumanMessage(TOLD)]}, config("t1"), context=ANN)
    assert out["messages"][-1].text == ANSWER
    assert wait_for_profiles()  # the profile request is made in the background
    assert [n.text for n in ScopedMemory(store).list_notes(ANN)] == [f"- {FACT}"]
    profile = ProfileMemory(store).read(ANN)
    assert profile is not None and profile.sections["Identity"] == ("Name is Ann.",)


async def atell(graph: Graph, store: BaseStore) -> None:
    """`tell`, through the async API."""
    out = await graph.ainvoke({"messages": [HumanMessage(TOLD)]}, config("t1"), context=ANN)
    assert out["messages"][-1].text == ANSWER
    await await_profiles()  # the profile request is made in the background
    assert [n.text for n in await ScopedMemory(store).alist_notes(ANN)] == [f"- {FACT}"]


def ask(graph: Graph) -> None:
    """Ann asks in a new thread, t2, and the model answers from memory."""
    out = graph.invoke({"messages": [HumanMessage(ASK)]}, config("t2"), context=ANN)
    assert out["messages"][-1].text == RECALLED


async def aask(graph: Graph) -> None:
    """`ask`, through the async API."""
    out = await graph.ainvoke({"messages": [HumanMessage(ASK)]}, config("t2"), context=ANN)
    assert out["messages"][-1].text == RECALLED

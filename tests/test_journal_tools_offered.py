"""The journal tools are offered to the model only once its prompt lacks something the journal
holds (issue 37, point 3): a fresh thread's calls carry no journal tool schema; the call whose
prompt first has a masked output, a summary or a trimmed recent window gets both, and a model
that calls them anyway (an old thread) still gets an answer. On the prebuilt graph and the
middleware, sync and async, every backend."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from pydantic import Field

from memory_plugin import Backend, MemoryContext, MemorySettings, create_memory_graph
from memory_plugin.context_management.state import MemoryState
from memory_plugin.offline.demo import DemoModel
from memory_plugin.prebuilt.middleware import MemoryMiddleware

ANN = MemoryContext(user_id="ann", workspace_id="acme")
JOURNAL = {"journal_message_search", "journal_tool_call_view"}
MASKED_ID = re.compile(r'journal_tool_call_view\(tool_call_id="([^"]+)"\)')
TERM = "a long glossary entry about the term and its history. " * 60
MASKS = {"masking_defers_to_compaction": False}  # the pass near compaction masks


@tool
def lookup(term: str) -> str:
    """Look a term up (returns a long glossary entry)."""
    return f"{term}: {TERM}"


def call(name: str, call_id: str, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


def reduced(messages: list[BaseMessage], text: str) -> str:
    """What the prompt shows in place of older messages ("" when it shows them all)."""
    if "<conversation_summary>" in text:
        return "summary"
    if "masked to save context" in text:
        return "masked"
    if not any(str(m.content) == "look up term 0" for m in messages):
        return "window"
    return ""


class CuriousModel(DemoModel):
    """The demo model, recording for each of the agent's calls the tools it was offered and
    whether its prompt showed something the journal holds; the first time it is offered the
    journal tools it reads back the newest masked output and searches for the first turn, as
    a model reading a placeholder or a summary would."""

    offered: list[set[str]] = Field(default_factory=list)
    reduced: list[str] = Field(default_factory=list)
    journal_replies: list[ToolMessage] = Field(default_factory=list)
    asked: bool = False

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        """Bind the names, so each call records what the model was offered."""
        return self.bind(offered_names=[getattr(t, "name", str(t)) for t in tools])

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        names = kwargs.pop("offered_names", None)
        if names is None:  # memory's own model work (summaries, flush notes, the profile)
            return super()._generate(messages, *args, **kwargs)
        text = "\n".join(str(m.content) for m in messages)
        self.offered.append(set(names))
        self.reduced.append(reduced(messages, text))
        self.journal_replies += [
            m for m in messages if isinstance(m, ToolMessage) and m.name in JOURNAL
        ]
        if set(names) >= JOURNAL and not self.asked:
            self.asked = True
            calls = [{"name": "journal_message_search", "args": {"query": "term 0"}, "id": "s-1"}]
            if masked := MASKED_ID.findall(text):
                view = {"name": "journal_tool_call_view", "args": {"tool_call_id": masked[-1]}}
                calls.append({**view, "id": "v-1"})
            reply = AIMessage("", tool_calls=calls)
            return ChatResult(generations=[ChatGeneration(message=reply)])
        return super()._generate(messages, *args, **kwargs)


def lookups(turns: int) -> list[Any]:
    script: list[Any] = []
    for n in range(turns):
        script += [call("lookup", f"lookup-{n}", term=f"term {n}"), f"Looked up {n}."]
    return script


def curious(window: int, turns: int) -> CuriousModel:
    return CuriousModel(script=lookups(turns), profile={"max_input_tokens": window})


def graph_for(backend: Backend, model: CuriousModel, **settings: Any) -> Any:
    return create_memory_graph(
        model,
        [lookup],
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=MemorySettings(**settings),
    )


def agent_for(backend: Backend, model: CuriousModel, **settings: Any) -> Any:
    return create_agent(
        model,
        [lookup],
        middleware=[MemoryMiddleware(model, settings=MemorySettings(**settings))],
        store=backend.store,
        checkpointer=backend.checkpointer,
        context_schema=MemoryContext,
        state_schema=MemoryState,
    )


def turns(graph: Any, count: int, thread: str = "t") -> None:
    for n in range(count):
        graph.invoke(
            {"messages": [HumanMessage(f"look up term {n}")]},
            {"configurable": {"thread_id": thread}},
            context=ANN,
        )


async def aturns(graph: Any, count: int, thread: str = "t") -> None:
    for n in range(count):
        await graph.ainvoke(
            {"messages": [HumanMessage(f"look up term {n}")]},
            {"configurable": {"thread_id": thread}},
            context=ANN,
        )


def assert_offered_from_the_first_reduced_call(model: CuriousModel, why: str) -> None:
    """No journal tool before the prompt first lacked something (`why`); both from that call
    on."""
    first = next(i for i, reason in enumerate(model.reduced) if reason)
    assert first > 0 and model.reduced[first] == why
    assert all(not JOURNAL & names for names in model.offered[:first])
    assert all(names >= JOURNAL for names in model.offered[first:])
    assert all({"lookup", "remember", "recall"} <= names for names in model.offered)


def assert_found(model: CuriousModel, viewed: bool) -> None:
    """The journal tools the model called answered from the journal."""
    replies = {reply.tool_call_id: reply for reply in model.journal_replies}
    assert "human: look up term 0" in str(replies["s-1"].content)
    assert replies["s-1"].status != "error"
    if viewed:
        assert TERM.strip() in str(replies["v-1"].content)
        assert replies["v-1"].status != "error"


def test_graph_offers_the_journal_tools_from_the_first_masked_call(backend: Backend) -> None:
    model = curious(window=9_000, turns=7)
    turns(graph_for(backend, model, **MASKS), 7)
    assert_offered_from_the_first_reduced_call(model, "masked")
    assert_found(model, viewed=True)


async def test_graph_offers_the_journal_tools_after_compaction_async(abackend: Backend) -> None:
    model = curious(window=5_000, turns=6)
    await aturns(graph_for(abackend, model, masking=False), 6)
    assert_offered_from_the_first_reduced_call(model, "summary")
    assert_found(model, viewed=False)


def test_graph_offers_the_journal_tools_after_compaction(backend: Backend) -> None:
    model = curious(window=5_000, turns=6)
    turns(graph_for(backend, model, masking=False), 6)
    assert_offered_from_the_first_reduced_call(model, "summary")
    assert_found(model, viewed=False)


async def test_graph_offers_the_journal_tools_from_the_first_masked_call_async(
    abackend: Backend,
) -> None:
    model = curious(window=9_000, turns=7)
    await aturns(graph_for(abackend, model, **MASKS), 7)
    assert_offered_from_the_first_reduced_call(model, "masked")
    assert_found(model, viewed=True)


def test_recent_window_offers_the_journal_tools_once_messages_left_it(backend: Backend) -> None:
    model = curious(window=200_000, turns=4)
    turns(graph_for(backend, model, thread_policy="recent_window", recent_window_messages=6), 4)
    assert_offered_from_the_first_reduced_call(model, "window")
    assert_found(model, viewed=False)


def test_middleware_offers_the_journal_tools_from_the_first_masked_call(backend: Backend) -> None:
    model = curious(window=9_000, turns=7)
    turns(agent_for(backend, model, **MASKS), 7)
    assert_offered_from_the_first_reduced_call(model, "masked")
    assert_found(model, viewed=True)


async def test_middleware_offers_the_journal_tools_after_compaction_async(
    abackend: Backend,
) -> None:
    model = curious(window=5_000, turns=6)
    await aturns(agent_for(abackend, model, masking=False), 6)
    assert_offered_from_the_first_reduced_call(model, "summary")
    assert_found(model, viewed=False)


def test_a_journal_tool_called_unoffered_still_answers(backend: Backend) -> None:
    search = call("journal_message_search", "s-1", query="term 0")
    model = CuriousModel(script=["Noted.", search, "Found it."])
    graph = graph_for(backend, model)
    turns(graph, 2)
    assert all(not JOURNAL & names for names in model.offered)
    assert_found(model, viewed=False)

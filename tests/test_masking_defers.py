"""A masking pass due near the compaction trigger is left to a compaction on that call
(issue 37, point 3): the provider's prompt cache breaks once there, with a small request,
instead of once for the masking pass and again a few calls later for the compaction. On the
shipped graph, sync and async, every backend; `masking_defers_to_compaction=False` keeps the
pass."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from memory_plugin import Backend, MemoryContext, MemorySettings, create_memory_graph
from memory_plugin.context_management.cache_share import SUMMARY_REQUEST
from memory_plugin.offline.demo import DemoModel
from memory_plugin.tokens import counter_for

ANN = MemoryContext(user_id="ann", workspace_id="acme")
ENTRY = "a long glossary entry about the term and its history. " * 60
WINDOW, TURNS = 9_000, 10


@tool
def lookup(term: str) -> str:
    """Look a term up (returns a long glossary entry)."""
    return f"{term}: {ENTRY}"


class RequestModel(DemoModel):
    """The demo model, recording each agent call's request as a provider receives it."""

    requests: list[tuple[str, list[str]]] = Field(default_factory=list)
    sizes: list[int] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        schemas = json.dumps([convert_to_openai_tool(t) for t in tools], sort_keys=True)
        return self.bind(sent_tools=schemas)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        tools = kwargs.pop("sent_tools", None)
        if tools is not None:
            self.requests.append((tools, [m.model_dump_json() for m in messages]))
            self.sizes.append(counter_for().count(messages))
        return super()._generate(messages, *args, **kwargs)

    def breaks(self) -> int:
        """Calls whose previous request is not a prefix of theirs (the cache breaks)."""
        pairs = zip(self.requests, self.requests[1:], strict=False)
        return sum(
            before[0] != after[0] or after[1][: len(before[1])] != before[1]
            for before, after in pairs
        )


def script() -> list[Any]:
    replies: list[Any] = []
    for n in range(TURNS):
        call = {"name": "lookup", "args": {"term": f"term {n}"}, "id": f"lookup-{n}"}
        replies += [AIMessage("", tool_calls=[call]), f"Looked up {n}."]
    return replies


def graph_for(backend: Backend, model: RequestModel, **settings: Any) -> Any:
    return create_memory_graph(
        model,
        [lookup],
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=MemorySettings(**settings),
    )


def events_of(chunks: list[dict[str, Any]]) -> list[str]:
    return [c["action"] for c in chunks if c.get("kind") == "context_management"]


def run(backend: Backend, **settings: Any) -> tuple[RequestModel, list[str]]:
    model = RequestModel(script=script(), profile={"max_input_tokens": WINDOW})
    graph = graph_for(backend, model, **settings)
    config: RunnableConfig = {"configurable": {"thread_id": f"t-{sorted(settings.items())}"}}
    actions: list[str] = []
    for n in range(TURNS):
        said = {"messages": [HumanMessage(f"look up term {n}")]}
        chunks = list(graph.stream(said, config, context=ANN, stream_mode="custom"))
        actions += events_of(chunks)
    return model, actions


async def arun(backend: Backend, **settings: Any) -> tuple[RequestModel, list[str]]:
    model = RequestModel(script=script(), profile={"max_input_tokens": WINDOW})
    graph = graph_for(backend, model, **settings)
    config: RunnableConfig = {"configurable": {"thread_id": f"t-{sorted(settings.items())}"}}
    actions: list[str] = []
    for n in range(TURNS):
        said = {"messages": [HumanMessage(f"look up term {n}")]}
        chunks = [c async for c in graph.astream(said, config, context=ANN, stream_mode="custom")]
        actions += events_of(chunks)
    return model, actions


def assert_fewer_breaks(
    deferred: tuple[RequestModel, list[str]], masking: tuple[RequestModel, list[str]]
) -> None:
    (model, actions), (kept, kept_actions) = deferred, masking
    assert "masked" in kept_actions and "compacted" in kept_actions
    assert "masked" not in actions and "compacted" in actions
    assert model.breaks() < kept.breaks()
    assert sum(model.sizes) < sum(kept.sizes)
    assert max(model.sizes) < 0.8 * WINDOW


def test_a_pass_near_the_trigger_compacts_instead(backend: Backend) -> None:
    assert_fewer_breaks(run(backend), run(backend, masking_defers_to_compaction=False))


async def test_a_pass_near_the_trigger_compacts_instead_async(abackend: Backend) -> None:
    deferred = await arun(abackend)
    assert_fewer_breaks(deferred, await arun(abackend, masking_defers_to_compaction=False))


class NoSummaries(RequestModel):
    """A model that answers the agent but fails every summary (and memory's other work)."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        if "sent_tools" not in kwargs or f"<{SUMMARY_REQUEST}>" in str(messages[-1].content):
            raise RuntimeError("the summary model is down")
        return super()._generate(messages, *args, **kwargs)


def test_a_failed_compaction_leaves_the_pass_to_masking(backend: Backend) -> None:
    model = NoSummaries(script=script(), profile={"max_input_tokens": WINDOW})
    graph = graph_for(backend, model)
    config: RunnableConfig = {"configurable": {"thread_id": "down"}}
    actions: list[str] = []
    for n in range(TURNS):
        said = {"messages": [HumanMessage(f"look up term {n}")]}
        actions += events_of(list(graph.stream(said, config, context=ANN, stream_mode="custom")))
    assert "failed" in actions and "compacted" not in actions
    assert "masked" in actions[actions.index("failed") :]
    assert max(model.sizes) < 0.8 * WINDOW

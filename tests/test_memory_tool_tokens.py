"""The memory tools cost a user few tokens on every call (issue 37, point 3): a fresh thread's
model call carries the memory tools' schemas, and they stay short while still telling the
model what it needs to use them right; a masked output's placeholder stays short and still
says how to read it back."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from memory_plugin import Backend, MemoryContext, create_memory_graph
from memory_plugin.context_management.masking import PLACEHOLDER
from memory_plugin.offline.demo import DemoModel
from memory_plugin.tokens import counter_for

ANN = MemoryContext(user_id="ann", workspace_id="acme")
MEMORY_TOOLS = {"remember", "update_memory", "recall"}


class SchemaModel(DemoModel):
    """The demo model, recording the tool schemas each agent call was sent."""

    sent: list[dict[str, Any]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(schemas=[convert_to_openai_tool(t) for t in tools])

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        schemas = kwargs.pop("schemas", None)
        if schemas is not None:
            self.sent = schemas
        return super()._generate(messages, *args, **kwargs)


def memory_schemas(backend: Backend) -> dict[str, dict[str, Any]]:
    model = SchemaModel(script=["Hello."])
    graph = create_memory_graph(model, [], store=backend.store, checkpointer=backend.checkpointer)
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": [HumanMessage("hi")]}, config, context=ANN)
    return {s["function"]["name"]: s for s in model.sent if s["function"]["name"] in MEMORY_TOOLS}


def test_the_memory_tools_cost_a_call_few_tokens(backend: Backend) -> None:
    schemas = memory_schemas(backend)
    assert set(schemas) == MEMORY_TOOLS
    tokens = counter_for().count_text(json.dumps(list(schemas.values()), sort_keys=True))
    assert tokens <= 270, f"the memory tools' schemas take {tokens} tokens on every call"


def test_the_short_descriptions_still_say_how_to_use_the_tools(backend: Backend) -> None:
    said = {name: s["function"]["description"] for name, s in memory_schemas(backend).items()}
    assert "<recent_memory_notes>" in said["remember"] and "one" in said["remember"]
    assert "whole <memory_document>" in said["update_memory"]
    assert "left out is removed" in said["update_memory"]
    assert "merge" in said["update_memory"]
    assert "default 8" in said["recall"] and "at most 20" in said["recall"]


def test_a_masked_output_placeholder_is_short_and_says_how_to_read_it() -> None:
    text = PLACEHOLDER.format(name="fetch_page", tokens=3_000, call_id="call_0123456789abcdef")
    assert 'journal_tool_call_view(tool_call_id="call_0123456789abcdef")' in text
    assert "fetch_page" in text and "3,000 tokens" in text
    assert counter_for().count_text(text) <= 36

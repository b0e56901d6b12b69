"""The compaction trigger counts what the model is sent: a long system prompt (or large memory
blocks) leaves less room for the transcript, so the model's input stays under the trigger."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from pydantic import Field

from memory_plugin import Backend, MemoryContext, create_memory_graph
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import counter_for
from tests.fakes import CompactionModel

pytestmark = pytest.mark.slow

WINDOW = 4_000
LONG_PROMPT = "You are a careful assistant. Follow the house style guide closely. " * 70


@tool
def read_report(n: int) -> str:
    """Read report n (a long text)."""
    return f"Report {n}: " + "quarterly figures and their commentary " * 55


class ReportReader(BaseChatModel):
    """Reads one report per question, then answers; records the tokens of every input."""

    inputs: list[int] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "report-reader"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ReportReader:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.inputs.append(counter_for(None).count(messages))
        if isinstance(messages[-1], ToolMessage):
            reply = AIMessage("The report says the figures are fine.")
        else:
            n = len(self.inputs)
            reply = AIMessage(
                "", tool_calls=[{"name": "read_report", "args": {"n": n}, "id": f"r{n}"}]
            )
        return ChatResult(generations=[ChatGeneration(message=reply)])


def test_a_long_system_prompt_counts_toward_the_compaction_trigger(backend: Backend) -> None:
    model = ReportReader(profile={"max_input_tokens": WINDOW})
    summaries = CompactionModel()
    graph = create_memory_graph(
        model,
        [read_report],
        store=backend.store,
        checkpointer=backend.checkpointer,
        system_prompt=LONG_PROMPT,
        maintenance_model=summaries,
    )
    config = {"configurable": {"thread_id": "reports"}}
    for n in range(10):
        graph.invoke(
            {"messages": [HumanMessage(f"Please read report {n}.")]},
            config,
            context=MemoryContext(user_id="ann"),
        )
    assert counter_for(None).count_text(LONG_PROMPT) > 0.2 * WINDOW
    assert any(p.startswith("summary") for p in summaries.prompts)
    assert max(model.inputs) <= MemorySettings().summarization_trigger_ratio * WINDOW

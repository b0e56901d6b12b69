"""A masking pass breaks the provider's prompt cache from its first masked output, so the
rest of the request bills once at the full price; it runs only when the cached reads it saves
over `masking_payback_calls` calls, at `prompt_cache_read_ratio`, pay for that (issue 37,
point 3). Where cached input is cheap a pass waits until it clears more; a pass near the
compaction trigger runs either way. On the shipped graph, every backend, invoke and ainvoke:
each price's setting bills least at its own price."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from memory_plugin import Backend, MemoryContext, MemorySettings, create_memory_graph
from memory_plugin.context_management.masking import mask
from memory_plugin.offline.demo import DemoModel
from memory_plugin.tokens import counter_for
from tests.test_masking_defers import events_of
from tests.test_masking_snapshot import transcript

COUNTER = counter_for(None)
ANN = MemoryContext(user_id="ann", workspace_id="acme")


MESSAGES = transcript(outputs=16, words=300)
CLEARABLE = mask(MESSAGES, 10**6, 1_000, MemorySettings(), COUNTER).freed_tokens


def masked_at(cached: float, share_of_transcript: float, **settings: Any) -> bool:
    """Whether a pass runs where the outputs it can clear are `share_of_transcript` of a
    transcript at 60% of the window (past the masking trigger, short of the compaction's)."""
    tokens = round(CLEARABLE / share_of_transcript)
    window = round(tokens / 0.6)
    config = MemorySettings(
        prompt_cache_read_ratio=cached,
        masking_batch_ratio=0.01,
        masking_min_clear_ratio=0.01,
        **settings,
    )
    return bool(mask(MESSAGES, tokens, window, config, COUNTER).replacements)


def test_a_pass_runs_only_once_the_reads_it_saves_pay_for_its_cache_break() -> None:
    assert CLEARABLE > 0
    assert not masked_at(0.1, 0.70), "at 10%: 3 calls of reads repay 3/7 of the rest, not all"
    assert masked_at(0.1, 0.76), "three quarters of the transcript: 3 calls repay the rest"
    assert masked_at(0.5, 0.26) and not masked_at(0.5, 0.24), "at 50%: a quarter"
    assert masked_at(1.0, 0.02), "no cached price: a pass only saves"
    assert not masked_at(0.0, 0.99), "free cached reads: a pass only costs"
    assert masked_at(0.1, 0.5, masking_payback_calls=10), "a longer payback: a half pays"


def test_the_batch_share_still_holds_where_a_pass_pays() -> None:
    tokens = round(CLEARABLE / 0.9)
    window = round(tokens / 0.6)
    config = MemorySettings(prompt_cache_read_ratio=1.0, masking_batch_ratio=0.9)
    assert 0.9 * window > CLEARABLE
    assert mask(MESSAGES, tokens, window, config, COUNTER).replacements == []


@pytest.mark.parametrize("cached", [0.0, 0.1])
def test_near_the_compaction_trigger_a_pass_runs_paying_or_not(cached: float) -> None:
    settings = MemorySettings(prompt_cache_read_ratio=cached, masking_batch_ratio=0.15)
    tokens = round(CLEARABLE / 0.3)  # the clearable outputs: 30% of the transcript
    urgent = settings.summarization_trigger_ratio - settings.masking_min_clear_ratio
    window = int(tokens / (urgent + 0.01))
    assert settings.masking_min_clear_ratio * window <= CLEARABLE
    found = mask(MESSAGES, tokens, window, settings, COUNTER)
    assert found.freed_tokens == CLEARABLE and len(found.replacements) == 11
    calm_window = int(tokens / 0.6)
    assert settings.masking_batch_ratio * calm_window <= CLEARABLE
    calm = mask(MESSAGES, tokens, calm_window, settings, COUNTER)
    assert calm.replacements == [], "the same pass further from the trigger waits to pay"


PAGE = "a long page of reference text about the topic and its history. " * 80
QUESTION = "Please look into the following: " + "detail " * 100
WINDOW, TURNS = 16_000, 16


@tool
def fetch(page: str) -> str:
    """Fetch a page (returns its long text)."""
    return f"{page}: {PAGE}"


class BilledModel(DemoModel):
    """The demo model, recording each agent call's request (tools and messages)."""

    requests: list[tuple[str, list[BaseMessage]]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        schemas = str([convert_to_openai_tool(t) for t in tools])
        return self.bind(sent_tools=schemas)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        tools = kwargs.pop("sent_tools", None)
        if tools is not None:
            self.requests.append((tools, list(messages)))
        return super()._generate(messages, *args, **kwargs)

    def bill(self, cached: float) -> float:
        """The agent's input bill in full-price tokens: each request's part that repeats the
        previous request (tools and whole messages) at `cached`, the rest at 1."""
        total, before = 0.0, None
        for tools, messages in self.requests:
            same = 0
            if before is not None and before[0] == tools:
                for old, new in zip(before[1], messages, strict=False):
                    if old.model_dump_json() != new.model_dump_json():
                        break
                    same += 1
            reused = COUNTER.count(messages[:same])
            total += COUNTER.count(messages) - reused + cached * reused
            before = (tools, messages)
        return total


def script() -> list[Any]:
    replies: list[Any] = []
    for n in range(TURNS):
        call = {"name": "fetch", "args": {"page": f"page {n}"}, "id": f"fetch-{n}"}
        replies += [AIMessage("", tool_calls=[call]), f"Read page {n}."]
    return replies


def graph_for(backend: Backend, model: BilledModel, cached: float) -> Any:
    return create_memory_graph(
        model,
        [fetch],
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=MemorySettings(prompt_cache_read_ratio=cached, masking_keep_recent=2, flush=False),
    )


def start(backend: Backend, cached: float) -> tuple[BilledModel, Any, RunnableConfig]:
    model = BilledModel(script=script(), profile={"max_input_tokens": WINDOW})
    config: RunnableConfig = {"configurable": {"thread_id": f"priced-{cached}"}}
    return model, graph_for(backend, model, cached), config


def said(n: int) -> dict[str, Any]:
    return {"messages": [HumanMessage(f"{QUESTION} (page {n})")]}


def session(backend: Backend, cached: float) -> tuple[BilledModel, list[str]]:
    model, graph, config = start(backend, cached)
    actions: list[str] = []
    for n in range(TURNS):
        actions += events_of(list(graph.stream(said(n), config, context=ANN, stream_mode="custom")))
    return model, actions


async def asession(backend: Backend, cached: float) -> tuple[BilledModel, list[str]]:
    model, graph, config = start(backend, cached)
    actions: list[str] = []
    for n in range(TURNS):
        stream = graph.astream(said(n), config, context=ANN, stream_mode="custom")
        actions += events_of([chunk async for chunk in stream])
    return model, actions


def assert_each_price_bills_least_at_its_own(
    cheap: tuple[BilledModel, list[str]], dear: tuple[BilledModel, list[str]]
) -> None:
    (cheap_model, cheap_actions), (dear_model, dear_actions) = cheap, dear
    assert "masked" in dear_actions, "without a cached price, older outputs are masked"
    assert cheap_actions.count("masked") < dear_actions.count("masked")
    assert cheap_model.bill(0.1) < dear_model.bill(0.1)
    assert dear_model.bill(1.0) < cheap_model.bill(1.0)
    assert max(COUNTER.count(m) for _, m in cheap_model.requests) < 0.8 * WINDOW


def test_each_price_setting_bills_least_at_its_price(backend: Backend) -> None:
    assert_each_price_bills_least_at_its_own(session(backend, 0.1), session(backend, 1.0))


async def test_each_price_setting_bills_least_at_its_price_async(abackend: Backend) -> None:
    cheap = await asession(abackend, 0.1)
    assert_each_price_bills_least_at_its_own(cheap, await asession(abackend, 1.0))

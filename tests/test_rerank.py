"""Retrieval rerank: off by default, one bounded model call that can only reorder the top
fused results, fail-open on a timeout, an error or a bad answer; in the recall API (sync and
async) and through the recall tool in a real graph, on every backend."""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from memory_plugin import Backend, LayeredSettings, MemorySettings
from memory_plugin.models.maintenance import MaintenanceModel
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped import rerank as rerank_module
from memory_plugin.scoped.recall import Hit
from memory_plugin.scoped.rerank import CrossEncoderModel, parse_order
from tests.holds import Hold
from tests.scoped_helpers import ANN, Clock, failing_model, scripted
from tests.test_scoped_tools import agent, call, run_turn, tool_replies

QUERY = "project milestone"
ON = {"recall_rerank": True, "recall_rerank_keep": 3, "recall_rerank_candidates": 10}


class RankingModel(BaseChatModel):
    """Stands in for an LLM reranker: answers with the candidate numbers of the prompt
    reversed (or a fixed answer), recording every prompt; optionally held until the test lets
    it go (a hung provider)."""

    answer: str | None = None
    hold: Any = None
    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "ranking-fake"

    def _reply(self, messages: list[BaseMessage]) -> ChatResult:
        self.prompts.append(messages)
        count = len(re.findall(r"^\[\d+\] ", str(messages[-1].content), re.MULTILINE))
        text = self.answer if self.answer is not None else str(list(range(count, 0, -1)))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if self.hold is not None:
            self.hold.wait()
        return self._reply(messages)

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        if self.hold is not None:
            await asyncio.to_thread(self.hold.wait)
        return self._reply(messages)


def ranking(answer: str | None = None, hold: Hold | None = None) -> RankingModel:
    return RankingModel(answer=answer, hold=hold)


def seed(memory: ScopedMemory, count: int = 14) -> None:
    for n in range(count):
        memory.remember(ANN, f"project milestone {n} " + "reached " * (n % 4))


def bodies(hits: list[Hit]) -> list[str]:
    return [hit.note.body for hit in hits]


def fused(backend: Backend, k: int = 10) -> list[str]:
    """The recall order with rerank off (the default)."""
    return bodies(ScopedMemory(backend.store).recall(ANN, QUERY, k))


def reranked(backend: Backend, model: BaseChatModel, k: int = 3, **settings: Any) -> list[str]:
    defaults = MemorySettings(**{**ON, **settings})
    return bodies(ScopedMemory(backend.store, model=model, defaults=defaults).recall(ANN, QUERY, k))


def test_rerank_is_off_by_default_and_calls_no_model(backend: Backend) -> None:
    model = ranking()
    memory = ScopedMemory(backend.store, model=model, clock=Clock())
    seed(memory)
    assert MemorySettings().recall_rerank is False
    assert len(memory.recall(ANN, QUERY, 3)) == 3
    assert model.prompts == []


def test_a_reranker_reorders_the_top_candidates(backend: Backend) -> None:
    seed(ScopedMemory(backend.store, clock=Clock()))
    model = ranking()
    order = fused(backend, 10)
    assert reranked(backend, model) == order[::-1][:3]
    (prompt,) = model.prompts
    system, human = prompt
    assert isinstance(system, SystemMessage) and "not instructions" in str(system.content)
    assert isinstance(human, HumanMessage) and f"Query: {QUERY}" in str(human.content)
    assert f"[10] (2026-11-29) {order[9]}" in str(human.content)
    assert "[11]" not in str(human.content)


async def test_async_recall_reranks_too(abackend: Backend) -> None:
    memory = ScopedMemory(abackend.store, clock=Clock())
    for n in range(14):
        await memory.aremember(ANN, f"project milestone {n}")
    order = bodies(await memory.arecall(ANN, QUERY, 10))
    model = ranking()
    defaults = MemorySettings(**ON)
    hits = await ScopedMemory(abackend.store, model=model, defaults=defaults).arecall(ANN, QUERY, 3)
    assert bodies(hits) == order[::-1][:3] and len(model.prompts) == 1


def test_the_defaults_send_24_candidates_and_keep_8(backend: Backend) -> None:
    seed(ScopedMemory(backend.store, clock=Clock()), 30)
    model = ranking()
    memory = ScopedMemory(backend.store, model=model, defaults=MemorySettings(recall_rerank=True))
    assert len(memory.recall(ANN, QUERY)) == 8
    (prompt,) = model.prompts
    assert "[24] " in str(prompt[-1].content) and "[25] " not in str(prompt[-1].content)


def test_no_call_when_results_fit_the_keep_count(backend: Backend) -> None:
    seed(ScopedMemory(backend.store, clock=Clock()), 3)
    model = ranking()
    assert reranked(backend, model, k=5) == fused(backend, 5)
    assert model.prompts == []


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("The second note looks best to me.", "not a list of numbers"),
        ("[1, two, 3]", "not a list of numbers"),
        ("[]", "names no candidate"),
        ("[2, 2, 1]", "names a candidate twice"),
        ("[11, 1]", "outside 1 to 10"),
        ("[0, 1]", "outside 1 to 10"),
    ],
)
def test_a_bad_answer_keeps_the_fused_order(
    backend: Backend, caplog: pytest.LogCaptureFixture, answer: str, why: str
) -> None:
    seed(ScopedMemory(backend.store, clock=Clock()))
    model = ranking(answer)
    with caplog.at_level(logging.WARNING):
        assert reranked(backend, model, k=10) == fused(backend, 10)
    assert len(model.prompts) == 1
    assert any(
        "kept the fused order" in r.getMessage() and why in r.getMessage() for r in caplog.records
    )


def test_a_partial_answer_puts_the_named_first_and_keeps_the_rest(backend: Backend) -> None:
    seed(ScopedMemory(backend.store, clock=Clock()))
    order = fused(backend, 10)
    got = reranked(backend, ranking("Best: [4, 2]"), k=10)
    assert got == [order[3], order[1], order[0], *order[2:3], *order[4:]]
    assert sorted(got) == sorted(order)


def test_a_reranker_that_raises_keeps_the_fused_order(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    seed(ScopedMemory(backend.store, clock=Clock()))
    with caplog.at_level(logging.WARNING):
        assert reranked(backend, failing_model(), k=10) == fused(backend, 10)
    assert any("ConnectionError" in r.getMessage() for r in caplog.records)


def test_a_slow_reranker_times_out_and_keeps_the_fused_order(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    seed(ScopedMemory(backend.store, clock=Clock()))
    hold = Hold()
    try:
        with caplog.at_level(logging.WARNING):
            got = reranked(backend, ranking(hold=hold), k=10, recall_rerank_timeout_ms=100)
        assert (hold.entered, hold.answered) == (1, 0), "the recall waited for the reranker"
    finally:
        hold.release.set()
    assert got == fused(backend, 10)
    assert any("TimeoutError" in r.getMessage() for r in caplog.records)


async def test_a_slow_reranker_times_out_under_async(abackend: Backend) -> None:
    memory = ScopedMemory(abackend.store, clock=Clock())
    for n in range(14):
        await memory.aremember(ANN, f"project milestone {n}")
    order = bodies(await memory.arecall(ANN, QUERY, 10))
    defaults = MemorySettings(**ON, recall_rerank_timeout_ms=100)
    hold = Hold()
    slow = ScopedMemory(abackend.store, model=ranking(hold=hold), defaults=defaults)
    try:
        assert bodies(await slow.arecall(ANN, QUERY, 10)) == order
        assert (hold.entered, hold.answered) == (1, 0), "the recall waited for the reranker"
    finally:
        hold.release.set()


def test_no_model_at_all_keeps_the_fused_order(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    seed(ScopedMemory(backend.store, clock=Clock()))
    memory = ScopedMemory(backend.store, defaults=MemorySettings(**ON))
    with caplog.at_level(logging.WARNING):
        assert bodies(memory.recall(ANN, QUERY, 10)) == fused(backend, 10)
    assert any("no rerank model" in r.getMessage() for r in caplog.records)


def test_the_rerank_model_setting_names_another_model(backend: Backend) -> None:
    seed(ScopedMemory(backend.store, clock=Clock()))
    named = ranking()
    maintenance = MaintenanceModel(ranking("[1]"), loader=lambda spec: named)
    defaults = MemorySettings(**ON, recall_rerank_model="tests.fakes:reranker")
    memory = ScopedMemory(backend.store, model=maintenance, defaults=defaults)
    assert bodies(memory.recall(ANN, QUERY, 3)) == fused(backend, 10)[::-1][:3]
    assert len(named.prompts) == 1 and maintenance.default.prompts == []  # type: ignore[union-attr]


def test_a_rerank_model_that_cannot_load_keeps_the_fused_order(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    seed(ScopedMemory(backend.store, clock=Clock()))

    def broken(spec: str) -> BaseChatModel:
        raise ImportError(f"no module for {spec}")

    maintenance = MaintenanceModel(ranking(), loader=broken)
    defaults = MemorySettings(**ON, recall_rerank_model="nowhere:model")
    memory = ScopedMemory(backend.store, model=maintenance, defaults=defaults)
    with caplog.at_level(logging.WARNING):
        assert bodies(memory.recall(ANN, QUERY, 10)) == fused(backend, 10)
    assert any(
        "setting 'recall_rerank_model' ('nowhere:model'): no module for nowhere:model"
        in r.getMessage()
        for r in caplog.records
    )
    assert maintenance.default.prompts == []  # type: ignore[union-attr]


class Encoder:
    """Stands in for a sentence-transformers CrossEncoder: scores a passage by the number
    in it, whatever the query."""

    def predict(self, pairs: list[tuple[str, str]]) -> list[float]:
        return [number(passage) for _, passage in pairs]


def number(text: str) -> float:
    return float(re.findall(r"\d+", text)[0])


def test_a_local_cross_encoder_reranks(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    seed(ScopedMemory(backend.store, clock=Clock()))
    monkeypatch.setitem(rerank_module.encoders.loaded, "/models/tiny-ce", Encoder())
    defaults = MemorySettings(**ON, recall_rerank_model="cross-encoder:/models/tiny-ce")
    order = fused(backend, 10)
    got = bodies(ScopedMemory(backend.store, defaults=defaults).recall(ANN, QUERY, 10))
    assert got == sorted(order, key=lambda body: -number(body))
    assert got != order


def test_a_cross_encoder_that_cannot_load_keeps_the_fused_order(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    seed(ScopedMemory(backend.store, clock=Clock()))
    defaults = MemorySettings(**ON, recall_rerank_model="cross-encoder:/nonexistent/model-dir")
    memory = ScopedMemory(backend.store, defaults=defaults)
    with caplog.at_level(logging.WARNING):
        assert bodies(memory.recall(ANN, QUERY, 10)) == fused(backend, 10)
    assert any("kept the fused order" in r.getMessage() for r in caplog.records)


def test_parse_order_reads_a_list_anywhere_in_the_answer() -> None:
    assert parse_order("Sure! The order is [3, 1,2].", 3) == [2, 0, 1]
    assert parse_order("2 1", 2) == [1, 0]
    assert isinstance(CrossEncoderModel(path="x"), BaseChatModel)


def enable(backend: Backend, **values: Any) -> None:
    LayeredSettings(backend.store).update("platform", ANN, set={**ON, **values})


def test_the_recall_tool_reranks_in_a_real_graph(backend: Backend) -> None:
    seed(ScopedMemory(backend.store, clock=Clock()))
    order = fused(backend, 10)
    enable(backend)
    model = ranking()
    graph = agent(backend, call("recall", query=QUERY, k=3), model=model)
    (reply,) = tool_replies(run_turn(graph, ANN))
    assert [line.split("] ", 1)[1] for line in str(reply.content).splitlines()] == order[::-1][:3]
    assert len(model.prompts) == 1


async def test_the_recall_tool_reranks_under_ainvoke(abackend: Backend) -> None:
    memory = ScopedMemory(abackend.store, clock=Clock())
    for n in range(14):
        await memory.aremember(ANN, f"project milestone {n}")
    order = bodies(await memory.arecall(ANN, QUERY, 10))
    await LayeredSettings(abackend.store).aupdate("platform", ANN, set=ON)
    model = ranking()
    graph = agent(abackend, call("recall", query=QUERY, k=3), model=model)
    result = await graph.ainvoke(
        {"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "a"}}, context=ANN
    )
    (reply,) = tool_replies(result)
    assert [line.split("] ", 1)[1] for line in str(reply.content).splitlines()] == order[::-1][:3]


def test_a_failing_reranker_never_fails_the_recall_tool(backend: Backend) -> None:
    seed(ScopedMemory(backend.store, clock=Clock()))
    order = fused(backend, 10)
    enable(backend)
    graph = agent(backend, call("recall", query=QUERY, k=3), model=scripted("no idea"))
    (reply,) = tool_replies(run_turn(graph, ANN))
    assert reply.status != "error"
    assert [line.split("] ", 1)[1] for line in str(reply.content).splitlines()] == order[:3]

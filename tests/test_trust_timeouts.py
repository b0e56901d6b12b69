"""Every model call made for memory has a timeout that holds: a hung summarizer or reranker
never holds a turn or a recall past its bound, even when many runs share one event loop (as
under LangGraph Server) and hung calls have filled its executor; a reranker or maintenance
model that cannot be loaded is remembered for a while instead of retried at the full timeout
on every recall. Every backend, invoke and ainvoke."""

from __future__ import annotations

import asyncio
import logging
import sys
import time
import types
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from bench.model_timeouts import Hung, Reader, fetch
from memory_plugin import Backend, MemoryContext, MemorySettings, create_memory_graph
from memory_plugin.errors import SettingsError
from memory_plugin.maintenance import MaintenanceModel
from memory_plugin.scoped import ScopedMemory

ANN = MemoryContext(user_id="ann")
BOUND = 1.0
SUMMARIES = MemorySettings(summary_timeout_seconds=BOUND, flush=False, masking=False, profile=False)
RERANK = MemorySettings(
    recall_rerank=True,
    recall_rerank_keep=3,
    recall_rerank_candidates=10,
    recall_rerank_timeout_ms=int(BOUND * 1000),
)


@pytest.fixture
def hung() -> Iterator[Hung]:
    """A Hung model released when the test ends."""
    model = Hung()
    yield model
    model.release.set()


def small_executor() -> None:
    """Give the running loop the executor of a busy server: two workers."""
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=2))


def graph_of(backend: Backend, summarizer: BaseChatModel) -> Any:
    return create_memory_graph(
        Reader(profile={"max_input_tokens": 4_000}),
        [fetch],
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=SUMMARIES,
        maintenance_model=summarizer,
    )


MODES = ["custom", "updates"]


class Outcomes:
    """What one conversation saw: its slowest turn and its compactions' outcomes."""

    def __init__(self) -> None:
        self.slowest = 0.0
        self.actions: list[str] = []

    def add(self, started: float, chunks: list[Any]) -> bool:
        """Count a turn that began at `started`; whether a compaction has failed yet."""
        self.slowest = max(self.slowest, time.monotonic() - started)
        self.actions += [
            data["action"]
            for mode, data in chunks
            if mode == "custom" and data.get("kind") == "context" and data["action"] != "masked"
        ]
        return "failed" in self.actions


def page(n: int, thread: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The input and config of the turn asking for page n."""
    return {"messages": [HumanMessage(f"read page {n}")]}, {"configurable": {"thread_id": thread}}


async def aconversation(graph: Any, thread: str) -> Outcomes:
    """Turns until a compaction fails."""
    seen = Outcomes()
    for n in range(6):
        started = time.monotonic()
        chunks = [c async for c in graph.astream(*page(n, thread), context=ANN, stream_mode=MODES)]
        if seen.add(started, chunks):
            break
    return seen


def conversation(graph: Any, thread: str) -> Outcomes:
    """The sync twin of aconversation."""
    seen = Outcomes()
    for n in range(6):
        started = time.monotonic()
        if seen.add(started, list(graph.stream(*page(n, thread), context=ANN, stream_mode=MODES))):
            break
    return seen


async def test_a_hung_summarizer_never_holds_concurrent_async_turns(
    abackend: Backend, hung: Hung
) -> None:
    small_executor()
    graph = graph_of(abackend, hung)
    results = await asyncio.gather(*[aconversation(graph, f"t{n}") for n in range(4)])
    for seen in results:
        assert "failed" in seen.actions
        assert seen.slowest < BOUND + 2.5
    assert hung.calls >= 4


def test_a_hung_summarizer_never_holds_concurrent_turns(backend: Backend, hung: Hung) -> None:
    graph = graph_of(backend, hung)
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda n: conversation(graph, f"t{n}"), range(3)))
    for seen in results:
        assert "failed" in seen.actions
        assert seen.slowest < BOUND + 2.5


def seed(backend: Backend) -> list[str]:
    """Ann's notes, and the order recall gives them with rerank off."""
    memory = ScopedMemory(backend.store)
    for n in range(14):
        memory.remember(ANN, f"project milestone {n} " + "reached " * (n % 4))
    return [hit.note.body for hit in memory.recall(ANN, "project milestone", 10)]


async def test_a_hung_reranker_never_holds_concurrent_async_recalls(
    backend: Backend, hung: Hung
) -> None:
    """A store opened with connect, used from async code, runs its calls in the loop's
    executor: hung rerank calls must not fill it."""
    fused = seed(backend)
    small_executor()
    reranking = ScopedMemory(backend.store, defaults=RERANK, model=hung)

    async def timed() -> tuple[float, list[str]]:
        started = time.monotonic()
        hits = await reranking.arecall(ANN, "project milestone", 10)
        return time.monotonic() - started, [hit.note.body for hit in hits]

    for _ in range(2):
        for took, order in await asyncio.gather(*[timed() for _ in range(6)]):
            assert order == fused
            assert took < BOUND + 1.0


class Loads:
    """A fake sentence_transformers whose CrossEncoder takes `seconds` to fail to load, as
    a hub model id does offline; counts the attempts."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.attempts = 0
        self.module = types.ModuleType("sentence_transformers")
        self.module.CrossEncoder = self.cross_encoder  # type: ignore[attr-defined]

    def cross_encoder(self, path: str) -> Any:
        self.attempts += 1
        time.sleep(self.seconds)
        raise OSError(f"We couldn't connect to 'https://huggingface.co' to load {path}")


def test_a_cross_encoder_that_cannot_load_is_not_retried_on_every_recall(
    backend: Backend, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    fused = seed(backend)
    loads = Loads(seconds=1.5)
    monkeypatch.setitem(sys.modules, "sentence_transformers", loads.module)
    spec = f"cross-encoder:cross-encoder/unreachable-{uuid.uuid4().hex}"
    memory = ScopedMemory(
        backend.store,
        defaults=MemorySettings(**{**RERANK.model_dump(), "recall_rerank_model": spec}),
    )
    took = []
    with caplog.at_level(logging.WARNING, logger="memory_plugin.scoped.rerank"):
        for _ in range(8):
            started = time.monotonic()
            order = [hit.note.body for hit in memory.recall(ANN, "project milestone", 10)]
            took.append(time.monotonic() - started)
            assert order == fused
            time.sleep(0.3)
    assert loads.attempts == 1
    assert max(took) < BOUND + 1.0
    assert sum(t > BOUND / 2 for t in took) <= 1
    assert any("could not be loaded" in record.getMessage() for record in caplog.records)


ATTEMPTS: list[str] = []


def unloadable() -> BaseChatModel:
    """A model spec whose loading fails (tests.test_trust_timeouts:unloadable), counted."""
    ATTEMPTS.append("load")
    raise ConnectionError("the provider's endpoint is unreachable")


async def test_a_rerank_model_that_cannot_load_is_remembered(abackend: Backend) -> None:
    ATTEMPTS.clear()
    memory = ScopedMemory(abackend.store)
    for n in range(14):
        await memory.aremember(ANN, f"project milestone {n}")
    fused = [hit.note.body for hit in await memory.arecall(ANN, "project milestone", 10)]
    spec = "tests.test_trust_timeouts:unloadable"
    settings = MemorySettings(**{**RERANK.model_dump(), "recall_rerank_model": spec})
    reranking = ScopedMemory(abackend.store, defaults=settings)
    for _ in range(3):
        hits = await reranking.arecall(ANN, "project milestone", 10)
        assert [hit.note.body for hit in hits] == fused
    assert ATTEMPTS == ["load"]


def test_a_maintenance_model_that_cannot_load_is_tried_again_later(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attempts: list[str] = []

    def loader(spec: str) -> BaseChatModel:
        attempts.append(spec)
        raise ConnectionError("unreachable")

    model = MaintenanceModel(None, loader=loader)
    for _ in range(3):
        with pytest.raises(SettingsError, match="unreachable"):
            model.load("openai:gpt-4o-mini")
    assert attempts == ["openai:gpt-4o-mini"]
    later = time.monotonic() + 301
    monkeypatch.setattr("memory_plugin.maintenance.time.monotonic", lambda: later)
    with pytest.raises(SettingsError):
        model.load("openai:gpt-4o-mini")
    assert len(attempts) == 2

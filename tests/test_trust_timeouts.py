"""Every model call made for memory has a timeout that holds: a hung summarizer or reranker
never holds a turn or a recall past its bound, even when many runs share one event loop (as
under LangGraph Server) and hung calls have filled its executor; a reranker or maintenance
model that cannot be loaded is remembered for a while instead of retried at the full timeout
on every recall. Every backend, invoke and ainvoke. The hung models are held until the test
ends: a turn or recall that came back while none of them had answered did not wait for them."""

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

from bench.model_timeouts import Reader, fetch
from memory_plugin import Backend, MemoryContext, MemorySettings, create_memory_graph
from memory_plugin.errors import SettingsError
from memory_plugin.models.maintenance import MaintenanceModel
from memory_plugin.scoped import ScopedMemory
from tests.holds import HeldModel, Hold

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
def hung() -> Iterator[HeldModel]:
    """A model that never answers until the test ends."""
    model = HeldModel()
    yield model
    model.hold.release.set()


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
    """What one conversation saw: its compactions' outcomes."""

    def __init__(self) -> None:
        self.actions: list[str] = []

    def add(self, chunks: list[Any]) -> bool:
        """Count a turn; whether a compaction has failed yet."""
        self.actions += [
            data["action"]
            for mode, data in chunks
            if mode == "custom"
            and data.get("kind") == "context_management"
            and data["action"] != "masked"
        ]
        return "failed" in self.actions


def page(n: int, thread: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The input and config of the turn asking for page n."""
    return {"messages": [HumanMessage(f"read page {n}")]}, {"configurable": {"thread_id": thread}}


async def aconversation(graph: Any, thread: str) -> Outcomes:
    """Turns until a compaction fails."""
    seen = Outcomes()
    for n in range(6):
        chunks = [c async for c in graph.astream(*page(n, thread), context=ANN, stream_mode=MODES)]
        if seen.add(chunks):
            break
    return seen


def conversation(graph: Any, thread: str) -> Outcomes:
    """The sync twin of aconversation."""
    seen = Outcomes()
    for n in range(6):
        if seen.add(list(graph.stream(*page(n, thread), context=ANN, stream_mode=MODES))):
            break
    return seen


@pytest.mark.slow
async def test_a_hung_summarizer_never_holds_concurrent_async_turns(
    abackend: Backend, hung: HeldModel
) -> None:
    small_executor()
    graph = graph_of(abackend, hung)
    results = await asyncio.gather(*[aconversation(graph, f"t{n}") for n in range(4)])
    for seen in results:
        assert "failed" in seen.actions
    assert hung.hold.entered >= 4
    assert hung.hold.answered == 0, "a turn waited for the hung summarizer"


@pytest.mark.slow
def test_a_hung_summarizer_never_holds_concurrent_turns(backend: Backend, hung: HeldModel) -> None:
    graph = graph_of(backend, hung)
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda n: conversation(graph, f"t{n}"), range(3)))
    for seen in results:
        assert "failed" in seen.actions
    assert hung.hold.entered >= 3
    assert hung.hold.answered == 0, "a turn waited for the hung summarizer"


def seed(backend: Backend) -> list[str]:
    """Ann's notes, and the order recall gives them with rerank off."""
    memory = ScopedMemory(backend.store)
    for n in range(14):
        memory.remember(ANN, f"project milestone {n} " + "reached " * (n % 4))
    return [hit.note.body for hit in memory.recall(ANN, "project milestone", 10)]


@pytest.mark.slow
async def test_a_hung_reranker_never_holds_concurrent_async_recalls(
    backend: Backend, hung: HeldModel
) -> None:
    """A store opened with connect, used from async code, runs its calls in the loop's
    executor: hung rerank calls must not fill it."""
    fused = seed(backend)
    small_executor()
    reranking = ScopedMemory(backend.store, defaults=RERANK, model=hung)

    async def order() -> list[str]:
        return [hit.note.body for hit in await reranking.arecall(ANN, "project milestone", 10)]

    for _ in range(2):
        assert await asyncio.gather(*[order() for _ in range(6)]) == [fused] * 6
    assert hung.hold.entered == 12
    assert hung.hold.answered == 0, "a recall waited for the hung reranker"


class Loads:
    """A fake sentence_transformers whose CrossEncoder fails to load once the test lets it
    go (held meanwhile, as a hub model id is offline); counts the attempts."""

    def __init__(self) -> None:
        self.hold = Hold()
        self.module = types.ModuleType("sentence_transformers")
        self.module.CrossEncoder = self.cross_encoder  # type: ignore[attr-defined]

    def cross_encoder(self, path: str) -> Any:
        self.hold.wait()
        raise OSError(f"We couldn't connect to 'https://huggingface.co' to load {path}")


@pytest.mark.slow
def test_a_cross_encoder_that_cannot_load_is_not_retried_on_every_recall(
    backend: Backend, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The first recall waits out its timeout; the others, while the load hangs and once it
    failed, skip the reranker at once (their logged reason is not a timeout)."""
    fused = seed(backend)
    loads = Loads()
    monkeypatch.setitem(sys.modules, "sentence_transformers", loads.module)
    spec = f"cross-encoder:cross-encoder/unreachable-{uuid.uuid4().hex}"
    memory = ScopedMemory(
        backend.store,
        defaults=MemorySettings(**{**RERANK.model_dump(), "recall_rerank_model": spec}),
    )

    def reason() -> str:
        """Recall; why it kept the fused order."""
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="memory_plugin.scoped.rerank"):
            assert [hit.note.body for hit in memory.recall(ANN, "project milestone", 10)] == fused
        (record,) = caplog.records
        return record.getMessage()

    try:
        assert "TimeoutError" in reason()
        for _ in range(3):
            assert "is still loading" in reason()
        assert loads.hold.answered == 0
    finally:
        loads.hold.release.set()
    deadline = time.monotonic() + 60
    while "is still loading" in (said := reason()):
        assert time.monotonic() < deadline, "the failed load was never recorded"
    assert "could not be loaded" in said
    for _ in range(3):
        assert "could not be loaded" in reason()
    assert loads.hold.entered == 1


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
    monkeypatch.setattr("memory_plugin.models.maintenance.time.monotonic", lambda: later)
    with pytest.raises(SettingsError):
        model.load("openai:gpt-4o-mini")
    assert len(attempts) == 2

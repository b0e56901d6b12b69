"""Do memory's model timeouts hold under load? Hung rerank and summary calls, many at once.

Run: python bench/model_timeouts.py [--concurrency 16] [--rounds 3] [--load 2]
         [--url sqlite:///...] [--cross-encoder]

A reranker and a summarizer that never answer (sync-only chat models blocked until the end)
stand where a provider hangs. Scenarios, each with `--concurrency` calls at once for
`--rounds` rounds while `--load` processes burn the CPU:

- recall with rerank on (bound `recall_rerank_timeout_ms`, 1,500 ms): from threads; from one
  event loop on a store opened with aconnect; from one event loop on a store opened with
  connect (its calls run in the loop's shared executor, as a sync store's do);
- a graph turn whose compaction summary hangs (bound `summary_timeout_seconds`, here 2 s),
  many conversations on one event loop, as under LangGraph Server.

Each scenario's baseline is the same call with nothing hung, measured in the same run; the
table gives the slowest call, and how far past its bound it went. `--cross-encoder` adds a
reranker spec that cannot load (a hub model id while offline: sentence-transformers retries
for about 45 s, then fails) and counts the recalls that waited for it.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import multiprocessing
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from pydantic import Field

from memory_plugin import MemoryContext, MemorySettings, aconnect, connect, create_memory_graph
from memory_plugin.scoped import ScopedMemory

ANN = MemoryContext(user_id="ann")
QUERY = "project milestone"
RERANK_MS = 1_500
SUMMARY_S = 2.0
HEADER = (
    "| scenario | bound (s) | baseline p50 (ms) | hung p50 (s) | slowest (s) "
    "| past the bound (s) |\n| --- | --- | --- | --- | --- | --- |"
)


class Hung(BaseChatModel):
    """A provider that hangs: no async code of its own, blocked 30 s or until released;
    counts its calls."""

    release: Any = Field(default_factory=threading.Event)
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "hung"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.calls += 1
        self.release.wait(30)
        return ChatResult(generations=[ChatGeneration(message=AIMessage("[1]"))])


class Reader(BaseChatModel):
    """The agent: fetches a page for each user message, then says it read it."""

    @property
    def _llm_type(self) -> str:
        return "reader"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Reader:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if isinstance(messages[-1], ToolMessage):
            reply = AIMessage("Page read.")
        else:
            call = {"name": "fetch", "args": {"url": uuid.uuid4().hex}, "id": uuid.uuid4().hex}
            reply = AIMessage("", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])


@tool
def fetch(url: str) -> str:
    """Fetch a page (a large body)."""
    return f"<page {url}> " + "lorem ipsum dolor sit amet " * 120


def burn(stop: Any) -> None:
    """Keep one core busy until told to stop."""
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def rerank_settings(spec: str | None = None) -> MemorySettings:
    return MemorySettings(
        recall_rerank=True,
        recall_rerank_keep=3,
        recall_rerank_candidates=10,
        recall_rerank_timeout_ms=RERANK_MS,
        recall_rerank_model=spec,
    )


def timed_threads(call: Callable[[], Any], concurrency: int, rounds: int) -> list[float]:
    """Seconds each call took, `concurrency` threads at a time."""

    def one(_: int) -> float:
        started = time.monotonic()
        call()
        return time.monotonic() - started

    took: list[float] = []
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        for _ in range(rounds):
            took += list(pool.map(one, range(concurrency)))
    return took


async def timed_tasks(
    call: Callable[[], Awaitable[Any]], concurrency: int, rounds: int
) -> list[float]:
    """Seconds each call took, `concurrency` tasks at a time on this loop."""

    async def one() -> float:
        started = time.monotonic()
        await call()
        return time.monotonic() - started

    took: list[float] = []
    for _ in range(rounds):
        took += await asyncio.gather(*[one() for _ in range(concurrency)])
    return took


def row(name: str, bound: float, baseline: list[float], hung: list[float]) -> str:
    """One table row: baseline p50, hung p50 and max, and the worst overrun of the bound."""
    over = max(hung) - bound
    return (
        f"| {name} | {bound:.1f} | {statistics.median(baseline) * 1000:.0f} | "
        f"{statistics.median(hung):.2f} | {max(hung):.2f} | {max(over, 0.0):.2f} |"
    )


def seed(url: str) -> None:
    with connect(url) as backend:
        memory = ScopedMemory(backend.store)
        for n in range(30):
            memory.remember(ANN, f"project milestone {n} " + "reached " * (n % 4))


def recall_rows(url: str, concurrency: int, rounds: int, hung: Hung) -> list[str]:
    rows = []
    with connect(url) as backend:
        plain = ScopedMemory(backend.store)
        reranking = ScopedMemory(backend.store, defaults=rerank_settings(), model=hung)
        base = timed_threads(lambda: plain.recall(ANN, QUERY, 5), concurrency, rounds)
        took = timed_threads(lambda: reranking.recall(ANN, QUERY, 5), concurrency, rounds)
        rows.append(row("recall, threads", RERANK_MS / 1000, base, took))

        async def on_connect() -> tuple[list[float], list[float]]:
            asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=6))
            base = await timed_tasks(lambda: plain.arecall(ANN, QUERY, 5), concurrency, rounds)
            took = await timed_tasks(lambda: reranking.arecall(ANN, QUERY, 5), concurrency, rounds)
            return base, took

        base, took = asyncio.run(on_connect())
        rows.append(row("recall, one loop, store from connect", RERANK_MS / 1000, base, took))

    async def on_aconnect() -> tuple[list[float], list[float]]:
        async with await aconnect(url) as backend:
            plain = ScopedMemory(backend.store)
            reranking = ScopedMemory(backend.store, defaults=rerank_settings(), model=hung)
            base = await timed_tasks(lambda: plain.arecall(ANN, QUERY, 5), concurrency, rounds)
            took = await timed_tasks(lambda: reranking.arecall(ANN, QUERY, 5), concurrency, rounds)
            return base, took

    base, took = asyncio.run(on_aconnect())
    rows.append(row("recall, one loop, store from aconnect", RERANK_MS / 1000, base, took))
    return rows


def compaction_row(url: str, concurrency: int, hung: Hung) -> str:
    settings = MemorySettings(
        summary_timeout_seconds=SUMMARY_S, flush=False, masking=False, profile=False
    )

    async def conversations() -> tuple[list[float], list[float]]:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=6))
        async with await aconnect(url) as backend:
            graph = create_memory_graph(
                Reader(profile={"max_input_tokens": 4_000}),
                [fetch],
                store=backend.store,
                checkpointer=backend.checkpointer,
                settings=settings,
                maintenance_model=hung,
            )
            quiet: list[float] = []
            compacting: list[float] = []

            async def conversation(thread: str) -> None:
                for n in range(6):
                    started = time.monotonic()
                    updates = [
                        chunk
                        async for chunk in graph.astream(
                            {"messages": [HumanMessage(f"read page {n}")]},
                            {"configurable": {"thread_id": thread}},
                            context=ANN,
                            stream_mode="custom",
                        )
                    ]
                    took = time.monotonic() - started
                    failed = any(u.get("action") == "failed" for u in updates)
                    (compacting if failed else quiet).append(took)
                    if failed:
                        return

            await asyncio.gather(*[conversation(uuid.uuid4().hex) for _ in range(concurrency)])
            return quiet, compacting

    quiet, compacting = asyncio.run(conversations())
    return row("graph turn with a hung summary, one loop", SUMMARY_S, quiet, compacting)


def cross_encoder_line(url: str) -> str:
    spec = "cross-encoder:cross-encoder/ms-marco-MiniLM-L-6-v2"
    with connect(url) as backend:
        memory = ScopedMemory(backend.store, defaults=rerank_settings(spec))
        took = []
        finish = time.monotonic() + 70
        while time.monotonic() < finish:
            started = time.monotonic()
            memory.recall(ANN, QUERY, 5)
            took.append(time.monotonic() - started)
            time.sleep(1.0)
    waited = sum(t > RERANK_MS / 2000 for t in took)
    return (
        f"Cross-encoder that cannot load ({spec}, offline), one recall a second for 70 s: "
        f"{len(took)} recalls, {waited} waited past half the bound, slowest {max(took):.2f} s."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--load", type=int, default=2, help="CPU-burning processes")
    parser.add_argument("--url", default=None, help="backend URL (default: a fresh SQLite file)")
    parser.add_argument("--cross-encoder", action="store_true")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    url = args.url or f"sqlite:///{Path(tempfile.mkdtemp()) / 'memory.db'}"
    seed(url)
    stop = multiprocessing.Event()
    burners = [multiprocessing.Process(target=burn, args=(stop,)) for _ in range(args.load)]
    for burner in burners:
        burner.start()
    hung = Hung()
    try:
        print(f"{args.concurrency} calls at once, {args.rounds} rounds, {args.load} CPU burners")
        print(HEADER)
        for line in recall_rows(url, args.concurrency, args.rounds, hung):
            print(line, flush=True)
        print(compaction_row(url, args.concurrency, hung), flush=True)
        if args.cross_encoder:
            print(cross_encoder_line(url), flush=True)
    finally:
        stop.set()
        hung.release.set()
        for burner in burners:
            burner.join()
    sys.stdout.flush()


if __name__ == "__main__":
    main()

"""Notes per second with 1, 10 and 100 concurrent writers appending to one scope.

Run: python bench/notes_append.py [--notes 400] [--rounds 3] [--postgres URL]
     (PostgreSQL from --postgres or $MEMORY_TEST_POSTGRES_URL; skipped when neither is set)

Each measurement appends `--notes` notes to a fresh team scope, split evenly between the
writers: sync writers are threads calling `ScopedMemory.remember`, async writers coroutines
under one `asyncio.gather` calling `aremember`. "before" is the append this replaced: scan
the day, insert the next position if still free (a conditional put), else scan again. Each
row is the median of `--rounds` runs; ratios are against the 1-writer run of the same row
set, measured in the same process.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory_plugin import Backend, MemoryContext, aconnect, connect
from memory_plugin.backends.conditional import PutIfVersion
from memory_plugin.plans import Plan, arun, run
from memory_plugin.scope import Scope, thread_scope
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.notes import NOTES, day_plan, note_key

WRITERS = (1, 10, 100)


def scan_and_retry(scope: Scope, text: str, now: datetime) -> Plan[int]:
    """The append before this change: scan the day, claim max+1 by conditional insert, retry."""
    day = now.astimezone(UTC).date().isoformat()
    while True:
        taken = yield from day_plan(scope, day)
        position = (taken[-1].value["position"] if taken else 0) + 1
        value = {"text": f"- {text}", "day": day, "position": position, "consolidated": False}
        value["created_at"] = now.isoformat()
        if (yield PutIfVersion(scope.child(NOTES), note_key(day, position), value, None)):
            return position


def _context() -> MemoryContext:
    return MemoryContext(
        user_id="bench", workspace_id=f"w{uuid.uuid4().hex[:8]}", thread_visibility="shared"
    )


def _sync_append(backend: Backend, method: str) -> Callable[[MemoryContext, str], Any]:
    if method == "now":
        memory = ScopedMemory(backend.store)
        return memory.remember
    return lambda ctx, text: run(
        backend.store, scan_and_retry(thread_scope(ctx), text, datetime.now(UTC))
    )


def _async_append(backend: Backend, method: str) -> Callable[[MemoryContext, str], Any]:
    if method == "now":
        memory = ScopedMemory(backend.store)
        return memory.aremember
    return lambda ctx, text: arun(
        backend.store, scan_and_retry(thread_scope(ctx), text, datetime.now(UTC))
    )


def sync_rate(backend: Backend, method: str, writers: int, notes: int) -> float:
    """Notes per second with `writers` threads."""
    append, ctx = _sync_append(backend, method), _context()
    each = notes // writers

    def writer(n: int) -> None:
        for i in range(each):
            append(ctx, f"writer {n} note {i}")

    with ThreadPoolExecutor(writers) as pool:
        start = time.perf_counter()
        list(pool.map(writer, range(writers)))
        elapsed = time.perf_counter() - start
    return each * writers / elapsed


async def async_rate(backend: Backend, method: str, writers: int, notes: int) -> float:
    """Notes per second with `writers` coroutines."""
    append, ctx = _async_append(backend, method), _context()
    each = notes // writers

    async def writer(n: int) -> None:
        for i in range(each):
            await append(ctx, f"writer {n} note {i}")

    start = time.perf_counter()
    await asyncio.gather(*(writer(n) for n in range(writers)))
    return each * writers / (time.perf_counter() - start)


def _urls(postgres: str | None, folder: Path) -> dict[str, str]:
    urls = {"memory": "memory://", "sqlite": f"sqlite:///{folder / 'bench.db'}"}
    if postgres:
        urls["postgres"] = postgres
    return urls


def _row(kind: str, mode: str, method: str, rates: dict[int, float]) -> str:
    base = rates[WRITERS[0]]
    cells = " | ".join(f"{rates[w]:,.0f} ({rates[w] / base:.2f}x)" for w in WRITERS)
    return f"| {kind} | {mode} | {method} | {cells} |"


async def main() -> None:
    """Measure every backend, sync and async, now and before, and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgres", default=os.environ.get("MEMORY_TEST_POSTGRES_URL"))
    parser.add_argument("--no-before", action="store_true", help="skip the scan-and-retry rows")
    args = parser.parse_args()
    methods = ("now",) if args.no_before else ("now", "before")
    header = " | ".join(f"{w} writer{'s' if w > 1 else ''}: notes/s (vs 1)" for w in WRITERS)
    print(f"| backend | API | append | {header} |")
    print("| --- | --- | --- |" + " --- |" * len(WRITERS))
    with tempfile.TemporaryDirectory() as folder:
        for kind, url in _urls(args.postgres, Path(folder)).items():
            for method in methods:
                with connect(url) as backend:
                    rates = {
                        w: statistics.median(
                            sync_rate(backend, method, w, args.notes) for _ in range(args.rounds)
                        )
                        for w in WRITERS
                    }
                print(_row(kind, "sync (threads)", method, rates), flush=True)
                async with await aconnect(url) as abackend:
                    arates: dict[int, float] = {}
                    for w in WRITERS:
                        samples = [
                            await async_rate(abackend, method, w, args.notes)
                            for _ in range(args.rounds)
                        ]
                        arates[w] = statistics.median(samples)
                print(_row(kind, "async (gather)", method, arates), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
